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
