/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * A tiny TAP producer for the guest test programs. Each program prints
 * numbered lines from 1 and closes with a plan and "N passed, N failed";
 * the stage scripts renumber the lines into one stream (see tap.sh).
 */
#ifndef APEX_GUEST_TAP_H
#define APEX_GUEST_TAP_H

#include <stdbool.h>

#define TAP_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* Record why the next failing tap_ok() failed; printed after its name. */
void tap_why(const char *fmt, ...) TAP_PRINTF(1, 2);

/* Print "ok N - name" or "not ok N - name # why"; returns @ok. */
bool tap_ok(bool ok, const char *fmt, ...) TAP_PRINTF(2, 3);

/* A test that could not run because @dep failed: reported as not ok. */
void tap_skip_dep(const char *dep, const char *fmt, ...) TAP_PRINTF(2, 3);

/* A test whose feature is absent in this guest: "ok N - name # SKIP why". */
void tap_skip(const char *why, const char *fmt, ...) TAP_PRINTF(2, 3);

/* A diagnostic line "# ...". */
void tap_diag(const char *fmt, ...) TAP_PRINTF(1, 2);

/* Print the plan and the closing count line; returns the exit status. */
int tap_done(void);

/* Counters, for callers that want to report progress. */
int tap_failed(void);

#endif /* APEX_GUEST_TAP_H */
