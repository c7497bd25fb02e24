// SPDX-License-Identifier: GPL-2.0-or-later
/* libFuzzer target: the configuration loader and its normalized dump. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"

static struct topology topo;
static FILE *devnull;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config *c = NULL;
	char err[1024];
	char *text;

	if (!devnull) {
		devnull = fopen("/dev/null", "w");
		if (topology_alloc(&topo, 2) < 0)
			abort();
		topo.ids[0] = 0;
		topo.ids[1] = 1;
		cpuset_parse_list("0-1", &topo.node_cpus[0]);
		cpuset_parse_list("2-3", &topo.node_cpus[1]);
		cpuset_parse_list("0-3", &topo.all);
	}
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (config_load_string(text, "fuzz.conf", &topo, &c, err,
			       sizeof(err)) == 0) {
		config_dump(c, devnull);
		config_free(c);
	} else if (strncmp(err, "fuzz.conf:", 10)) {
		/* Every error must point into the file. */
		abort();
	}
	free(text);
	return 0;
}
