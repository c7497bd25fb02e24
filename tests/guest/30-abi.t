#!/bin/bash
# 30-abi.t: the soft affinity procfs, cgroup and sysctl ABI, v4 (issue #24),
# in C for exact errno checks (softaff_abi, tests/guest/src/softaff_abi.c):
# the request files read the request at their level, exactly as written
# ("" inherit, "none", the value); status shows what applies
# (Cpus_preferred{,_list,_source}, Cpus_preferred_ratio{,_source}, the
# source thread, process, cgroup or none/default); formats, the words
# inherit/none, and round trips of every file (read, written back: nothing
# moves); every EINVAL/EPERM/ESRCH case with nothing changed; what is
# stored rather than refused or cleared (a request outside or covering the
# hard mask, of offline CPUs only, to a SCHED_FIFO/RR task); the fixed
# precedence thread > process > cgroup, in all 27 combinations of the
# three states at the three levels, for the mask and for the ratio; the
# leader-pinned write of issue #24 (taskset on the leader, then a
# process-wide 0-1 that covers the leader's hard mask); threads created
# during a write; fork/exec; taskset, cpuset.cpus and CPU hotplug;
# cpuset.cpus.preferred.effective under inheritance and its inotify event;
# the soft_affinity_ratio files; the sysctls sched_{preferred,allowed} and
# sched_soft_affinity_ratio (A:P, both at once). The f_cred cases and the
# thread storm are in 36-preference.t.
# softaffd writes the sysctls and may write requests: stop it for the run.
active=0
if systemctl -q is-active softaffd 2>/dev/null; then
	active=1
	systemctl stop softaffd
fi
softaff_abi
rc=$?
((active)) && systemctl start softaffd
exit $rc
