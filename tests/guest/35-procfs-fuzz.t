#!/bin/bash
# 35-procfs-fuzz.t: random bytes and lengths (0, around a page, up to 1 MiB,
# embedded NULs, no newline, pwrite at an offset, a value split over two
# writes), the words inherit/none and the old word default, into
# soft_affinity{,_list} and soft_affinity_ratio (one thread and the whole
# process) and the three sysctls (sched_preferred, sched_allowed,
# sched_soft_affinity_ratio): a refused write fails with EINVAL and changes
# nothing (no request file, status line or sysctl); an accepted one leaves
# every request file reading what was written at its level ("", "none" or
# the value, exactly) and every thread's status what the model of abi-v4
# gives (the first level not in inherit decides, thread before process,
# masks and ratios each on their own; a request outside or covering a
# thread's hard mask is stored and shows as the hard mask, with the level
# as its source); the ratio sysctl always reads sched_allowed:sched_preferred.
# softaff_fuzz (tests/guest/src/softaff_fuzz.c) prints the seed; FUZZ_SEED
# and FUZZ_ITERATIONS repeat or lengthen a run.
# softaffd writes the sysctls itself: stop it for the run, start it again.
active=0
if systemctl -q is-active softaffd 2>/dev/null; then
	active=1
	systemctl stop softaffd
fi
softaff_fuzz -n "${FUZZ_ITERATIONS:-3000}" ${FUZZ_SEED:+-s "$FUZZ_SEED"}
rc=$?
((active)) && systemctl start softaffd
exit $rc
