#!/bin/sh
# Stagebox post-image script for the Raspberry Pi images: writes genimage.cfg
# from genimage.cfg.in with the files of the boot partition, then makes
# sdcard.img. Buildroot runs it with the images directory as $1 and
# BINARIES_DIR, BUILD_DIR and a PATH with the host tools in the environment.
set -eu

BOARD_DIR=$(cd "$(dirname "$0")" && pwd)
BINARIES_DIR=${BINARIES_DIR:-${1:?usage: post-image.sh BINARIES_DIR}}
BUILD_DIR=${BUILD_DIR:?BUILD_DIR is not set: run this from Buildroot}
GENIMAGE_CFG=$BINARIES_DIR/genimage.cfg
GENIMAGE_TMP=$BUILD_DIR/genimage.tmp

fail() {
	printf 'post-image.sh: %s\n' "$*" >&2
	exit 1
}

FIRMWARE=$BINARIES_DIR/rpi-firmware
for f in config.txt cmdline.txt stagebox.toml; do
	[ -f "$FIRMWARE/$f" ] || fail "$FIRMWARE/$f is missing (see BR2_PACKAGE_RPI_FIRMWARE_*)"
done
KERNEL=$(sed -n 's/^kernel=//p' "$FIRMWARE/config.txt" | tail -n 1)
[ -n "$KERNEL" ] || fail "config.txt names no kernel= file"
[ -f "$BINARIES_DIR/$KERNEL" ] || fail "$BINARIES_DIR/$KERNEL (kernel= in config.txt) is missing"

# With RAUC (post-build.sh installed it), the firmware starts U-Boot, whose
# boot script (tools/image/rpi/boot.cmd, the Debian Pi card's) picks the root
# slot and loads the kernel from it; stagebox-boot.env holds the slots' boot
# variables as a new card starts: slot A only, with 3 tries.
CHECKOUT=$(cd "$BOARD_DIR/../.." && pwd)
TARGET_DIR=${TARGET_DIR:-$BINARIES_DIR/../target}
UPDATES=''
SLOT_FILES=''
if [ -f "$TARGET_DIR/etc/rauc/system.conf.in" ]; then
	UPDATES=1
	[ "$KERNEL" = u-boot.bin ] || fail "config.txt starts $KERNEL, not U-Boot (kernel=u-boot.bin): the slots need it"
	mkimage -A arm64 -O linux -T script -C none -n "stagebox A/B boot" \
		-d "$CHECKOUT/tools/image/rpi/boot.cmd" "$BINARIES_DIR/boot.scr" >/dev/null ||
		fail "mkimage could not make boot.scr (BR2_PACKAGE_HOST_UBOOT_TOOLS)"
	printf 'BOOT_ORDER=A\nBOOT_A_LEFT=3\nBOOT_B_LEFT=0\n' |
		mkenvimage -s 0x4000 -o "$BINARIES_DIR/stagebox-boot.env" - ||
		fail "mkenvimage could not make stagebox-boot.env"
	SLOT_FILES="$BINARIES_DIR/boot.scr $BINARIES_DIR/stagebox-boot.env"
fi

# Everything genimage puts at the top of the FAT partition, relative to
# BINARIES_DIR: the firmware files and overlays/, config.txt, cmdline.txt,
# stagebox.toml (all in rpi-firmware/), the device trees, and the kernel (or
# with the slots, U-Boot and its two files).
FILES=''
# shellcheck disable=SC2086 # SLOT_FILES: paths without blanks, or nothing
for path in "$FIRMWARE"/* "$BINARIES_DIR"/*.dtb "$BINARIES_DIR/$KERNEL" $SLOT_FILES; do
	[ -e "$path" ] || continue
	FILES="$FILES${FILES:+,
}			\"${path#"$BINARIES_DIR"/}\""
done

# (Without RAUC the second slot would be left out; the defconfigs all have it.)
awk -v files="$FILES" -v slots="$UPDATES" '
	$0 == "@BOOT_FILES@" { print files; next }
	/@SLOT_B@/ { if (slots) { sub(/[[:space:]]*# @SLOT_B@$/, ""); print } next }
	{ print }' "$BOARD_DIR/genimage.cfg.in" >"$GENIMAGE_CFG"

# An empty root path: the root filesystem image is already made, genimage only
# places it (it would copy a given root path for nothing).
ROOTPATH_TMP=$(mktemp -d)
trap 'rm -rf "$ROOTPATH_TMP"' EXIT
rm -rf "$GENIMAGE_TMP"

genimage \
	--rootpath "$ROOTPATH_TMP" \
	--tmppath "$GENIMAGE_TMP" \
	--inputpath "$BINARIES_DIR" \
	--outputpath "$BINARIES_DIR" \
	--config "$GENIMAGE_CFG"

printf 'post-image.sh: %s is ready; write it with tools/flash-sd %s /dev/sdX\n' \
	"$BINARIES_DIR/sdcard.img" "$BINARIES_DIR/sdcard.img"

# The update bundle of this very root (BR2_PACKAGE_HOST_RAUC), signed with
# STAGEBOX_KEY and STAGEBOX_CERT, or the development pair of dev-keys.
[ -n "$UPDATES" ] || exit 0
RAUC=$HOST_DIR/bin/rauc
[ -x "$RAUC" ] || fail "no host rauc in $HOST_DIR/bin (BR2_PACKAGE_HOST_RAUC): no update bundle made"
# shellcheck source=/dev/null # written by post-build.sh
. "$TARGET_DIR/etc/stagebox-release"
KEY=${STAGEBOX_KEY:-} CERT=${STAGEBOX_CERT:-}
if [ -z "$KEY" ] || [ -z "$CERT" ]; then
	KEYS=$("$CHECKOUT/tools/image/dev-keys") || fail "tools/image/dev-keys failed"
	KEY=$KEYS/development.key.pem CERT=$KEYS/development.cert.pem
fi
BUNDLE_DIR=$(mktemp -d)
trap 'rm -rf "$ROOTPATH_TMP" "$BUNDLE_DIR"' EXIT
cp "$BINARIES_DIR/rootfs.ext4" "$BUNDLE_DIR/rootfs.ext4"
printf '[update]\ncompatible=%s\nversion=%s\ndescription=Stagebox %s for the Buildroot Pi card\n\n[bundle]\nformat=verity\n\n[image.rootfs]\nfilename=rootfs.ext4\n' \
	"$COMPATIBLE" "$VERSION" "$VERSION" >"$BUNDLE_DIR/manifest.raucm"
rm -f "$BINARIES_DIR/update.raucb"
"$RAUC" --cert="$CERT" --key="$KEY" bundle "$BUNDLE_DIR" "$BINARIES_DIR/update.raucb" >/dev/null ||
	fail "rauc bundle failed"
printf 'post-image.sh: %s is the update bundle (%s %s); install it with "update FILE" at the console\n' \
	"$BINARIES_DIR/update.raucb" "$COMPATIBLE" "$VERSION"
