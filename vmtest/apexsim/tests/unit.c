// SPDX-License-Identifier: GPL-2.0-only OR MIT
/* Runs every suite; exit status 1 if any test failed. */
#include <dirent.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "unit.h"

#define TEST_TIMEOUT_S	60

static bool failed;
/* Written by the alarm handler if a test hangs: its result, the total. */
static char timeout_msg[256];

static void on_timeout(int sig)
{
	(void)sig;
	if (write(STDOUT_FILENO, timeout_msg, strlen(timeout_msg)) < 0)
		_exit(2);
	_exit(1);
}

void unit_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	if (failed)
		return;
	failed = true;
	printf("# %s:%d: ", file, line);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

int main(void)
{
	static const struct unit_test *const suites[] = {
		chip_tests, engine_tests, vfio_user_tests, control_tests,
		guest_mem_tests,
	};
	const char *log_path = getenv("APEXSIM_TEST_LOG");
	int passed = 0, fails = 0, n = 0;
	size_t s;

	signal(SIGALRM, on_timeout);
	if (log_open(log_path ? log_path : "/dev/null") < 0) {
		perror("apexsim unit tests: log");
		return 1;
	}
	for (s = 0; s < sizeof(suites) / sizeof(suites[0]); s++) {
		const struct unit_test *t;

		for (t = suites[s]; t->name; t++) {
			int before = open_fds(), after;

			failed = false;
			snprintf(timeout_msg, sizeof(timeout_msg),
				 "# timed out after %d s\nnot ok %d - %s\n"
				 "%d passed, %d failed\n", TEST_TIMEOUT_S,
				 n + 1, t->name, passed, fails + 1);
			fflush(stdout);
			alarm(TEST_TIMEOUT_S);
			t->fn();
			alarm(0);
			after = open_fds();
			if (!failed && after != before)
				unit_fail(__FILE__, __LINE__,
					  "%d descriptors left open",
					  after - before);
			printf("%sok %d - %s\n", failed ? "not " : "", ++n,
			       t->name);
			if (failed)
				fails++;
			else
				passed++;
		}
	}
	log_close();
	printf("%d passed, %d failed\n", passed, fails);
	return fails ? 1 : 0;
}
