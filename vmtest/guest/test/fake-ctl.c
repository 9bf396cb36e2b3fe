// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * fake-ctl: a stand-in for apexsim's control socket in the host checks.
 * Listens on PATH, serves COUNT connections; each gets one line and, unless
 * MODE is "silent", the reply "ok <the line>".
 *
 *   fake-ctl PATH reply|silent COUNT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char line[1024], reply[1100];
	int lfd, fd, count, i;
	size_t off;
	char c;

	if (argc != 4 || strlen(argv[1]) >= sizeof(sa.sun_path))
		return 2;
	count = atoi(argv[3]);
	strcpy(sa.sun_path, argv[1]);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(lfd, 4)) {
		perror("fake-ctl");
		return 1;
	}
	for (i = 0; i < count; i++) {
		fd = accept(lfd, NULL, NULL);
		if (fd < 0)
			return 1;
		off = 0;
		while (read(fd, &c, 1) == 1 && c != '\n')
			if (off + 1 < sizeof(line))
				line[off++] = c;
		line[off] = '\0';
		if (strcmp(argv[2], "silent")) {
			snprintf(reply, sizeof(reply), "ok %s\n", line);
			if (write(fd, reply, strlen(reply)) < 0)
				return 1;
		} else {
			sleep(3);
		}
		close(fd);
	}
	close(lfd);
	unlink(argv[1]);
	return 0;
}
