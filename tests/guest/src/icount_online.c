// SPDX-License-Identifier: GPL-2.0
/* icount_online: bring the offline CPUs online in an ACCEL=icount guest
 * (vm/run boots SMP icount guests with maxcpus=1; vm/guest/install.sh runs
 * this before systemd when the command line has softaff.icount_online=1).
 *
 * Why: QEMU 7.2's round-robin TCG gives the first vCPU an instruction budget
 * that runs to the next timer deadline and the next vCPU only what is left.
 * The BSP waits for a new CPU in do_boot_cpu() calling schedule() in a loop
 * without PAUSE, so it burns the whole budget every time and the AP never
 * runs (notes-icount.md). At boot nothing else is runnable. Here a child
 * pinned to the same CPU as the writer executes PAUSE in a loop; schedule()
 * switches to it, every PAUSE ends the BSP's TCG slice, and the AP gets the
 * rest of the budget.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void pin_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("icount_online: sched_setaffinity");
}

static int online(int cpu)
{
	char path[64];
	int fd, ok;
	pid_t spinner;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	fd = open(path, O_RDWR);
	if (fd < 0)
		return 0; /* no such CPU, or CPU0 (not hotpluggable) */
	char state = 0;
	if (pread(fd, &state, 1, 0) == 1 && state == '1') {
		close(fd);
		return 0;
	}
	spinner = fork();
	if (spinner == 0) {
		for (;;)
			__builtin_ia32_pause();
	}
	ok = pwrite(fd, "1", 1, 0) == 1;
	if (!ok)
		fprintf(stderr, "icount_online: cpu%d: ", cpu), perror("online");
	if (spinner > 0) {
		kill(spinner, SIGKILL);
		waitpid(spinner, NULL, 0);
	}
	close(fd);
	return ok ? 1 : -1;
}

int main(void)
{
	int cpu, n = 0, bad = 0, r;
	long ncpus = sysconf(_SC_NPROCESSORS_CONF);

	pin_cpu0(); /* the child inherits it: writer and spinner share CPU0 */
	for (cpu = 1; cpu < ncpus; cpu++) {
		r = online(cpu);
		n += r > 0;
		bad += r < 0;
	}
	printf("icount_online: %d CPU(s) brought online, %d failed\n", n, bad);
	return bad != 0;
}
