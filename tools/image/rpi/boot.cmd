# Stagebox: U-Boot's boot script on the Pi cards (tools/image/build --board rpi and the
# Buildroot tree's post-image.sh make boot.scr of it with mkimage). It picks the root slot to
# boot, A (partition 2) or B (partition 3), with the variables of RAUC's U-Boot backend:
#   BOOT_ORDER   the slots in the order to try them ("A B": A first)
#   BOOT_A_LEFT  tries left for A before it is passed over; BOOT_B_LEFT the same for B
# They live in BOOT's stagebox-boot.env (U-Boot's binary environment format, with its CRC),
# which RAUC writes with fw_setenv (/etc/fw_env.config) and this script reads and writes on
# the device it was itself loaded from. Not in U-Boot's own uboot.env: U-Boot would load that
# whole at start-up on mmc 0, which is not the SD card on every Pi, and keep in it what it
# learnt from the board and the firmware (the device tree's address), stale on the next boot.
# Every boot takes one try from the first slot in BOOT_ORDER that has any left, and saves
# that before the kernel starts: a boot that dies (a kernel that does not come up, a power
# cut, a watchdog reset, a trial that times out: /etc/init.d/S35rauc) has used its try. Once
# stagebox has run healthy it marks its slot good (`rauc status mark-good`), which gives it
# its 3 tries back. A slot whose tries are used up is passed over: after 3 failed boots of a
# new slot the other one boots. The firmware has loaded the board's device tree (with
# cmdline.txt as its bootargs); the kernel and initramfs come from the chosen slot, so an
# update replaces them with the rest of the system.

setenv envfile stagebox-boot.env
# Above where the kernel will lie, below the initramfs, away from this script (at scriptaddr).
setenv envaddr 0x02a00000
setenv BOOT_ORDER
setenv BOOT_A_LEFT
setenv BOOT_B_LEFT
if load ${devtype} ${devnum}:1 ${envaddr} ${envfile}; then
	env import -c ${envaddr} 0x4000 BOOT_ORDER BOOT_A_LEFT BOOT_B_LEFT || echo "stagebox: ${envfile} is damaged: slot A first"
fi
test -n "${BOOT_ORDER}" || setenv BOOT_ORDER "A B"
test -n "${BOOT_A_LEFT}" || setenv BOOT_A_LEFT 3
test -n "${BOOT_B_LEFT}" || setenv BOOT_B_LEFT 3

# Saves the three variables, and only those, to BOOT (what fw_setenv reads on Linux).
setenv stagebox_save 'env export -c -s 0x4000 ${envaddr} BOOT_ORDER BOOT_A_LEFT BOOT_B_LEFT && fatwrite ${devtype} ${devnum}:1 ${envaddr} ${envfile} 0x4000 || echo "stagebox: cannot save ${envfile}: this boot does not count"'

setenv slot
for s in ${BOOT_ORDER}; do
	if test "x${slot}" = "x"; then
		if test "x${s}" = "xA" && test ${BOOT_A_LEFT} -gt 0; then
			setexpr BOOT_A_LEFT ${BOOT_A_LEFT} - 1
			setenv slot A
			setenv rootpart 2
		elif test "x${s}" = "xB" && test ${BOOT_B_LEFT} -gt 0; then
			setexpr BOOT_B_LEFT ${BOOT_B_LEFT} - 1
			setenv slot B
			setenv rootpart 3
		fi
	fi
done

if test "x${slot}" = "x"; then
	# Every slot failed its tries: give them all 3 again and start over, rather than stop a
	# box nobody can reach, the second in the order first: the first one used its tries first
	# (a failed update whose fallback then had short boots goes back to the fallback).
	echo "stagebox: no root slot has tries left; both get 3 again, the other one first"
	setenv BOOT_A_LEFT 3
	setenv BOOT_B_LEFT 3
	if test "${BOOT_ORDER}" = "B A"; then
		setenv BOOT_ORDER "A B"
	elif test "${BOOT_ORDER}" = "A B"; then
		setenv BOOT_ORDER "B A"
	fi
	run stagebox_save
	reset
fi

echo "stagebox: booting slot ${slot} (partition ${rootpart}); tries left: A ${BOOT_A_LEFT}, B ${BOOT_B_LEFT}"
run stagebox_save

# cmdline.txt, as the firmware put it in the device tree, plus the slot's root and name.
fdt addr ${fdt_addr}
fdt get value cmdline /chosen bootargs
part uuid ${devtype} ${devnum}:${rootpart} rootuuid
setenv bootargs "${cmdline} root=PARTUUID=${rootuuid} rauc.slot=${slot}"

# Debian's arm64 kernel is an uncompressed Image of about 32 MiB (booti moves it to 0x200000):
# the initramfs goes well above where it ends.
setenv ramdisk_addr_r 0x03000000
if load ${devtype} ${devnum}:${rootpart} ${kernel_addr_r} /usr/lib/stagebox/kernel/vmlinuz; then
	if test -e ${devtype} ${devnum}:${rootpart} /usr/lib/stagebox/kernel/initramfs.cpio; then
		if load ${devtype} ${devnum}:${rootpart} ${ramdisk_addr_r} /usr/lib/stagebox/kernel/initramfs.cpio; then
			booti ${kernel_addr_r} ${ramdisk_addr_r}:${filesize} ${fdt_addr}
		fi
	else
		# The Buildroot card's kernel has its drivers built in and mounts the root itself.
		booti ${kernel_addr_r} - ${fdt_addr}
	fi
fi
# No kernel in that slot (an empty or broken slot): its try is spent; the next boot moves on.
echo "stagebox: slot ${slot} has no kernel that boots; resetting to try again"
reset
