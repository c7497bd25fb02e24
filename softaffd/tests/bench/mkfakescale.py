#!/usr/bin/env python3
# A fake /proc and /sys at server scale for tests/bench-scale.sh, with
# the rules that go with it.  mkfakeproc.py makes one kind of process at
# a time for the small fixtures; this makes a whole machine in one go.
#
#   mkfakescale.py DIR [--cpus 256] [--nodes 8] [--procs 10000]
#                      [--threads 100000] [--rules 50] [--managed 2000]
#                      [--big 10] [--big-threads 1000] [--kthreads 200]
#                      [--spare 0]
#
# makes DIR/proc, DIR/sys, DIR/softaffd.conf (--rules rules, the
# shipped defaults otherwise) and DIR/manifest (one process a line:
# "pid threads kind rule comm", kind managed, other or kthread, rule
# the index of the rule it matches or -1), which the harness reads to
# pick the targets of its events instead of walking the tree again.
# With --spare N also DIR/spare: N new processes and threads of each
# kind an event brings, kept outside /proc until the harness moves one
# in (see there).
#
# The population: --managed processes spread over the rules (--big of
# them with --big-threads threads each, the rest share what is left of
# a third of the threads), --kthreads kernel threads, and other
# processes, which match no rule and so are tried against all of them,
# hold the rest.  --threads counts every task, main threads included.
#
# Files are laid out as the kernel shows them (ABI v4 of the soft
# affinity patches: a request file reads an empty line when nothing is
# asked for), with status and stat at their real size, because reading
# and parsing them is most of what the daemon does.  Files the daemon
# only reads and that are alike for all threads of a process (status,
# schedstat, sched) are hard links to the process's own: the daemon
# opens and reads each by its path just the same, and 100,000 threads
# then take ~1.4 GiB of tmpfs rather than twice that.  stat (it names
# the thread) and soft_affinity_list (the daemon writes it) are the
# thread's own.
import argparse
import os

ap = argparse.ArgumentParser()
ap.add_argument("dir")
ap.add_argument("--cpus", type=int, default=256)
ap.add_argument("--nodes", type=int, default=8)
ap.add_argument("--procs", type=int, default=10000)
ap.add_argument("--threads", type=int, default=100000)
ap.add_argument("--rules", type=int, default=50)
ap.add_argument("--managed", type=int, default=2000)
ap.add_argument("--big", type=int, default=10)
ap.add_argument("--big-threads", type=int, default=1000)
ap.add_argument("--kthreads", type=int, default=200)
# Processes and threads of each kind kept aside for the harness's events.
ap.add_argument("--spare", type=int, default=0)
# PIDs above PID_MAX_LIMIT (4194304): no host process has one of them,
# so nothing the daemon does can reach a real one.
ap.add_argument("--first-pid", type=int, default=5000000)
a = ap.parse_args()

if a.cpus % a.nodes:
    raise SystemExit("--cpus must be a multiple of --nodes")
if a.rules < 10:
    raise SystemExit("--rules: at least 10 (the kinds of rule below)")
others = a.procs - a.managed - a.kthreads
if others < 1 or a.big > a.managed:
    raise SystemExit("not enough processes for --managed and --kthreads")

PROC = os.path.join(a.dir, "proc")
SYS = os.path.join(a.dir, "sys")
O_NEW = os.O_WRONLY | os.O_CREAT | os.O_TRUNC


def write(path, text):
    fd = os.open(path, O_NEW, 0o644)
    os.write(fd, text.encode())
    os.close(fd)


