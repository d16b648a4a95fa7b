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

# Everything genimage puts at the top of the FAT partition, relative to
# BINARIES_DIR: the firmware files and overlays/, config.txt, cmdline.txt,
# stagebox.toml (all in rpi-firmware/), the device trees and the kernel.
FILES=''
for path in "$FIRMWARE"/* "$BINARIES_DIR"/*.dtb "$BINARIES_DIR/$KERNEL"; do
	[ -e "$path" ] || continue
	FILES="$FILES${FILES:+,
}			\"${path#"$BINARIES_DIR"/}\""
done

awk -v files="$FILES" '$0 == "@BOOT_FILES@" { print files; next } { print }' \
	"$BOARD_DIR/genimage.cfg.in" >"$GENIMAGE_CFG"

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
