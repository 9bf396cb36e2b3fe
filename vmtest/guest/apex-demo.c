// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * apex-demo: the whole path a runtime uses, through apexsim's test engine:
 * mmap the engine's register page, map user buffers into the chip's simple
 * and extended page tables (MAP_BUFFER and MAP_BUFFER_FLAGS with each DMA
 * direction, and dma-bufs of every exporter the kernel has with MAP_DMABUF),
 * bind eventfds to interrupt sources, run copies, wait for the interrupt,
 * check the bytes; then unmap and prove the device can no longer reach the
 * pages (translation fault -> ERROR + fatal-error interrupt).
 *
 *   apex-demo [DEVICE]         one round trip, explained for a human
 *   apex-demo --tap [DEVICE]   the full test, as TAP
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "apexdev.h"
#include "dmabuf.h"
#include "tap.h"
#include "te.h"

#define COPY_TIMEOUT_MS 10000
#define SIMPLE_ENTRIES 4096	/* partition: 4096 simple + 4096 extended */
#define SMALL (64 * 1024)
#define BIG (2 * 1024 * 1024 + 64 * 1024)	/* spans two level-0 slots */

struct ctx {
	const char *dev;
	int fd;
	struct te te;
	int efd[APEX_IRQ_COUNT];
};

/* A user buffer and where it is mapped on the device. */
struct region {
	void *buf;
	size_t size;
	uint64_t dev;
};

static bool region_alloc(struct region *r, size_t size, uint64_t dev)
{
	r->size = size;
	r->dev = dev;
	r->buf = buf_alloc(size);
	return r->buf != NULL;
}

static int region_map(const struct ctx *c, const struct region *r)
{
	return pt_map(c->fd, r->buf, r->dev, r->size);
}

static int region_unmap(const struct ctx *c, const struct region *r)
{
	return pt_unmap(c->fd, r->buf, r->dev, r->size);
}

static int map_both(const struct ctx *c, const struct region *s,
		    const struct region *d)
{
	int err = region_map(c, s);

	if (!err)
		err = region_map(c, d);
	if (err)
		tap_why("MAP_BUFFER: %s", errname(err));
	return err;
}

static long long mapped_pages(const struct ctx *c)
{
	return sysfs_num(c->dev, "node_0_num_mapped_pages");
}

/* Drain every eventfd, so a stray interrupt cannot pass for ours. */
static void drain_all(const struct ctx *c)
{
	int i;

	for (i = 0; i < APEX_IRQ_COUNT; i++)
		efd_drain(c->efd[i]);
}

/*
 * Run one engine copy of @len bytes between device addresses, signalling
 * @irq: it must finish with status DONE, raise the interrupt and count
 * itself in TE_COMPLETED. Sets tap_why() on failure.
 */
static bool engine_copy_ok(const struct ctx *c, uint64_t src, uint64_t dst,
			   size_t len, unsigned int irq)
{
	uint64_t before = te_read(&c->te, TE_COMPLETED), after;
	struct te_run run;

	drain_all(c);
	if (te_copy(&c->te, src, dst, len, irq, c->efd[irq], COPY_TIMEOUT_MS,
		    &run)) {
		tap_why("engine still busy after %d ms (status 0x%llx)",
			COPY_TIMEOUT_MS, (unsigned long long)run.status);
		return false;
	}
	after = te_read(&c->te, TE_COMPLETED);
	if (run.status != TE_STATUS_DONE) {
		tap_why("TE_STATUS 0x%llx, want DONE only (fault address 0x%llx)",
			(unsigned long long)run.status,
			(unsigned long long)run.fault);
		return false;
	}
	if (!run.events) {
		tap_why("no interrupt on the eventfd of source %u within %d ms",
			irq, COPY_TIMEOUT_MS);
		return false;
	}
	if (after != before + 1) {
		tap_why("TE_COMPLETED went from %llu to %llu",
			(unsigned long long)before, (unsigned long long)after);
		return false;
	}
	tap_diag("copy of %zu bytes: %ld ms to the interrupt", len, run.ms);
	return true;
}

/*
 * Copy @len bytes from @src_off into @src to @dst_off into @dst with the
 * engine, and check that exactly the target bytes changed.
 */
