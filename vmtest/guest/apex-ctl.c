// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * apex-ctl: send one command to apexsim's control channel and print the
 * reply line. Used by the stage scripts to read and steer the emulated chip.
 *
 *   apex-ctl [-d DEVNO] [-t SECONDS] COMMAND [ARG...]
 *
 * Exit status: 0 reply printed, 1 no reply (message on stderr), 2 usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"

static void usage(void)
{
	fputs("usage: apex-ctl [-d DEVNO] [-t SECONDS] COMMAND [ARG...]\n",
	      stderr);
	exit(2);
}

static int parse_int(const char *s, int min, int max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < min || v > max)
		usage();
	return (int)v;
}

int main(int argc, char **argv)
{
	int devno = 0, timeout_ms = CTL_TIMEOUT_MS, opt, err, i;
	char cmd[1024] = "", reply[4096];
	size_t off = 0;

	while ((opt = getopt(argc, argv, "+d:t:")) != -1) {
		switch (opt) {
		case 'd':
			devno = parse_int(optarg, 0, 255);
			break;
		case 't':
			timeout_ms = parse_int(optarg, 1, 600) * 1000;
			break;
		default:
			usage();
		}
	}
	if (optind >= argc)
		usage();
	for (i = optind; i < argc; i++) {
		int n = snprintf(cmd + off, sizeof(cmd) - off, "%s%s",
				 i > optind ? " " : "", argv[i]);

		if (n < 0 || (size_t)n >= sizeof(cmd) - off) {
			fputs("apex-ctl: command too long\n", stderr);
			return 2;
		}
		off += (size_t)n;
	}
	if (strchr(cmd, '\n'))
		usage();

	err = ctl_request(devno, cmd, reply, sizeof(reply), timeout_ms);
	if (err) {
		fprintf(stderr, "apex-ctl: %s: no reply to '%s': %s\n",
			ctl_path(devno), cmd, strerror(-err));
		return 1;
	}
	puts(reply);
	return 0;
}
