// SPDX-License-Identifier: GPL-2.0-only OR MIT
/* apexsim logging. */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "log.h"

bool log_trace_enabled;

static FILE *log_file;
static struct timespec log_t0;

int log_open(const char *path)
{
	clock_gettime(CLOCK_MONOTONIC, &log_t0);
	if (!path) {
		log_file = NULL;
		return 0;
	}
	log_file = fopen(path, "ae");
	if (!log_file)
		return -1;
	setvbuf(log_file, NULL, _IOLBF, 0);
	return 0;
}

void log_close(void)
{
	if (log_file)
		fclose(log_file);
	log_file = NULL;
}

void log_msg(const char *fmt, ...)
{
	FILE *f = log_file ? log_file : stderr;
	struct timespec now;
	double t;
	va_list ap;

	clock_gettime(CLOCK_MONOTONIC, &now);
	t = (double)(now.tv_sec - log_t0.tv_sec) +
	    (double)(now.tv_nsec - log_t0.tv_nsec) / 1e9;
	fprintf(f, "[%10.6f] ", t);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
}
