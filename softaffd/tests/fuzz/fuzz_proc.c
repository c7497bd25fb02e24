// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: the /proc parsers.  The first byte picks the parser,
 * the rest is the file content.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpuset.h"
#include "procconn.h"
#include "procfs.h"
#include "sampler.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void ev_cb(const struct pc_event *e, void *ud)
{
	(void)e;
	(void)ud;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sampler sampler;
	char buf[CPUSET_LIST_BUFSZ];
	struct cpuset set, back;
	struct cpureq req, req_back;
	struct pstat st;
	struct pstatus ps;
	char *text;
	uid_t uid;

	if (size < 1)
		return 0;
	text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	switch (data[0] % 8) {
	case 0:
		if (procfs_parse_stat(text, &st) == 0 &&
		    strlen(st.comm) >= sizeof(st.comm))
			abort();
		break;
	case 1:
		procfs_parse_status(text, &set, &uid);
		procfs_parse_pstatus(text, &ps);
		break;
	case 2:
		procfs_parse_cgroup(text, buf, sizeof(buf));
		break;
	case 3:
		/* list -> set -> list -> set must be stable */
		if (cpuset_parse_list(text, &set) == 0) {
			if (cpuset_format_list(&set, buf, sizeof(buf)) < 0 ||
			    cpuset_parse_list(buf, &back) < 0 ||
			    !cpuset_equal(&set, &back))
				abort();
		}
		/* A request read, written back, changes nothing. */
		if (cpureq_parse_list(text, &req) == 0 &&
		    (cpureq_format(&req, true, buf, sizeof(buf)) < 0 ||
		     cpureq_parse_list(buf, &req_back) < 0 ||
		     !cpureq_equal(&req, &req_back)))
			abort();
		break;
	case 4:
		if (cpuset_parse_mask(text, &set) == 0) {
			if (cpuset_format_mask(&set, buf, sizeof(buf)) < 0 ||
			    cpuset_parse_mask(buf, &back) < 0 ||
			    !cpuset_equal(&set, &back))
				abort();
		}
		break;
	case 5: {
		int c;

		sampler_feed(&sampler, text);
		for_each_cpu (c, &sampler.valid)
			if ((unsigned int)c >= sampler.ncpus ||
			    sampler.util[c] < 0 || sampler.util[c] > 1)
				abort();
		break;
	}
	case 6:
		/* text is malloc()ed, so aligned as a recv buffer is. */
		procconn_parse(text, size - 1, ev_cb, NULL);
		break;
	default:
		procfs_flatten_cmdline(text, size - 1);
		break;
	}
	free(text);
	return 0;
}
