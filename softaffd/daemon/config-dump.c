// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * softaffd -t: the configuration as a libconfig file again, with every
 * default spelled out, which loads as the same configuration.
 */
#include <stdio.h>

#include "config.h"
#include "util.h"

/* Print a string as a libconfig literal. */
static void dump_str(FILE *f, const char *key, const char *v)
{
	fprintf(f, "\t\t%s = \"", key);
	for (; *v; v++) {
		if (*v == '"' || *v == '\\')
			fprintf(f, "\\%c", *v);
		else if ((unsigned char)*v < 0x20)
			fprintf(f, "\\x%02x", (unsigned char)*v);
		else
			fputc(*v, f);
	}
	fprintf(f, "\";\n");
}

void config_dump(const struct config *c, FILE *f)
{
	char cpus[CPUSET_LIST_BUFSZ], ratio[RATIO_BUFSZ];

	fprintf(f, "interval_ms = %u;\n", c->interval_ms);
	fprintf(f, "rescan_ms = %u;\n", c->rescan_ms);
	fprintf(f, "restore_on_exit = %s;\n",
		c->restore_on_exit ? "true" : "false");
	fprintf(f, "ratio = {\n\tmode = \"%s\";\n", ratio_mode_name(c->mode));
	if (c->mode == RATIO_FIXED) {
		fprintf(f, "\tallowed = %u;\n\tpreferred = %u;\n",
			c->fixed.allowed, c->fixed.preferred);
	} else if (c->mode == RATIO_ADAPTIVE) {
		fprintf(f, "\tsoftest = \"%s\";\n",
			ratio_format(c->softest, ratio, sizeof(ratio)));
		fprintf(f, "\thardest = \"%s\";\n",
			ratio_format(c->hardest, ratio, sizeof(ratio)));
		fprintf(f, "\tsaturated = %u;\n\tidle = %u;\n",
			c->saturated_pct, c->idle_pct);
		fprintf(f, "\thold = %u;\n\tmin_change_ms = %u;\n", c->hold,
			c->min_change_ms);
	}
	fprintf(f, "};\n");
	fprintf(f, "rules = (");
	for (unsigned int i = 0; i < c->nrules; i++) {
		const struct rule *r = &c->rules[i];

		fprintf(f, "%s\n\t{\n", i ? "," : "");
		dump_str(f, "name", r->name);
		if (r->comm)
			dump_str(f, "comm", r->comm);
		if (r->exe)
			dump_str(f, "exe", r->exe);
		if (r->cmdline)
			dump_str(f, "cmdline", r->cmdline);
		if (r->has_uid) {
			uint64_t id;

			if (parse_u64(r->user, &id) == 0)
				fprintf(f, "\t\tuser = %u;\n",
					(unsigned int)r->uid);
			else
				fprintf(f, "\t\tuser = \"%s\"; # uid %u\n",
					r->user, (unsigned int)r->uid);
		}
		if (r->cgroup)
			dump_str(f, "cgroup", r->cgroup);
		if (r->unit)
			dump_str(f, "unit", r->unit);
		cpuset_format_list(&r->cpus, cpus, sizeof(cpus));
		if (r->cpus_text) {
			fprintf(f, "\t\tcpus = \"%s\";\n", cpus);
		} else {
			fprintf(f, "\t\tnodes = [");
			for (unsigned int j = 0; j < r->nnodes; j++)
				fprintf(f, "%s%d", j ? ", " : " ", r->nodes[j]);
			fprintf(f, " ]; # cpus %s\n", cpus);
		}
		fprintf(f, "\t\tthreads = \"%s\";\n",
			r->threads == THREADS_ALL ? "all" : "main");
		fprintf(f, "\t\tsoftness = \"%s\";\n",
			r->softness.kind == SOFT_FIXED
				? ratio_format(r->softness.fixed, ratio,
					       sizeof(ratio))
				: softness_name(r->softness.kind));
		fprintf(f, "\t}");
	}
	fprintf(f, "%s);\n", c->nrules ? "\n" : "");
}
