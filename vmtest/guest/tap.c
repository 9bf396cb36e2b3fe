// SPDX-License-Identifier: GPL-2.0-only OR MIT
/* TAP output for the guest test programs; see tap.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"

static int tap_count;
static int tap_npass;
static int tap_nfail;
static int tap_nskip;
static char tap_reason[512];

/* One line per test: keep names and reasons free of newlines. */
static void tap_vprint_flat(const char *fmt, va_list ap)
{
	char buf[512];
	char *p;

	vsnprintf(buf, sizeof(buf), fmt, ap);
	for (p = buf; *p; p++)
		if (*p == '\n' || *p == '#')
			*p = (*p == '#') ? '_' : ' ';
	fputs(buf, stdout);
}

static void tap_print_flat(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vprint_flat(fmt, ap);
	va_end(ap);
}

void tap_why(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tap_reason, sizeof(tap_reason), fmt, ap);
	va_end(ap);
}

bool tap_ok(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", ok ? "" : "not ", ++tap_count);
	va_start(ap, fmt);
	tap_vprint_flat(fmt, ap);
	va_end(ap);
	if (!ok && tap_reason[0]) {
		fputs(" # ", stdout);
		tap_print_flat("%s", tap_reason);
	}
	putchar('\n');
	fflush(stdout);
	tap_reason[0] = '\0';
	if (ok)
		tap_npass++;
	else
		tap_nfail++;
	return ok;
}

void tap_skip_dep(const char *dep, const char *fmt, ...)
{
	va_list ap;

	printf("not ok %d - ", ++tap_count);
	va_start(ap, fmt);
	tap_vprint_flat(fmt, ap);
	va_end(ap);
	fputs(" # skipped because ", stdout);
	tap_print_flat("%s failed", dep);
	putchar('\n');
	fflush(stdout);
	tap_reason[0] = '\0';
	tap_nfail++;
}

void tap_skip(const char *why, const char *fmt, ...)
{
	va_list ap;

	printf("ok %d - ", ++tap_count);
	va_start(ap, fmt);
	tap_vprint_flat(fmt, ap);
	va_end(ap);
	fputs(" # SKIP ", stdout);
	tap_print_flat("%s", why);
	putchar('\n');
	fflush(stdout);
	tap_reason[0] = '\0';
	tap_nskip++;
}

void tap_diag(const char *fmt, ...)
{
	char buf[1024];
	char *line, *save = NULL;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		printf("# %s\n", line);
	fflush(stdout);
}

int tap_failed(void)
{
	return tap_nfail;
}

int tap_done(void)
{
	printf("1..%d\n", tap_count);
	if (tap_nskip)
		printf("# %d skipped\n", tap_nskip);
	printf("%d passed, %d failed\n", tap_npass, tap_nfail);
	fflush(stdout);
	return tap_nfail || !tap_count ? 1 : 0;
}
