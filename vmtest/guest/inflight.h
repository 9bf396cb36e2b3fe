/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * A test-engine copy kept in flight for seconds (apexsim's copy rate slowed
 * through chip 0's control channel), for the checks that the driver stops
 * the chip's DMA before it lets go of the pages: at an unbind, at the last
 * close. The copy goes from the first INFLIGHT_LEN bytes of a buffer mapped
 * at simple page INFLIGHT_PAGE to the next INFLIGHT_LEN bytes.
 */
#ifndef APEX_GUEST_INFLIGHT_H
#define APEX_GUEST_INFLIGHT_H

#include <stdbool.h>
#include <stdint.h>

#include "te.h"

/* 2 MiB at 64 KiB/s: 32 s, far longer than an unbind or a close, even on
 * the debug kernel beside other guests. */
#define INFLIGHT_LEN (2UL << 20)
#define INFLIGHT_MAP_SIZE (2 * INFLIGHT_LEN)
#define INFLIGHT_PAGE 256
#define INFLIGHT_KIB_S 64

/* apexsim's counters of chip 0 that tell how far the copy got. */
struct inflight {
	long long bytes, faults, completed;
	long long late_dma;	/* accesses to memory the guest released */
};

/* Fill the source with a pattern and the destination with a marker byte. */
void inflight_fill(uint8_t *buf);

/* Slow the engine down and note its counters in @before; false on error. */
bool inflight_prepare(struct inflight *before);

/*
 * Start the copy with @te (an engine page mapped on a file that has the
 * buffer mapped) and wait until the chip has written some of it: true once
 * it is in flight.
 */
bool inflight_start(const struct te *te, const struct inflight *before);

/*
 * After @event (an unbind, an exit): two TAP checks, that the chip wrote
 * part of the copy and nothing after, faulting on nothing and reaching no
 * memory the guest had released (which a guest with an IOMMU shows), and
 * that the destination in @buf holds exactly the bytes it wrote.
 */
void inflight_check_stopped(const struct inflight *before, const uint8_t *buf,
			    const char *event);

/* The engine at full speed again; 0 or a negative errno. */
int inflight_end(void);

#endif /* APEX_GUEST_INFLIGHT_H */