static bool copy_ok(const struct ctx *c, const struct region *src,
		    size_t src_off, const struct region *dst, size_t dst_off,
		    size_t len, unsigned int irq)
{
	uint8_t *d = dst->buf, *s = src->buf;
	long bad;

	memset(dst->buf, 0xa5, dst->size);
	if (!engine_copy_ok(c, src->dev + src_off, dst->dev + dst_off, len,
			    irq))
		return false;
	if (memcmp(d + dst_off, s + src_off, len)) {
		bad = 0;
		while (d[dst_off + bad] == s[src_off + bad])
			bad++;
		tap_why("copied bytes differ at offset %ld", bad);
		return false;
	}
	bad = buf_check_byte(d, dst_off, 0xa5);
	if (bad < 0)
		bad = buf_check_byte(d + dst_off + len,
				     dst->size - dst_off - len, 0xa5);
	if (bad >= 0) {
		tap_why("bytes outside the copied range changed");
		return false;
	}
	return true;
}

/*
 * A copy that must fault at @want_fault: ERROR set, fault address latched,
 * the fatal-error interrupt raised, and the destination left untouched.
 */
static bool fault_ok(const struct ctx *c, const struct region *src,
		     const struct region *dst, size_t len, uint64_t want_fault)
{
	struct te_run run;

	memset(dst->buf, 0x5a, dst->size);
	drain_all(c);
	if (te_copy(&c->te, src->dev, dst->dev, len, 4, c->efd[APEX_IRQ_FATAL],
		    COPY_TIMEOUT_MS, &run)) {
		tap_why("engine still busy after %d ms", COPY_TIMEOUT_MS);
		return false;
	}
	if (!(run.status & TE_STATUS_ERROR)) {
		tap_why("TE_STATUS 0x%llx: no ERROR",
			(unsigned long long)run.status);
		return false;
	}
	if (run.fault != want_fault) {
		tap_why("TE_FAULT_ADDR 0x%llx, want 0x%llx",
			(unsigned long long)run.fault,
			(unsigned long long)want_fault);
		return false;
	}
	if (!run.events) {
		tap_why("no fatal-error interrupt (source %d) within %d ms",
			APEX_IRQ_FATAL, COPY_TIMEOUT_MS);
		return false;
	}
	if (efd_drain(c->efd[4])) {
		tap_why("the completion interrupt fired for a faulted copy");
		return false;
	}
	if (buf_check_byte(dst->buf, dst->size, 0x5a) >= 0) {
		tap_why("the device wrote to unmapped pages");
		return false;
	}
	return true;
}

static bool status_is(const struct ctx *c, const char *want)
{
	char buf[64];
	int err = sysfs_attr(c->dev, "status", buf, sizeof(buf));

	if (err) {
		tap_why("sysfs status: %s", strerror(err));
		return false;
	}
	if (strcmp(buf, want)) {
		tap_why("sysfs status is %s, want %s", buf, want);
		return false;
	}
	return true;
}

static bool expect_pages(const struct ctx *c, long long want)
{
	long long got = mapped_pages(c);

	if (got != want)
		tap_why("node_0_num_mapped_pages is %lld, want %lld", got,
			want);
	return got == want;
}

