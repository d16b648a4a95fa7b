# shellcheck shell=bash disable=SC2154 # tmp: set by the scenario that sources this
# Shared by the scenarios that update the x86_64 test card with two root slots (x86-update,
# x86-rollback): sourced after lib.sh, with $tmp set to the scenario's directory.
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

# slots_boot CARD N ARGS...: one boot of CARD through its GRUB; what the command printed in
# $tmp/bootN.txt, the run's files in $tmp/bootN.
slots_boot() {
	local card=$1 n=$2 status=0
	shift 2
	"$IMAGE/boot" "$card" --bootloader --timeout 400 --out "$tmp/boot$n" "$@" >"$tmp/boot$n.txt" 2>&1 || status=$?
	sed "s/^/  boot $n: /" "$tmp/boot$n.txt"
	case $status in
	0) ;;
	122) rig_fail "boot $n: $(tail -n 1 "$tmp/boot$n.txt")" ;;
	*) grep -a 'stagebox:' "$tmp/boot$n/console.log" 2>/dev/null | tail -n 20 | tr -d '\r' | sed "s/^/  console $n: /"
		fail "boot $n failed (status $status): $(tail -n 1 "$tmp/boot$n.txt")" ;;
	esac
}

# grub_vars CARD: the slots' boot variables in BOOT's grub/grubenv, NAME=VALUE a line.
grub_vars() {
	rm -f "$tmp/grubenv"
	mcopy -n -i "$1@@$(part_start "$1" 1)" ::grub/grubenv "$tmp/grubenv" 2>/dev/null || return 0
	grub-editenv "$tmp/grubenv" list
}
