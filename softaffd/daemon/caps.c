// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <cap-ng.h>

#include "caps.h"

static const struct {
	unsigned int bit, cap;
	const char *name;
} caps_map[] = {
	{CAPS_NICE, CAP_SYS_NICE, "CAP_SYS_NICE"},
	{CAPS_PTRACE, CAP_SYS_PTRACE, "CAP_SYS_PTRACE"},
};

unsigned int caps_needed(const struct config *cfg)
{
	return CAPS_NICE | (cfg->needs & NEED_EXE ? CAPS_PTRACE : 0);
}

unsigned int caps_permitted(void)
{
	unsigned int have = 0;

	if (capng_get_caps_process() < 0)
		return 0;
	for (size_t i = 0; i < sizeof(caps_map) / sizeof(caps_map[0]); i++)
		if (capng_have_capability(CAPNG_PERMITTED, caps_map[i].cap))
			have |= caps_map[i].bit;
	return have;
}

int caps_drop(unsigned int want)
{
	unsigned int keep = want & caps_permitted();

	capng_clear(CAPNG_SELECT_CAPS);
	for (size_t i = 0; i < sizeof(caps_map) / sizeof(caps_map[0]); i++)
		if (keep & caps_map[i].bit &&
		    capng_update(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED,
				 caps_map[i].cap) < 0)
			return -EINVAL;
	/*
	 * Only the capability sets: changing the bounding set needs
	 * CAP_SETPCAP, which the unit does not grant; NoNewPrivileges=
	 * keeps a dropped capability from coming back through exec.
	 */
	if (capng_apply(CAPNG_SELECT_CAPS) < 0)
		return -EPERM;
	return 0;
}

const char *caps_names(unsigned int caps, char *buf, size_t size)
{
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(caps_map) / sizeof(caps_map[0]); i++)
		if (caps & caps_map[i].bit && o < size)
			o += (size_t)snprintf(buf + o, size - o, "%s%s",
					      o ? " " : "", caps_map[i].name);
	if (!o)
		snprintf(buf, size, "none");
	return buf;
}
