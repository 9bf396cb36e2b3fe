/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Control channel: a line protocol on a UNIX socket for tests. Each request
 * line gets exactly one reply line, "ok ..." or "err <reason>". Several
 * clients may be connected; one of them is usually QEMU's chardev behind a
 * guest virtio-serial port, which may stay idle for the whole run.
 */
#ifndef APEXSIM_CONTROL_H
#define APEXSIM_CONTROL_H

#include <stdbool.h>
#include <stddef.h>

#include "apex_chip.h"
#include "vfio_user.h"

#define CTL_MAX_CLIENTS		16
#define CTL_LINE_MAX		256	/* request bytes, newline excluded */
#define CTL_REPLY_MAX		4096
#define CTL_OUT_MAX		16384	/* unread replies before dropping */

/* What the commands read and change. */
struct ctl_ctx {
	struct apex_chip *chip;
	const struct vu_conn *vu;
};

struct ctl_client {
	int fd;
	char in[CTL_LINE_MAX + 1];
	size_t in_len;
	bool discarding;	/* inside an overlong line */
	char out[CTL_OUT_MAX];
	size_t out_len;
};

struct ctl_server {
	int listen_fd;
	struct ctl_ctx ctx;
	struct ctl_client client[CTL_MAX_CLIENTS];
	size_t nclients;
};

/* Execute one request line; the reply (no newline) goes to OUT. */
void ctl_execute(struct ctl_ctx *ctx, const char *line, char *out,
		 size_t outlen);

void ctl_init(struct ctl_server *srv, int listen_fd, struct ctl_ctx ctx);
/* Accept pending connections on the listening socket. */
void ctl_accept(struct ctl_server *srv);
/* Serve client I: read requests, write replies (REVENTS from poll). */
void ctl_service(struct ctl_server *srv, size_t i, short revents);
/* Poll events client I needs. */
short ctl_events(const struct ctl_server *srv, size_t i);
void ctl_fini(struct ctl_server *srv);

#endif /* APEXSIM_CONTROL_H */
