// SPDX-License-Identifier: GPL-2.0
/*
 * lsm_deny: run a command while an LSM denies one user the task_getscheduler
 * hook, as SELinux or Smack deny an unprivileged domain.
 *
 *   lsm_deny UID COMMAND [ARG...]
 *
 * Loads a BPF LSM program on bpf_lsm_task_getscheduler that returns -EPERM
 * when the calling task's real uid is UID (0 allowed otherwise), attaches it,
 * runs COMMAND and exits with its status; the program goes when this process
 * does.  The hook's BTF id comes from /sys/kernel/btf/vmlinux.  The program
 * is seven instructions written out here, so the guest needs neither clang
 * nor libbpf.  Exit 77 if the kernel cannot load or attach it (no BPF LSM,
 * no BTF), 2 on a usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/btf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define HOOK "bpf_lsm_task_getscheduler"

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

/* Bytes of kind-specific data after a struct btf_type of @kind, or -1. */
static long btf_extra(unsigned int kind, unsigned int vlen)
{
	switch (kind) {
	case BTF_KIND_INT:
	case BTF_KIND_VAR:
	case BTF_KIND_DECL_TAG:
		return 4;
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG:
		return 0;
	case BTF_KIND_ARRAY:
		return sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return (long)vlen * sizeof(struct btf_member);
	case BTF_KIND_ENUM:
		return (long)vlen * sizeof(struct btf_enum);
	case BTF_KIND_ENUM64:
		return (long)vlen * sizeof(struct btf_enum64);
	case BTF_KIND_FUNC_PROTO:
		return (long)vlen * sizeof(struct btf_param);
	case BTF_KIND_DATASEC:
		return (long)vlen * sizeof(struct btf_var_secinfo);
	}
	return -1;
}

/* The BTF type id of the function @name in the BTF file @path, or -1. */
static int btf_func_id(const char *path, const char *name)
{
	const struct btf_header *h;
	const char *strs;
	const uint8_t *p, *end;
	struct stat st;
	uint8_t *buf;
	ssize_t got = 0, r;
	int fd, id = -1, i;

	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size < (off_t)sizeof(*h)) {
		fprintf(stderr, "lsm_deny: %s: %s\n", path, strerror(errno));
		return -1;
	}
	buf = malloc(st.st_size);
	while (buf && got < st.st_size && (r = read(fd, buf + got, st.st_size - got)) > 0)
		got += r;
	close(fd);
	if (!buf || got != st.st_size) {
		fprintf(stderr, "lsm_deny: %s: short read\n", path);
		goto out;
	}
	h = (const void *)buf;
	if (h->magic != BTF_MAGIC ||
	    (uint64_t)h->hdr_len + h->type_off + h->type_len > (uint64_t)got ||
	    (uint64_t)h->hdr_len + h->str_off + h->str_len > (uint64_t)got) {
		fprintf(stderr, "lsm_deny: %s: not a BTF file\n", path);
		goto out;
	}
	strs = (const char *)buf + h->hdr_len + h->str_off;
	p = buf + h->hdr_len + h->type_off;
	end = p + h->type_len;
	for (i = 1; p + sizeof(struct btf_type) <= end; i++) {
		const struct btf_type *t = (const void *)p;
		unsigned int kind = BTF_INFO_KIND(t->info);
		long extra = btf_extra(kind, BTF_INFO_VLEN(t->info));

		if (extra < 0) {
			fprintf(stderr, "lsm_deny: %s: BTF kind %u unknown\n", path, kind);
			goto out;
		}
		if (kind == BTF_KIND_FUNC && t->name_off < h->str_len &&
		    !strcmp(strs + t->name_off, name)) {
			id = i;
			break;
		}
		p += sizeof(*t) + extra;
	}
	if (id < 0)
		fprintf(stderr, "lsm_deny: %s: no function %s\n", path, name);
out:
	free(buf);
	return id;
}

int main(int argc, char **argv)
{
	static char log[65536];
	union bpf_attr attr;
	char *end;
	unsigned long uid;
	int btf_id, prog, link, status;
	pid_t pid;

	if (argc < 3) {
		fprintf(stderr, "usage: lsm_deny UID COMMAND [ARG...]\n");
		return 2;
	}
	errno = 0;
	uid = strtoul(argv[1], &end, 10);
	if (errno || *end || end == argv[1] || uid > INT32_MAX) {
		fprintf(stderr, "lsm_deny: %s: not a uid below 2^31\n", argv[1]);
		return 2;
	}

	btf_id = btf_func_id("/sys/kernel/btf/vmlinux", HOOK);
	if (btf_id < 0)
		return 77;

	/* uid = bpf_get_current_uid_gid() & 0xffffffff; return uid == UID ? -EPERM : 0; */
	struct bpf_insn insns[] = {
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_get_current_uid_gid },
		{ .code = BPF_ALU | BPF_MOV | BPF_X, .dst_reg = BPF_REG_0, .src_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_JNE | BPF_K, .dst_reg = BPF_REG_0, .off = 2, .imm = (int32_t)uid },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = -EPERM },
		{ .code = BPF_JMP | BPF_EXIT },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_LSM;
	attr.expected_attach_type = BPF_LSM_MAC;
	attr.attach_btf_id = btf_id;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = sizeof(insns) / sizeof(insns[0]);
	attr.license = (uintptr_t)"GPL";
	attr.log_buf = (uintptr_t)log;
	attr.log_size = sizeof(log);
	attr.log_level = 1;
	prog = sys_bpf(BPF_PROG_LOAD, &attr);
	if (prog < 0) {
		fprintf(stderr, "lsm_deny: loading the program: %s\n%s", strerror(errno), log);
		return 77;
	}

	memset(&attr, 0, sizeof(attr));
	attr.raw_tracepoint.prog_fd = prog;
	link = sys_bpf(BPF_RAW_TRACEPOINT_OPEN, &attr);
	if (link < 0) {
		fprintf(stderr, "lsm_deny: attaching to %s: %s\n", HOOK, strerror(errno));
		return 77;
	}

	pid = fork();
	if (pid < 0) {
		perror("lsm_deny: fork");
		return 1;
	}
	if (pid == 0) {
		close(link);
		close(prog);
		execvp(argv[2], argv + 2);
		fprintf(stderr, "lsm_deny: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0) {
		perror("lsm_deny: waitpid");
		return 1;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
