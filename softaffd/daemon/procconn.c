// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The netlink proc connector: the kernel multicasts a message for every
 * fork, exec, comm change, uid change and exit.  Listening needs
 * CAP_NET_ADMIN and CONFIG_PROC_EVENTS; without either the daemon falls
 * back to periodic scans.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/magic.h>
#include <linux/netlink.h>

#include "procconn.h"

static int send_op(int fd, enum proc_cn_mcast_op op)
{
	/* nlmsghdr | cn_msg | op, laid out by hand: cn_msg ends in data[]. */
	union {
		char buf[NLMSG_SPACE(sizeof(struct cn_msg) + sizeof(op))];
		struct nlmsghdr align;
	} u;
	struct nlmsghdr *nl = &u.align;
	struct cn_msg *cn;

	memset(&u, 0, sizeof(u));
	nl->nlmsg_len = NLMSG_LENGTH(sizeof(*cn) + sizeof(op));
	nl->nlmsg_type = NLMSG_DONE;
	nl->nlmsg_pid = (uint32_t)getpid();
	cn = NLMSG_DATA(nl);
	cn->id.idx = CN_IDX_PROC;
	cn->id.val = CN_VAL_PROC;
	cn->len = sizeof(op);
	memcpy(cn->data, &op, sizeof(op));
	if (send(fd, nl, nl->nlmsg_len, 0) < 0)
		return -errno;
	return 0;
}

bool procconn_names_root(const char *proc_root)
{
	struct statfs sf;

	return statfs(proc_root, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC;
}

int procconn_open(void)
{
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
	/* Fork storms burst hundreds of events; 4 MiB rides them out. */
	int fd, r, rcvbuf = 4 << 20;

	fd = socket(PF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    NETLINK_CONNECTOR);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
		       sizeof(rcvbuf)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	sa.nl_groups = CN_IDX_PROC;
	sa.nl_pid = 0; /* let the kernel pick a port id */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		goto fail;
	}
	r = send_op(fd, PROC_CN_MCAST_LISTEN);
	if (r < 0)
		goto fail;
	return fd;
fail:
	close(fd);
	return r;
}

void procconn_close(int fd)
{
	if (fd < 0)
		return;
	send_op(fd, PROC_CN_MCAST_IGNORE);
	close(fd);
}

static void decode(const void *data, size_t len,
		   void (*cb)(const struct pc_event *, void *), void *ud,
		   int *count)
{
	struct pc_event e = {PC_NONE, 0, 0, 0};
	size_t need = offsetof(struct proc_event, event_data), size;
	struct proc_event evbuf, *ev = &evbuf;

	if (len < need)
		return;
	/*
	 * The event sits at offset 36 of the datagram (nlmsghdr + cn_msg),
	 * not aligned for its u64 timestamp: copy it out.
	 */
	memset(&evbuf, 0, sizeof(evbuf));
	memcpy(&evbuf, data, len < sizeof(evbuf) ? len : sizeof(evbuf));
	/*
	 * Each case names its member of event_data and the fields that
	 * matter; evbuf is zero beyond len, and the one length check below
	 * drops an event whose member was cut short.
	 */
	switch (ev->what) {
	case PROC_EVENT_FORK:
		e.kind = PC_FORK;
		size = sizeof(ev->event_data.fork);
		e.pid = ev->event_data.fork.child_pid;
		e.tgid = ev->event_data.fork.child_tgid;
		e.parent_tgid = ev->event_data.fork.parent_tgid;
		break;
	case PROC_EVENT_EXEC:
		e.kind = PC_EXEC;
		size = sizeof(ev->event_data.exec);
		e.pid = ev->event_data.exec.process_pid;
		e.tgid = ev->event_data.exec.process_tgid;
		break;
	case PROC_EVENT_COMM:
		e.kind = PC_COMM;
		size = sizeof(ev->event_data.comm);
		e.pid = ev->event_data.comm.process_pid;
		e.tgid = ev->event_data.comm.process_tgid;
		break;
	case PROC_EVENT_UID:
		e.kind = PC_UID;
		size = sizeof(ev->event_data.id);
		e.pid = ev->event_data.id.process_pid;
		e.tgid = ev->event_data.id.process_tgid;
		break;
	case PROC_EVENT_EXIT:
		e.kind = PC_EXIT;
		size = sizeof(ev->event_data.exit);
		e.pid = ev->event_data.exit.process_pid;
		e.tgid = ev->event_data.exit.process_tgid;
		break;
	default:
		return;
	}
	if (len < need + size)
		return;
	if (e.pid <= 0 || e.tgid <= 0)
		return;
	cb(&e, ud);
	(*count)++;
}

int procconn_parse(const void *buf, size_t len,
		   void (*cb)(const struct pc_event *, void *), void *ud)
{
	const struct nlmsghdr *nl = buf;
	/*
	 * Signed on purpose: NLMSG_NEXT subtracts the aligned length, which
	 * can exceed what is left of a short datagram; a size_t would wrap
	 * and let NLMSG_OK read past the end.
	 */
	int left = len > 65536 ? 65536 : (int)len;
	int count = 0;

	/* NLMSG_OK checks the header fits and nlmsg_len is sane. */
	for (; NLMSG_OK(nl, left); nl = NLMSG_NEXT(nl, left)) {
		const struct cn_msg *cn;
		size_t plen;

		if (nl->nlmsg_type == NLMSG_ERROR ||
		    nl->nlmsg_type == NLMSG_NOOP)
			continue;
		plen = nl->nlmsg_len - NLMSG_HDRLEN;
		if (plen < sizeof(*cn))
			continue;
		cn = NLMSG_DATA(nl);
		if (cn->id.idx != CN_IDX_PROC || cn->id.val != CN_VAL_PROC)
			continue;
		if (cn->len > plen - sizeof(*cn))
			continue;
		decode(cn->data, cn->len, cb, ud, &count);
	}
	return count;
}

int procconn_read(int fd, void (*cb)(const struct pc_event *, void *), void *ud)
{
	/* Aligned for struct nlmsghdr and friends. */
	uint64_t buf[1024];
	struct sockaddr_nl from = {0};
	socklen_t flen = sizeof(from);
	ssize_t n;

	n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &flen);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	/* Only the kernel (port 0) speaks for the proc connector. */
	if (flen != sizeof(from) || from.nl_pid != 0)
		return 0;
	return procconn_parse(buf, (size_t)n, cb, ud);
}
