// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * apex-ioctl: every gasket/apex ioctl with valid input does what the 2018
 * staging driver defined, and each kind of bad input src/uapi/gasket.h
 * documents returns its errno and changes nothing: after every refused
 * call the reference mappings are still counted in sysfs and the test
 * engine still copies through them with the interrupt on the same
 * eventfd. Runs as root (CAP_SYS_ADMIN); the non-owner cases are in
 * apex-owner.
 *
 *   apex-ioctl [DEVICE]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "apexdev.h"
#include "ctl.h"
#include "tap.h"
#include "te.h"

#define COPY_TIMEOUT_MS 10000
#define SIMPLE_ENTRIES 4096
#define REF_PAGES 16
#define REF_SIZE (REF_PAGES * APEX_PAGE)

/* Errnos as src/uapi/gasket.h documents them. */
#define E_BAD_TABLE EINVAL	/* page-table index out of range */
#define E_BUSY_RANGE EBUSY	/* collides with a live mapping */
#define E_NOT_EVENTFD EBADF	/* descriptor that is not an eventfd/dma-buf */

struct ref {
	void *buf;
	uint64_t dev;
};

struct ctx {
	const char *dev;
	int fd;
	struct te te;
	int efd;		/* bound to source 4, the reference copies' */
	struct ref src, dst, ext;	/* simple, simple, extended */
	long long pages;	/* mapped pages the reference mappings make */
	long long chip[3];	/* valid entries the chip sees, by kind */
};

/* What apexsim counts in the page table the driver wrote. */
static const char *const chip_keys[3] = {
	"pt_valid_simple", "pt_valid_extended", "pt_valid_l2",
};

static bool chip_entries(long long v[3])
{
	int i, err;

	for (i = 0; i < 3; i++) {
		err = ctl_get(chip_keys[i], &v[i]);
		if (err) {
			tap_why("control channel: get %s: %s", chip_keys[i],
				strerror(-err));
			return false;
		}
	}
	return true;
}

static int map_raw(int fd, uint64_t table, uint64_t host, uint64_t dev,
		   uint64_t size, unsigned long req)
{
	struct gasket_page_table_ioctl io = {
		.page_table_index = table,
		.size = size,
		.host_address = host,
		.device_address = dev,
	};

	return xioctl(fd, req, &io);
}

static int map_at(const struct ctx *c, uint64_t host, uint64_t dev,
		  uint64_t size)
{
	return map_raw(c->fd, 0, host, dev, size, GASKET_IOCTL_MAP_BUFFER);
}

static int unmap_at(const struct ctx *c, uint64_t host, uint64_t dev,
		    uint64_t size)
{
	return map_raw(c->fd, 0, host, dev, size, GASKET_IOCTL_UNMAP_BUFFER);
}

/* One engine copy between two reference mappings, checked end to end. */
static bool ref_copy(const struct ctx *c, const struct ref *from,
		     const struct ref *to, uint32_t seed)
{
	struct te_run run;

	buf_fill(from->buf, REF_SIZE, seed);
	memset(to->buf, 0, REF_SIZE);
	efd_drain(c->efd);
	if (te_copy(&c->te, from->dev, to->dev, REF_SIZE, 4, c->efd,
		    COPY_TIMEOUT_MS, &run)) {
		tap_why("test engine still busy after %d ms", COPY_TIMEOUT_MS);
		return false;
	}
	if (run.status != TE_STATUS_DONE || !run.events) {
		tap_why("copy 0x%llx -> 0x%llx: TE_STATUS 0x%llx, fault 0x%llx, %s",
			(unsigned long long)from->dev,
			(unsigned long long)to->dev,
			(unsigned long long)run.status,
			(unsigned long long)run.fault,
			run.events ? "interrupt seen" : "no interrupt");
		return false;
	}
	if (buf_check(to->buf, REF_SIZE, seed) >= 0) {
		tap_why("copy 0x%llx -> 0x%llx: wrong bytes",
			(unsigned long long)from->dev,
			(unsigned long long)to->dev);
		return false;
	}
	return true;
}

