// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * apex-open: open a device node and compare the outcome with an expectation,
 * so the stage scripts can check permissions as another user:
 *
 *   runuser -u otheruser -- apex-open /dev/apex_0 rw EACCES
 *
 * MODE is ro, rw or wo; EXPECT is "ok" or an errno name. Prints what
 * happened; exit status 0 when it matched, 1 when not, 2 on usage errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "apexdev.h"

int main(int argc, char **argv)
{
	const char *path, *mode, *expect, *got;
	int flags, fd, err;

	if (argc != 4) {
		fputs("usage: apex-open PATH ro|rw|wo ok|ERRNO\n", stderr);
		return 2;
	}
	path = argv[1];
	mode = argv[2];
	expect = argv[3];
	if (!strcmp(mode, "ro"))
		flags = O_RDONLY;
	else if (!strcmp(mode, "rw"))
		flags = O_RDWR;
	else if (!strcmp(mode, "wo"))
		flags = O_WRONLY;
	else {
		fprintf(stderr, "apex-open: bad mode '%s'\n", mode);
		return 2;
	}

	fd = open(path, flags | O_CLOEXEC);
	err = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	got = err ? errname(err) : "ok";
	printf("open(%s, %s) as uid %u: %s\n", path, mode, (unsigned)getuid(),
	       got);
	if (strcmp(got, expect)) {
		printf("expected %s\n", expect);
		return 1;
	}
	return 0;
}
