# shellcheck shell=bash disable=SC2154 # tmp: set by the scenario that sources this
# Shared by the scenarios that boot the Pi card on QEMU's emulated Pi 3 B (pi-card,
# pi-card-flash): sourced after lib.sh, with $tmp set to the scenario's directory.
IMAGE=$CHECKOUT/tools/image
TREE=${STAGEBOX_PI_TREE:-$CHECKOUT/.build/static/aarch64}
export MTOOLS_SKIP_CHECK=1
[ -x "$TREE/usr/bin/stagebox" ] ||
	fail "no static aarch64 stagebox tree in $TREE: run tools/build-static --target aarch64 first"

# pi_boot CARD N ARGS...: one boot of CARD on the emulated Pi (card_boot, lib.sh).
pi_boot() { card_boot "$1" "$2" --machine raspi3b "${@:3}"; }

# loopback_card CARD [SIZE [VERSION]]: the Pi card with the loopback codec (QEMU has no I2S), made SIZE
# (QEMU wants a power of two, e.g. 1G; none: as built), its stagebox.toml edited on BOOT as a
# user would from a PC: the watchdog is softdog (/dev/watchdog1), since QEMU's BCM2835 watchdog
# resets at once when armed.
loopback_card() {
	local card=$1 size=${2:-} version=${3:-} t boot_at
	t=$(now)
	"$IMAGE/build" --board rpi --codec loopback --static-tree "$TREE" ${version:+--version "$version"} "$card" 2>&1 | sed 's/^/  /'
	echo "loopback card built in $(since "$t") s"
	[ -z "$size" ] || truncate -s "$size" "$card"
	boot_at=$(part_start "$card" 1)
	mcopy -n -i "$card@@$boot_at" ::stagebox.toml "$tmp/stagebox.toml"
	sed -i 's|^device = "/dev/watchdog" |device = "/dev/watchdog1" |' "$tmp/stagebox.toml"
	grep -q '^device = "/dev/watchdog1"' "$tmp/stagebox.toml" || rig_fail "the card's stagebox.toml has no [watchdog] device line to edit"
	mcopy -o -i "$card@@$boot_at" "$tmp/stagebox.toml" ::stagebox.toml
}

# boot_vars CARD: the slots' boot variables as BOOT's stagebox-boot.env holds them (the
# U-Boot environment format), NAME=VALUE a line; nothing when it is missing or its CRC wrong.
boot_vars() {
	rm -f "$tmp/uboot.env"
	mcopy -n -i "$1@@$(part_start "$1" 1)" ::stagebox-boot.env "$tmp/uboot.env" 2>/dev/null || return 0
	python3 - "$tmp/uboot.env" <<-'EOF'
		import sys, zlib
		data = open(sys.argv[1], "rb").read()
		crc, body = int.from_bytes(data[:4], "little"), data[4:]
		if zlib.crc32(body) != crc:
		    sys.exit(0)
		for pair in body.split(b"\0\0")[0].split(b"\0"):
		    if pair:
		        print(pair.decode(errors="replace"))
	EOF
}
