#!/bin/bash
# 30-abi.t: the soft affinity procfs and sysctl ABI (kernel/patches), in C
# for exact errno checks: formats and round-trips, every EINVAL/EPERM/ESRCH
# case with the mask unchanged, whole-process vs per-thread writes, threads
# created during a write, fork/exec, taskset, cgroup v2 cpuset, CPU hotplug,
# SCHED_FIFO and the sched_{preferred,allowed} sysctls.
exec softaff_abi
