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