static bool open_device(struct ctx *c)
{
	int i, err;

	c->fd = open(c->dev, O_RDWR | O_CLOEXEC);
	if (c->fd < 0) {
		tap_why("%s", strerror(errno));
		return false;
	}
	err = te_map(&c->te, c->fd);
	if (err) {
		tap_why("mmap of the test-engine page: %s", errname(err));
		return false;
	}
	for (i = 0; i < APEX_IRQ_COUNT; i++)
		c->efd[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	return true;
}

static bool bind_eventfds(const struct ctx *c)
{
	int i, err;

	for (i = 0; i < APEX_IRQ_COUNT; i++) {
		if (c->efd[i] < 0) {
			tap_why("eventfd: %s", strerror(errno));
			return false;
		}
		err = set_eventfd(c->fd, (uint64_t)i, c->efd[i]);
		if (err) {
			tap_why("SET_EVENTFD source %d: %s", i, errname(err));
			return false;
		}
	}
	return true;
}

/* The human-readable round trip that `make demo` shows. */
static int demo(struct ctx *c)
{
	struct region src, dst;
	char status[64] = "?";
	struct te_run run;
	int err;

	if (!open_device(c) || !bind_eventfds(c)) {
		fprintf(stderr, "apex-demo: %s: cannot set up the device\n",
			c->dev);
		return 1;
	}
	sysfs_attr(c->dev, "status", status, sizeof(status));
	printf("%s: status %s, test engine id 0x%llx\n", c->dev, status,
	       (unsigned long long)te_read(&c->te, TE_ID));
	if (!region_alloc(&src, SMALL, apex_simple_addr(16)) ||
	    !region_alloc(&dst, SMALL, apex_simple_addr(64)))
		return 1;
	buf_fill(src.buf, src.size, 1);
	err = region_map(c, &src);
	if (!err)
		err = region_map(c, &dst);
	if (err) {
		fprintf(stderr, "apex-demo: MAP_BUFFER: %s\n", strerror(err));
		return 1;
	}
	printf("mapped 2 x %d KiB of user memory at device addresses 0x%llx and 0x%llx (%lld pages mapped)\n",
	       SMALL / 1024, (unsigned long long)src.dev,
	       (unsigned long long)dst.dev, mapped_pages(c));
	if (te_copy(&c->te, src.dev, dst.dev, SMALL, 4, c->efd[4],
		    COPY_TIMEOUT_MS, &run) || run.status != TE_STATUS_DONE) {
		fprintf(stderr, "apex-demo: copy failed: status 0x%llx\n",
			(unsigned long long)run.status);
		return 1;
	}
	printf("test engine copied %d KiB by DMA; interrupt %s on the eventfd after %ld ms\n",
	       SMALL / 1024, run.events ? "received" : "NOT received", run.ms);
	if (!run.events || memcmp(src.buf, dst.buf, SMALL)) {
		fprintf(stderr, "apex-demo: %s\n",
			run.events ? "data mismatch" : "no interrupt");
		return 1;
	}
	printf("%d bytes verified: the device read and wrote user memory through the page table\n",
	       SMALL);
	region_unmap(c, &src);
	region_unmap(c, &dst);
	close(c->fd);
	return 0;
}

static void test_copies(const struct ctx *c, bool have)
{
	struct region s, d, es, ed;
	long long pages = 0;
	bool mapped;
	int err;

	if (!have) {
		tap_skip_dep("opening the device", "simple and extended copies");
		return;
	}
	if (!tap_ok(region_alloc(&s, SMALL, apex_simple_addr(16)) &&
		    region_alloc(&d, SMALL, apex_simple_addr(64)) &&
		    region_alloc(&es, BIG, apex_ext_addr(0, 480)) &&
		    region_alloc(&ed, BIG, apex_ext_addr(2, 0)),
		    "allocate user buffers"))
		return;
	buf_fill(s.buf, s.size, 11);
	buf_fill(es.buf, es.size, 12);

	err = region_map(c, &s);
	if (!err)
		err = region_map(c, &d);
	if (err)
		tap_why("MAP_BUFFER: %s", errname(err));
	pages = 2 * SMALL / APEX_PAGE;
	mapped = tap_ok(!err && expect_pages(c, pages),
			"MAP_BUFFER 2 x 64 KiB into the simple page table");
	if (mapped) {
		tap_ok(copy_ok(c, &s, 0, &d, 0, SMALL, 4),
		       "test engine copies 64 KiB simple -> simple, interrupt 4 on its eventfd");
		tap_ok(copy_ok(c, &s, 0x123, &d, 0x2345, 5000, 5),
		       "test engine copies 5000 bytes at unaligned offsets, nothing else touched");
	} else {
		tap_skip_dep("MAP_BUFFER simple", "copy simple -> simple");
		tap_skip_dep("MAP_BUFFER simple", "copy at unaligned offsets");
	}

	err = region_map(c, &es);
	if (!err)
		err = region_map(c, &ed);
	if (err)
		tap_why("MAP_BUFFER: %s", errname(err));
	if (tap_ok(!err && expect_pages(c, pages + 2 * BIG / APEX_PAGE),
		   "MAP_BUFFER 2 x 2.06 MiB into the extended page table, across level-0 slots")) {
		tap_ok(copy_ok(c, &es, 0, &ed, 0, BIG, 8),
		       "test engine copies 2.06 MiB extended -> extended");
		if (mapped) {
			tap_ok(copy_ok(c, &s, 0, &ed, BIG - SMALL, SMALL, 11),
			       "test engine copies simple -> extended");
			tap_ok(copy_ok(c, &es, APEX_PAGE * 31, &d, 0, SMALL, 0),
			       "test engine copies extended -> simple");
		}
		err = region_unmap(c, &es);
		if (!err)
			err = region_unmap(c, &ed);
		if (err)
			tap_why("UNMAP_BUFFER: %s", errname(err));
		tap_ok(!err && expect_pages(c, mapped ? pages : 0),
		       "UNMAP_BUFFER of the extended buffers");
	} else {
		tap_skip_dep("MAP_BUFFER extended", "copy extended -> extended");
	}
	if (mapped) {
		err = region_unmap(c, &s);
		if (!err)
			err = region_unmap(c, &d);
		if (err)
			tap_why("UNMAP_BUFFER: %s", errname(err));
		tap_ok(!err && expect_pages(c, 0),
		       "UNMAP_BUFFER of the simple buffers");
	}
	buf_free(s.buf, s.size);
	buf_free(d.buf, d.size);
	buf_free(es.buf, es.size);
	buf_free(ed.buf, ed.size);
}

/* MAP_BUFFER_FLAGS: to-device source -> bidirectional -> from-device. */
static void test_directions(const struct ctx *c, bool have)
{
	static const struct {
		const char *name;
		uint32_t flags;
	} dir[3] = {
		{ "DMA_TO_DEVICE", APEX_DMA_TO_DEVICE },
		{ "DMA_BIDIRECTIONAL", APEX_DMA_BIDIRECTIONAL },
		{ "DMA_FROM_DEVICE", APEX_DMA_FROM_DEVICE },
	};
	struct region r[3];
	bool ok[3];
	int i, err;

	if (!have) {
		tap_skip_dep("opening the device", "MAP_BUFFER_FLAGS directions");
		return;
	}
	/* Two in the simple table, the from-device one in the extended. */
	for (i = 0; i < 3; i++) {
		uint64_t dev = i < 2 ? apex_simple_addr(200 + 100 * i) :
				       apex_ext_addr(5, 7);

		if (!region_alloc(&r[i], SMALL, dev)) {
			tap_ok(false, "allocate user buffers");
			return;
		}
	}
	buf_fill(r[0].buf, SMALL, 21);
	for (i = 0; i < 3; i++) {
		err = pt_map_flags(c->fd, r[i].buf, r[i].dev, SMALL,
				   dir[i].flags);
		if (err)
			tap_why("%s", errname(err));
		ok[i] = tap_ok(!err && expect_pages(c, (i + 1) * SMALL /
							       APEX_PAGE),
			       "MAP_BUFFER_FLAGS %s at 0x%llx", dir[i].name,
			       (unsigned long long)r[i].dev);
	}
	if (ok[0] && ok[1] && ok[2]) {
		tap_ok(copy_ok(c, &r[0], 0, &r[1], 0, SMALL, 6) &&
			       copy_ok(c, &r[1], 0, &r[2], 0, SMALL, 7) &&
			       buf_check(r[2].buf, SMALL, 21) < 0,
		       "device reads DMA_TO_DEVICE, writes DMA_FROM_DEVICE, both on DMA_BIDIRECTIONAL");
	} else {
		tap_skip_dep("MAP_BUFFER_FLAGS", "copies through each direction");
	}
	for (i = 0; i < 3; i++)
		if (ok[i])
			region_unmap(c, &r[i]);
	tap_ok(expect_pages(c, 0), "UNMAP_BUFFER of the MAP_BUFFER_FLAGS buffers");
	for (i = 0; i < 3; i++)
		buf_free(r[i].buf, SMALL);
}

/* Each source 0..11 reaches its own eventfd, and only that one. */
static void test_routing(const struct ctx *c, bool have)
{
	struct region s, d;
	unsigned int irq;
	int err = ENOMEM;

	if (!have) {
		tap_skip_dep("opening the device", "interrupt routing");
		return;
	}
	if (region_alloc(&s, APEX_PAGE, apex_simple_addr(1)) &&
	    region_alloc(&d, APEX_PAGE, apex_simple_addr(2))) {
		err = region_map(c, &s);
		if (!err)
			err = region_map(c, &d);
	}
	if (err) {
		tap_why("MAP_BUFFER: %s", errname(err));
		tap_ok(false, "map two pages for the interrupt routing tests");
		return;
	}
	buf_fill(s.buf, APEX_PAGE, 31);
	for (irq = 0; irq < APEX_IRQ_FATAL; irq++) {
		long long before = sysfs_irq_count(c->dev, irq), after;
		bool ok = copy_ok(c, &s, 0, &d, 0, APEX_PAGE, irq);
		int other;

		for (other = 0; ok && other < APEX_IRQ_COUNT; other++) {
			if (other != (int)irq && efd_drain(c->efd[other])) {
				tap_why("eventfd of source %d fired too", other);
				ok = false;
			}
		}
		after = sysfs_irq_count(c->dev, irq);
		if (ok && (before < 0 || after != before + 1)) {
			tap_why("interrupt_counts[%u] went from %lld to %lld",
				irq, before, after);
			ok = false;
		}
		tap_ok(ok, "interrupt source %u reaches its eventfd only, interrupt_counts counts it",
		       irq);
	}
	region_unmap(c, &s);
	region_unmap(c, &d);
	buf_free(s.buf, APEX_PAGE);
	buf_free(d.buf, APEX_PAGE);
}

static int map_dmabuf(const struct ctx *c, int buf, uint64_t dev,
		      uint32_t pages, bool map)
{
	struct gasket_page_table_ioctl_dmabuf io = {
		.page_table_index = 0,
		.device_address = dev,
		.dmabuf_fd = buf,
		.num_pages = pages,
		.map = map,
	};

	return xioctl(c->fd, GASKET_IOCTL_MAP_DMABUF, &io);
}

/*
 * MAP_DMABUF: the device writes into a dma-buf another driver exported.
 * Returns false when this kernel lacks the exporter.
 */
static bool test_dmabuf_from(const struct ctx *c, bool have,
			     const struct dmabuf_exporter *ex)
{
	const uint32_t pages = SMALL / APEX_PAGE;
	struct region s, d = { .size = SMALL, .dev = apex_simple_addr(600) };
	int buf, err;

	if (!have) {
		tap_skip_dep("opening the device", "MAP_DMABUF of a %s buffer",
			     ex->name);
		return true;
	}
	buf = ex->alloc(SMALL);
	if (buf == -ENODEV) {
		tap_skip(ex->needs, "this kernel has no %s", ex->name);
		return false;
	}
	if (buf >= 0)
		d.buf = mmap(NULL, SMALL, PROT_READ | PROT_WRITE, MAP_SHARED,
			     buf, 0);
	if (buf < 0 || d.buf == MAP_FAILED || !region_alloc(&s, SMALL,
							    apex_simple_addr(16))) {
		tap_why("%s", buf < 0 ? errname(-buf) : "mmap of the dma-buf");
		tap_ok(false, "allocate and mmap a %d KiB %s buffer",
		       SMALL / 1024, ex->name);
		return true;
	}
	buf_fill(s.buf, SMALL, 71);
	err = region_map(c, &s);
	if (!err)
		err = map_dmabuf(c, buf, d.dev, pages, true);
	if (err)
		tap_why("%s", errname(err));
	if (tap_ok(!err && expect_pages(c, 2 * pages),
		   "MAP_DMABUF of a %d KiB %s buffer", SMALL / 1024, ex->name)) {
		tap_ok(copy_ok(c, &s, 0, &d, 0, SMALL, 9),
		       "test engine copies into the %s buffer", ex->name);
		err = pt_unmap(c->fd, d.buf, d.dev, SMALL);
		if (err != EINVAL)
			tap_why("got %s", errname(err));
		tap_ok(err == EINVAL && expect_pages(c, 2 * pages),
		       "UNMAP_BUFFER of a %s range -> EINVAL, still mapped",
		       ex->name);
		err = pt_partition(c->fd, SIMPLE_ENTRIES / 2);
		if (err != EBUSY)
			tap_why("got %s", errname(err));
		tap_ok(err == EBUSY,
		       "PARTITION_PAGE_TABLE while a %s buffer is mapped -> EBUSY",
		       ex->name);
		err = map_dmabuf(c, buf, d.dev, pages, false);
		if (err)
			tap_why("%s", errname(err));
		tap_ok(!err && expect_pages(c, pages),
		       "MAP_DMABUF with map=0 unmaps the %s buffer", ex->name);
	} else {
		tap_skip_dep("MAP_DMABUF", "copies into the %s buffer", ex->name);
	}
	err = map_dmabuf(c, buf, d.dev, pages + 1, true);
	if (err != EINVAL)
		tap_why("got %s", errname(err));
	tap_ok(err == EINVAL && expect_pages(c, pages),
	       "MAP_DMABUF of more pages than the %s buffer has -> EINVAL",
	       ex->name);
	region_unmap(c, &s);
	munmap(d.buf, SMALL);
	close(buf);
	buf_free(s.buf, SMALL);
	return true;
}

/* Every kernel must offer at least one exporter, or MAP_DMABUF goes untested. */
static void test_dmabuf(const struct ctx *c, bool have)
{
	size_t i, present = 0;

	for (i = 0; i < dmabuf_exporter_count; i++)
		present += test_dmabuf_from(c, have, &dmabuf_exporters[i]);
	if (have)
		tap_ok(present > 0, "this kernel has a dma-buf exporter to test MAP_DMABUF with");
}

/* Did the engine copy @seed's pattern into @r? Sets tap_why() if not. */
static bool holds_pattern(const struct region *r, uint32_t seed)
{
	long bad = buf_check(r->buf, r->size, seed);

	if (bad >= 0)
		tap_why("byte %ld differs from what the dma-buf held", bad);
	return bad < 0;
}

/*
 * The exporter goes away while the chip still has its buffer mapped: the
 * process unmaps it from memory and closes the dma-buf's last descriptor.
 * The mapping must keep the buffer alive, and the engine must still read
 * and write it. Returns how many dma-bufs the kernel had before, so the
 * last close of the device can be checked to free it; -1 if the test left
 * nothing mapped.
 */
static long test_dmabuf_orphan(const struct ctx *c, bool have)
{
	const uint32_t pages = SMALL / APEX_PAGE;
	const uint64_t dev = apex_simple_addr(800);
	const struct dmabuf_exporter *ex = NULL;
	struct region s = { 0 }, d = { 0 };
	void *cpu = MAP_FAILED;
	long before, now;
	int buf = -ENODEV, err;
	size_t i;
	bool ok;

	if (!have) {
		tap_skip_dep("opening the device",
			     "a mapped dma-buf whose exporter went away");
		return -1;
	}
	before = dmabuf_live_count();
	for (i = 0; i < dmabuf_exporter_count && buf == -ENODEV; i++) {
		ex = &dmabuf_exporters[i];
		buf = ex->alloc(SMALL);
	}
	if (buf == -ENODEV) {
		tap_skip_dep("a dma-buf exporter",
			     "a mapped dma-buf whose exporter went away");
		return -1;
	}
	if (buf >= 0)
		cpu = mmap(NULL, SMALL, PROT_READ | PROT_WRITE, MAP_SHARED,
			   buf, 0);
	err = before < 0 ? ENOENT : buf < 0 ? -buf : cpu == MAP_FAILED ? errno : 0;
	if (!err && (!region_alloc(&s, SMALL, apex_simple_addr(16)) ||
		     !region_alloc(&d, SMALL, apex_simple_addr(32))))
		err = ENOMEM;
	if (!err) {
		buf_fill(cpu, SMALL, 72);
		err = map_dmabuf(c, buf, dev, pages, true);
	}
	if (cpu != MAP_FAILED)
		munmap(cpu, SMALL);
	if (buf >= 0)
		close(buf);
	if (err)
		tap_why("%s%s", errname(err), before < 0 ?
			" reading /sys/kernel/debug/dma_buf/bufinfo" : "");
	if (!tap_ok(!err, "MAP_DMABUF of a %s buffer, then munmap() and close() its only descriptor",
		    ex->name)) {
		buf_free(s.buf, SMALL);
		buf_free(d.buf, SMALL);
		return -1;
	}
	now = dmabuf_live_count();
	if (now != before + 1)
		tap_why("bufinfo counts %ld dma-bufs, %ld before", now, before);
	tap_ok(now == before + 1, "the mapping keeps the closed dma-buf alive");

	err = region_map(c, &s);
	if (!err)
		err = region_map(c, &d);
	if (err)
		tap_why("MAP_BUFFER: %s", errname(err));
	tap_ok(!err && engine_copy_ok(c, dev, d.dev, SMALL, 9) &&
	       holds_pattern(&d, 72),
	       "the engine reads what was written into the closed dma-buf");
	buf_fill(s.buf, SMALL, 73);
	memset(d.buf, 0, SMALL);
	ok = !err && engine_copy_ok(c, s.dev, dev, SMALL, 9) &&
	     engine_copy_ok(c, dev, d.dev, SMALL, 9) && holds_pattern(&d, 73);
	tap_ok(ok, "the engine writes into the closed dma-buf and reads it back");
	region_unmap(c, &s);
	region_unmap(c, &d);
	buf_free(s.buf, SMALL);
	buf_free(d.buf, SMALL);
	return before;
}

#define COHERENT_OFFSET 0x1000000ULL

static int coherent_config(const struct ctx *c, bool enable)
{
	struct gasket_coherent_alloc_config_ioctl io = {
		.page_table_index = 0,
		.enable = enable,
		.size = SMALL,
		.dma_address = COHERENT_OFFSET,
	};

	return xioctl(c->fd, GASKET_IOCTL_CONFIG_COHERENT_ALLOCATOR, &io);
}

/* The coherent buffer, mmap()ed and then given to MAP_BUFFER. */
static void test_coherent_dma(const struct ctx *c, bool have)
{
	struct region s, d = { .size = SMALL, .dev = apex_simple_addr(700) };
	int err;

	if (!have || !region_alloc(&s, SMALL, apex_simple_addr(16))) {
		tap_skip_dep("opening the device", "the coherent buffer as a DMA target");
		return;
	}
	err = coherent_config(c, true);
	if (!err) {
		d.buf = mmap(NULL, SMALL, PROT_READ | PROT_WRITE, MAP_SHARED,
			     c->fd, COHERENT_OFFSET);
		if (d.buf == MAP_FAILED) {
			err = errno;
			d.buf = NULL;
		}
	}
	if (!err)
		err = map_both(c, &s, &d);
	else
		tap_why("%s", errname(err));
	if (tap_ok(!err && expect_pages(c, 2 * SMALL / APEX_PAGE),
		   "MAP_BUFFER of the mmap()ed coherent buffer")) {
		buf_fill(s.buf, SMALL, 81);
		tap_ok(copy_ok(c, &s, 0, &d, 0, SMALL, 10),
		       "test engine copies into the coherent buffer");
		err = coherent_config(c, false);
		if (err != EBUSY)
			tap_why("got %s", errname(err));
		tap_ok(err == EBUSY,
		       "CONFIG_COHERENT_ALLOCATOR disable while the device maps it -> EBUSY");
		region_unmap(c, &d);
	}
	region_unmap(c, &s);
	if (d.buf)
		munmap(d.buf, SMALL);
	err = coherent_config(c, false);
	if (err)
		tap_why("%s", errname(err));
	tap_ok(!err && expect_pages(c, 0),
	       "unmapped, munmap()ed, the coherent buffer is freed");
	buf_free(s.buf, SMALL);
}

/* RESET drops every mapping and the partition (gasket_core.h). */
static bool reset_ok(const struct ctx *c)
{
	uint64_t simple = 0;
	int err = dev_reset(c->fd, false);

	if (err) {
		tap_why("RESET: %s", errname(err));
		return false;
	}
	if (!status_is(c, "ALIVE") || !expect_pages(c, 0))
		return false;
	err = pt_simple_size(c->fd, &simple);
	if (err || simple != APEX_PT_ENTRIES) {
		tap_why("after RESET: SIMPLE_PAGE_TABLE_SIZE %llu (%s)",
			(unsigned long long)simple, errname(err));
		return false;
	}
	return true;
}

/* After unmapping, the device must fault instead of reaching the pages. */
static void test_unmapped(const struct ctx *c, bool have)
{
	struct region s, d;
	int err;

	if (!have || !region_alloc(&s, SMALL, apex_simple_addr(16)) ||
	    !region_alloc(&d, SMALL, apex_ext_addr(1, 0))) {
		tap_skip_dep("opening the device", "unmapped pages unreachable");
		return;
	}
	buf_fill(s.buf, SMALL, 41);
	if (!tap_ok(!map_both(c, &s, &d) && copy_ok(c, &s, 0, &d, 0, SMALL, 4),
		    "copy works before UNMAP_BUFFER")) {
		tap_skip_dep("the copy before unmapping",
			     "device cannot write unmapped pages");
		return;
	}
	err = region_unmap(c, &d);
	if (err)
		tap_why("UNMAP_BUFFER: %s", errname(err));
	if (tap_ok(!err && expect_pages(c, SMALL / APEX_PAGE),
		   "UNMAP_BUFFER of the extended destination")) {
		tap_ok(fault_ok(c, &s, &d, SMALL, d.dev),
		       "device cannot write unmapped pages: ERROR, TE_FAULT_ADDR, fatal-error interrupt, bytes untouched");
		tap_ok(status_is(c, "DEAD"),
		       "after the fatal-error interrupt sysfs status is DEAD");
		err = region_map(c, &d);
		if (err != EIO)
			tap_why("got %s", errname(err));
		tap_ok(err == EIO, "while DEAD, MAP_BUFFER is refused with EIO");
	} else {
		tap_skip_dep("UNMAP_BUFFER", "device cannot write unmapped pages");
	}

	/* The driver's way back: a reset makes the device usable again. */
	if (!tap_ok(reset_ok(c),
		    "RESET brings it back to ALIVE, without mappings, all entries simple")) {
		tap_skip_dep("RESET", "copies after the RESET");
		return;
	}
	err = pt_partition(c->fd, SIMPLE_ENTRIES);
	if (err)
		tap_why("PARTITION_PAGE_TABLE: %s", errname(err));
	tap_ok(!err && !map_both(c, &s, &d) && copy_ok(c, &s, 0, &d, 0, SMALL, 4),
	       "copies work again after the RESET (eventfds kept)");
	err = region_unmap(c, &s);
	if (err)
		tap_why("UNMAP_BUFFER: %s", errname(err));
	tap_ok(!err && fault_ok(c, &s, &d, SMALL, s.dev),
	       "device cannot read unmapped pages either: ERROR, fatal-error interrupt, nothing written");
	tap_ok(reset_ok(c), "RESET after the second fault");
	buf_free(s.buf, SMALL);
	buf_free(d.buf, SMALL);
}

static int tap_main(struct ctx *c)
{
	uint64_t simple = 0, id;
	long dmabufs, now;
	bool have;
	int err, i;

	have = tap_ok(open_device(c), "open %s read-write and mmap the test-engine page",
		      c->dev);
	if (have) {
		id = te_read(&c->te, TE_ID);
		if (id != TE_ID_VALUE)
			tap_why("TE_ID 0x%llx", (unsigned long long)id);
		have = tap_ok(id == TE_ID_VALUE, "TE_ID reads 0x%llx",
			      TE_ID_VALUE);
	}
	have = have && tap_ok(bind_eventfds(c), "SET_EVENTFD on sources 0..12");
	if (have) {
		err = pt_partition(c->fd, SIMPLE_ENTRIES);
		if (!err)
			err = pt_simple_size(c->fd, &simple);
		if (err)
			tap_why("%s", errname(err));
		else if (simple != SIMPLE_ENTRIES)
			tap_why("SIMPLE_PAGE_TABLE_SIZE reads %llu",
				(unsigned long long)simple);
		have = tap_ok(!err && simple == SIMPLE_ENTRIES,
			      "PARTITION_PAGE_TABLE into %d simple + %d extended entries",
			      SIMPLE_ENTRIES, APEX_PT_ENTRIES - SIMPLE_ENTRIES);
	}

	test_copies(c, have);
	test_directions(c, have);
	test_routing(c, have);
	test_dmabuf(c, have);
	test_coherent_dma(c, have);
	test_unmapped(c, have);
	dmabufs = test_dmabuf_orphan(c, have);

	if (c->fd >= 0) {
		for (i = 0; i < APEX_IRQ_COUNT; i++)
			clear_eventfd(c->fd, (uint64_t)i);
		te_unmap(&c->te);
		close(c->fd);
		tap_ok(sysfs_num(c->dev, "is_device_owned") == 0,
		       "closing the last write handle releases ownership");
	}
	if (dmabufs >= 0) {
		now = dmabuf_live_count();
		if (now != dmabufs)
			tap_why("bufinfo counts %ld dma-bufs, %ld before", now,
				dmabufs);
		tap_ok(expect_pages(c, 0) && now == dmabufs,
		       "that close unmaps the closed dma-buf and frees it");
	}
	return tap_done();
}

int main(int argc, char **argv)
{
	struct ctx c = { .fd = -1 };
	bool tap = argc > 1 && !strcmp(argv[1], "--tap");

	if (tap) {
		argc--;
		argv++;
	}
	if (argc > 1 && argv[1][0] != '/') {
		fputs("usage: apex-demo [--tap] [DEVICE]\n", stderr);
		return 2;
	}
	c.dev = apex_dev_path(argc, argv);
	return tap ? tap_main(&c) : demo(&c);
}