/*
 * The device and every existing mapping are as they were: the driver's
 * count, the entries the chip sees, and copies through the mappings.
 */
static bool unchanged(const struct ctx *c)
{
	long long pages = sysfs_num(c->dev, "node_0_num_mapped_pages");
	long long chip[3];
	int i;

	if (pages != c->pages) {
		tap_why("node_0_num_mapped_pages %lld, want %lld", pages,
			c->pages);
		return false;
	}
	if (!chip_entries(chip))
		return false;
	for (i = 0; i < 3; i++) {
		if (chip[i] != c->chip[i]) {
			tap_why("chip %s %lld, want %lld", chip_keys[i],
				chip[i], c->chip[i]);
			return false;
		}
	}
	return ref_copy(c, &c->src, &c->ext, 7) &&
	       ref_copy(c, &c->ext, &c->dst, 8);
}

/* A refused call: the right errno, and nothing changed. */
static void refused(const struct ctx *c, int got, int want, const char *fmt,
		    ...) TAP_PRINTF(4, 5);

static void refused(const struct ctx *c, int got, int want, const char *fmt,
		    ...)
{
	char name[256];
	bool ok = got == want;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	if (!ok)
		tap_why("returned %s, want %s", errname(got), errname(want));
	else
		ok = unchanged(c);
	tap_ok(ok, "%s -> %s, nothing changed", name, errname(want));
}

static void test_queries(const struct ctx *c)
{
	struct gasket_page_table_ioctl io = { .page_table_index = 0 };
	uint64_t n = 0;
	int err;

	err = xioctl(c->fd, GASKET_IOCTL_NUMBER_PAGE_TABLES, &n);
	if (err)
		tap_why("%s", errname(err));
	else if (n != 1)
		tap_why("%llu tables", (unsigned long long)n);
	tap_ok(!err && n == 1, "NUMBER_PAGE_TABLES is 1");

	err = xioctl(c->fd, GASKET_IOCTL_PAGE_TABLE_SIZE, &io);
	if (err)
		tap_why("%s", errname(err));
	else if (io.size != APEX_PT_ENTRIES)
		tap_why("%llu entries", (unsigned long long)io.size);
	tap_ok(!err && io.size == APEX_PT_ENTRIES,
	       "PAGE_TABLE_SIZE of table 0 is %d", APEX_PT_ENTRIES);
	n = (uint64_t)sysfs_num(c->dev, "node_0_page_table_entries");
	if (n != APEX_PT_ENTRIES)
		tap_why("reads %lld", (long long)n);
	tap_ok(n == APEX_PT_ENTRIES, "sysfs node_0_page_table_entries is %d",
	       APEX_PT_ENTRIES);
}

static bool partition_to(const struct ctx *c, uint64_t simple)
{
	long long sys;
	uint64_t got = 0;
	int err;

	err = pt_partition(c->fd, simple);
	if (!err)
		err = pt_simple_size(c->fd, &got);
	if (err) {
		tap_why("%s", errname(err));
		return false;
	}
	sys = sysfs_num(c->dev, "node_0_simple_page_table_entries");
	if (got != simple || sys != (long long)simple) {
		tap_why("SIMPLE_PAGE_TABLE_SIZE %llu, sysfs %lld",
			(unsigned long long)got, sys);
		return false;
	}
	return true;
}

