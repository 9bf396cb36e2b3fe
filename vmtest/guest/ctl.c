// SPDX-License-Identifier: GPL-2.0-only OR MIT
/* apexsim control-channel client; see ctl.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "apexdev.h"
#include "ctl.h"

const char *ctl_path(int devno)
{
	static char path[256];
	const char *env = getenv("APEX_CTL_PATH");

	if (env && *env)
		snprintf(path, sizeof(path), "%s", env);
	else
		snprintf(path, sizeof(path),
			 "/dev/virtio-ports/org.apex.ctl.%d", devno);
	return path;
}

static int ctl_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int fd;

	if (stat(path, &st))
		return -errno;
	if (!S_ISSOCK(st.st_mode)) {
		fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
		return fd < 0 ? -errno : fd;
	}
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) &&
	    errno != EINPROGRESS) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/* Wait for @events on @fd until the absolute deadline @end (ms). */
static int ctl_wait(int fd, short events, long end)
{
	struct pollfd p = { .fd = fd, .events = events };
	long left = end - now_ms();
	int n;

	if (left < 0)
		left = 0;
	n = poll(&p, 1, (int)left);
	if (n < 0)
		return -errno;
	if (!n)
		return -ETIMEDOUT;
	if ((p.revents & POLLHUP) && !(p.revents & events))
		return -EPIPE;
	return 0;
}

/* A reply to an earlier, timed-out request must not answer this one. */
static void ctl_drain(int fd)
{
	char junk[256];

	while (read(fd, junk, sizeof(junk)) > 0)
		;
}

static int ctl_send(int fd, const char *line, long end)
{
	size_t len = strlen(line), off = 0;
	ssize_t n;
	int err;

	while (off < len) {
		n = write(fd, line + off, len - off);
		if (n > 0) {
			off += (size_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		err = ctl_wait(fd, POLLOUT, end);
		if (err)
			return err;
	}
	return 0;
}

static int ctl_recv_line(int fd, bool is_sock, char *reply, size_t len,
			 long end)
{
	struct timespec nap = { .tv_nsec = 20 * 1000 * 1000 };
	size_t off = 0;
	ssize_t n;
	char c;
	int err;

	for (;;) {
		n = read(fd, &c, 1);
		if (n == 1) {
			if (c == '\n')
				break;
			if (c != '\r' && off + 1 < len)
				reply[off++] = c;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		if (n < 0) {
			err = ctl_wait(fd, POLLIN, end);
			if (err)
				return err;
			continue;
		}
		/* EOF: virtio-serial reads 0 while the host side is closed. */
		if (is_sock)
			return -EPIPE;
		if (now_ms() >= end)
			return -ETIMEDOUT;
		nanosleep(&nap, NULL);
	}
	reply[off] = '\0';
	return 0;
}

int ctl_request(int devno, const char *cmd, char *reply, size_t len,
		int timeout_ms)
{
	long end = now_ms() + timeout_ms;
	char line[1024];
	struct stat st;
	bool is_sock;
	int fd, err;

	if (snprintf(line, sizeof(line), "%s\n", cmd) >= (int)sizeof(line))
		return -E2BIG;
	fd = ctl_connect(ctl_path(devno));
	if (fd < 0)
		return fd;
	is_sock = fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
	ctl_drain(fd);
	err = ctl_send(fd, line, end);
	if (!err)
		err = ctl_recv_line(fd, is_sock, reply, len, end);
	close(fd);
	return err;
}

int ctl_get(const char *key, long long *val)
{
	char cmd[128], reply[256], *end;
	int err;

	snprintf(cmd, sizeof(cmd), "get %s", key);
	err = ctl_request(0, cmd, reply, sizeof(reply), CTL_TIMEOUT_MS);
	if (err)
		return err;
	if (strncmp(reply, "ok ", 3))
		return -EPROTO;
	errno = 0;
	*val = strtoll(reply + 3, &end, 0);
	return errno || *end || end == reply + 3 ? -EPROTO : 0;
}

int ctl_cmd(const char *cmd)
{
	char reply[256];
	int err = ctl_request(0, cmd, reply, sizeof(reply), CTL_TIMEOUT_MS);

	if (err)
		return err;
	return strcmp(reply, "ok") ? -EPROTO : 0;
}
