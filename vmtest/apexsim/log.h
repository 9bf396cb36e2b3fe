/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* apexsim logging: one line per event, prefixed with seconds since start. */
#ifndef APEXSIM_LOG_H
#define APEXSIM_LOG_H

#include <stdbool.h>

/* Log to PATH (appended), or to stderr when PATH is NULL. */
int log_open(const char *path);
void log_close(void);

/* Trace every register access and vfio-user message (--trace). */
extern bool log_trace_enabled;

void log_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define log_trace(...)						\
	do {							\
		if (log_trace_enabled)				\
			log_msg(__VA_ARGS__);			\
	} while (0)

#endif /* APEXSIM_LOG_H */
