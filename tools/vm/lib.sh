# shellcheck shell=bash
# Sourced by tools/vm/scenarios/*, in both halves: the host's, and the guest's (a
# scenario re-invokes itself in the guest as "$0 guest ..."; the guest sees the
# checkout at the same path). Not executable: tools/vm/test runs only scenarios/*.

VM=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CHECKOUT=$(cd "$VM/../.." && pwd)
# shellcheck source=SCRIPTDIR/arch.sh
. "$VM/arch.sh"
# The guest's architecture: tools/vm/test --arch exports it (TIME_SCALE, scaled: arch.sh).
vm_arch "${STAGEBOX_VM_ARCH:-x86_64}" || { echo "STAGEBOX_VM_ARCH: x86_64 or aarch64" && exit 122; }
CACHE=$VM_CACHE
# The program under test. Scenarios run a copy of it (snapshot_stagebox). On aarch64 the
# static binary of tools/build-static for arm64 (the host runs it through qemu-user).
if [ "$VM_ARCH" = aarch64 ]; then
	STAGEBOX=${STAGEBOX:-$CHECKOUT/.build/static/aarch64/usr/bin/stagebox}
else
	STAGEBOX=${STAGEBOX:-$CHECKOUT/.build/debug/stagebox}
fi
PLAYREC=$CACHE/bin/playrec
# A guest half exits with this when the rig failed rather than the program under test
# (tools/vm/run uses it for its own failures too); attempts then tries once more.
RIG_FAILED=122

# The last line a scenario prints is its reason (tools/vm/test shows it).
fail() {
	echo "$*"
	exit 1
}
rig_fail() {
	echo "rig: $*"
	exit "$RIG_FAILED"
}
now() { printf '%s' "$EPOCHREALTIME"; }
# xruns_in STATUS: the xrun line of a `stagebox console --execute status` answer and its
# capture + playback count ("0" and no line when there is none): evidence that the guest
# stood still, for scenarios that then call their attempt the rig's failure.
xruns_in() {
	local line
	line=$(grep -m 1 '^xruns' <<<"$1" || true)
	if [[ $line =~ capture\ ([0-9]+),\ playback\ ([0-9]+) ]]; then
		echo "$((BASH_REMATCH[1] + BASH_REMATCH[2])) $line"
	else
		echo 0
	fi
}
since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }

# --- host half ---

# snapshot_stagebox DIR: copy the program under test into DIR (another engineer may
# rebuild it while the guest runs; the guest reads files as they are when it reads
# them) and check that the copy runs. A build that is linking it right now leaves a
# missing or broken file for a moment: wait and copy again, three times.
snapshot_stagebox() {
	local dir=$1 try
	for try in 1 2 3; do
		if [ -x "$STAGEBOX" ] && cp "$STAGEBOX" "$dir/stagebox" 2>/dev/null &&
			"$dir/stagebox" --version >/dev/null 2>&1; then
			return 0
		fi
		[ "$try" = 3 ] || sleep 5
	done
	[ -e "$STAGEBOX" ] || fail "no stagebox binary at $STAGEBOX (swift build first, or set STAGEBOX)"
	fail "$STAGEBOX does not run on the host ($dir/stagebox --version fails)"
}

# scenario_tmp: a temp dir for the host half, removed at exit; kept as
# $CACHE/logs/SCENARIO.files when the scenario fails (captures, logs).
scenario_tmp() {
	SCENARIO_TMP=$(mktemp -d)
	trap 'keep_on_failure $?' EXIT
}
keep_on_failure() {
	local kept
	kept=$CACHE/logs/$(basename "$0").files
	rm -rf "$kept"
	if [ "$1" != 0 ]; then
		mkdir -p "$CACHE/logs" && mv "$SCENARIO_TMP" "$kept" # silent: the reason stays the last line
	fi
	rm -rf "$SCENARIO_TMP"
}

# need_playrec: the linked generator/analyser (guest/playrec.c), built by prepare.
need_playrec() {
	local key
	key=$(sha256sum <"$VM/guest/playrec.c" | cut -c1-16)
	if [ ! -x "$PLAYREC" ] || [ "$(cat "$CACHE/bin/playrec.stamp" 2>/dev/null)" != "$key" ]; then
		"$VM/prepare" >&2 || fail "tools/vm/prepare failed (it builds playrec)"
	fi
}

