#!/bin/sh
# Runs from /sbin/softaff-init (before systemd) with the payload disk mounted
# at $0's directory: copies this boot's files into the snapshot root.
here=$(dirname "$0")
# tar, not cp: /lib, /bin and /sbin are symlinks into /usr on bookworm, and
# --keep-directory-symlink leaves them so.
tar -C "$here/overlay" -cf - . | tar -C / -xf - --keep-directory-symlink --no-same-owner
wants=/etc/systemd/system/multi-user.target.wants
mkdir -p "$wants"
if [ -e /usr/lib/systemd/system/softaffd.service ]; then
	if [ -e /proc/self/soft_affinity ]; then
		ln -sf /usr/lib/systemd/system/softaffd.service "$wants/softaffd.service"
	else
		echo "softaff-init: this kernel has no /proc/PID/soft_affinity; softaffd left disabled" >/dev/console
	fi
fi
if [ -x /opt/softaff/job/script ]; then
	ln -sf /usr/lib/systemd/system/softaff-job.service "$wants/softaff-job.service"
fi
# ACCEL=icount with several CPUs: vm/run boots with maxcpus=1 (QEMU 7.2's
# icount starves the APs at boot, notes-icount.md); online the others here,
# before systemd, so that every service sees the whole topology.
case " $(cat /proc/cmdline) " in
*" softaff.icount_online=1 "*)
	mounted=
	if [ ! -d /sys/devices/system/cpu ]; then
		mount -t sysfs sysfs /sys && mounted=1
	fi
	/opt/softaff/bin/icount_online >/dev/console 2>&1 ||
		echo "softaff-init: icount_online failed, online CPUs: $(cat /sys/devices/system/cpu/online)" >/dev/console
	[ -n "$mounted" ] && umount /sys
	;;
esac
