# shellcheck shell=sh
# The card's disk, for the init scripts (S30stagebox-storage, S35rauc): which disk holds the
# running root filesystem, and its partitions by number. BusyBox sh; reads only /proc, /sys.

# The kernel name (mmcblk0, vda, sda) of the disk holding the root filesystem, from the
# device number of / in mountinfo (the Pi's /proc/mounts says /dev/root).
root_disk() {
	rootdev=''
	# ID PARENT MAJ:MIN ROOT MOUNTPOINT ...; the last mount on / is the one in use.
	while read -r _ _ majmin _ mnt _; do
		[ "$mnt" = / ] && rootdev=$majmin
	done </proc/self/mountinfo
	[ -n "$rootdev" ] || return 1
	part=$(readlink -f "/sys/dev/block/$rootdev") || return 1
	[ -f "$part/partition" ] || return 1
	basename "$(dirname "$part")"
}

disk_of() { # /dev/PART -> DISK
	p=$(readlink -f "/sys/class/block/${1##*/}") || return 1
	[ -f "$p/partition" ] || return 1
	basename "$(dirname "$p")"
}

part_number() { # DISK N|last -> /dev/NAME of partition N (or the highest-numbered) of DISK
	best='' best_n=0
	for p in /sys/block/"$1"/"$1"*; do
		n=$(cat "$p/partition" 2>/dev/null) || continue
		[ "$2" = "$n" ] && echo "/dev/${p##*/}" && return 0
		[ "$2" = last ] && [ "$n" -gt "$best_n" ] && best=/dev/${p##*/} best_n=$n
	done
	[ -n "$best" ] && echo "$best"
}