# attempts FUNCTION ARGS...: run FUNCTION (a scenario's whole host half) in a subshell,
# and again (five tries in all; a shared build machine stalled a guest three times in a row
# on 2026-11-26, 66–154 host stalls a minute) when it
# exits 122: the rig failed, not the program under test (run's
# own verdict, or a scenario's, e.g. stagebox counted an xrun the scenario did not
# provoke: the emulated CPU lost real time). Never retried: a wrong result, a guest
# that died (125), a timeout (124).
attempts() {
	local status try
	for try in 1 2 3 4 5; do
		# Not "(...) || status=$?": errexit would be off in the subshell.
		set +e
		(
			set -e
			"$@"
		)
		status=$?
		set -e
		[[ $status == "$RIG_FAILED" && $try != 5 ]] || break
		echo "--- the rig failed (above): trying again ($((try + 1)) of 5)"
	done
	return "$status"
}

# guest RUN-ARGS... -- COMMAND...: tools/vm/run, its output shown and kept in
# $SCENARIO_TMP/guest.out; a failure ends the attempt with the reason: its last line.
guest() {
	local status reason
	set +e
	"$VM/run" "$@" 2>&1 | tee "$SCENARIO_TMP/guest.out"
	status=${PIPESTATUS[0]}
	set -e
	[ "$status" = 0 ] && return 0
	reason=$(grep -v '^[[:space:]]*$' "$SCENARIO_TMP/guest.out" | tail -n 1)
	case $status in
	"$RIG_FAILED") rig_fail "${reason#rig: }" ;;
	124) fail "timeout: $reason" ;;
	125) fail "the guest died: $reason" ;;
	*) fail "the guest half failed (status $status): $reason" ;;
	esac
}

# --- guest half ---

# wait_until SECONDS COMMAND...: poll COMMAND every 50 ms until it succeeds.
wait_until() {
	local limit=$1 t0=$EPOCHREALTIME
	shift
	until "$@"; do
		awk -v a="$t0" -v b="$EPOCHREALTIME" -v l="$limit" 'BEGIN { exit !(b - a > l) }' && return 1
		sleep 0.05
	done
}

# pause SECONDS: sleep without starting a process (a read that times out on a FIFO
# nobody writes), for timing that must not wait on the 9p root. Needs pause_init.
pause_init() {
	mkfifo /run/pause.fifo
	exec {PAUSE_FD}<>/run/pause.fifo
}
pause() { read -rt "$1" -u "$PAUSE_FD" _ || true; }

# stagebox_config FILE FORMAT: the codec loop between the rig's two cables, as the
# scenarios run it: capture hw:Loopback,0,0 (fed by hw:Loopback,1,0), playback
# hw:Loopback,0,1 (heard at hw:Loopback,1,1), 48 kHz stereo, 256 x 4, SCHED_FIFO 70;
# no diagnostics console (stdout carries the statistics line); the outputs' fade FADE_MS
# (default 20 ms, as shipped) and suspend_after SUSPEND_AFTER (default 0: never).
stagebox_config() {
	cat >"$1" <<-EOF
		[audio]
		capture = "${CAPTURE_PCM:-hw:Loopback,0,0}"
		playback = "${PLAYBACK_PCM:-hw:Loopback,0,1}"
		rate = 48000
		format = "$2"
		inputs = 2
		outputs = 2
		period = ${PERIOD:-256}
		periods = ${PERIODS:-4}
		rt_priority = 70

		[console]
		device = "none"

		[lifecycle]
		fade_ms = ${FADE_MS:-20}
		suspend_after = ${SUSPEND_AFTER:-0}

		[[connect]]
		from = "codec.in"
		to = "codec.out"
	EOF
}

# sync_ptr_alsa_config FILE: an ALSA configuration (for ALSA_CONFIG_PATH) with the system's
# and two PCMs, sync_ptr_capture and sync_ptr_playback, on stagebox's usual Loopback streams,
# that reach the kernel's pointers through the SYNC_PTR ioctl instead of mmapped records, as
# alsa-lib must on arm64 and ARM: on x86_64 it runs the Pi's code path in alsa-lib.
sync_ptr_alsa_config() {
	cat >"$1" <<-EOF
		</usr/share/alsa/alsa.conf>
		pcm.sync_ptr_capture { type hw card Loopback device 0 subdevice 0 sync_ptr_ioctl true }
		pcm.sync_ptr_playback { type hw card Loopback device 0 subdevice 1 sync_ptr_ioctl true }
	EOF
}

