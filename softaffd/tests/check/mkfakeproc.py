#!/usr/bin/env python3
# Fill a fake /proc root with many processes, fast (a shell loop takes
# minutes for thousands).  Files as tests/run-check.sh's mkproc writes them.
#
#   mkfakeproc.py ROOT FIRST_PID COUNT COMM THREADS [HARD]
#
# adds COUNT processes FIRST_PID.. named COMM, each with THREADS threads
# (tids PID, PID+1..: leave room between PIDs), hard mask HARD (0-3) and
# no soft affinity requested at any level (ABI v4: the request files read
# an empty line, status says source none).
import os
import sys

root, first, count, comm, nthreads = sys.argv[1:6]
hard = sys.argv[6] if len(sys.argv) > 6 else "0-3"
first, count, nthreads = int(first), int(count), int(nthreads)


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def stat_line(tid, start):
    # pid (comm) state, then fields 4..52; 9 = flags, 22 = starttime
    fields = ["0"] * 49
    fields[0] = "1"
    fields[22 - 4] = str(start)
    return "%d (%s) S %s\n" % (tid, comm, " ".join(fields))


for i in range(count):
    pid = first + i * (nthreads + 1)
    start = 1000 + pid
    status = ("Name:\t%s\nUid:\t0\t0\t0\t0\nCpus_allowed_list:\t%s\n"
              "Cpus_preferred_list:\t%s\nCpus_preferred_source:\tnone\n"
              "Cpus_preferred_ratio:\t100:1\n"
              "Cpus_preferred_ratio_source:\tdefault\n") % (comm, hard, hard)
    for t in range(nthreads):
        tid = pid + t
        d = "%s/%d/task/%d" % (root, pid, tid)
        os.makedirs(d, exist_ok=True)
        write(d + "/stat", stat_line(tid, start))
        write(d + "/status", status)
        write(d + "/soft_affinity_list", "\n")
        write(d + "/soft_affinity_ratio", "\n")
    write("%s/%d/stat" % (root, pid), stat_line(pid, start))
    write("%s/%d/status" % (root, pid), status)
    write("%s/%d/soft_affinity_list" % (root, pid), "\n")
    write("%s/%d/soft_affinity_ratio" % (root, pid), "\n")
    write("%s/%d/cmdline" % (root, pid), comm + "\0--flag\0")
    write("%s/%d/cgroup" % (root, pid), "0::/system.slice/x.service\n")
