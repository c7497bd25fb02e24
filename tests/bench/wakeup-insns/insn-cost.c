// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * insn-cost.so: a QEMU TCG plugin that counts the guest instructions one
 * kernel function executes per call, callees included: from the entry of
 * the function to the return at its own level.  Written against the
 * plugin API of QEMU 7.2 (API version 1), declared below from its
 * documentation (Debian ships no qemu-plugin.h).
 *
 *   -plugin insn-cost.so,entry=ADDR,end=ADDR,mark=ADDR,out=FILE
 *
 * ADDR in hex, from the guest's /proc/kallsyms (the kernel is not
 * relocated): entry..end is the function, mark the entry of a function
 * the guest calls to end a phase (sys_sync).  At each mark the plugin
 * appends to FILE one line for the calls since the previous mark:
 *
 *   phase N calls C insns_mean M p50 P p90 Q p99 R max X open O total T
 *
 * T is every instruction every vCPU ran in the phase, kernel and user:
 * the instruction time of the whole workload, as -icount would give it
 * for one vCPU.
 * Counting: a callback on every translated block adds its instructions
 * to the vCPU's counter; one on the function's entry block notes the
 * counter, one on each return instruction inside the function takes the
 * difference.  The entry and exit blocks count whole (a block ends at
 * the return, and a call's target starts one).  Interrupts cannot run
 * in the middle: the kernel calls select_task_rq() with interrupts off
 * (p->pi_lock taken irqsave), so a call is one stretch of one vCPU.
 * "open" counts calls whose return was not seen (a tail call out),
 * left out of the figures.
 *
 * profile=1 adds, after each phase line, "prof N PC INSNS" for every
 * translated block that ran inside the calls: where they spend their
 * instructions, by block address (the host names the functions).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- QEMU plugin API, version 1 (QEMU 7.2) ------------------------------ */
typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
typedef struct qemu_info_t qemu_info_t;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu, void *udata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id,
					       struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *udata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
					  qemu_plugin_vcpu_udata_cb_t cb,
					  enum qemu_plugin_cb_flags flags,
					  void *udata);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
					    qemu_plugin_vcpu_udata_cb_t cb,
					    enum qemu_plugin_cb_flags flags,
					    void *udata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
				    qemu_plugin_udata_cb_t cb, void *udata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
						 size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);

#define EXPORT __attribute__((visibility("default")))
EXPORT int qemu_plugin_version = 1;
EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
			       int argc, char **argv);

/* --- the counter ---------------------------------------------------------- */
#define MAX_VCPUS 256
#define HIST_MAX 65536		/* calls above this many instructions: max */

struct vcpu {
	uint64_t insns;		/* every instruction this vCPU ran */
	uint64_t start;		/* insns at the current call's entry */
	bool in_call;
} __attribute__((aligned(64)));

static struct vcpu vcpus[MAX_VCPUS];
static uint64_t entry, end, mark;
static FILE *out;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t *hist;		/* calls by instruction count, this phase */
static uint64_t calls, sum, maxv, open_calls;
static uint64_t total_before;	/* every vCPU's instructions at the last mark */
static unsigned int phase;

/*
 * A translated block, for the profile (profile=1): the instructions it
 * ran inside calls this phase.  QEMU may translate a block again; the
 * host adds up the entries of one address.
 */
struct block {
	uint64_t pc;
	uint64_t n;		/* its instructions */
	uint64_t in_calls;	/* instructions run inside calls, this phase */
	struct block *next;
};

static bool profile;
static struct block *blocks;	/* every block translated, under lock */

static void on_block(unsigned int vcpu, void *udata)
{
	struct vcpu *v = &vcpus[vcpu % MAX_VCPUS];
	struct block *b = udata;

	/* only this vCPU's thread writes it; on_mark reads it from another */
	__atomic_store_n(&v->insns, v->insns + b->n, __ATOMIC_RELAXED);
	if (profile && v->in_call)
		__atomic_add_fetch(&b->in_calls, b->n, __ATOMIC_RELAXED);
}

static void on_entry(unsigned int vcpu, void *udata)
{
	struct vcpu *v = &vcpus[vcpu % MAX_VCPUS];

	if (v->in_call) {
		pthread_mutex_lock(&lock);
		open_calls++;
		pthread_mutex_unlock(&lock);
	}
	/* on_block of this block has not run yet: registered after us */
	v->start = v->insns;
	v->in_call = true;
	(void)udata;
}

static void on_return(unsigned int vcpu, void *udata)
{
	struct vcpu *v = &vcpus[vcpu % MAX_VCPUS];
	uint64_t n;

	if (!v->in_call)
		return;
	v->in_call = false;
	n = v->insns - v->start;
	pthread_mutex_lock(&lock);
	calls++;
	sum += n;
	if (n > maxv)
		maxv = n;
	hist[n < HIST_MAX ? n : HIST_MAX - 1]++;
	pthread_mutex_unlock(&lock);
	(void)udata;
}

