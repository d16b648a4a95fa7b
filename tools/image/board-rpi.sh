# shellcheck shell=bash disable=SC2034,SC2153 # sets what build reads; uses build's ROOT, BOOT, WORK
# tools/image/build --board rpi: the card for a Raspberry Pi 3 B/B+/A+, Zero 2 W, 4 B or 400,
# all from Debian bookworm's archive (arm64): the Pi's boot firmware (raspi-firmware, via
# pi-parts), Debian's kernel, its device trees and modules, BusyBox and the storage tools
# (the aarch64 VM rig's cache: tools/vm/prepare --arch aarch64), and the static aarch64
# stagebox tree (tools/build-static --target aarch64). Sourced by build.
#
# What the board file sets for build's common part:
#   TREE_ARCH      what `file` must say of the static stagebox
#   SYS            the root whose Debian tools go on the card (with their libraries)
#   RUN_MODULES    modules on the root filesystem; IR_MODULES: the initramfs's
#   STAGEBOX_TOML  BOOT's stagebox.toml
#   board_prepare  sets KROOT (the unpacked kernel package), KREL, BUSYBOX
#   board_root     what the root gets besides BusyBox, the tools and board/common
#   board_boot     fills $BOOT and sets BOOT_FILES
#   ROOT_SLOTS     2 here: partition 3 is rootfs-b, the second slot that updates will use

TREE_ARCH=aarch64
ROOT_SLOTS=2
ACACHE=${STAGEBOX_VM_CACHE_AARCH64:-$HOME/.cache/stagebox-vm/aarch64}
SYS=$ACACHE/rootfs
# The Pi models the card carries device trees for (Debian 6.1 has none for the Pi 5).
DTBS=(bcm2837-rpi-3-b bcm2837-rpi-3-b-plus bcm2837-rpi-3-a-plus bcm2837-rpi-zero-2-w
	bcm2711-rpi-4-b bcm2711-rpi-400)
# Pi 3/Zero 2 W: bootcode.bin (read by the SoC's ROM), start.elf, fixup.dat; Pi 4: start4.elf
# and fixup4.dat (its bootloader is in EEPROM). The cut-down and debug variants are not needed.
FIRMWARE=(bootcode.bin start.elf fixup.dat start4.elf fixup4.dat)
# The SD card: bcm2835 (sdhost, Pi 3 and Zero 2 W), sdhci-iproc (Pi 4's emmc2); ext4.
IR_MODULES=(bcm2835 sdhci-iproc crc32c_generic ext4)
case $CODEC in
wm8960)
	CODEC_MODULES=(i2c-bcm2835 snd-soc-bcm2835-i2s snd-soc-wm8960 snd-soc-simple-card)
	CODEC_PCM='hw:CARD=wm8960soundcard,DEV=0' CODEC_PERIOD=64 CODEC_PERIODS=2
	;;
loopback)
	# No codec: snd-aloop's card. QEMU's raspi3b models no I2S, so this is what boots there.
	CODEC_MODULES=("snd-aloop pcm_substreams=2")
	CODEC_PCM='' CODEC_PERIOD=256 CODEC_PERIODS=4
	;;
*) die "--codec: wm8960 or loopback, not '$CODEC'" ;;
esac
# The Pi's own watchdog first (softdog is /dev/watchdog only where that one is missing),
# raspberrypi-hwmon (the firmware's under-voltage flag, which stagebox's health watches; built
# out of tree by the rig: Debian's kernel leaves it out), the boot partition's FAT, the
# codec's; S11modules loads them in this order.
BASE_MODULES=(bcm2835_wdt softdog raspberrypi-hwmon vfat nls_cp437 nls_ascii)
# USB sticks, which stagebox mounts: the Pi 3's and Zero 2 W's USB (dwc2), the Pi 4's (xhci
# behind PCIe), the mass-storage and disk drivers, exFAT (FAT is above). Loaded at boot: the
# card has no udev or mdev to load a driver when a device appears.
USB_MODULES=(dwc2 xhci-pci usb-storage sd_mod exfat)
# RAUC mounts a bundle through a loop device as squashfs, its payload checked by dm-verity.
UPDATE_MODULES=(loop squashfs dm-verity)
# Wired Ethernet, for NTP (S38network, S39chrony): the Pi 3 B's (smsc95xx) and 3 B+'s (lan78xx,
# with its PHY's driver, microchip) on USB; the Pi 4's (genet, after its MDIO bus driver and its
# PHY's, which it names only as soft dependencies). The Zero 2 W has none.
NET_MODULES=(smsc95xx microchip lan78xx mdio-bcm-unimac broadcom genet)
RUN_MODULES=("${BASE_MODULES[@]}" "${USB_MODULES[@]}" "${NET_MODULES[@]}" "${UPDATE_MODULES[@]}" "${CODEC_MODULES[@]%% *}")
STAGEBOX_TOML=$WORK/stagebox.toml

