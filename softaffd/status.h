/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SOFTAFF_STATUS_H
#define SOFTAFF_STATUS_H

#include "util.h"

#define STATUS_FILE "status"

/* Atomically replace <run>/status with text.  0 or -errno. */
int status_write(const char *run_dir, const struct sbuf *text);
/* Remove it on a clean exit, so --status can tell "not running". */
void status_remove(const char *run_dir);
/* softaffd --status: copy the file to stdout.  Exit code. */
int status_show(const char *run_dir);

#endif
