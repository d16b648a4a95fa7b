# shellcheck shell=bash disable=SC2034,SC2153 # sets what build reads; uses build's ROOT, BOOT, WORK
# tools/image/build --board x86_64 (the default): the test card for the x86_64 VM rig, with
# the rig's Debian kernel, the host's own tools and the skeleton's test hook. Sourced by
# build; sets what build's common part reads (see board-rpi.sh for the list).

TREE_ARCH=x86-64
SYS=/ # where Debian's tools for the storage script come from: this machine
RUN_MODULES=(snd-aloop softdog pvpanic-mmio vfat nls_cp437 nls_ascii 9pnet_virtio 9p
	xhci-pci ehci-pci usb-storage sd_mod exfat) # the last line: USB sticks (stagebox mounts them)
IR_MODULES=(virtio_pci virtio_blk crc32c_generic ext4)
STAGEBOX_TOML=$IMAGE_DIR/stagebox.toml

board_prepare() {
	if [ ! -f "$CACHE/current/ready" ]; then
		say "no VM rig in $CACHE yet: running tools/vm/prepare"
		"$CHECKOUT/tools/vm/prepare" >&2 || die "tools/vm/prepare failed"
	fi
	KDIR=$(readlink -f "$CACHE/current")
	KREL=$(cat "$KDIR/ready")
	KROOT=$KDIR/root
	BUSYBOX=$(find "$CACHE" -maxdepth 3 -path "$CACHE/busybox-*/bin/busybox" -type f | sort | tail -n 1)
}

# The test card's inittab, rcS, fstab, module list and the harness hook.
board_root() {
	cp -dR --preserve=mode "$IMAGE_DIR/skeleton/." "$ROOT/"
}

# BOOT: the kernel and the files the rig reads; BOOT_FILES lists them for genimage.
board_boot() {
	install -m 644 "$KROOT/boot/vmlinuz-$KREL" "$BOOT/vmlinuz"
	echo 'console=ttyS0 root=LABEL=rootfs ro quiet panic=-1' >"$BOOT/cmdline.txt"
	BOOT_FILES=(vmlinuz initramfs.cpio cmdline.txt stagebox.toml kernel.release)
}
