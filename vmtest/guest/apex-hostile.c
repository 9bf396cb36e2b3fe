// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * apex-hostile: user space that tries to hurt others through the driver.
 *
 *  - An ioctl argument on a page that never arrives (a userfaultfd page
 *    nobody serves) stalls only its own thread: meanwhile another
 *    descriptor's MAP_BUFFER and UNMAP_BUFFER complete. The same for a
 *    MAP_BUFFER whose buffer is such a page (pinning waits on it).
 *  - No mapping of the device can become executable (mprotect(PROT_EXEC)
 *    fails with EACCES).
 *  - CONFIG_COHERENT_ALLOCATOR with a size that is not a page multiple
 *    fails with EINVAL and allocates nothing.
 *  - Every buffer is pinned for writing, whatever its DMA direction: the
 *    chip could write it anyway.
 *
 * Runs as root (userfaultfd handles the kernel's own faults on user
 * memory only for privileged callers).
 *
 *   apex-hostile [DEVICE]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "apexdev.h"
#include "stall.h"
#include "tap.h"
#include "te.h"

/* A failure detector, not a speed requirement: a blocked call never ends. */
#define BOUND_MS 30000
#define COHERENT_OFFSET 0x1000000UL
#define MAP_PAGES 16

static const char *dev;
static size_t page;	/* the kernel's page size: what MAP_BUFFER and mmap take */

/* A call run in its own thread, so that a blocked one can be detected. */
struct job {
	int (*fn)(struct job *j);
	int fd;
	void *buf;
	uint64_t dev_addr;
	int err;
	int done;		/* eventfd, written when fn returns */
	pthread_t thread;
};

static void *job_main(void *arg)
{
	struct job *j = arg;
	uint64_t one = 1;

	j->err = j->fn(j);
	if (write(j->done, &one, sizeof(one)) != sizeof(one))
		perror("eventfd write");
	return NULL;
}

static bool job_start(struct job *j)
{
	j->done = eventfd(0, EFD_CLOEXEC);
	return j->done >= 0 && !pthread_create(&j->thread, NULL, job_main, j);
}

/* True once the job has finished (then it is joined). */
static bool job_finished(struct job *j, int ms)
{
	struct pollfd p = { .fd = j->done, .events = POLLIN };

	if (poll(&p, 1, ms) != 1)
		return false;
	pthread_join(j->thread, NULL);
	close(j->done);
	return true;
}

static int do_table_size(struct job *j)
{
	return xioctl(j->fd, GASKET_IOCTL_PAGE_TABLE_SIZE, j->buf);
}

static int do_map(struct job *j)
{
	return pt_map(j->fd, j->buf, j->dev_addr, page);
}

static int do_map_unmap(struct job *j)
{
	int err = pt_map(j->fd, j->buf, j->dev_addr, MAP_PAGES * page);

	return err ? err : pt_unmap(j->fd, j->buf, j->dev_addr,
				    MAP_PAGES * page);
}

/*
 * While @stalled waits on its page, @other (on another descriptor) must
 * finish; then the page arrives with @content and @stalled finishes too.
 * Returns whether @stalled finished. If @refusal is set, a call that
 * fails at once with EFAULT, without touching the page, is that: the
 * three checks are SKIPs giving @refusal as the reason.
 */
static bool run_beside_stall(struct stall_page *s, struct job *stalled,
			     struct job *other, const void *content,
			     const char *what, const char *other_what,
			     const char *refusal)
{
	bool hit, done = false;
	int err;

	if (!job_start(stalled)) {
		tap_why("cannot start a thread");
		tap_ok(false, "%s", what);
		return false;
	}
	hit = stall_page_hit(s, 10000);
	if (!hit && refusal && job_finished(stalled, 0)) {
		if (stalled->err == EFAULT) {
			tap_skip(refusal, "%s waits on a page nobody serves (userfaultfd)",
				 what);
			tap_skip(refusal, "meanwhile %s completes", other_what);
			tap_skip(refusal, "%s completes once its page arrives", what);
			return false;
		}
		tap_why("returned %s at once", errname(stalled->err));
		tap_ok(false, "%s waits on a page nobody serves (userfaultfd)", what);
		return false;
	}
	if (!hit)
		tap_why("no fault on the page within 10 s");
	tap_ok(hit, "%s waits on a page nobody serves (userfaultfd)", what);

	if (hit && job_start(other)) {
		done = job_finished(other, BOUND_MS);
		if (!done)
			tap_why("still blocked after %d s: a lock is held while %s waits for user memory",
				BOUND_MS / 1000, what);
		else if (other->err)
			tap_why("%s", errname(other->err));
		tap_ok(done && !other->err, "meanwhile %s completes",
		       other_what);
	} else {
		tap_skip_dep("the stall", "%s beside the stall", other_what);
	}

	/* The page arrives: everything stuck behind it goes on. */
	err = stall_page_serve(s, content);
	if (!done && other->done >= 0 && hit)
		done = job_finished(other, BOUND_MS);
	if (err)
		tap_why("UFFDIO_COPY: %s", errname(err));
	if (!job_finished(stalled, BOUND_MS)) {
		tap_why("still blocked %d s after the page arrived", BOUND_MS / 1000);
		tap_ok(false, "%s completes once its page arrives", what);
		return false;
	}
	return true;
}

