# shellcheck shell=bash
# Sourced by tools/vm/prepare for --arch aarch64 (see README.md, "aarch64"): Debian's arm64
# packages through an apt configuration of the rig's own (the host's dpkg gets no foreign
# architecture), qemu-aarch64 registered with binfmt_misc, and the arm64 Debian tree that
# is the guest's root. Uses prepare's CACHE, log, die, apt_download and stamps.

ARM_APT=$CACHE/apt
ROOTFS=$CACHE/rootfs
SUITE=${STAGEBOX_VM_SUITE:-bookworm}
MIRROR=${STAGEBOX_VM_MIRROR:-http://deb.debian.org/debian}
# What the guest halves of the scenarios run (the x86 guest has the host's tools instead).
ROOTFS_PACKAGES=(bash coreutils alsa-utils gpiod python3 kmod e2fsprogs util-linux mount procps
	strace fdisk xz-utils zstd gzip diffutils)

# arm_apt apt-get|apt-cache ARGS...: apt on Debian's arm64 packages, state in $CACHE/apt.
arm_apt() {
	local cmd=$1
	shift
	"$cmd" -o Dir::State="$ARM_APT/state" -o Dir::State::status="$ARM_APT/status" \
		-o Dir::Cache="$ARM_APT/cache" -o Dir::Etc::SourceList=/dev/null \
		-o Dir::Etc::SourceParts="$ARM_APT/sources.list.d" -o Acquire::Languages=none \
		-o APT::Architecture=arm64 -o APT::Architectures::=arm64 "$@"
}

# arm_apt_update: (re)read the arm64 package lists; the suites are the host's kernel's.
arm_apt_update() {
	mkdir -p "$ARM_APT"/state/lists/partial "$ARM_APT"/cache/archives/partial "$ARM_APT"/sources.list.d
	: >"$ARM_APT/status"
	cat >"$ARM_APT/sources.list.d/debian.sources" <<-EOF
		Types: deb
		URIs: $MIRROR
		Suites: $SUITE $SUITE-updates
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

		Types: deb
		URIs: ${MIRROR%/debian}/debian-security
		Suites: $SUITE-security
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
	EOF
	log "apt-get update (arm64, $ARM_APT)"
	arm_apt apt-get update -qq >"$CACHE/apt.log" 2>&1 || log "warning: apt-get update (arm64) failed"
}

# binfmt_aarch64: arm64 programs run on the host through qemu-aarch64-static, with the F
# flag (the interpreter opened at registration, so it works inside the arm64 chroot):
# debootstrap's second stage, busybox --list, and the scenarios' `stagebox --version`.
# tools/cross/binfmt does it, for the cross build's tests too.
binfmt_aarch64() {
	"$VM_DIR/../cross/binfmt" || die "cannot register qemu-aarch64 with binfmt_misc"
}

# build_rootfs: debootstrap --variant=minbase of SUITE for arm64 with ROOTFS_PACKAGES, into
# $CACHE/rootfs (the guest's root, read-only under its tmpfs overlay). Its stamp: the suite,
# the mirror and the package list; delete the folder to have it rebuilt with newer packages.
build_rootfs() {
	local key new=$ROOTFS.new
	key=$(echo "$SUITE" "$MIRROR" "${ROOTFS_PACKAGES[@]}" | sha256sum | cut -c1-16)
	[ -x "$ROOTFS/bin/bash" ] && [ "$(cat "$CACHE/stamp.rootfs" 2>/dev/null)" = "$key" ] && return 0
	log "debootstrap --arch=arm64 $SUITE into $ROOTFS (first stage: downloads)"
	rm -rf "$new" "$ROOTFS"
	debootstrap --arch=arm64 --variant=minbase --foreign --include="$(IFS=, && echo "${ROOTFS_PACKAGES[*]}")" \
		"$SUITE" "$new" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 ||
		{ tail -n 5 "$CACHE/debootstrap.log" >&2 && die "debootstrap failed (log: $CACHE/debootstrap.log)"; }
	log "debootstrap second stage (arm64 programs under qemu-user: minutes)"
	chroot "$new" /debootstrap/debootstrap --second-stage >>"$CACHE/debootstrap.log" 2>&1 ||
		{ tail -n 5 "$CACHE/debootstrap.log" >&2 && die "debootstrap --second-stage failed (log: $CACHE/debootstrap.log)"; }
	rm -rf "$new"/var/cache/apt/archives/*.deb "$new"/var/lib/apt/lists/*_Packages
	mv "$new" "$ROOTFS"
	printf '%s\n' "$key" >"$CACHE/stamp.rootfs"
}

# Cross-compiling playrec: the cross compiler reads alsa-lib's headers from the host's
# /usr/include (libasound2-dev; the same on every architecture) after its arm64 libc's,
# and links the arm64 tree's libasound.
# shellcheck disable=SC2034 # both used by prepare
PLAYREC_CC=(aarch64-linux-gnu-gcc) PLAYREC_LIBS=("$ROOTFS/usr/lib/aarch64-linux-gnu/libasound.so.2")