static bool setup(struct ctx *c)
{
	int err;

	c->fd = open(c->dev, O_RDWR | O_CLOEXEC);
	if (c->fd < 0) {
		tap_why("open: %s", strerror(errno));
		return false;
	}
	err = te_map(&c->te, c->fd);
	if (err) {
		tap_why("mmap of the test engine: %s", errname(err));
		return false;
	}
	c->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	err = c->efd < 0 ? errno : set_eventfd(c->fd, 4, c->efd);
	if (err) {
		tap_why("SET_EVENTFD: %s", errname(err));
		return false;
	}
	c->src.buf = buf_alloc(REF_SIZE);
	c->dst.buf = buf_alloc(REF_SIZE);
	c->ext.buf = buf_alloc(REF_SIZE);
	c->src.dev = apex_simple_addr(16);
	c->dst.dev = apex_simple_addr(64);
	c->ext.dev = apex_ext_addr(1, 0);
	return c->src.buf && c->dst.buf && c->ext.buf;
}

static bool map_refs(struct ctx *c)
{
	const struct ref *r[3] = { &c->src, &c->dst, &c->ext };
	int i, err;

	for (i = 0; i < 3; i++) {
		err = map_at(c, (uintptr_t)r[i]->buf, r[i]->dev, REF_SIZE);
		if (err) {
			tap_why("MAP_BUFFER 0x%llx: %s",
				(unsigned long long)r[i]->dev, errname(err));
			return false;
		}
	}
	c->pages = 3 * REF_PAGES;
	if (!chip_entries(c->chip))
		return false;
	if (c->chip[0] != 2 * REF_PAGES || c->chip[1] != 1 ||
	    c->chip[2] != REF_PAGES) {
		tap_why("chip sees %lld simple, %lld extended, %lld second-level entries",
			c->chip[0], c->chip[1], c->chip[2]);
		return false;
	}
	return unchanged(c);
}