/*
 * The common start of a stall test: @other's buffer and the stalled page.
 * @ready says the test's own buffers were allocated. On failure the test
 * is reported, its dependents skipped, and false returned.
 */
static bool stall_setup(struct stall_page *s, struct job *other, bool ready,
			const char *page_name, const char *skipped)
{
	int err;

	other->buf = buf_alloc(MAP_PAGES * page);
	err = stall_page_init(s);
	if (err)
		tap_why("userfaultfd: %s", errname(err));
	if (!tap_ok(!err && ready && other->buf, "%s", page_name)) {
		tap_skip_dep("userfaultfd", skipped);
		return false;
	}
	return true;
}

static void test_stalled_argument(int fd_ro, int fd_rw)
{
	struct gasket_page_table_ioctl *arg = buf_alloc(page);
	struct stall_page s;
	struct job stalled = { .fn = do_table_size, .fd = fd_ro, .done = -1 };
	struct job other = {
		.fn = do_map_unmap, .fd = fd_rw, .dev_addr = apex_simple_addr(100),
		.done = -1,
	};
	const char *what = "PAGE_TABLE_SIZE on a read-only descriptor";

	if (!stall_setup(&s, &other, arg != NULL, "a page registered with userfaultfd",
			 "the stalled argument"))
		return;
	stalled.buf = s.page;
	memset(arg, 0, page);
	arg->page_table_index = 0;
	if (run_beside_stall(&s, &stalled, &other, arg, what,
			     "MAP_BUFFER + UNMAP_BUFFER of 64 KiB on the owner's descriptor",
			     NULL)) {
		arg = s.page;
		if (stalled.err)
			tap_why("%s", errname(stalled.err));
		else if (arg->size != APEX_PT_ENTRIES)
			tap_why("size %llu", (unsigned long long)arg->size);
		tap_ok(!stalled.err && arg->size == APEX_PT_ENTRIES,
		       "%s completes once its page arrives: %d entries", what,
		       APEX_PT_ENTRIES);
	}
	stall_page_fini(&s);
}

static void test_stalled_pin(int fd_rw, int fd_rw2)
{
	void *zero = buf_alloc(page);
	struct stall_page s;
	struct job stalled = {
		.fn = do_map, .fd = fd_rw, .dev_addr = apex_simple_addr(200),
		.done = -1,
	};
	struct job other = {
		.fn = do_map_unmap, .fd = fd_rw2, .dev_addr = apex_simple_addr(100),
		.done = -1,
	};
	const char *what = "MAP_BUFFER of a buffer on that page";
	int err;

	if (!stall_setup(&s, &other, zero != NULL, "a second page registered with userfaultfd",
			 "the stalled pin"))
		return;
	memset(zero, 0, page);
	stalled.buf = s.page;
	/*
	 * Older kernels (5.10 and 6.1 here) fault pages in for long-term
	 * pins (FOLL_LONGTERM) without allowing mmap_lock to be dropped,
	 * which userfaultfd needs in order to wait: the pin fails with
	 * EFAULT at once, so there is no stall to test.
	 */
	if (run_beside_stall(&s, &stalled, &other, zero, what,
			     "MAP_BUFFER + UNMAP_BUFFER on another descriptor",
			     "this kernel's long-term pinning refuses a userfaultfd page with EFAULT instead of waiting for it")) {
		err = stalled.err ? stalled.err :
		      pt_unmap(fd_rw, s.page, stalled.dev_addr, page);
		if (err)
			tap_why("%s", errname(err));
		tap_ok(!err, "%s completes once its page arrives, and unmaps", what);
	}
	stall_page_fini(&s);
}

