# shellcheck shell=bash
# The rig's guest architectures, sourced by prepare, run, test and lib.sh (see README.md):
#   x86_64   Debian's amd64 kernel, the host's own root as the guest's (the default)
#   aarch64  Debian's arm64 kernel on qemu-system-aarch64 -M virt, an arm64 Debian tree as
#            the guest's root, with the checkout, /tmp and the rig's bin/ seen through it
# The choice travels in STAGEBOX_VM_ARCH (exported), so that the scenarios' own calls of
# run, and their guest halves, follow `tools/vm/test --arch`.

VM_CACHE_BASE=${STAGEBOX_VM_CACHE:-$HOME/.cache/stagebox-vm}

# vm_arch ARCH: sets VM_ARCH, VM_CACHE (this architecture's cache: the base for
# x86_64, as it always was; base/aarch64 for aarch64) and TIME_SCALE (the factor the
# scenarios' time limits are multiplied by: TCG emulates arm64 on x86 several times slower
# than x86 itself; STAGEBOX_VM_TIME_SCALE overrides it). Fails on an unknown ARCH.
# shellcheck disable=SC2034 # used by the scripts that source this
vm_arch() {
	case $1 in
	x86_64 | amd64) VM_ARCH=x86_64 VM_CACHE=$VM_CACHE_BASE TIME_SCALE=1 ;;
	aarch64 | arm64) VM_ARCH=aarch64 VM_CACHE=$VM_CACHE_BASE/aarch64 TIME_SCALE=3 ;;
	*) return 1 ;;
	esac
	TIME_SCALE=${STAGEBOX_VM_TIME_SCALE:-$TIME_SCALE}
	export STAGEBOX_VM_ARCH=$VM_ARCH
}

# scaled SECONDS: SECONDS times TIME_SCALE (a scenario's limits on a slower guest).
scaled() { echo $(($1 * TIME_SCALE)); }

# vm_machine KDIR KREL CHECKOUT (run): how QEMU boots this architecture. Sets QEMU,
# MACHINE (its options: board, CPU, kernel), TTY (the console), PVPANIC (the guest's
# module that reports a panic to QEMU, or none), ROOTDIR (the guest's root inside the
# host's: empty = the host's own), HOSTDIRS (host folders laid over that root at their own
# paths) and GUEST_PWD (where COMMAND starts).
#   x86_64:  the ELF vmlinux (PVH boot), -device pvpanic, the host's root.
#   aarch64: -M virt, Debian's arm64 Image (uncompressed: QEMU loads it as it is), no
#            pvpanic in Debian's arm64 kernel (a panic reboots: panic=-1, -no-reboot); the
#            root is the arm64 tree, with the checkout, the working directory, /tmp and
#            the rig's bin/ (playrec) over it. Real paths: the guest follows no host link.
vm_machine() {
	if [ "$VM_ARCH" = x86_64 ]; then
		QEMU=qemu-system-x86_64 TTY=ttyS0 PVPANIC=pvpanic-mmio ROOTDIR='' HOSTDIRS='' GUEST_PWD=$PWD
		MACHINE=(-M pc -cpu max -kernel "$1/vmlinux" -device pvpanic)
	else
		QEMU=qemu-system-aarch64 TTY=ttyAMA0 PVPANIC='' GUEST_PWD=$(pwd -P)
		ROOTDIR=$(readlink -f "$VM_CACHE/rootfs")
		MACHINE=(-M virt -cpu "${STAGEBOX_VM_CPU:-cortex-a72}" -kernel "$1/root/boot/vmlinuz-$2")
		HOSTDIRS=$(outermost "$(cd "$3" && pwd -P)" "$GUEST_PWD" "$(readlink -f /tmp)" "$(readlink -f "$VM_CACHE/bin")")
	fi
}
# outermost DIR...: the DIRs that are not inside another one of them.
outermost() {
	local d e out=()
	for d in "$@"; do
		for e in "$@"; do [[ $d != "$e" && $d == "${e%/}"/* ]] && continue 2; done
		[[ " ${out[*]} " == *" $d "* ]] || out+=("$d")
	done
	echo "${out[*]}"
}
