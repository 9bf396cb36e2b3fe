// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * apex-bench: guest-side benchmarks of the apex driver on the emulated chip.
 *
 * Prints one CSV row per figure: name,variant,bytes,median,min,max,unit,reps
 * (lines starting with '#' are comments). The host (vmtest/bench.sh) keeps
 * the rows and formats the table. Built with the guest test helpers.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "apexdev.h"
#include "ctl.h"
#include "te.h"

#define MIB (1024.0 * 1024.0)

static void die(const char *what, int err)
{
	fprintf(stderr, "apex-bench: %s: %s\n", what, strerror(err));
	exit(1);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Sorts v[0..n) and prints its median, min and max. */
static void report(const char *name, const char *variant, uint64_t bytes,
		   double *v, int n, const char *unit)
{
	qsort(v, n, sizeof(*v), cmp_double);
	printf("%s,%s,%" PRIu64 ",%.3f,%.3f,%.3f,%s,%d\n", name, variant, bytes,
	       v[n / 2], v[0], v[n - 1], unit, n);
}

/* The test-engine page: a BAR2 read through it orders the counts below. */
static struct te te;

/*
 * apexsim's count of BAR2 writes so far, or -1 without its control channel.
 * QEMU posts BAR writes to apexsim without waiting; a read waits for its
 * reply, which apexsim sends after the writes before it.
 */
static long long bar_writes(void)
{
	long long v;

	if (te_read(&te, TE_ID) != TE_ID_VALUE)
		return -1;
	return ctl_get("reg_writes", &v) ? -1 : v;
}

#define HUGEPAGE (2UL << 20)

/* What a buffer of @bytes occupies: hugetlb mappings are whole hugepages. */
static size_t buffer_len(size_t bytes, int huge)
{
	return huge ? (bytes + HUGEPAGE - 1) & ~(HUGEPAGE - 1) : bytes;
}

/* Touched anonymous memory, 2 MiB hugepages when @huge. */
static void *alloc_buffer(size_t bytes, int huge)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE;
	void *p;

	if (huge)
		flags |= MAP_HUGETLB;
	p = mmap(NULL, buffer_len(bytes, huge), PROT_READ | PROT_WRITE, flags,
		 -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0x5a, bytes);
	return p;
}

/* MAP_BUFFER and UNMAP_BUFFER throughput for one size, range and memory kind. */
static void bench_map(int fd, uint64_t bytes, int extended, int huge,
		      uint64_t simple_entries, uint64_t ext_entries, int reps)
{
	double map_mibs[16], unmap_mibs[16], map_pps[16], unmap_pps[16];
	uint64_t dev, pages = bytes / APEX_PAGE;
	char variant[32];
	void *buf;
	int i, err;

	snprintf(variant, sizeof(variant), "%s-%s",
		 extended ? "extended" : "simple", huge ? "hugepage" : "normal");
	if (!extended && pages > simple_entries)
		return;		/* larger than the simple range */
	if (extended && pages > ext_entries * APEX_EXT_LVL1_ENTRIES)
		return;
	buf = alloc_buffer(bytes, huge);
	if (!buf) {
		printf("# %s %" PRIu64 " bytes: no memory (%s)\n", variant, bytes,
		       strerror(errno));
		return;
	}
	dev = extended ? apex_ext_addr(0, 0) : apex_simple_addr(0);
	for (i = 0; i < reps; i++) {
		long long w0, w1, w2;
		double t0, map_s, unmap_s;

		/* The control requests stay outside the timed calls. */
		w0 = bar_writes();
		t0 = now_s();
		err = pt_map(fd, buf, dev, bytes);
		map_s = now_s() - t0;
		if (err)
			die("MAP_BUFFER", err);
		w1 = bar_writes();
		t0 = now_s();
		err = pt_unmap(fd, buf, dev, bytes);
		unmap_s = now_s() - t0;
		if (err)
			die("UNMAP_BUFFER", err);
		w2 = bar_writes();
		/*
		 * The first repetition may publish new second-level tables;
		 * by the last one they exist.
		 */
		if ((i == 0 || i == reps - 1) && w0 >= 0 && w1 >= 0 && w2 >= 0) {
			printf("bar_writes,%s-map-%s,%" PRIu64 ",%lld,%lld,%lld,writes,1\n",
			       i ? "last" : "first", variant, bytes,
			       w1 - w0, w1 - w0, w1 - w0);
			printf("bar_writes,%s-unmap-%s,%" PRIu64 ",%lld,%lld,%lld,writes,1\n",
			       i ? "last" : "first", variant, bytes,
			       w2 - w1, w2 - w1, w2 - w1);
		}
		map_mibs[i] = bytes / MIB / map_s;
		unmap_mibs[i] = bytes / MIB / unmap_s;
		map_pps[i] = pages / map_s;
		unmap_pps[i] = pages / unmap_s;
	}
	report("map", variant, bytes, map_mibs, reps, "MiB/s");
	report("map", variant, bytes, map_pps, reps, "pages/s");
	report("unmap", variant, bytes, unmap_mibs, reps, "MiB/s");
	report("unmap", variant, bytes, unmap_pps, reps, "pages/s");
	munmap(buf, buffer_len(bytes, huge));
}