/* mprotect(PROT_EXEC) of a fresh mapping at @off: 0 or the errno. */
static int exec_errno(int fd, unsigned long off, int *map_err)
{
	void *p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		       (off_t)off);
	int err;

	*map_err = p == MAP_FAILED ? errno : 0;
	if (*map_err)
		return 0;
	err = mprotect(p, page, PROT_READ | PROT_EXEC) ? errno : 0;
	munmap(p, page);
	return err;
}

static void expect_no_exec(int fd, unsigned long off, const char *what)
{
	int map_err, err = exec_errno(fd, off, &map_err);

	if (map_err)
		tap_why("mmap: %s", errname(map_err));
	else if (err != EACCES)
		tap_why("mprotect returned %s", errname(err));
	tap_ok(!map_err && err == EACCES,
	       "mprotect(PROT_EXEC) of %s -> EACCES", what);
}

static int coherent(int fd, uint64_t enable, uint64_t size, uint64_t addr)
{
	struct gasket_coherent_alloc_config_ioctl io = {
		.page_table_index = 0,
		.enable = enable,
		.size = size,
		.dma_address = addr,
	};

	return xioctl(fd, GASKET_IOCTL_CONFIG_COHERENT_ALLOCATOR, &io);
}

static void test_no_exec(int fd)
{
	struct statvfs st;
	void *p;
	int err;

	/* On a noexec mount the kernel clears VM_MAYEXEC itself. */
	if (statvfs(dev, &st) == 0 && (st.f_flag & ST_NOEXEC)) {
		tap_why("%s is on a noexec mount: the check would prove nothing", dev);
		tap_ok(false, "mappings of the device cannot become executable");
		return;
	}
	p = mmap(NULL, page, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0x40000);
	err = p == MAP_FAILED ? errno : 0;
	if (!err)
		munmap(p, page);
	if (err != EPERM)
		tap_why("got %s", errname(err));
	tap_ok(err == EPERM, "mmap of BAR2 region 0x40000 with PROT_EXEC -> EPERM");
	if (bar2_window_maps(0x44000, page))
		expect_no_exec(fd, 0x44000, "a BAR2 mapping (0x44000)");
	expect_no_exec(fd, 0x40000, "the test engine mapping (0x40000)");

	err = coherent(fd, 1, 4 * page, 0);
	if (err) {
		tap_why("CONFIG_COHERENT_ALLOCATOR: %s", errname(err));
		tap_ok(false, "mprotect(PROT_EXEC) of the coherent buffer -> EACCES");
		return;
	}
	expect_no_exec(fd, COHERENT_OFFSET, "the coherent buffer");
	err = coherent(fd, 0, 0, COHERENT_OFFSET);
	if (err)
		tap_why("%s", errname(err));
	tap_ok(!err, "CONFIG_COHERENT_ALLOCATOR frees it again");
}

static void test_coherent_size(int fd)
{
	const uint64_t sizes[] = { 100, page + 1, 4 * page - 1 };
	void *p;
	size_t i;
	int err;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		err = coherent(fd, 1, sizes[i], 0);
		if (err != EINVAL)
			tap_why("got %s", errname(err));
		tap_ok(err == EINVAL, "CONFIG_COHERENT_ALLOCATOR of %llu bytes -> EINVAL",
		       (unsigned long long)sizes[i]);
		if (!err)
			coherent(fd, 0, 0, COHERENT_OFFSET);
	}
	/* Nothing was allocated: nothing to map, and a good size still works. */
	p = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, COHERENT_OFFSET);
	err = p == MAP_FAILED ? errno : 0;
	if (!err)
		munmap(p, page);
	if (err != EINVAL)
		tap_why("mmap returned %s", errname(err));
	tap_ok(err == EINVAL, "after them no coherent buffer exists (mmap -> EINVAL)");
	err = coherent(fd, 1, 4 * page, 0);
	if (!err)
		err = coherent(fd, 0, 0, COHERENT_OFFSET);
	if (err)
		tap_why("%s", errname(err));
	tap_ok(!err, "CONFIG_COHERENT_ALLOCATOR of 16 KiB then works, and frees");
}

/*
 * The chip cannot be limited to reading (its entries have no read-only
 * bit), so MAP_BUFFER pins every buffer for writing: memory the process
 * may not write is refused, and a device write through a mapping made
 * "device only reads" lands in the process's own pages, never in a page
 * the kernel shares (here the zero page, behind memory never written).
 * Behind an IOMMU the mapping is read-only for the chip, and the write
 * faults instead, leaving the pages as they were.
 */
