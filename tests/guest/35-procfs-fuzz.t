#!/bin/bash
# 35-procfs-fuzz.t: random bytes and lengths (0, around a page, up to 1 MiB,
# embedded NULs, no newline, pwrite at an offset, a value split over two
# writes) into soft_affinity{,_list} and soft_affinity_ratio (one thread
# and the whole process) and the two sysctls: a refused write fails with
# EINVAL and changes nothing; an accepted one leaves every thread with what
# the model of issue #13 gives (the last written of thread and process
# request is in force, masks and ratios each on their own; a request
# outside a thread's hard mask is stored and shows as the hard mask).
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
