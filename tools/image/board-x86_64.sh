# shellcheck shell=bash disable=SC2034,SC2153 # sets what build reads; uses build's ROOT, BOOT, WORK
# tools/image/build --board x86_64 (the default): the test card for the x86_64 VM rig, with
# the rig's Debian kernel, the host's own tools and the skeleton's test hook. Sourced by
# build; sets what build's common part reads (see board-rpi.sh for the list).

TREE_ARCH=x86-64
SYS=/ # where Debian's tools for the storage script come from: this machine
RUN_MODULES=(snd-aloop softdog pvpanic-mmio vfat nls_cp437 nls_ascii 9pnet_virtio 9p
	xhci-pci ehci-pci usb-storage sd_mod exfat # USB sticks (stagebox mounts them)
	virtio_net) # the wired network (S38network), for NTP (S39chrony)
# With --slots 2: a second root slot for updates, GRUB to choose the slot (x86/grub.cfg) and
# RAUC; RAUC mounts a bundle through a loop device as squashfs, checked by dm-verity.
if [ "$SLOTS" = 2 ]; then
	ROOT_SLOTS=2
	RUN_MODULES+=(loop squashfs dm-verity)
fi
# GRUB's modules in its core image (no module folder on the card): the disk through the BIOS,
# MBR partitions, FAT and ext4, the configuration and its environment block, the serial
# console, and what grub.cfg runs.
GRUB_MODULES=(biosdisk part_msdos fat ext2 normal configfile loadenv test echo serial terminal
	linux probe sleep reboot)
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
	# NTP: Debian's chrony (BusyBox's is built without ntpd), with the libraries it needs.
	"$CHECKOUT/tools/apt-install" libcap2 libedit2 libgnutls30 libnettle8 libseccomp2 ||
		die "cannot install the libraries chrony needs"
	CHRONYD=$("$IMAGE_DIR/host-part" chrony /usr/sbin/chronyd) || die "tools/image/host-part chrony failed"
	[ "$SLOTS" = 2 ] || return 0
	# GRUB for PCs (BIOS) and its environment tool; RAUC and dbus-daemon, as Debian has them.
	"$CHECKOUT/tools/apt-install" grub-pc-bin grub-common dbus-daemon openssl ||
		die "cannot install grub-pc-bin, grub-common, dbus-daemon and openssl (the card's updates)"
	HOST_RAUC=$("$IMAGE_DIR/host-rauc") || die "tools/image/host-rauc failed"
}

# The test card's inittab, rcS, fstab, module list and the harness hook.
board_root() {
	cp -dR --preserve=mode "$IMAGE_DIR/skeleton/." "$ROOT/"
	local bin
	for bin in /usr/sbin/chronyd /usr/bin/chronyc; do
		install -D -m 755 "${CHRONYD%/usr/sbin/chronyd}$bin" "$ROOT$bin"
		copy_libs "$ROOT$bin"
	done
	chroot "$ROOT" /usr/sbin/chronyd --version >/dev/null 2>&1 || die "the card's chronyd does not run in its root (libraries?)"
	[ "$SLOTS" = 2 ] || return 0
	printf '# What RAUC needs to read a bundle (tools/image/build --slots 2): a loop device,\n# squashfs, dm-verity.\nloop\nsquashfs\ndm-verity\n' \
		>"$ROOT/etc/modules-load.d/stagebox-update.conf"
	# RAUC behind /usr/bin/rauc (which sets its private bus), the bus, and grub-editenv behind
	# a wrapper that makes BOOT writable while it writes (rauc/grub-editenv); with their
	# libraries from this machine.
	install -D -m 755 "$HOST_RAUC" "$ROOT/usr/libexec/stagebox/rauc"
	copy_libs "$HOST_RAUC"
	install -m 755 /usr/bin/dbus-daemon "$ROOT/usr/libexec/stagebox/dbus-daemon"
	copy_libs /usr/bin/dbus-daemon
	install -m 755 /usr/bin/grub-editenv "$ROOT/usr/libexec/stagebox/grub-editenv"
	copy_libs /usr/bin/grub-editenv
	install -m 755 "$IMAGE_DIR/rauc/grub-editenv" "$ROOT/usr/bin/grub-editenv"
	install_update_config 'bootloader=grub
grubenv=/boot/grub/grubenv'
	chroot "$ROOT" /usr/libexec/stagebox/rauc --version >/dev/null 2>&1 || die "the card's rauc does not run in its root (libraries?)"
}

# BOOT: the kernel and the files the rig reads; BOOT_FILES lists them for genimage.
board_boot() {
	local cmdline='console=ttyS0 ro quiet panic=-1'
	install -m 644 "$KROOT/boot/vmlinuz-$KREL" "$BOOT/vmlinuz"
	BOOT_FILES=(vmlinuz initramfs.cpio cmdline.txt stagebox.toml kernel.release)
	if [ "$SLOTS" != 2 ]; then
		echo "$cmdline root=LABEL=rootfs" >"$BOOT/cmdline.txt"
		return
	fi
	# Two slots: GRUB loads the kernel and initramfs from the slot it chose, so an update
	# replaces them with the rest of the system. BOOT keeps a copy of both, and cmdline.txt
	# without root= (tools/image/boot adds slot A's), for the rig's quick boot that starts the
	# kernel directly (tools/image/boot without --bootloader).
	echo "$cmdline" >"$BOOT/cmdline.txt"
	install -D -m 644 "$KROOT/boot/vmlinuz-$KREL" "$ROOT/usr/lib/stagebox/kernel/vmlinuz"
	install -m 644 "$BOOT/initramfs.cpio" "$ROOT/usr/lib/stagebox/kernel/initramfs.cpio"
	mkdir -p "$BOOT/grub"
	sed "s|@CMDLINE@|$cmdline|" "$IMAGE_DIR/x86/grub.cfg" >"$BOOT/grub/grub.cfg"
	# The slots' boot variables as a new card starts: only A, whose system the card carries;
	# slot B is empty until the first update, which puts it first ("B A").
	grub-editenv "$BOOT/grub/grubenv" create &&
		grub-editenv "$BOOT/grub/grubenv" set ORDER=A A_OK=1 A_TRY=0 A_LEFT=3 B_OK=0 B_TRY=0 B_LEFT=0 ||
		die "grub-editenv could not make grub/grubenv"
	BOOT_FILES+=(grub)
}

# With two slots: GRUB's boot sector and core image go where a PC's BIOS looks, the MBR and
# the gap before the first partition (genimage aligns it at 4 MiB). The core image reads
# grub.cfg from BOOT (the prefix), with every module it needs built in.
board_image() { # IMAGE
	[ "$SLOTS" = 2 ] || return 0
	local lib=/usr/lib/grub/i386-pc gap
	grub-mkimage -O i386-pc -o "$WORK/core.img" -p '(hd0,msdos1)/grub' "${GRUB_MODULES[@]}" ||
		die "grub-mkimage could not make the core image"
	gap=$(($(sfdisk -J "$1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["partitiontable"]["partitions"][0]["start"])') - 1))
	[ $(($(stat -c %s "$WORK/core.img") / 512 + 1)) -le "$gap" ] || die "GRUB's core image does not fit before the first partition"
	# The boot code only (440 bytes): the disk signature and partition table after it stay.
	# boot.img loads the core image from sector 1, which loads the rest of itself from sector 2
	# on: both are what grub-mkimage and boot.img assume when nothing patches them.
	dd if="$lib/boot.img" of="$1" bs=440 count=1 conv=notrunc status=none
	dd if="$WORK/core.img" of="$1" bs=512 seek=1 conv=notrunc status=none
}
