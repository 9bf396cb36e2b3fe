/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Client of apexsim's control channel (line protocol, see
 * vmtest/apexsim/README.md). In a guest, device N's channel is the
 * virtio-serial port /dev/virtio-ports/org.apex.ctl.N; $APEX_CTL_PATH
 * overrides it (a character device, FIFO or UNIX socket, e.g. apexsim's
 * --control socket when run on the host).
 */
#ifndef APEX_GUEST_CTL_H
#define APEX_GUEST_CTL_H

#include <stddef.h>

#define CTL_TIMEOUT_MS 5000

/*
 * Send @cmd (one line, no newline) to device @devno's channel and read one
 * reply line into @reply (without its newline). Returns 0, or a negative
 * errno: -ETIMEDOUT when no full line came within @timeout_ms, -EPIPE when
 * the other end closed.
 */
int ctl_request(int devno, const char *cmd, char *reply, size_t len,
		int timeout_ms);

/*
 * "get KEY" on device 0: the value as a number (decimal or 0x hex) in @val.
 * Returns 0, a negative errno from ctl_request(), or -EPROTO when the reply
 * is not "ok NUMBER".
 */
int ctl_get(const char *key, long long *val);

/* Send @cmd to device 0 and expect "ok"; 0 or a negative errno. */
int ctl_cmd(const char *cmd);

/* The channel's path for @devno (static buffer). */
const char *ctl_path(int devno);

#endif /* APEX_GUEST_CTL_H */
