# shellcheck shell=sh
# BOOT (the FAT partition at /boot) is mounted read-only, so that a power cut finds it clean.
# with_boot_writable CMD [ARGS...] makes it writable for the moment CMD runs (fw_setenv
# writing the slots' boot variables, S96update-bundles renaming a bundle), one such moment at
# a time (a lock directory in /run: BusyBox here has no flock), and read-only again after,
# even when CMD fails; returns CMD's status.

with_boot_writable() {
	n=0
	until mkdir /run/boot-writable.lock 2>/dev/null; do
		n=$((n + 1))
		[ $n -le 300 ] || {
			echo "boot-rw: /run/boot-writable.lock held for 30 s: going ahead" >&2
			break
		}
		sleep 0.1
	done
	remounted=''
	if grep -q " /boot vfat ro[, ]" /proc/mounts; then
		if ! mount -o remount,rw /boot; then
			rmdir /run/boot-writable.lock 2>/dev/null
			echo "boot-rw: cannot make /boot writable" >&2
			return 1
		fi
		remounted=1
	fi
	"$@"
	status=$?
	sync
	[ -z "$remounted" ] || mount -o remount,ro /boot || echo "boot-rw: /boot stays writable" >&2
	rmdir /run/boot-writable.lock 2>/dev/null
	return $status
}