static uint64_t percentile(unsigned int pct)
{
	uint64_t want = (calls * pct + 99) / 100, seen = 0;

	for (uint64_t i = 0; i < HIST_MAX; i++) {
		seen += hist[i];
		if (seen >= want && seen)
			return i;
	}
	return 0;
}

/* End a phase: one line, and the counts start again. */
static void on_mark(unsigned int vcpu, void *udata)
{
	uint64_t total = 0;

	pthread_mutex_lock(&lock);
	/* The other vCPUs' counters move meanwhile: a block's worth at most. */
	for (unsigned int i = 0; i < MAX_VCPUS; i++)
		total += __atomic_load_n(&vcpus[i].insns, __ATOMIC_RELAXED);
	fprintf(out,
		"phase %u calls %" PRIu64 " insns_mean %.1f p50 %" PRIu64
		" p90 %" PRIu64 " p99 %" PRIu64 " max %" PRIu64
		" open %" PRIu64 " total %" PRIu64 "\n",
		phase++, calls, calls ? (double)sum / calls : 0.0,
		percentile(50), percentile(90), percentile(99), maxv,
		open_calls, total - total_before);
	total_before = total;
	for (struct block *b = blocks; profile && b; b = b->next) {
		uint64_t in = __atomic_exchange_n(&b->in_calls, 0,
						  __ATOMIC_RELAXED);

		if (in)
			fprintf(out, "prof %u %" PRIx64 " %" PRIu64 "\n",
				phase - 1, b->pc, in);
	}
	fflush(out);
	memset(hist, 0, HIST_MAX * sizeof(*hist));
	calls = sum = maxv = open_calls = 0;
	pthread_mutex_unlock(&lock);
	(void)vcpu;
	(void)udata;
}

/* x86: ret (c3), ret imm16 (c2), with or without a rep prefix (f3) */
static bool is_return(const struct qemu_plugin_insn *insn)
{
	const uint8_t *b = qemu_plugin_insn_data(insn);
	size_t n = qemu_plugin_insn_size(insn);

	if (n && b[0] == 0xf3) {
		b++;
		n--;
	}
	return n && (b[0] == 0xc3 || b[0] == 0xc2);
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);
	uint64_t pc = qemu_plugin_tb_vaddr(tb);

	(void)id;
	if (pc == entry)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, on_entry,
						     QEMU_PLUGIN_CB_NO_REGS, NULL);
	if (pc == mark)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, on_mark,
						     QEMU_PLUGIN_CB_NO_REGS, NULL);
	struct block *b = calloc(1, sizeof(*b));

	if (!b)
		abort();
	b->pc = pc;
	b->n = n;
	pthread_mutex_lock(&lock);
	b->next = blocks;
	blocks = b;
	pthread_mutex_unlock(&lock);
	qemu_plugin_register_vcpu_tb_exec_cb(tb, on_block, QEMU_PLUGIN_CB_NO_REGS,
					     b);
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint64_t a = qemu_plugin_insn_vaddr(insn);

		if (a >= entry && a < end && is_return(insn))
			qemu_plugin_register_vcpu_insn_exec_cb(
				insn, on_return, QEMU_PLUGIN_CB_NO_REGS, NULL);
	}
}

static void at_exit(qemu_plugin_id_t id, void *udata)
{
	(void)id;
	(void)udata;
	on_mark(0, NULL);
	fclose(out);
}

static bool arg_hex(const char *arg, const char *key, uint64_t *v)
{
	size_t k = strlen(key);
	char *e;

	if (strncmp(arg, key, k) || arg[k] != '=')
		return false;
	*v = strtoull(arg + k + 1, &e, 16);
	return *e == '\0';
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
			       int argc, char **argv)
{
	const char *path = NULL;

	(void)info;
	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4))
			path = argv[i] + 4;
		else if (!strcmp(argv[i], "profile=1"))
			profile = true;
		else if (!arg_hex(argv[i], "entry", &entry) &&
			 !arg_hex(argv[i], "end", &end) &&
			 !arg_hex(argv[i], "mark", &mark)) {
			fprintf(stderr, "insn-cost: unknown argument %s\n",
				argv[i]);
			return 1;
		}
	}
	if (!path || !entry || end <= entry || !mark) {
		fprintf(stderr, "insn-cost: needs entry=, end=, mark= and out=\n");
		return 1;
	}
	out = fopen(path, "w");
	hist = calloc(HIST_MAX, sizeof(*hist));
	if (!out || !hist) {
		perror("insn-cost");
		return 1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