/* Doorbell write -> device copy -> MSI-X -> eventfd wake, in microseconds. */
static void bench_round_trip(int fd, int iters)
{
	double *lat = calloc(iters, sizeof(*lat));
	uint64_t src_dev = apex_simple_addr(0), dst_dev = apex_simple_addr(1);
	void *src, *dst;
	int efd, i, err;

	src = alloc_buffer(APEX_PAGE, 0);
	dst = alloc_buffer(APEX_PAGE, 0);
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!lat || !src || !dst || efd < 0)
		die("round-trip setup", errno);
	err = pt_map(fd, src, src_dev, APEX_PAGE);
	if (!err)
		err = pt_map(fd, dst, dst_dev, APEX_PAGE);
	if (!err)
		err = set_eventfd(fd, 0, efd);
	if (err)
		die("round-trip mapping", err);

	for (i = 0; i < iters; i++) {
		struct pollfd pfd = { .fd = efd, .events = POLLIN };
		uint64_t status;
		double t0;

		te_write(&te, TE_STATUS, TE_STATUS_DONE | TE_STATUS_ERROR);
		te_write(&te, TE_SRC, src_dev);
		te_write(&te, TE_DST, dst_dev);
		te_write(&te, TE_LEN, 64);
		te_write(&te, TE_IRQ, 0);
		t0 = now_s();
		te_write(&te, TE_DOORBELL, 1);
		if (poll(&pfd, 1, 5000) != 1)
			die("waiting for the test-engine interrupt", ETIMEDOUT);
		lat[i] = (now_s() - t0) * 1e6;
		efd_drain(efd);
		status = te_read(&te, TE_STATUS);
		if (!(status & TE_STATUS_DONE) || (status & TE_STATUS_ERROR)) {
			fprintf(stderr, "apex-bench: test engine status %#" PRIx64 "\n", status);
			exit(1);
		}
	}
	qsort(lat, iters, sizeof(*lat), cmp_double);
	printf("round_trip,median,64,%.3f,%.3f,%.3f,us,%d\n",
	       lat[iters / 2], lat[0], lat[iters - 1], iters);
	printf("round_trip,p99,64,%.3f,%.3f,%.3f,us,%d\n",
	       lat[iters * 99 / 100], lat[0], lat[iters - 1], iters);

	clear_eventfd(fd, 0);
	close(efd);
	pt_unmap(fd, src, src_dev, APEX_PAGE);
	pt_unmap(fd, dst, dst_dev, APEX_PAGE);
	munmap(src, APEX_PAGE);
	munmap(dst, APEX_PAGE);
	free(lat);
}

/* open() + close() of the node: the first open resets the chip. */
static void bench_open_close(const char *path, int reps)
{
	double v[64];
	int i;

	for (i = 0; i < reps; i++) {
		double t0 = now_s();
		int fd = open(path, O_RDWR | O_CLOEXEC);

		if (fd < 0)
			die(path, errno);
		close(fd);
		v[i] = (now_s() - t0) * 1e3;
	}
	report("open_close", "rdwr", 0, v, reps, "ms");
}

int main(int argc, char **argv)
{
	static const uint64_t sizes[] = {
		4096, 65536, 1 << 20, 16 << 20, 64 << 20, 256 << 20,
	};
	const char *path = getenv("APEX_DEV") ? getenv("APEX_DEV") : APEX_DEV_DEFAULT;
	int reps = argc > 1 ? atoi(argv[1]) : 5;
	int iters = argc > 2 ? atoi(argv[2]) : 1000;
	uint64_t total = APEX_PT_ENTRIES, simple = total / 2;
	unsigned int s;
	int fd, ext, huge, err;

	if (reps < 1 || reps > 16 || iters < 100) {
		fprintf(stderr, "usage: apex-bench [REPS 1..16] [ITERS >= 100]\n");
		return 2;
	}
	printf("name,variant,bytes,median,min,max,unit,reps\n");
	bench_open_close(path, reps * 4);

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		die(path, errno);
	/* Half simple, half extended: 16 MiB simple, 8 GiB extended. */
	err = pt_partition(fd, simple);
	if (err)
		die("PARTITION_PAGE_TABLE", err);
	err = te_map(&te, fd);
	if (err)
		die("mmap of the test-engine page", err);
	for (ext = 0; ext <= 1; ext++)
		for (huge = 0; huge <= 1; huge++)
			for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
				bench_map(fd, sizes[s], ext, huge, simple,
					  total - simple, reps);
	bench_round_trip(fd, iters);
	te_unmap(&te);
	close(fd);
	return 0;
}