static void test_read_only_buffers(int fd)
{
	const size_t size = MAP_PAGES * page;
	const uint64_t src_dev = apex_simple_addr(300);
	const uint64_t dst_dev = apex_simple_addr(400);
	uint8_t *ro = buf_alloc(size), *src = buf_alloc(size);
	uint8_t *untouched = buf_alloc(size), *fresh = MAP_FAILED;
	long long before = sysfs_num(dev, "node_0_num_mapped_pages");
	struct te_run run = { 0 };
	struct te te = { 0 };
	bool iommu = chip_behind_iommu(dev);
	/* The copy's end: refused behind an IOMMU, done without one. */
	uint64_t want_status = iommu ? TE_STATUS_ERROR : TE_STATUS_DONE;
	int err;
	bool ok;

	if (!ro || !src || !untouched) {
		tap_why("out of memory");
		tap_ok(false, "buffers for the read-only tests");
		goto out;
	}
	memset(ro, 1, size);
	err = mprotect(ro, size, PROT_READ) ? errno :
	      pt_map_flags(fd, ro, dst_dev, size, APEX_DMA_TO_DEVICE);
	if (err != EFAULT)
		tap_why("got %s", errname(err));
	tap_ok(err == EFAULT &&
	       sysfs_num(dev, "node_0_num_mapped_pages") == before,
	       "MAP_BUFFER_FLAGS of read-only memory, device only reads -> EFAULT, nothing mapped");

	buf_fill(src, size, 91);
	err = te_map(&te, fd);
	if (!err)
		err = pt_map(fd, src, src_dev, size);
	if (!err)
		err = pt_map_flags(fd, untouched, dst_dev, size,
				   APEX_DMA_TO_DEVICE);
	if (!err && te_copy(&te, src_dev, dst_dev, size, 4, -1, BOUND_MS, &run))
		err = ETIMEDOUT;
	fresh = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ok = !err && run.status == want_status &&
	     (iommu ? buf_check_byte(untouched, size, 0) :
		      buf_check(untouched, size, 91)) < 0 &&
	     fresh != MAP_FAILED && buf_check_byte(fresh, size, 0) < 0;
	if (err)
		tap_why("%s", errname(err));
	else if (run.status != want_status)
		tap_why("TE_STATUS 0x%llx", (unsigned long long)run.status);
	else if (!ok)
		tap_why("fresh anonymous memory reads %s",
			fresh != MAP_FAILED && buf_check_byte(fresh, size, 0) < 0 ?
			"zeros, but the target does not hold what it should" :
			"the copy: the chip wrote the shared zero page");
	if (iommu)
		tap_ok(ok, "a device write through a device-only-reads mapping faults at the IOMMU, the pages stay as they were");
	else
		tap_ok(ok, "a device write through a device-only-reads mapping of memory never written lands in the process's pages, not the zero page");
	pt_unmap(fd, untouched, dst_dev, size);
	pt_unmap(fd, src, src_dev, size);
	if (te.regs)
		te_unmap(&te);
out:
	if (fresh != MAP_FAILED)
		munmap(fresh, size);
	buf_free(ro, size);
	buf_free(src, size);
	buf_free(untouched, size);
}

int main(int argc, char **argv)
{
	int fd_ro, fd_rw, fd_rw2;

	if (argc > 2 || (argc == 2 && argv[1][0] != '/')) {
		fputs("usage: apex-hostile [DEVICE]\n", stderr);
		return 2;
	}
	dev = apex_dev_path(argc, argv);
	page = kernel_page();
	fd_rw = open(dev, O_RDWR | O_CLOEXEC);
	fd_rw2 = open(dev, O_RDWR | O_CLOEXEC);
	fd_ro = open(dev, O_RDONLY | O_CLOEXEC);
	if (fd_rw < 0 || fd_rw2 < 0 || fd_ro < 0)
		tap_why("%s", strerror(errno));
	if (!tap_ok(fd_rw >= 0 && fd_rw2 >= 0 && fd_ro >= 0,
		    "open %s twice read-write and once read-only", dev)) {
		tap_skip_dep("opening the device", "hostile user space tests");
		return tap_done();
	}
	test_stalled_argument(fd_ro, fd_rw);
	test_stalled_pin(fd_rw, fd_rw2);
	test_no_exec(fd_rw);
	test_coherent_size(fd_rw);
	test_read_only_buffers(fd_rw);
	close(fd_ro);
	close(fd_rw2);
	close(fd_rw);
	return tap_done();
}
