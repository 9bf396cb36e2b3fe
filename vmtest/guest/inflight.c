// SPDX-License-Identifier: GPL-2.0-only OR MIT
/* A test-engine copy kept in flight; see inflight.h. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "apexdev.h"
#include "ctl.h"
#include "inflight.h"
#include "tap.h"

#define DST_BYTE 0x5a
#define START_TIMEOUT_MS 10000
#define IRQ_SRC 4

static bool chip_count(struct inflight *c)
{
	return !ctl_get("te_bytes", &c->bytes) &&
	       !ctl_get("te_faults", &c->faults) &&
	       !ctl_get("te_completed", &c->completed) &&
	       !ctl_get("late_dma", &c->late_dma);
}

void inflight_fill(uint8_t *buf)
{
	buf_fill(buf, INFLIGHT_LEN, 9);
	memset(buf + INFLIGHT_LEN, DST_BYTE, INFLIGHT_LEN);
}

bool inflight_prepare(struct inflight *before)
{
	char cmd[32];
	int err;

	snprintf(cmd, sizeof(cmd), "copy-rate %d", INFLIGHT_KIB_S);
	err = ctl_cmd(cmd);
	if (err || !chip_count(before)) {
		tap_why("control channel: %s", err ? errname(-err) : "get failed");
		return false;
	}
	return true;
}

bool inflight_start(const struct te *te, const struct inflight *before)
{
	struct timespec pause = { .tv_nsec = 20 * 1000 * 1000 };
	long long bytes = before->bytes;
	long end;

	te_write(te, TE_STATUS, TE_STATUS_DONE | TE_STATUS_ERROR);
	te_write(te, TE_SRC, apex_simple_addr(INFLIGHT_PAGE));
	te_write(te, TE_DST, apex_simple_addr(INFLIGHT_PAGE) + INFLIGHT_LEN);
	te_write(te, TE_LEN, INFLIGHT_LEN);
	te_write(te, TE_IRQ, IRQ_SRC);
	te_write(te, TE_DOORBELL, 1);
	end = now_ms() + START_TIMEOUT_MS;
	while (!ctl_get("te_bytes", &bytes) && bytes == before->bytes &&
	       now_ms() < end)
		nanosleep(&pause, NULL);
	if (bytes == before->bytes ||
	    !(te_read(te, TE_STATUS) & TE_STATUS_BUSY)) {
		tap_why("te_bytes %lld -> %lld, status 0x%llx", before->bytes,
			bytes, (unsigned long long)te_read(te, TE_STATUS));
		return false;
	}
	return true;
}

void inflight_check_stopped(const struct inflight *before, const uint8_t *buf,
			    const char *event)
{
	struct timespec settle = { .tv_sec = 1 };
	struct inflight at = { 0 }, later = { 0 };
	long long written;
	bool ok;

	ok = chip_count(&at);
	nanosleep(&settle, NULL);
	ok = ok && chip_count(&later);
	if (!ok)
		tap_why("control channel: get failed");
	written = at.bytes - before->bytes;
	tap_diag("the copy in flight had written %lld of %lu bytes", written,
		 INFLIGHT_LEN);
	if (ok && (later.bytes != at.bytes || later.faults != before->faults ||
		   later.completed != before->completed ||
		   later.late_dma != before->late_dma))
		tap_why("te_bytes %lld -> %lld -> %lld, te_faults %lld -> %lld,"
			" te_completed %lld -> %lld, late_dma %lld -> %lld",
			before->bytes, at.bytes, later.bytes, before->faults,
			later.faults, before->completed, later.completed,
			before->late_dma, later.late_dma);
	tap_ok(ok && written > 0 && (unsigned long)written < INFLIGHT_LEN &&
	       later.bytes == at.bytes && later.faults == before->faults &&
	       later.completed == before->completed &&
	       later.late_dma == before->late_dma,
	       "after %s: the copy in flight stopped there, no DMA or fault after it",
	       event);
	ok = ok && written >= 0 && (unsigned long)written <= INFLIGHT_LEN &&
	     !memcmp(buf + INFLIGHT_LEN, buf, (size_t)written) &&
	     buf_check_byte(buf + INFLIGHT_LEN + written,
			    INFLIGHT_LEN - (size_t)written, DST_BYTE) < 0;
	tap_ok(ok, "after %s: the destination holds exactly what the chip wrote before",
	       event);
}

int inflight_end(void)
{
	return ctl_cmd("copy-rate 0");
}