# ---- rules: the matcher kinds a real configuration mixes ----
#
# First match wins, so a process that matches nothing is tried against
# all of them, reading its cmdline and exe on the way: the others are
# the expensive ones to evaluate.  Most rules are on comm; the last
# tenth are on cmdline (regexes), exe (a symlink read) and user.
n_cmd = max(1, a.rules // 10)
n_exe = max(1, a.rules // 20)
n_user = max(1, a.rules // 25)
n_comm = a.rules - n_cmd - n_exe - n_user
rules = []  # (kind, index)
for r in range(a.rules):
    kind = ("comm" if r < n_comm else
            "cmdline" if r < n_comm + n_cmd else
            "exe" if r < n_comm + n_cmd + n_exe else "user")
    rules.append(kind)


def rule_conf(r):
    node = r % a.nodes
    kind = rules[r]
    if kind == "comm":
        m = 'comm = "svc%02d-*";' % r
    elif kind == "cmdline":
        m = 'cmdline = "^/usr/bin/java .*-jar /srv/app%02d\\\\.jar";' % r
    elif kind == "exe":
        m = 'exe = "/opt/app%02d/bin/*";' % r
    else:
        m = 'comm = "batch%02d*"; user = %d;' % (r, 1000 + r)
    return '\t{ name = "r%02d"; %s nodes = [ %d ]; }' % (r, m, node)


def managed_identity(r, i):
    """comm, cmdline, exe, uid of the i-th process of rule r."""
    kind = rules[r]
    if kind == "comm":
        return ("svc%02d-w%d" % (r, i), "/usr/sbin/svc%02d\0--worker\0" % r,
                "/usr/sbin/svc%02d" % r, 0)
    if kind == "cmdline":
        return ("java", "/usr/bin/java\0-Xmx4g\0-jar\0/srv/app%02d.jar\0" % r,
                "/usr/lib/jvm/java-17/bin/java", 998)
    if kind == "exe":
        return ("app%02d-srv" % r, "/opt/app%02d/bin/server\0" % r,
                "/opt/app%02d/bin/server" % r, 0)
    return ("batch%02d-%d" % (r, i), "/usr/bin/batch\0--queue\0%d\0" % i,
            "/usr/bin/batch", 1000 + r)


# Names as a host has them: many processes share a few names.
OTHER = [("bash", "-bash\0", "/usr/bin/bash"),
         ("sshd", "sshd: admin [priv]\0", "/usr/sbin/sshd"),
         ("nginx", "nginx: worker process\0", "/usr/sbin/nginx"),
         ("python3", "/usr/bin/python3\0/srv/tool.py\0", "/usr/bin/python3"),
         ("java", "/usr/bin/java\0-Xmx1g\0-jar\0/srv/other.jar\0",
          "/usr/lib/jvm/java-17/bin/java"),
         ("postgres", "postgres: writer\0", "/usr/lib/postgresql/15/bin/postgres"),
         ("node", "node\0/srv/web/index.js\0", "/usr/bin/node"),
         ("containerd-shim", "/usr/bin/containerd-shim-runc-v2\0-id\0x\0",
          "/usr/bin/containerd-shim-runc-v2"),
         ("systemd", "/lib/systemd/systemd\0--user\0", "/usr/lib/systemd/systemd"),
         ("sleep", "sleep\0infinity\0", "/usr/bin/sleep")]

STATUS = (
    "Name:\t{comm}\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t{pid}\n"
    "Ngid:\t0\nPid:\t{pid}\nPPid:\t1\nTracerPid:\t0\n"
    "Uid:\t{uid}\t{uid}\t{uid}\t{uid}\nGid:\t{uid}\t{uid}\t{uid}\t{uid}\n"
    "FDSize:\t64\nGroups:\t\nNStgid:\t{pid}\nNSpid:\t{pid}\nNSpgid:\t{pid}\n"
    "NSsid:\t{pid}\nKthread:\t{kthread}\nVmPeak:\t  123456 kB\n"
    "VmSize:\t  123456 kB\nVmLck:\t       0 kB\nVmPin:\t       0 kB\n"
    "VmHWM:\t   23456 kB\nVmRSS:\t   23456 kB\nRssAnon:\t   12345 kB\n"
    "RssFile:\t   11111 kB\nRssShmem:\t       0 kB\nVmData:\t   45678 kB\n"
    "VmStk:\t     132 kB\nVmExe:\t     888 kB\nVmLib:\t    4567 kB\n"
    "VmPTE:\t     120 kB\nVmSwap:\t       0 kB\nHugetlbPages:\t       0 kB\n"
    "CoreDumping:\t0\nTHP_enabled:\t1\nuntag_mask:\t0xffffffffffffffff\n"
    "Threads:\t{threads}\nSigQ:\t0/95431\nSigPnd:\t0000000000000000\n"
    "ShdPnd:\t0000000000000000\nSigBlk:\t0000000000000000\n"
    "SigIgn:\t0000000000001000\nSigCgt:\t0000000180004002\n"
    "CapInh:\t0000000000000000\nCapPrm:\t0000000000000000\n"
    "CapEff:\t0000000000000000\nCapBnd:\t000001ffffffffff\n"
    "CapAmb:\t0000000000000000\nNoNewPrivs:\t0\nSeccomp:\t0\n"
    "Seccomp_filters:\t0\nSpeculation_Store_Bypass:\tthread vulnerable\n"
    "SpeculationIndirectBranch:\tconditional enabled\n"
    "Cpus_allowed:\t{mask}\nCpus_allowed_list:\t{cpus}\n"
    "Cpus_preferred:\t{mask}\nCpus_preferred_list:\t{cpus}\n"
    "Cpus_preferred_source:\tnone\nCpus_preferred_ratio:\t100:1\n"
    "Cpus_preferred_ratio_source:\tdefault\n"
    "Mems_allowed:\t{nodemask}\nMems_allowed_list:\t0-{lastnode}\n"
    "voluntary_ctxt_switches:\t1234\nnonvoluntary_ctxt_switches:\t56\n")

# What /proc/PID/sched prints with kernel.sched_schedstats=1 and the
# patches' soft counters: an idle task, so every sample sees no change.
SCHED = (
    "{comm} ({pid}, #threads: {threads})\n"
    "-------------------------------------------------------------------\n"
    "se.exec_start                                :      12345678.901234\n"
    "se.vruntime                                  :          1234.567890\n"
    "se.sum_exec_runtime                          :           123.456789\n"
    "se.nr_migrations                             :                   12\n"
    "sum_sleep_runtime                            :        123456.789012\n"
    "sum_block_runtime                            :            12.345678\n"
    "wait_start                                   :             0.000000\n"
    "sleep_start                                  :      12345678.901234\n"
    "block_start                                  :             0.000000\n"
    "sleep_max                                    :         12345.678901\n"
    "block_max                                    :             1.234567\n"
    "exec_max                                     :             1.234567\n"
    "slice_max                                    :             1.234567\n"
    "wait_max                                     :             1.234567\n"
    "wait_sum                                     :             2.345678\n"
    "wait_count                                   :                  100\n"
    "iowait_sum                                   :             0.000000\n"
    "iowait_count                                 :                    0\n"
    "nr_migrations_cold                           :                    0\n"
    "nr_failed_migrations_affine                  :                    0\n"
    "nr_failed_migrations_running                 :                    0\n"
    "nr_failed_migrations_hot                     :                    0\n"
    "nr_forced_migrations                         :                    0\n"
    "nr_wakeups                                   :                  100\n"
    "nr_wakeups_sync                              :                    0\n"
    "nr_wakeups_migrate                           :                    5\n"
    "nr_wakeups_local                             :                   90\n"
    "nr_wakeups_remote                            :                   10\n"
    "nr_wakeups_affine                            :                    0\n"
    "nr_wakeups_affine_attempts                   :                    0\n"
    "nr_wakeups_passive                           :                    0\n"
    "nr_wakeups_idle                              :                    0\n"
    "nr_wakeups_soft_spill                        :                    0\n"
    "nr_wakeups_soft_return                       :                    0\n"
    "nr_migrations_soft_spill                     :                    0\n"
    "nr_migrations_soft_return                    :                    0\n"
    "soft_outside_runtime                         :             0.000000\n"
    "avg_atom                                     :             0.123456\n"
    "avg_per_cpu                                  :            10.288065\n"
    "nr_switches                                  :                 1000\n"
    "nr_voluntary_switches                        :                  990\n"
    "nr_involuntary_switches                      :                   10\n"
    "se.load.weight                               :              1048576\n"
    "se.avg.load_sum                              :                   12\n"
    "se.avg.runnable_sum                          :                12345\n"
    "se.avg.util_sum                              :                12345\n"
    "se.avg.load_avg                              :                    0\n"
    "se.avg.runnable_avg                          :                    0\n"
    "se.avg.util_avg                              :                    0\n"
    "se.avg.last_update_time                      :       12345678901234\n"
    "policy                                       :                    0\n"
    "prio                                         :                  120\n"
    "clock-delta                                  :                   40\n")


def stat_line(tid, comm, start, flags, ppid, cpu):
    # pid (comm) state, then fields 4..52: 4 ppid, 9 flags, 22 starttime,
    # 39 processor, 41 policy; the rest plausible, for the parse's sake.
    f = ["0"] * 49
    f[4 - 4] = str(ppid)
    f[5 - 4] = f[6 - 4] = str(tid)
    f[9 - 4] = str(flags)
    f[10 - 4], f[12 - 4] = "1234", "12"
    f[14 - 4], f[15 - 4] = "321", "123"
    f[18 - 4], f[19 - 4], f[20 - 4] = "20", "0", "1"
    f[22 - 4] = str(start)
    f[23 - 4], f[24 - 4] = "126394368", "5864"
    f[25 - 4] = "18446744073709551615"
    f[39 - 4] = str(cpu)
    return "%d (%s) S %s\n" % (tid, comm, " ".join(f))


def hexmask(bits):
    words = []
    for w in range((bits + 31) // 32):
        n = min(32, bits - 32 * w)
        words.append("%08x" % ((1 << n) - 1))
    return ",".join(reversed(words))


CPUS = "0-%d" % (a.cpus - 1)
MASK = hexmask(a.cpus)
NODEMASK = hexmask(a.nodes)

# ---- the population ----
plan = []  # (kind, rule, nthreads, comm, cmdline, exe, uid)
small_managed = a.managed - a.big
managed_threads = a.threads // 3
left = managed_threads - a.big * a.big_threads
if small_managed and left < small_managed:
    raise SystemExit("too few threads for the managed processes")
per_rule = [0] * a.rules
for i in range(a.managed):
    r = i % a.rules
    per_rule[r] += 1
    if i < a.big:
        n = a.big_threads
    else:
        k = i - a.big
        n = left // small_managed + (1 if k < left % small_managed else 0)
    comm, cmd, exe, uid = managed_identity(r, per_rule[r])
    plan.append(("managed", r, n, comm, cmd, exe, uid))
for i in range(a.kthreads):
    plan.append(("kthread", -1, 1, "kworker/%d:%d" % (i % a.cpus, i // a.cpus),
                 "", "", 0))
rest = a.threads - sum(p[2] for p in plan)
if rest < others:
    raise SystemExit("too few threads for the other processes")
for i in range(others):
    comm, cmd, exe = OTHER[i % len(OTHER)]
    n = rest // others + (1 if i < rest % others else 0)
    plan.append(("other", -1, n, comm, cmd, exe, 1000 + i % 7))

# ---- /proc ----
os.makedirs(os.path.join(PROC, "self"), exist_ok=True)
os.makedirs(os.path.join(PROC, "sys", "kernel"), exist_ok=True)
write(PROC + "/self/soft_affinity", "f\n")
write(PROC + "/self/soft_affinity_ratio", "\n")
write(PROC + "/sys/kernel/sched_allowed", "100\n")
write(PROC + "/sys/kernel/sched_preferred", "1\n")
# On: the daemon would turn it on itself where it may (and reads the
# soft counters in sched then, the dearer sample).
write(PROC + "/sys/kernel/sched_schedstats", "1\n")
stat = ["cpu  %d 0 %d %d 0 0 0 0 0 0\n" % (a.cpus * 10, a.cpus * 10,
                                             a.cpus * 100)]
stat += ["cpu%d 10 0 10 100 0 0 0 0 0 0\n" % c for c in range(a.cpus)]
stat.append("intr 12345\nctxt 123456\nbtime 1700000000\n"
            "processes %d\nprocs_running 1\nprocs_blocked 0\n" % a.procs)
write(PROC + "/stat", "".join(stat))
sst = ["version 15\ntimestamp 4295000000\n"]
for c in range(a.cpus):
    sst.append("cpu%d 0 0 0 0 0 0 1000000 2000 300\n" % c)
    sst.append("domain0 %s 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 "
               "0 0 0 0 0 0 0 0 0 0 0 0\n" % MASK)
write(PROC + "/schedstat", "".join(sst))
# The system's CPU pressure (PSI): "some" stands still, as on a host
# where nobody waits for a CPU; the harness moves it for its loaded case.
os.makedirs(PROC + "/pressure", exist_ok=True)
write(PROC + "/pressure/cpu",
      "some avg10=0.00 avg60=0.00 avg300=0.00 total=1000000\n"
      "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")

def make_thread(d, tid, comm, start, kflag, pdir):
    """The thread tid's directory d, its process's files at pdir."""
    os.mkdir(d)
    write(d + "/stat", stat_line(tid, comm, start, kflag, 1, tid % a.cpus))
    write(d + "/soft_affinity_list", "\n")
    for f in ("status", "schedstat", "sched"):
        os.link(pdir + "/" + f, d + "/" + f)


# Every cgroup a process is in; /sys/fs/cgroup has each, as on a host, so
# that the daemon's container check at exec finds the directories it
# asks for their mark (none is marked) instead of failing at fs/.
CGROUPS = set()


def make_proc(pdir, pid, kind, n, comm, cmd, exe, uid, ppid=1):
    """A process with n threads (tids pid..pid+n-1) at pdir."""
    start = 1000 + pid
    kflag = 0x00200000 if kind == "kthread" else 0x400000
    os.makedirs(pdir + "/task")
    status = STATUS.format(comm=comm, pid=pid, uid=uid, threads=n,
                           kthread=1 if kind == "kthread" else 0,
                           mask=MASK, cpus=CPUS, nodemask=NODEMASK,
                           lastnode=a.nodes - 1)
    write(pdir + "/stat", stat_line(pid, comm, start, kflag, ppid,
                                    pid % a.cpus))
    write(pdir + "/status", status)
    write(pdir + "/cmdline", cmd)
    cgroup = ("/system.slice/%s.service" % comm.split("-")[0]
              if kind != "kthread" else "/")
    write(pdir + "/cgroup", "0::%s\n" % cgroup)
    CGROUPS.add(cgroup)
    write(pdir + "/soft_affinity_list", "\n")
    write(pdir + "/soft_affinity_ratio", "\n")
    write(pdir + "/schedstat", "123456789 2345678 100\n")
    write(pdir + "/sched", SCHED.format(comm=comm, pid=pid, threads=n))
    if exe:
        os.symlink(exe, pdir + "/exe")
    for t in range(n):
        make_thread("%s/task/%d" % (pdir, pid + t), pid + t, comm, start,
                    kflag, pdir)


manifest = []
procs = []  # (pid, plan entry)
pid = a.first_pid
for p in plan:
    kind, r, n, comm, cmd, exe, uid = p
    make_proc("%s/%d" % (PROC, pid), pid, kind, n, comm, cmd, exe, uid)
    manifest.append("%d %d %s %d %s\n" % (pid, n, kind, r, comm))
    procs.append((pid, p))
    # Room between processes, as a live system has.
    pid += n + 1

write(os.path.join(a.dir, "manifest"), "".join(manifest))

# ---- spare processes and threads for the harness's events ----
#
# What a fork or an exec brings into /proc, made beforehand outside it
# (DIR/spare/KIND/ID): the harness moves one in with a rename() just
# before the event that names it, so making files is not in its timing.
# DIR/spare/manifest: "kind id pid parent rule" a line; id is the
# directory's name, pid the process (the thread's tid for thread-*),
# parent the managed process a child or thread belongs to (0: none).
SPARE = os.path.join(a.dir, "spare")
spare = []
pid += 100000
small = [(q, p) for q, p in procs if p[0] == "managed" and p[2] > 1 and
         p[2] < a.big_threads]
big = [(q, p) for q, p in procs if p[0] == "managed" and p[2] >= a.big_threads]
for kind in ("exec-managed", "exec-other", "fork-managed", "thread-small",
             "thread-big"):
    os.makedirs(os.path.join(SPARE, kind))
for i in range(a.spare):
    # An exec: a new program image with one thread, matching rule r ...
    r = i % a.rules
    comm, cmd, exe, uid = managed_identity(r, 1000 + i)
    make_proc("%s/exec-managed/%d" % (SPARE, pid), pid, "managed", 1, comm,
              cmd, exe, uid)
    spare.append("exec-managed %d %d 0 %d\n" % (pid, pid, r))
    pid += 2
    # ... or none.
    comm, cmd, exe = OTHER[i % len(OTHER)]
    make_proc("%s/exec-other/%d" % (SPARE, pid), pid, "other", 1, comm, cmd,
              exe, 1000)
    spare.append("exec-other %d %d 0 -1\n" % (pid, pid))
    pid += 2
    # A managed process's child: its parent's name and all.
    if small:
        ppid, p = small[i % len(small)]
        make_proc("%s/fork-managed/%d" % (SPARE, pid), pid, "managed", 1,
                  p[3], p[4], p[5], p[6], ppid)
        spare.append("fork-managed %d %d %d %d\n" % (pid, pid, ppid, p[1]))
        pid += 2
    # New threads of a managed process: a small one, a big one.
    for kind, pool in (("thread-small", small), ("thread-big", big)):
        if not pool:
            continue
        ppid, p = pool[i % len(pool)]
        pdir = "%s/%d" % (PROC, ppid)
        make_thread("%s/%s/%d-%d" % (SPARE, kind, ppid, pid), pid, p[3],
                    1000 + ppid, 0x400000, pdir)
        spare.append("%s %d-%d %d %d %d\n" % (kind, ppid, pid, pid, ppid,
                                              p[1]))
        pid += 1
write(os.path.join(SPARE, "manifest"), "".join(spare))

# ---- /sys: the cgroups, and nodes of --cpus / --nodes CPUs each ----
for cg in CGROUPS:
    os.makedirs(SYS + "/fs/cgroup" + cg, exist_ok=True)
per = a.cpus // a.nodes
cpudir = SYS + "/devices/system/cpu"
os.makedirs(cpudir, exist_ok=True)
write(cpudir + "/online", CPUS + "\n")
write(cpudir + "/present", CPUS + "\n")
write(cpudir + "/possible", CPUS + "\n")
nodedir = SYS + "/devices/system/node"
os.makedirs(nodedir, exist_ok=True)
write(nodedir + "/possible", "0-%d\n" % (a.nodes - 1))
write(nodedir + "/online", "0-%d\n" % (a.nodes - 1))
for node in range(a.nodes):
    nd = "%s/node%d" % (nodedir, node)
    os.makedirs(nd)
    write(nd + "/cpulist", "%d-%d\n" % (node * per, node * per + per - 1))
    for c in range(node * per, node * per + per):
        os.makedirs("%s/cpu%d" % (cpudir, c), exist_ok=True)
        write("%s/cpu%d/online" % (cpudir, c), "1\n")
        # Links as sysfs has them: topology.c lists nodeN/cpuM.
        os.symlink("../../cpu/cpu%d" % c, "%s/cpu%d" % (nd, c))

# ---- the configuration: the shipped defaults, and the rules ----
conf = os.path.join(a.dir, "softaffd.conf")
write(conf, "# mkfakescale.py: %d rules, softness adaptive (the default)\n"
      "rules = (\n%s\n);\n" % (a.rules,
                               ",\n".join(rule_conf(r) for r in range(a.rules))))
# config_load() refuses a file others may write.
os.chmod(conf, 0o644)
print("%d processes (%d managed by %d rules, %d kernel threads), "
      "%d threads, %d CPUs on %d nodes: %s" %
      (len(plan), a.managed, a.rules, a.kthreads,
       sum(p[2] for p in plan), a.cpus, a.nodes, a.dir))
