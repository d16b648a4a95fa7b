#!/bin/sh
# Stagebox post-build script for the Raspberry Pi images. Buildroot runs it
# with the target directory as $1, after the rootfs overlays are copied in.
set -eu

TARGET_DIR=${1:?usage: post-build.sh TARGET_DIR}
BOARD_DIR=$(cd "$(dirname "$0")" && pwd)

fail() {
	printf 'post-build.sh: %s\n' "$*" >&2
	exit 1
}

# Mount points: the root filesystem is read-only at run time, so they must
# exist in the image.
mkdir -p "$TARGET_DIR/boot" "$TARGET_DIR/data" "$TARGET_DIR/media"
# USB sticks are mounted under /media by stagebox (mount_sticks): a tmpfs, the root being read-only.
grep -q '[[:space:]]/media[[:space:]]' "$TARGET_DIR/etc/fstab" ||
	printf 'tmpfs\t\t/media\t\ttmpfs\tmode=0755,nosuid,nodev,size=64k\t0\t0\n' >>"$TARGET_DIR/etc/fstab"

# The fallback configuration, used when /boot/stagebox.toml cannot be read.
install -D -m 0644 "$BOARD_DIR/stagebox.toml" "$TARGET_DIR/etc/stagebox.toml"

# The serial port belongs to stagebox's diagnostics shell: no getty on it.
# (The kernel console is the serial port, so a getty on "console" is one too.)
if [ -f "$TARGET_DIR/etc/inittab" ] &&
	grep -E '^[^#]*getty' "$TARGET_DIR/etc/inittab" |
	grep -qE '(console|serial[0-9]|ttyAMA[0-9]+|ttyS[0-9]+)'; then
	fail "etc/inittab runs a getty on the serial console; set BR2_TARGET_GENERIC_GETTY_PORT=\"tty1\""
fi

# Only stagebox feeds the watchdog (and only while its audio loop makes
# progress): BusyBox's watchdog daemon would keep a hung box alive.
if [ -e "$TARGET_DIR/etc/init.d/S15watchdog" ]; then
	fail "BusyBox's watchdog daemon (S15watchdog) is in the image; unset BR2_PACKAGE_BUSYBOX_WATCHDOG"
fi

# --- Updates: two root slots, RAUC, U-Boot (see tools/image/README.md, "Updates") ----------
# The same arrangement as the Debian Pi card (tools/image/board-rpi.sh): U-Boot's boot script
# picks the slot and loads the kernel from it, RAUC installs into the other one. The four
# defconfigs all have RAUC and U-Boot (config.txt starts U-Boot, cmdline.txt names no root:
# the boot script adds the slot's). Buildroot runs this at every `make` on the same target
# tree: every step below may find its own work of the last run.
[ -x "$TARGET_DIR/usr/bin/rauc" ] || fail "no RAUC in the target (BR2_PACKAGE_RAUC): the card's config.txt starts U-Boot and needs the slots"
CHECKOUT=$(cd "$BOARD_DIR/../.." && pwd)
BINARIES_DIR=${BINARIES_DIR:?BINARIES_DIR is not set: run this from Buildroot}
# RAUC behind /usr/bin/rauc (which sets the private bus S35rauc starts), with that bus's
# daemon; the system bus Buildroot's dbus package would start is not needed.
mkdir -p "$TARGET_DIR/usr/libexec/stagebox"
# Moved once: on a later run /usr/bin/rauc is already the wrapper, which must not replace RAUC.
grep -q 'exec /usr/libexec/stagebox/rauc' "$TARGET_DIR/usr/bin/rauc" ||
	mv "$TARGET_DIR/usr/bin/rauc" "$TARGET_DIR/usr/libexec/stagebox/rauc"
[ -x "$TARGET_DIR/usr/libexec/stagebox/rauc" ] || fail "RAUC is not in /usr/libexec/stagebox/rauc"
[ -x "$TARGET_DIR/usr/bin/dbus-daemon" ] || fail "no dbus-daemon in the target (BR2_PACKAGE_RAUC_DBUS selects it)"
ln -sf ../../bin/dbus-daemon "$TARGET_DIR/usr/libexec/stagebox/dbus-daemon"
rm -f "$TARGET_DIR/etc/init.d/S30dbus-daemon"
# chrony's own start script: board/common's S39chrony starts chronyd with the card's servers
# (S38network gets the address: the defconfigs set no BR2_SYSTEM_DHCP, whose ifup gives up on a
# box booted without a cable; libcap lets chronyd drop root).
rm -f "$TARGET_DIR/etc/init.d/S49chronyd"
# fw_printenv/fw_setenv (uboot-tools) on BOOT's stagebox-boot.env; /usr/sbin/fw_setenv makes
# BOOT writable for the moment it writes.
[ -x "$TARGET_DIR/usr/sbin/fw_printenv" ] || fail "no fw_printenv in the target (BR2_PACKAGE_UBOOT_TOOLS_FWPRINTENV)"
rm -f "$TARGET_DIR/usr/sbin/fw_setenv"
ln -sf ../../sbin/fw_printenv "$TARGET_DIR/usr/libexec/stagebox/fw_setenv"
install -m 755 "$CHECKOUT/tools/image/rauc/fw_setenv" "$TARGET_DIR/usr/sbin/fw_setenv"
printf '# The slots'"'"' boot variables (boot.cmd): BOOT:/stagebox-boot.env, offset, size\n/boot/stagebox-boot.env 0x0000 0x4000\n' \
	>"$TARGET_DIR/etc/fw_env.config"
# The kernel lives in the slot, so an update replaces it with the modules that match it.
[ -f "$BINARIES_DIR/Image" ] || fail "$BINARIES_DIR/Image is missing (the kernel is built before this script runs)"
install -D -m 644 "$BINARIES_DIR/Image" "$TARGET_DIR/usr/lib/stagebox/kernel/vmlinuz"
# The certificate bundles must be signed with: STAGEBOX_CERT, or the development one.
CERT=${STAGEBOX_CERT:-}
if [ -z "$CERT" ]; then
	CERT=$("$CHECKOUT/tools/image/dev-keys")/development.cert.pem || fail "tools/image/dev-keys failed"
fi
# The Buildroot card's own compatible: a Debian card's bundle carries another kernel and
# device-tree names, and would not boot here.
"$CHECKOUT/tools/image/rauc/install-config" "$TARGET_DIR" stagebox-rpi-buildroot "$CERT" 'bootloader=uboot
boot-attempts=3
boot-attempts-primary=3' || fail "RAUC's configuration was not installed"
# The system's version and board: post-image.sh makes the update bundle of this root with them.
VERSION=${STAGEBOX_SYSTEM_VERSION:-$(sed -n 's/.*static let string = "\(.*\)".*/\1/p' "$CHECKOUT/Sources/stagebox/Stagebox.swift")-$(date -u +%Y%m%d.%H%M%S)}
printf 'VERSION=%s\nCOMPATIBLE=stagebox-rpi-buildroot\n' "$VERSION" >"$TARGET_DIR/etc/stagebox-release"
