#!/bin/sh
# Runs from /sbin/softaff-init (before systemd) with the payload disk mounted
# at $0's directory: copies this boot's files into the snapshot root.
here=$(dirname "$0")
cp -a "$here/overlay/." /
wants=/etc/systemd/system/multi-user.target.wants
mkdir -p "$wants"
if [ -e /lib/systemd/system/softaffd.service ]; then
	if [ -e /proc/self/soft_affinity ]; then
		ln -sf /lib/systemd/system/softaffd.service "$wants/softaffd.service"
	else
		echo "softaff-init: this kernel has no /proc/PID/soft_affinity; softaffd left disabled" >/dev/console
	fi
fi
if [ -x /opt/softaff/job/script ]; then
	ln -sf /lib/systemd/system/softaff-job.service "$wants/softaff-job.service"
fi