board_prepare() {
	if [ ! -f "$ACACHE/current/ready" ] || [ ! -x "$SYS/bin/bash" ]; then
		say "no aarch64 VM rig in $ACACHE yet: running tools/vm/prepare --arch aarch64"
		"$CHECKOUT/tools/vm/prepare" --arch aarch64 >&2 || die "tools/vm/prepare --arch aarch64 failed"
	fi
	"$CHECKOUT/tools/cross/binfmt" || die "cannot register qemu-aarch64 (the card's tools are checked by running them)"
	"$CHECKOUT/tools/apt-install" device-tree-compiler u-boot-tools || die "cannot install device-tree-compiler and u-boot-tools (mkimage)"
	PARTS=$("$IMAGE_DIR/pi-parts") || die "tools/image/pi-parts failed"
	KDIR=$(readlink -f "$ACACHE/current")
	KREL=$(cat "$KDIR/ready")
	KROOT=$KDIR/root
	BUSYBOX=$(find "$ACACHE" -maxdepth 3 -path "$ACACHE/busybox-*/bin/busybox" -type f | sort | tail -n 1)
	DTB_DIR=$KROOT/usr/lib/linux-image-$KREL/broadcom
	[ -d "$DTB_DIR" ] || die "no device trees in $DTB_DIR"
	# U-Boot for every 64-bit Pi (3, 3+, Zero 2 W, 4, 400): it takes the firmware's device tree.
	UBOOT=$PARTS/usr/lib/u-boot/rpi_arm64/u-boot.bin
	[ -f "$UBOOT" ] || die "no $UBOOT (u-boot-rpi's layout changed?)"
}

board_root() {
	cp -dR --preserve=mode "$IMAGE_DIR/skeleton/." "$ROOT/"
	# The x86 rig's harness hook and module list are not the Pi's.
	rm -f "$ROOT/etc/init.d/S99stagebox-test" "$ROOT/etc/modules-load.d/stagebox-test.conf"
	cp -dR --preserve=mode "$CHECKOUT/board/raspberrypi/rootfs-overlay/." "$ROOT/"
	{
		echo "# The card's modules (tools/image/build --board rpi --codec $CODEC), loaded in order by"
		echo "# S11modules: the Pi's watchdog, then softdog (/dev/watchdog only if that one is absent),"
		echo "# the firmware's under-voltage flag (hwmon), the boot partition's FAT, USB sticks', wired"
		echo "# Ethernet's, what RAUC needs to read bundles, the codec's."
		printf '%s\n' "${BASE_MODULES[@]}" "${USB_MODULES[@]}" "${NET_MODULES[@]}" "${UPDATE_MODULES[@]}" "${CODEC_MODULES[@]}"
	} >"$ROOT/etc/modules-load.d/stagebox.conf"
	# fsck.fat from Debian's dosfstools (the rig's root has no dosfstools); it needs only libc.
	local needs
	needs=$(readelf -d "$PARTS/sbin/fsck.fat" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
	case $needs in "libc.so.6 " | "libc.so.6 ld-linux-aarch64.so.1 ") ;; *) die "fsck.fat from dosfstools needs $needs (expected only libc and the loader)" ;; esac
	find "$ROOT"/bin "$ROOT"/sbin "$ROOT"/usr/bin "$ROOT"/usr/sbin -maxdepth 1 \( -name fsck.fat -o -name fsck.vfat \) -type l -delete
	install -m 755 "$PARTS/sbin/fsck.fat" "$ROOT/usr/sbin/fsck.fat"
	ln -sf fsck.fat "$ROOT/usr/sbin/fsck.vfat"
	board_update_parts
	# NTP: Debian's chrony (the card's BusyBox is built without ntpd), checked by running it.
	install_part /usr/sbin/chronyd /usr/sbin/chronyd
	install_part /usr/bin/chronyc /usr/bin/chronyc
	chroot "$ROOT" /usr/sbin/chronyd --version >/dev/null 2>&1 || die "the card's chronyd does not run in its root (libraries?)"
	# The fallback configuration when BOOT's cannot be read, as Buildroot's post-build does.
	board_toml
	install -D -m 644 "$STAGEBOX_TOML" "$ROOT/etc/stagebox.toml"
}

