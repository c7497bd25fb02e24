/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A tiny TAP producer: run-check.sh numbers the lines. */
#ifndef SOFTAFF_TEST_H
#define SOFTAFF_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * A test binary's counts, shared by its files: defined once, in the file
 * that has main() and says #define TEST_MAIN before including this.
 */
extern int t_failed_checks;
/* A test that cannot run here sets this to why: its TAP line says SKIP. */
extern const char *t_skip;
#ifdef TEST_MAIN
int t_failed_checks;
const char *t_skip;
#endif

#define CHECK(cond)                                                     \
	do {                                                            \
		if (!(cond)) {                                          \
			printf("# %s:%d: check failed: %s\n", __FILE__, \
			       __LINE__, #cond);                        \
			t_failed_checks++;                              \
		}                                                       \
	} while (0)

#define CHECK_STR(a, b)                                                 \
	do {                                                            \
		const char *_a = (a), *_b = (b);                        \
		if (!_a || !_b || strcmp(_a, _b)) {                     \
			printf("# %s:%d: \"%s\" != \"%s\"\n", __FILE__, \
			       __LINE__, _a ? _a : "(null)",            \
			       _b ? _b : "(null)");                     \
			t_failed_checks++;                              \
		}                                                       \
	} while (0)

/*
 * Run one test function and print its TAP line.  TEST_ONLY=NAME in the
 * environment runs only the functions whose name contains NAME (to see
 * one test fail before its fix, without the rest).
 */
#define RUN(fn, desc)                                                       \
	do {                                                                \
		int _before = t_failed_checks;                              \
		const char *_only = getenv("TEST_ONLY");                    \
		if (_only && !strstr(#fn, _only))                           \
			break;                                              \
		fn();                                                       \
		printf("%s - unit: %s%s%s\n",                               \
		       t_failed_checks == _before ? "ok" : "not ok", desc,  \
		       t_skip ? " # SKIP " : "", t_skip ? t_skip : "");     \
		t_skip = NULL;                                              \
		fflush(stdout);                                             \
	} while (0)

#endif
