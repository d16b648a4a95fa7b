# shellcheck shell=bash disable=SC2154 # tmp: set by the scenario that sources this
# Shared by the scenarios that update the x86_64 test card with two root slots (x86-update,
# x86-rollback, x86-update-cuts): sourced after lib.sh, with $tmp set to the scenario's
# directory.
IMAGE=$CHECKOUT/tools/image
TREE=${STAGEBOX_STATIC_TREE:-$CHECKOUT/.build/static/x86_64}
export MTOOLS_SKIP_CHECK=1
[ -x "$TREE/usr/bin/stagebox" ] || fail "no static stagebox tree in $TREE: run tools/build-static first"

# slots_card CARD VERSION: the card with two slots at VERSION, made 1 GiB (room for /data).
slots_card() {
	local t
	t=$(now)
	"$IMAGE/build" "$1" --slots 2 --static-tree "$TREE" --version "$2" 2>&1 | sed 's/^/  /'
	[ -f "$1" ] || fail "tools/image/build made no card"
	truncate -s 1G "$1"
	echo "two-slot card $2 built in $(since "$t") s"
}

# slots_boot CARD N ARGS...: one boot of CARD through its GRUB (card_boot, lib.sh).
slots_boot() { card_boot "$1" "$2" --bootloader "${@:3}"; }

# grub_vars CARD: the slots' boot variables in BOOT's grub/grubenv, NAME=VALUE a line.
grub_vars() {
	rm -f "$tmp/grubenv"
	mcopy -n -i "$1@@$(part_start "$1" 1)" ::grub/grubenv "$tmp/grubenv" 2>/dev/null || return 0
	grub-editenv "$tmp/grubenv" list
}