# What updates need: U-Boot's environment tools and RAUC with its private D-Bus (see
# board/common's S35rauc), from pi-parts, with their libraries.
board_update_parts() {
	# fw_printenv/fw_setenv (libubootenv-tool) read and write the slots' boot variables in
	# U-Boot's environment format, BOOT's stagebox-boot.env: the slot order and the tries left. The real fw_setenv is in /usr/libexec/stagebox;
	# /usr/sbin/fw_setenv (board/common) makes BOOT writable around it.
	install_part /usr/bin/fw_printenv /usr/bin/fw_printenv
	mkdir -p "$ROOT/usr/libexec/stagebox"
	ln -sf ../../bin/fw_printenv "$ROOT/usr/libexec/stagebox/fw_setenv"
	printf '# The slots'"'"' boot variables (rpi/boot.cmd): BOOT:/stagebox-boot.env, offset, size\n/boot/stagebox-boot.env 0x0000 0x4000\n' \
		>"$ROOT/etc/fw_env.config"
	# RAUC: the binary behind /usr/bin/rauc (board/common), which sets the private bus.
	install_part /usr/bin/rauc /usr/libexec/stagebox/rauc
	install_part /usr/bin/dbus-daemon /usr/libexec/stagebox/dbus-daemon
	# /usr/sbin/fw_setenv is a wrapper that makes BOOT writable around it.
	install -m 755 "$IMAGE_DIR/rauc/fw_setenv" "$ROOT/usr/sbin/fw_setenv"
	# U-Boot's boot script (rpi/boot.cmd) reads BOOT_ORDER and BOOT_<slot>_LEFT, which RAUC
	# sets with fw_setenv: each try of a new slot is one boot.
	install_update_config 'bootloader=uboot
boot-attempts=3
boot-attempts-primary=3'
}

# install_part PATH DEST: PATH of the unpacked pi-parts as DEST on the card, with the shared
# libraries it needs (readelf's NEEDED, recursively) from pi-parts or the rig's root; a library
# found in neither stops the build by name.
install_part() {
	install -D -m 755 "$PARTS$1" "$ROOT$2"
	part_libs "$PARTS$1" "$1"
}
part_libs() { # FILE WHAT
	local name found dir
	for name in $(readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		case $name in ld-linux-*) continue ;; esac
		[ -e "$ROOT/lib/aarch64-linux-gnu/$name" ] || [ -e "$ROOT/usr/lib/aarch64-linux-gnu/$name" ] && continue
		found=''
		for dir in "$PARTS/usr/lib/aarch64-linux-gnu" "$PARTS/lib/aarch64-linux-gnu" "$SYS/usr/lib/aarch64-linux-gnu"; do
			[ -e "$dir/$name" ] && found=$(readlink -f "$dir/$name") && break
		done
		[ -n "$found" ] || die "$2 needs $name, which neither pi-parts nor $SYS has (add its package to tools/image/pi-parts)"
		install -D -m 644 "$found" "$ROOT/usr/lib/aarch64-linux-gnu/$name"
		part_libs "$found" "$name (for $2)"
	done
}

# stagebox.toml: board/raspberrypi's, with this card's codec.
board_toml() {
	local pcm=$CODEC_PCM capture playback
	if [ -z "$pcm" ]; then capture='hw:Loopback,0,0' playback='hw:Loopback,0,1'; else capture=$pcm playback=$pcm; fi
	# The Buildroot card's comments that do not hold here: the HAT table (this card has one
	# codec) and the watchdog's dtparam (Debian's device trees enable it; a module drives it).
	sed -e "s|^capture = .*|capture = \"$capture\"|" -e "s|^playback = .*|playback = \"$playback\"|" \
		-e "s|^period = [0-9]*|period = $CODEC_PERIOD|" -e "s|^periods = [0-9]*|periods = $CODEC_PERIODS|" \
		-e "s|^# ALSA names of the codec: .*|# ALSA names of the codec: this card's (tools/image/build --board rpi --codec $CODEC).|" \
		-e "s|(dtparam=watchdog=on in config.txt)|(bcm2835_wdt, loaded at boot)|" \
		"$CHECKOUT/board/raspberrypi/stagebox.toml" >"$STAGEBOX_TOML"
	grep -q "^capture = \"$capture\"" "$STAGEBOX_TOML" || die "board/raspberrypi/stagebox.toml has no capture line to set"
	grep -q "^# ALSA names of the codec: this card's" "$STAGEBOX_TOML" || die "board/raspberrypi/stagebox.toml: its codec comment changed"
	grep -q "(bcm2835_wdt, loaded at boot)" "$STAGEBOX_TOML" || die "board/raspberrypi/stagebox.toml: its watchdog comment changed"
}