# plug_alsa_config FILE FORMAT: an ALSA configuration (for ALSA_CONFIG_PATH) with the system's
# and two PCMs, plug_capture and plug_playback, on stagebox's usual Loopback streams through
# alsa-lib's plug plugin with the cable held at FORMAT: stagebox asking for another format
# gets a conversion plugin (linear) between it and the kernel, as on a codec that offers
# one format only.
plug_alsa_config() {
	cat >"$1" <<-EOF
		</usr/share/alsa/alsa.conf>
		pcm.plug_capture { type plug slave { pcm "hw:Loopback,0,0" format $2 } }
		pcm.plug_playback { type plug slave { pcm "hw:Loopback,0,1" format $2 } }
	EOF
}

# part_start CARD N: the byte offset of partition N of a disk image.
part_start() {
	sfdisk -J "$1" | python3 -c "import json, sys; print(json.load(sys.stdin)['partitiontable']['partitions'][$2 - 1]['start'] * 512)"
}
# part_end_mib CARD N: where partition N of a disk image ends, in MiB.
part_end_mib() {
	sfdisk -J "$1" | python3 -c "import json, sys; p = json.load(sys.stdin)['partitiontable']['partitions'][$2 - 1]; print((p['start'] + p['size']) // 2048)"
}

# alive PID: whether the process still runs (not a zombie waiting for wait).
alive() { [ -d "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }

# need_packages PACKAGE...: install the Debian packages a scenario's host half needs (a fresh
# CI machine may lack them); the guest sees the host's root, so they are there too.
need_packages() { "$CHECKOUT/tools/apt-install" "$@" || rig_fail "cannot install $*"; }

# data_sums CARD [N]: sha256 of every file on /data (partition N, default 4: a card with two
# root slots) but RAUC's own records, the kept time and chrony's drift, a line each. Read from
# a copy whose journal e2fsck has replayed, as the next boot would: after a power cut the
# newest metadata may be in the journal only. The kept time ([clock] file,
# /data/stagebox-clock, and its .new while it is written) is saved at every start by design:
# every boot changes it; chronyd writes its estimate of the clock's drift (/data/chrony/drift)
# when it stops, so a boot that ends in a clean reboot (an update's) may make or change it.
data_sums() {
	local at size
	# shellcheck disable=SC2154 # tmp: the scenario's directory
	at=$(part_start "$1" "${2:-4}")
	size=$(($(part_end_mib "$1" "${2:-4}") * 1048576 - at))
	dd if="$1" of="$tmp/data-copy.ext4" bs=1M iflag=skip_bytes,count_bytes skip="$at" count="$size" conv=sparse status=none
	e2fsck -fy "$tmp/data-copy.ext4" >/dev/null 2>&1 || true
	rm -rf "$tmp/data-dump" && mkdir -p "$tmp/data-dump"
	debugfs -R "rdump / $tmp/data-dump" "$tmp/data-copy.ext4" >/dev/null 2>&1
	(cd "$tmp/data-dump" && find . -type f ! -path './rauc/*' ! -path './lost+found/*' ! -path './stagebox-clock' ! -path './stagebox-clock.new' ! -path './chrony/*' -print0 | sort -z | xargs -0 sha256sum)
	rm -rf "$tmp/data-dump" "$tmp/data-copy.ext4"
}

# card_boot CARD N ARGS...: one boot of a card by tools/image/boot (ARGS: its options, and the
# command); what it printed in $tmp/bootN.txt (echoed, indented), the run's files in $tmp/bootN.
# A rig failure stops the scenario as one; any other failure shows the console's end and fails.
card_boot() {
	local card=$1 n=$2 status=0
	shift 2
	"$CHECKOUT/tools/image/boot" "$card" --timeout 400 --out "$tmp/boot$n" "$@" >"$tmp/boot$n.txt" 2>&1 || status=$?
	sed "s/^/  boot $n: /" "$tmp/boot$n.txt"
	case $status in
	0) ;;
	122) rig_fail "boot $n: $(tail -n 1 "$tmp/boot$n.txt")" ;;
	*) tail -n 20 "$tmp/boot$n/console.log" 2>/dev/null | tr -d '\r' | sed "s/^/  console $n: /"
		fail "boot $n failed (status $status): $(tail -n 1 "$tmp/boot$n.txt")" ;;
	esac
}
