#!/bin/bash
# 80-stress-smoke.t: 30 s of `make stress` on the kernel under test, so that
# a race between soft affinity writes (masks and ratios, per thread and per
# process), sched_setaffinity/taskset, cpuset edits and cgroup preferences,
# moves between cgroups, CPU hotplug, sysctl churn, fork/exec storms and
# softaffd restarts
# shows up in every CI run. The long run on the debug kernel is `make
# stress` (tests/stress/run-stress); the driver and what it checks are in
# tests/stress/stress-guest and tests/stress/src/softaff_stress.c.
# STRESS_SMOKE_SECONDS and SEED override the duration and the seed.
# The payload installs the driver here; vm/run --script copies this file
# elsewhere, so the path is absolute.
exec /opt/softaff/tests/stress/stress-guest "${STRESS_SMOKE_SECONDS:-30}" ${SEED:+"$SEED"}