# A device tree with the codec merged in (see rpi/wm8960.dtsi for why not an overlay).
board_dtb() { # NAME OUT
	local src=$DTB_DIR/$1.dtb
	[ -f "$src" ] || die "Debian's kernel has no $1.dtb"
	if [ "$CODEC" != wm8960 ]; then
		install -m 644 "$src" "$2"
		return
	fi
	{
		dtc -q -I dtb -O dts "$src"
		cat "$IMAGE_DIR/rpi/wm8960.dtsi"
	} >"$WORK/$1.dts"
	dtc -q -I dts -O dtb -o "$2" "$WORK/$1.dts" || die "the WM8960 nodes do not merge into $1.dtb"
	[ "$(fdtget "$2" /sound compatible)" = simple-audio-card ] || die "$1.dtb: no sound node after the merge"
	[ "$(fdtget "$2" /soc/i2s@7e203000 status)" = okay ] || die "$1.dtb: the I2S block is not enabled after the merge"
}

board_boot() {
	local f
	for f in "${FIRMWARE[@]}"; do
		install -m 644 "$PARTS/usr/lib/raspi-firmware/$f" "$BOOT/$f"
	done
	for f in "${DTBS[@]}"; do board_dtb "$f" "$BOOT/$f.dtb"; done
	# The firmware starts U-Boot; its boot script (rpi/boot.cmd) picks the root slot and loads
	# the kernel and initramfs from it: an update replaces them with the rest of the system.
	# Debian's arm64 kernel is an uncompressed Image, which booti takes as it is.
	install -m 644 "$UBOOT" "$BOOT/u-boot.bin"
	mkimage -A arm64 -O linux -T script -C none -n "stagebox A/B boot" -d "$IMAGE_DIR/rpi/boot.cmd" "$BOOT/boot.scr" >/dev/null ||
		die "mkimage could not make boot.scr of rpi/boot.cmd"
	# The slots' boot variables as a new card starts: only A, whose system the card carries, with
	# 3 tries; slot B is empty until the first update, which puts it first ("B A").
	printf 'BOOT_ORDER=A\nBOOT_A_LEFT=3\nBOOT_B_LEFT=0\n' | mkenvimage -s 0x4000 -o "$BOOT/stagebox-boot.env" - ||
		die "mkenvimage could not make stagebox-boot.env"
	install -D -m 644 "$KROOT/boot/vmlinuz-$KREL" "$ROOT/usr/lib/stagebox/kernel/vmlinuz"
	mv "$BOOT/initramfs.cpio" "$ROOT/usr/lib/stagebox/kernel/initramfs.cpio"
	install -m 644 "$IMAGE_DIR/rpi/config.txt" "$BOOT/config.txt"
	grep -qx 'kernel=u-boot.bin' "$BOOT/config.txt" || die "rpi/config.txt does not start U-Boot (kernel=u-boot.bin)"
	# GPIO 14/15 is the mini UART on Debian's (mainline) device trees: ttyS1. The PL011
	# (ttyAMA0) is wired to Bluetooth there. The boot script adds root= and rauc.slot=.
	echo 'console=ttyS1,115200 ro rootwait quiet panic=10' >"$BOOT/cmdline.txt"
	BOOT_FILES=("${FIRMWARE[@]}" "${DTBS[@]/%/.dtb}" u-boot.bin boot.scr stagebox-boot.env config.txt cmdline.txt stagebox.toml kernel.release)
	# The codec's routes, set at every boot by S40alsa-state (the card has no shell for amixer).
	if [ "$CODEC" = wm8960 ]; then
		install -m 644 "$IMAGE_DIR/rpi/wm8960-mixer.txt" "$BOOT/mixer.txt"
		BOOT_FILES+=(mixer.txt)
	fi
}
