/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_PROCCONN_H
#define SOFTAFF_PROCCONN_H

#include <stdbool.h>
#include <stdint.h>

/* A decoded proc connector event. */
enum pc_kind { PC_NONE, PC_FORK, PC_EXEC, PC_COMM, PC_UID, PC_EXIT };

struct pc_event {
	enum pc_kind kind;
	int pid, tgid;	 /* the task the event is about */
	int parent_tgid; /* PC_FORK only */
};

/*
 * Whether the connector's events are about the processes under
 * proc_root: they name the kernel's PIDs, which are those of a procfs
 * mount, not those of a fixture tree (--proc-root in tests), where a
 * host process's exec or exit would be taken for the fixture's with
 * the same PID.
 */
bool procconn_names_root(const char *proc_root);
/*
 * Open and subscribe.  Returns the socket fd or -errno: -EPERM without
 * CAP_NET_ADMIN, -EPROTONOSUPPORT without CONFIG_PROC_EVENTS.
 */
int procconn_open(void);
/* Tell the kernel we stop listening, and close. */
void procconn_close(int fd);
/*
 * Read one datagram and hand each event to cb.  Returns the number of
 * events (maybe 0), -EAGAIN when nothing is pending, -ENOBUFS when the
 * kernel dropped events (rescan!), or another -errno.
 */
int procconn_read(int fd, void (*cb)(const struct pc_event *, void *),
		  void *userdata);
/* Pure: decode one datagram (fuzzed).  Returns events handed to cb. */
int procconn_parse(const void *buf, size_t len,
		   void (*cb)(const struct pc_event *, void *), void *userdata);

#endif
