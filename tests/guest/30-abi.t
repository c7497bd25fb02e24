#!/bin/bash
# 30-abi.t: the soft affinity procfs and sysctl ABI (kernel/patches), in C
# for exact errno checks: formats and round-trips, every EINVAL/EPERM/ESRCH
# case with the mask unchanged, what is stored rather than refused since
# issue #13 (a request outside the hard mask, of offline CPUs only, to a
# SCHED_FIFO/RR task), process vs thread requests (the one written last is
# in force), Cpus_preferred_source, threads created during a write,
# fork/exec, taskset, cgroup v2 cpuset.cpus, CPU hotplug, the
# soft_affinity_ratio files' formats and errnos, and the
# sched_{preferred,allowed} sysctls. Cgroup preferences, f_cred and the
# thread-storm latency are in 36-preference.t.
exec softaff_abi