static void test_map_bad(const struct ctx *c)
{
	uint64_t buf = (uintptr_t)c->src.buf, dev;
	uint64_t top = APEX_EXT_BIT |
		       ((1ULL << (APEX_EXT_LVL0_SHIFT + 13)) - APEX_PAGE);
	unsigned long req = GASKET_IOCTL_MAP_BUFFER;
	void *hole;
	int err;

	refused(c, map_raw(c->fd, 1, buf, apex_simple_addr(200), APEX_PAGE, req),
		E_BAD_TABLE, "MAP_BUFFER page_table_index 1");
	refused(c, map_raw(c->fd, ~0ULL, buf, apex_simple_addr(200), APEX_PAGE,
			   req),
		E_BAD_TABLE, "MAP_BUFFER page_table_index 2^64-1");
	refused(c, map_at(c, buf + 8, apex_simple_addr(200), APEX_PAGE),
		EINVAL, "MAP_BUFFER unaligned host address");
	refused(c, map_at(c, buf, apex_simple_addr(200) + 0x10, APEX_PAGE),
		EINVAL, "MAP_BUFFER unaligned simple device address");
	refused(c, map_at(c, buf, apex_ext_addr(2, 0) + 0x10, APEX_PAGE),
		EINVAL, "MAP_BUFFER unaligned extended device address");
	refused(c, map_at(c, buf, apex_simple_addr(200), 0), EINVAL,
		"MAP_BUFFER size 0");
	refused(c, map_at(c, buf, apex_simple_addr(200), APEX_PAGE + 1),
		EINVAL, "MAP_BUFFER size not a multiple of the page size");
	refused(c, map_at(c, ~0ULL - APEX_PAGE + 1, apex_simple_addr(200),
			  2 * APEX_PAGE),
		EINVAL, "MAP_BUFFER host range that wraps around");
	refused(c, map_at(c, buf, apex_simple_addr(200), ~0ULL - APEX_PAGE + 1),
		EINVAL, "MAP_BUFFER size that wraps the device address");
	refused(c, map_at(c, buf, apex_simple_addr(SIMPLE_ENTRIES - 1),
			  2 * APEX_PAGE),
		EINVAL, "MAP_BUFFER simple range past the partition");
	refused(c, map_at(c, buf, apex_simple_addr(SIMPLE_ENTRIES), APEX_PAGE),
		EINVAL, "MAP_BUFFER simple address past the partition");
	refused(c, map_at(c, buf, apex_ext_addr(APEX_PT_ENTRIES - SIMPLE_ENTRIES,
						0),
			  APEX_PAGE),
		EINVAL, "MAP_BUFFER extended address past the table");
	refused(c, map_at(c, buf, apex_ext_addr(APEX_PT_ENTRIES - SIMPLE_ENTRIES - 1,
						APEX_EXT_LVL1_ENTRIES - 1),
			  2 * APEX_PAGE),
		EINVAL, "MAP_BUFFER extended range past the end of the table");
	refused(c, map_at(c, buf, top + APEX_PAGE, APEX_PAGE), EINVAL,
		"MAP_BUFFER extended address with bits above the level-0 index");

	dev = c->dst.dev;
	refused(c, map_at(c, buf, dev, REF_SIZE), E_BUSY_RANGE,
		"MAP_BUFFER over a live simple mapping");
	refused(c, map_at(c, buf, dev + 8 * APEX_PAGE, REF_SIZE), E_BUSY_RANGE,
		"MAP_BUFFER overlapping the end of a live simple mapping");
	refused(c, map_at(c, buf, c->ext.dev + 15 * APEX_PAGE, 2 * APEX_PAGE),
		E_BUSY_RANGE, "MAP_BUFFER overlapping a live extended mapping");

	/* A page-aligned user address with nothing behind it. */
	hole = mmap(NULL, 4 * APEX_PAGE, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (hole != MAP_FAILED) {
		munmap(hole, 4 * APEX_PAGE);
		refused(c, map_at(c, (uintptr_t)hole, apex_simple_addr(300),
				  4 * APEX_PAGE),
			EFAULT, "MAP_BUFFER of unmapped user memory");
	}
	/* Half valid: the first pages pin, the last does not. */
	hole = mmap(NULL, 4 * APEX_PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (hole != MAP_FAILED) {
		munmap((char *)hole + 3 * APEX_PAGE, APEX_PAGE);
		refused(c, map_at(c, (uintptr_t)hole, apex_simple_addr(300),
				  4 * APEX_PAGE),
			EFAULT, "MAP_BUFFER whose last page is not mapped");
		munmap(hole, 3 * APEX_PAGE);
	}
	err = ioctl(c->fd, GASKET_IOCTL_MAP_BUFFER, NULL) ? errno : 0;
	refused(c, err, EFAULT, "MAP_BUFFER with a NULL argument");

	refused(c, pt_map_flags(c->fd, c->src.buf, apex_simple_addr(400),
				APEX_PAGE, APEX_DMA_NONE),
		EINVAL, "MAP_BUFFER_FLAGS with direction DMA_NONE (11)");
	refused(c, pt_map_flags(c->fd, c->src.buf, apex_simple_addr(400),
				APEX_PAGE, 1U << 3),
		EINVAL, "MAP_BUFFER_FLAGS with a reserved flag bit");
	refused(c, pt_map_flags(c->fd, c->src.buf, c->dst.dev, APEX_PAGE,
				APEX_DMA_TO_DEVICE),
		E_BUSY_RANGE, "MAP_BUFFER_FLAGS over a live mapping");
}

static void test_unmap_bad(const struct ctx *c)
{
	uint64_t buf = (uintptr_t)c->dst.buf;

	refused(c, unmap_at(c, buf, apex_simple_addr(3000), REF_SIZE), EINVAL,
		"UNMAP_BUFFER of a simple range never mapped");
	refused(c, unmap_at(c, buf, apex_ext_addr(9, 0), REF_SIZE), EINVAL,
		"UNMAP_BUFFER of an extended range never mapped");
	refused(c, unmap_at(c, buf, c->dst.dev + 0x10, REF_SIZE), EINVAL,
		"UNMAP_BUFFER unaligned device address");
	refused(c, unmap_at(c, buf, c->dst.dev, 0), EINVAL,
		"UNMAP_BUFFER size 0");
	refused(c, map_raw(c->fd, 1, buf, c->dst.dev, REF_SIZE,
			   GASKET_IOCTL_UNMAP_BUFFER),
		E_BAD_TABLE, "UNMAP_BUFFER page_table_index 1");
	refused(c, unmap_at(c, buf, apex_simple_addr(SIMPLE_ENTRIES - 1),
			    2 * APEX_PAGE),
		EINVAL, "UNMAP_BUFFER range past the partition");
}

static void test_tables_bad(const struct ctx *c)
{
	struct gasket_page_table_ioctl io = { .page_table_index = 1 };

	refused(c, xioctl(c->fd, GASKET_IOCTL_PAGE_TABLE_SIZE, &io),
		E_BAD_TABLE, "PAGE_TABLE_SIZE page_table_index 1");
	io.page_table_index = 1;
	refused(c, xioctl(c->fd, GASKET_IOCTL_SIMPLE_PAGE_TABLE_SIZE, &io),
		E_BAD_TABLE, "SIMPLE_PAGE_TABLE_SIZE page_table_index 1");
	io.page_table_index = 1;
	io.size = SIMPLE_ENTRIES;
	refused(c, xioctl(c->fd, GASKET_IOCTL_PARTITION_PAGE_TABLE, &io),
		E_BAD_TABLE, "PARTITION_PAGE_TABLE page_table_index 1");
	refused(c, pt_partition(c->fd, APEX_PT_ENTRIES + 1), EINVAL,
		"PARTITION_PAGE_TABLE larger than the table");
	refused(c, pt_partition(c->fd, 32), E_BUSY_RANGE,
		"PARTITION_PAGE_TABLE cutting through live simple mappings");
	refused(c, pt_partition(c->fd, APEX_PT_ENTRIES), E_BUSY_RANGE,
		"PARTITION_PAGE_TABLE removing a live extended mapping");
}

static void test_eventfd_bad(const struct ctx *c)
{
	int pipefd[2] = { -1, -1 }, closed;

	refused(c, set_eventfd(c->fd, APEX_IRQ_COUNT, c->efd), EINVAL,
		"SET_EVENTFD interrupt %d", APEX_IRQ_COUNT);
	refused(c, set_eventfd(c->fd, (1ULL << 32) | 4, c->efd), EINVAL,
		"SET_EVENTFD interrupt 2^32+4 (no truncation)");
	refused(c, clear_eventfd(c->fd, APEX_IRQ_COUNT), EINVAL,
		"CLEAR_EVENTFD interrupt %d", APEX_IRQ_COUNT);
	if (pipe2(pipefd, O_CLOEXEC) == 0) {
		refused(c, set_eventfd(c->fd, 4, pipefd[0]), E_NOT_EVENTFD,
			"SET_EVENTFD with a pipe instead of an eventfd");
		close(pipefd[0]);
		close(pipefd[1]);
	}
	closed = eventfd(0, EFD_CLOEXEC);
	close(closed);
	refused(c, set_eventfd(c->fd, 4, closed), EBADF,
		"SET_EVENTFD with a closed descriptor");
	refused(c, set_eventfd(c->fd, 4, -1), EBADF,
		"SET_EVENTFD with descriptor -1");
}

static void test_dmabuf_bad(const struct ctx *c)
{
	struct gasket_page_table_ioctl_dmabuf io = {
		.page_table_index = 0,
		.device_address = apex_simple_addr(500),
		.num_pages = 1,
		.map = 1,
	};

	io.dmabuf_fd = c->efd;
	refused(c, xioctl(c->fd, GASKET_IOCTL_MAP_DMABUF, &io), E_NOT_EVENTFD,
		"MAP_DMABUF with an eventfd instead of a dma-buf");
	io.dmabuf_fd = -1;
	refused(c, xioctl(c->fd, GASKET_IOCTL_MAP_DMABUF, &io), EBADF,
		"MAP_DMABUF with descriptor -1");
}

static void test_unknown(const struct ctx *c)
{
	static const struct {
		unsigned long req;
		const char *name;
	} unknown[] = {
		{ _IO(GASKET_IOCTL_BASE, 14), "_IO(0xDC, 14)" },
		{ _IOWR(GASKET_IOCTL_BASE, 0xff, __u64), "_IOWR(0xDC, 0xff, u64)" },
		{ _IOW(GASKET_IOCTL_BASE, 8, __u32), "MAP_BUFFER number with a 4-byte size" },
		{ _IO(APEX_IOCTL_BASE, 0x40), "_IO(0x7F, 0x40)" },
		{ _IOR('z', 0x77, int), "_IOR('z', 0x77, int)" },
	};
	uint64_t arg[8] = { 0 };
	size_t i;

	for (i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++)
		refused(c, xioctl(c->fd, unknown[i].req, arg), ENOTTY,
			"unknown ioctl %s", unknown[i].name);
}

static void test_coherent(const struct ctx *c)
{
	struct gasket_coherent_alloc_config_ioctl io = {
		.page_table_index = 0,
		.enable = 1,
		.size = 16 * APEX_PAGE,
	};
	int err;

	err = xioctl(c->fd, GASKET_IOCTL_CONFIG_COHERENT_ALLOCATOR, &io);
	if (err)
		tap_why("enable: %s", errname(err));
	else if (!io.dma_address)
		tap_why("dma_address 0");
	tap_ok(!err && io.dma_address,
	       "CONFIG_COHERENT_ALLOCATOR enable 64 KiB returns a DMA address");
	io.enable = 0;
	err = xioctl(c->fd, GASKET_IOCTL_CONFIG_COHERENT_ALLOCATOR, &io);
	if (err)
		tap_why("disable: %s", errname(err));
	tap_ok(!err && unchanged(c), "CONFIG_COHERENT_ALLOCATOR disable");

	io.enable = 1;
	io.page_table_index = 1;
	refused(c, xioctl(c->fd, GASKET_IOCTL_CONFIG_COHERENT_ALLOCATOR, &io),
		E_BAD_TABLE, "CONFIG_COHERENT_ALLOCATOR page_table_index 1");
	io.page_table_index = 0;
	io.size = 1ULL << 40;
	refused(c, xioctl(c->fd, GASKET_IOCTL_CONFIG_COHERENT_ALLOCATOR, &io),
		EINVAL, "CONFIG_COHERENT_ALLOCATOR of 1 TiB");
}

/* Interrupt counts and eventfd binding, seen through the reference copy. */
static void test_interrupts(const struct ctx *c)
{
	struct te_run run;
	long long n;
	int err;

	err = xioctl(c->fd, GASKET_IOCTL_CLEAR_INTERRUPT_COUNTS, NULL);
	n = sysfs_irq_count(c->dev, 4);
	if (err)
		tap_why("%s", errname(err));
	else if (n != 0)
		tap_why("interrupt_counts[4] is %lld", n);
	tap_ok(!err && n == 0, "CLEAR_INTERRUPT_COUNTS zeroes interrupt_counts");

	err = clear_eventfd(c->fd, 4);
	efd_drain(c->efd);
	if (!err)
		te_copy(&c->te, c->src.dev, c->dst.dev, APEX_PAGE, 4, c->efd,
			2000, &run);
	if (err)
		tap_why("%s", errname(err));
	else if (run.events)
		tap_why("the eventfd still fired");
	else if (sysfs_irq_count(c->dev, 4) != 1)
		tap_why("interrupt_counts[4] is %lld, want 1",
			sysfs_irq_count(c->dev, 4));
	tap_ok(!err && !run.events && sysfs_irq_count(c->dev, 4) == 1,
	       "CLEAR_EVENTFD: the interrupt is counted but no longer signalled");
	err = set_eventfd(c->fd, 4, c->efd);
	if (err)
		tap_why("%s", errname(err));
	tap_ok(!err && unchanged(c), "SET_EVENTFD binds it again");
}

static void test_loopback(const struct ctx *c)
{
	long long before = sysfs_irq_count(c->dev, 4), after;
	uint64_t events;
	int err;

	efd_drain(c->efd);
	err = ioctl(c->fd, GASKET_IOCTL_LOOPBACK_INTERRUPT, 4UL) ? errno : 0;
	events = efd_wait(c->efd, 1000);
	after = sysfs_irq_count(c->dev, 4);
	if (err)
		tap_why("%s", errname(err));
	else if (!events || after != before + 1)
		tap_why("eventfd %s, interrupt_counts[4] %lld -> %lld",
			events ? "fired" : "silent", before, after);
	tap_ok(!err && events && after == before + 1,
	       "LOOPBACK_INTERRUPT 4 signals its eventfd and counts");
	err = ioctl(c->fd, GASKET_IOCTL_LOOPBACK_INTERRUPT,
		    (unsigned long)APEX_IRQ_COUNT) ? errno : 0;
	refused(c, err, EINVAL, "LOOPBACK_INTERRUPT %d", APEX_IRQ_COUNT);
}

static void test_apex_bad(const struct ctx *c)
{
	struct apex_performance_expectation_ioctl perf = { .performance = 4 };

	refused(c, xioctl(c->fd, APEX_IOCTL_PERFORMANCE_EXPECTATION, &perf),
		EINVAL, "PERFORMANCE_EXPECTATION 4");
	refused(c, xioctl(c->fd, APEX_IOCTL_PERFORMANCE_EXPECTATION, NULL),
		EFAULT, "PERFORMANCE_EXPECTATION with a NULL argument");
	refused(c, xioctl(c->fd, APEX_IOCTL_GATE_CLOCK, NULL), EFAULT,
		"GATE_CLOCK with a NULL argument");
}

static void test_reset(const struct ctx *c)
{
	long long before = sysfs_num(c->dev, "reset_count"), after;
	int legacy, err;

	for (legacy = 0; legacy < 2; legacy++) {
		err = dev_reset(c->fd, legacy);
		after = sysfs_num(c->dev, "reset_count");
		if (err)
			tap_why("%s", errname(err));
		else if (after != before + 1)
			tap_why("reset_count went from %lld to %lld", before,
				after);
		tap_ok(!err && after == before + 1,
		       "RESET under %s accepted and counted in reset_count",
		       legacy ? "_IOW(0xDC, 0, unsigned long)" : "_IO(0xDC, 0)");
		before = after;
	}
}

int main(int argc, char **argv)
{
	struct ctx c = { .fd = -1, .efd = -1 };

	if (argc > 2 || (argc == 2 && argv[1][0] != '/')) {
		fputs("usage: apex-ioctl [DEVICE]\n", stderr);
		return 2;
	}
	c.dev = apex_dev_path(argc, argv);
	if (!tap_ok(setup(&c), "open %s, mmap the test engine, bind source 4",
		    c.dev)) {
		tap_skip_dep("opening the device", "ioctl tests");
		return tap_done();
	}
	test_queries(&c);
	tap_ok(partition_to(&c, 6144), "PARTITION_PAGE_TABLE to 6144 simple entries");
	if (!tap_ok(partition_to(&c, SIMPLE_ENTRIES),
		    "PARTITION_PAGE_TABLE to %d simple entries", SIMPLE_ENTRIES) ||
	    !tap_ok(map_refs(&c),
		    "MAP_BUFFER of the reference mappings (2 simple, 1 extended), engine copies through them")) {
		tap_skip_dep("the reference mappings", "bad-input tests");
		return tap_done();
	}
	test_map_bad(&c);
	test_unmap_bad(&c);
	test_tables_bad(&c);
	test_eventfd_bad(&c);
	test_dmabuf_bad(&c);
	test_unknown(&c);
	test_apex_bad(&c);
	test_coherent(&c);
	test_interrupts(&c);
	test_loopback(&c);
	test_reset(&c);
	close(c.fd);
	return tap_done();
}
