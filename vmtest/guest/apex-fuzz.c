// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * apex-fuzz: several processes hammer one device with random valid and
 * invalid calls while the chip raises interrupts and changes temperature
 * at random moments.
 *
 *   owner     opens read-write: maps and unmaps buffers and dma-bufs,
 *             partitions, binds eventfds, configures the coherent buffer,
 *             mmaps windows, resets, gates clocks, starts engine copies,
 *             and issues random ioctl numbers;
 *   reader    two of them, read-only: the same calls, where every call that
 *             needs the owner must fail;
 *   outsider  not in the device's group: must never open it;
 *   staller   a call whose argument sits on a page that never arrives
 *             (userfaultfd), blocked for the whole run;
 *   chip      this process, through apexsim's control channel.
 *
 * Afterwards every process must have ended on its own, nothing may stay
 * mapped, pinned or owned, and the engine must still copy.
 *
 * The run is bounded by calls and by seconds, and the calls each process
 * makes follow from the printed seed (how the processes interleave does
 * not).
 *
 *   apex-fuzz [--seed N] [--calls N] [--secs N] --user UID:GID:GROUP
 *             --outsider UID:GID [DEVICE]
 *
 * Runs as root: it starts the others under the given ids, and userfaultfd
 * stalls kernel copies only for privileged callers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "apexdev.h"
#include "ctl.h"
#include "dmabuf.h"
#include "stall.h"
#include "tap.h"
#include "te.h"

#define POOL_PAGES 512		/* 2 MiB of the owner's own memory */
#define GRACE_SECS 60		/* a process still running by then is stuck */
#define COHERENT_OFFSET 0x1000000ULL
#define COPY_SIZE (64 * 1024)

enum role { OWNER, READER1, READER2, OUTSIDER, STALLER, ROLES };

static const char *const role_name[ROLES] = {
	"owner", "reader 1", "reader 2", "outsider", "staller",
};

/* What each process reports, in memory shared with this one. */
struct report {
	long calls;
	long successes;
	long violations;	/* calls that succeeded but must not have */
	long pinned_kb;		/* VmPin after the owner's close (-1: unread) */
	int stalled;		/* the staller's call is waiting on its page */
	char first_violation[160];
};

struct run {
	const char *dev;
	uint64_t seed;
	long calls, secs;
	uid_t uid, outsider_uid;
	gid_t gid, group, outsider_gid;
	int dmabuf;		/* a dma-buf, or -1 if the kernel has none */
	struct report *reports;	/* ROLES of them */
};

/* xorshift64*: small, and the same sequence for the same seed. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

static uint64_t below(uint64_t *s, uint64_t n)
{
	return rnd(s) % n;
}

static void become(gid_t gid, const gid_t *groups, size_t ngroups, uid_t uid)
{
	if (setgroups(ngroups, groups) || setgid(gid) || setuid(uid)) {
		perror("apex-fuzz: dropping privileges");
		_exit(3);
	}
}

static void violation(struct report *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void violation(struct report *r, const char *fmt, ...)
{
	va_list ap;

	if (!r->violations++) {
		va_start(ap, fmt);
		vsnprintf(r->first_violation, sizeof(r->first_violation), fmt,
			  ap);
		va_end(ap);
	}
}

/* The memory a caller may offer: its own, read-only, gone, or absurd. */
struct pool {
	uint8_t *rw;
	uint8_t *ro;
	uint8_t *gone;
};

static uint64_t pick_host(uint64_t *s, const struct pool *p)
{
	switch (below(s, 8)) {
	case 0:
		return (uintptr_t)p->ro + below(s, 16) * APEX_PAGE;
	case 1:
		return (uintptr_t)p->gone;
	case 2:
		return 0;
	case 3:
		return 0xffff888000000000ULL;	/* the kernel's half */
	case 4:
		return (uintptr_t)p->rw + below(s, APEX_PAGE);	/* unaligned */
	default:
		return (uintptr_t)p->rw + below(s, POOL_PAGES) * APEX_PAGE;
	}
}

static uint64_t pick_dev(uint64_t *s)
{
	switch (below(s, 6)) {
	case 0:
		return apex_ext_addr(below(s, 8192), below(s, 512));
	case 1:
		return apex_simple_addr(8192 + below(s, 8192));	/* past the table */
	case 2:
		return apex_simple_addr(below(s, 8192)) + 1 + below(s, 4095);
	case 3:
		return rnd(s);
	default:
		return apex_simple_addr(below(s, 8192));
	}
}

static uint64_t pick_size(uint64_t *s)
{
	switch (below(s, 8)) {
	case 0:
		return 0;
	case 1:
		return 1 + below(s, APEX_PAGE - 1);
	case 2:
		return (uint64_t)(POOL_PAGES + 1) * APEX_PAGE;	/* past the pool */
	case 3:
		return rnd(s);
	default:
		return (1 + below(s, 64)) * APEX_PAGE;
	}
}

static int pick_fd(uint64_t *s, int fd, int efd, int dmabuf)
{
	switch (below(s, 6)) {
	case 0:
		return -1;
	case 1:
		return fd;
	case 2:
		return (int)below(s, 1024);
	case 3:
		return dmabuf;
	default:
		return efd;
	}
}

/* Everything a process works with. */
struct state {
	uint64_t s;
	int fd, efd, dmabuf;
	struct te te;
	struct pool pool;
	struct report *r;
	bool owner;
};

/*
 * One random call. Returns the result (0 or the positive errno) and sets
 * *needs_owner for calls a read-only descriptor must be refused.
 */
static int one_call(struct state *st, bool *needs_owner)
{
	uint64_t *s = &st->s;
	struct gasket_page_table_ioctl pt = {
		.page_table_index = below(s, 8) ? 0 : below(s, 4),
		.host_address = pick_host(s, &st->pool),
		.device_address = pick_dev(s),
		.size = pick_size(s),
	};
	struct gasket_page_table_ioctl_flags ptf = {
		.base = pt,
		.flags = (uint32_t)below(s, 5) << GASKET_PT_FLAGS_DMA_DIRECTION_SHIFT,
	};
	struct gasket_interrupt_eventfd ie = {
		.interrupt = below(s, 16),
		.event_fd = pick_fd(s, st->fd, st->efd, st->dmabuf),
	};
	struct gasket_coherent_alloc_config_ioctl co = {
		.page_table_index = pt.page_table_index,
		.enable = below(s, 2),
		.size = below(s, 2) ? (1 + below(s, 64)) * APEX_PAGE : pick_size(s),
		.dma_address = below(s, 2) ? COHERENT_OFFSET : pick_dev(s),
	};
	struct gasket_page_table_ioctl_dmabuf db = {
		.page_table_index = pt.page_table_index,
		.device_address = pt.device_address,
		.dmabuf_fd = pick_fd(s, st->fd, st->efd, st->dmabuf),
		.num_pages = below(s, 32),
		.map = below(s, 2),
	};
	struct apex_gate_clock_ioctl gc = { .enable = below(s, 3) };
	struct apex_performance_expectation_ioctl pe = {
		.performance = below(s, 6),
	};
	uint64_t n = below(s, 32), raw[8];
	void *map;
	size_t len;
	off_t off;
	int err, i;

	*needs_owner = true;
	switch (below(s, 18)) {
	case 0:
	case 1:
		return xioctl(st->fd, GASKET_IOCTL_MAP_BUFFER, &pt);
	case 2:
		return xioctl(st->fd, GASKET_IOCTL_MAP_BUFFER_FLAGS, &ptf);
	case 3:
	case 4:
		return xioctl(st->fd, GASKET_IOCTL_UNMAP_BUFFER, &pt);
	case 5:
		pt.size = below(s, 3) ? below(s, 8193) : rnd(s);
		return xioctl(st->fd, GASKET_IOCTL_PARTITION_PAGE_TABLE, &pt);
	case 6:
		return xioctl(st->fd, GASKET_IOCTL_SET_EVENTFD, &ie);
	case 7:
		return xioctl(st->fd, GASKET_IOCTL_CLEAR_EVENTFD,
			      (void *)(uintptr_t)below(s, 16));
	case 8:
		return xioctl(st->fd, GASKET_IOCTL_CONFIG_COHERENT_ALLOCATOR, &co);
	case 9:
		return xioctl(st->fd, GASKET_IOCTL_MAP_DMABUF, &db);
	case 10:
		return below(s, 4) ? xioctl(st->fd, APEX_IOCTL_GATE_CLOCK, &gc) :
				     xioctl(st->fd, APEX_IOCTL_PERFORMANCE_EXPECTATION, &pe);
	case 11:
		if (below(s, 8))
			return xioctl(st->fd, GASKET_IOCTL_LOOPBACK_INTERRUPT,
				      (void *)(uintptr_t)below(s, 16));
		return xioctl(st->fd, below(s, 2) ? GASKET_IOCTL_RESET :
				      GASKET_IOCTL_CLEAR_INTERRUPT_COUNTS, NULL);
	case 12:
		/* Queries: anyone may ask. */
		*needs_owner = false;
		if (below(s, 2))
			return xioctl(st->fd, below(s, 2) ?
				      GASKET_IOCTL_PAGE_TABLE_SIZE :
				      GASKET_IOCTL_SIMPLE_PAGE_TABLE_SIZE, &pt);
		return xioctl(st->fd, GASKET_IOCTL_NUMBER_PAGE_TABLES, &n);
	case 13:
		/* A number and size of our choosing in both ioctl types. */
		*needs_owner = false;
		for (i = 0; i < 8; i++)
			raw[i] = below(s, 2) ? pick_host(s, &st->pool) : rnd(s);
		return xioctl(st->fd, _IOC(below(s, 4),
					    below(s, 2) ? GASKET_IOCTL_BASE : APEX_IOCTL_BASE,
					    below(s, 32), below(s, sizeof(raw) + 1)), raw);
	case 14:
		/* A window, the coherent buffer or anything else. */
		*needs_owner = false;
		switch (below(s, 5)) {
		case 0:
			off = 0x40000;
			break;
		case 1:
			off = 0x44000 + 0x4000 * below(s, 2);
			break;
		case 2:
			off = COHERENT_OFFSET;
			break;
		case 3:
			off = below(s, 0x100) * APEX_PAGE;
			break;
		default:
			off = (off_t)(rnd(s) & 0x7fffffffffffULL);
		}
		len = below(s, 4) ? APEX_PAGE : (1 + below(s, 16)) * APEX_PAGE;
		map = mmap(NULL, len, below(s, 2) ? PROT_READ :
			   PROT_READ | PROT_WRITE, MAP_SHARED, st->fd, off);
		if (map == MAP_FAILED)
			return errno;
		err = mprotect(map, len, PROT_READ | PROT_EXEC) ? 0 : EEXIST;
		if (err)
			violation(st->r, "mprotect(PROT_EXEC) of a device mapping at 0x%llx succeeded",
				  (unsigned long long)off);
		munmap(map, len);
		return 0;
	case 15:
		/* Give back part of the pool while the device may map it. */
		*needs_owner = false;
		map = st->pool.rw + below(s, POOL_PAGES) * APEX_PAGE;
		if (mmap(map, APEX_PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
			return errno;
		memset(map, 0x5a, APEX_PAGE);	/* not the zero page */
		return 0;
	default:
		/* An engine copy between any two device addresses. */
		*needs_owner = false;
		if (!st->te.regs)
			return ENODEV;
		{
			struct te_run run;

			te_copy(&st->te, pick_dev(s), pick_dev(s),
				below(s, 2) ? COPY_SIZE : pick_size(s) & 0xfffff,
				below(s, 13), -1, 100, &run);
		}
		return 0;
	}
}

/*
 * Every page is written first. The chip ignores a mapping's direction (its
 * page-table entry has none), so a read-only pin of a page never written,
 * the kernel's shared zero page, would let random copies write into it.
 */
static bool pool_init(struct pool *p)
{
	p->rw = buf_alloc(POOL_PAGES * APEX_PAGE);
	p->ro = buf_alloc(16 * APEX_PAGE);
	p->gone = mmap(NULL, APEX_PAGE, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!p->rw || !p->ro || p->gone == MAP_FAILED)
		return false;
	memset(p->rw, 0x5a, POOL_PAGES * APEX_PAGE);
	memset(p->ro, 0xa5, 16 * APEX_PAGE);
	munmap(p->gone, APEX_PAGE);
	return !mprotect(p->ro, 16 * APEX_PAGE, PROT_READ);
}

/* The owner and the readers. */
static int caller_main(const struct run *run, enum role role)
{
	struct state st = {
		.s = run->seed ^ (0x9e3779b97f4a7c15ULL * (role + 1)),
		.r = &run->reports[role],
		.owner = role == OWNER,
		.dmabuf = run->dmabuf,
	};
	long end = now_ms() + run->secs * 1000, i;
	bool needs_owner;
	int err;

	become(run->gid, &run->group, 1, run->uid);
	if (!pool_init(&st.pool))
		return 3;
	st.fd = open(run->dev, (st.owner ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (st.fd < 0) {
		violation(st.r, "open: %s", strerror(errno));
		return 1;
	}
	st.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (st.owner && te_map(&st.te, st.fd))
		st.te.regs = NULL;

	for (i = 0; i < run->calls && now_ms() < end; i++) {
		err = one_call(&st, &needs_owner);
		st.r->calls++;
		st.r->successes += !err;
		if (!err && needs_owner && !st.owner)
			violation(st.r, "call %ld: a call that needs the owner succeeded read-only",
				  i);
		/* A fault leaves the chip DEAD until reset; often, revive it. */
		if (st.owner && err == EIO && below(&st.s, 2)) {
			err = xioctl(st.fd, GASKET_IOCTL_RESET, NULL);
			st.r->calls++;
			st.r->successes += !err;
		}
	}
	if (st.te.regs)
		te_unmap(&st.te);
	close(st.fd);
	if (st.owner)
		st.r->pinned_kb = proc_status_num("VmPin");
	return 0;
}

static int outsider_main(const struct run *run)
{
	struct report *r = &run->reports[OUTSIDER];
	long end = now_ms() + run->secs * 1000;
	int fd;

	become(run->outsider_gid, NULL, 0, run->outsider_uid);
	while (r->calls < run->calls && now_ms() < end) {
		fd = open(run->dev, (r->calls & 1 ? O_RDWR : O_RDONLY) | O_CLOEXEC);
		r->calls++;
		if (fd >= 0) {
			violation(r, "opened the device");
			close(fd);
		}
		usleep(1000);
	}
	return 0;
}

struct stalled {
	int fd;
	void *page;
};

static void *stalled_ioctl(void *arg)
{
	struct stalled *st = arg;

	xioctl(st->fd, GASKET_IOCTL_PAGE_TABLE_SIZE, st->page);
	return NULL;
}

/*
 * The staller: one thread's ioctl copies its argument from a page nobody
 * serves, so it waits for the whole run. The process ends only when killed.
 */
static int staller_main(const struct run *run)
{
	struct report *r = &run->reports[STALLER];
	struct stall_page sp;
	struct stalled st;
	pthread_t t;
	int err;

	st.fd = open(run->dev, O_RDONLY | O_CLOEXEC);
	err = st.fd < 0 ? errno : stall_page_init(&sp);
	if (err) {
		violation(r, "open or userfaultfd: %s", errname(err));
		return 1;
	}
	st.page = sp.page;
	if (pthread_create(&t, NULL, stalled_ioctl, &st)) {
		violation(r, "cannot start a thread");
		return 1;
	}
	if (!stall_page_hit(&sp, 15000)) {
		violation(r, "PAGE_TABLE_SIZE did not fault on its page within 15 s");
		return 1;
	}
	r->stalled = 1;
	for (;;)
		pause();
}

static pid_t start(const struct run *run, enum role role)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	switch (role) {
	case OUTSIDER:
		_exit(outsider_main(run));
	case STALLER:
		_exit(staller_main(run));
	default:
		_exit(caller_main(run, role));
	}
}

/* The chip's side: random interrupts, fatal errors and temperatures. */
static bool chip_event(uint64_t *s)
{
	char cmd[32], reply[128];

	switch (below(s, 8)) {
	case 0:
	case 1:
		snprintf(cmd, sizeof(cmd), "temp %" PRIu64, 30000 + below(s, 70000));
		break;
	case 2:
		snprintf(cmd, sizeof(cmd), "raise fatal");
		break;
	default:
		snprintf(cmd, sizeof(cmd), "raise %" PRIu64, below(s, 13));
	}
	return !ctl_request(0, cmd, reply, sizeof(reply), CTL_TIMEOUT_MS) &&
	       !strncmp(reply, "ok", 2);
}

/* The exit of one process: 0, or why it is not a clean end. */
static const char *ended(int status)
{
	static char why[64];

	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return NULL;
	if (WIFSIGNALED(status))
		snprintf(why, sizeof(why), "killed by signal %d", WTERMSIG(status));
	else
		snprintf(why, sizeof(why), "exit status %d", WEXITSTATUS(status));
	return why;
}

/* SIGKILL @pid and reap it; false if it has not ended within 10 s. */
static bool killed(pid_t pid)
{
	int status, ms;

	kill(pid, SIGKILL);
	for (ms = 0; ms < 10000; ms += 10) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return true;
		usleep(10000);
	}
	return false;
}

/* The device after the run: free, nothing mapped, and the engine copies. */
static void check_after(const struct run *run)
{
	struct region { void *buf; uint64_t dev; } src, dst;
	struct te te = { 0 };
	struct te_run copy = { 0 };
	long long mapped = sysfs_num(run->dev, "node_0_num_mapped_pages");
	long long owned = sysfs_num(run->dev, "is_device_owned");
	int fd, err;
	bool ok;

	if (mapped || owned)
		tap_why("node_0_num_mapped_pages %lld, is_device_owned %lld",
			mapped, owned);
	tap_ok(!mapped && !owned, "afterwards nothing is mapped and nobody owns the device");

	src.buf = buf_alloc(COPY_SIZE);
	dst.buf = buf_alloc(COPY_SIZE);
	src.dev = apex_simple_addr(16);
	dst.dev = apex_simple_addr(32);
	fd = open(run->dev, O_RDWR | O_CLOEXEC);
	err = fd < 0 ? errno : te_map(&te, fd);
	if (!err && !(err = dev_reset(fd, false)) &&
	    !(err = pt_partition(fd, APEX_PT_ENTRIES / 2)) &&
	    !(err = pt_map(fd, src.buf, src.dev, COPY_SIZE)))
		err = pt_map(fd, dst.buf, dst.dev, COPY_SIZE);
	if (!err && src.buf && dst.buf) {
		buf_fill(src.buf, COPY_SIZE, 77);
		memset(dst.buf, 0, COPY_SIZE);
		te_copy(&te, src.dev, dst.dev, COPY_SIZE, 4, -1, 10000, &copy);
	}
	ok = !err && copy.status == TE_STATUS_DONE &&
	     buf_check(dst.buf, COPY_SIZE, 77) < 0;
	if (err)
		tap_why("%s", errname(err));
	else if (!ok)
		tap_why("TE_STATUS 0x%llx", (unsigned long long)copy.status);
	tap_ok(ok, "afterwards RESET, MAP_BUFFER and a 64 KiB engine copy work");
	if (te.regs)
		te_unmap(&te);
	if (fd >= 0)
		close(fd);
	buf_free(src.buf, COPY_SIZE);
	buf_free(dst.buf, COPY_SIZE);
}

static bool parse_ids(const char *arg, unsigned int *a, unsigned int *b,
		      unsigned int *c)
{
	int n = c ? sscanf(arg, "%u:%u:%u", a, b, c) : sscanf(arg, "%u:%u", a, b);

	return n == (c ? 3 : 2);
}

static int usage(void)
{
	fputs("usage: apex-fuzz [--seed N] [--calls N] [--secs N] --user UID:GID:GROUP --outsider UID:GID [DEVICE]\n",
	      stderr);
	return 2;
}

int main(int argc, char **argv)
{
	struct run run = { .seed = (uint64_t)time(NULL), .calls = 3000, .secs = 20 };
	unsigned int uid = 0, gid = 0, group = 0, ouid = 0, ogid = 0;
	bool have_user = false, have_outsider = false, stalled = false;
	pid_t pid[ROLES];
	const char *why[ROLES] = { 0 };
	long end, chip_ok = 0, chip_sent = 0, waited;
	uint64_t chip;
	int i, status, left;

	for (i = 1; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (!strcmp(argv[i], "--seed"))
			run.seed = strtoull(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--calls"))
			run.calls = strtol(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--secs"))
			run.secs = strtol(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--user"))
			have_user = parse_ids(argv[i + 1], &uid, &gid, &group);
		else if (!strcmp(argv[i], "--outsider"))
			have_outsider = parse_ids(argv[i + 1], &ouid, &ogid, NULL);
		else
			return usage();
	}
	if (!have_user || !have_outsider || argc - i > 1 || run.seed == 0)
		return usage();
	run.dev = i < argc ? argv[i] : APEX_DEV_DEFAULT;
	run.uid = uid;
	run.gid = gid;
	run.group = group;
	run.outsider_uid = ouid;
	run.outsider_gid = ogid;
	run.reports = mmap(NULL, ROLES * sizeof(struct report),
			   PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (run.reports == MAP_FAILED)
		return 3;
	memset(run.reports, 0, ROLES * sizeof(struct report));
	run.reports[OWNER].pinned_kb = -1;
	/* Made here: the exporters' nodes are root's. */
	run.dmabuf = -1;
	for (i = 0; i < (int)dmabuf_exporter_count && run.dmabuf < 0; i++)
		run.dmabuf = dmabuf_exporters[i].alloc(16 * APEX_PAGE);
	chip = run.seed ^ 0xc2b2ae3d27d4eb4fULL;
	printf("# seed %" PRIu64 ": up to %ld calls or %ld s per process (apex-fuzz --seed %" PRIu64 ")\n",
	       run.seed, run.calls, run.secs, run.seed);
	fflush(stdout);

	/* The stall comes first, so everything else runs beside it. */
	pid[STALLER] = start(&run, STALLER);
	for (waited = 0; waited < 15000 && !run.reports[STALLER].stalled &&
	     !run.reports[STALLER].violations; waited += 10)
		usleep(10000);
	stalled = run.reports[STALLER].stalled;
	if (!stalled)
		tap_why("%s", run.reports[STALLER].first_violation);
	tap_ok(stalled, "staller: a read-only PAGE_TABLE_SIZE whose argument never arrives waits (userfaultfd)");

	for (i = OWNER; i <= OUTSIDER; i++)
		pid[i] = start(&run, i);
	left = OUTSIDER - OWNER + 1;
	end = now_ms() + (run.secs + GRACE_SECS) * 1000;
	while (left && now_ms() < end) {
		usleep(20000 + below(&chip, 180) * 1000);
		chip_sent++;
		chip_ok += chip_event(&chip);
		for (i = OWNER; i <= OUTSIDER; i++) {
			if (pid[i] > 0 && waitpid(pid[i], &status, WNOHANG) == pid[i]) {
				why[i] = ended(status);
				pid[i] = 0;
				left--;
			}
		}
	}
	for (i = OWNER; i <= OUTSIDER; i++) {
		if (pid[i] > 0) {
			why[i] = "still running: blocked";
			if (!killed(pid[i]))
				why[i] = "blocked, and SIGKILL did not end it";
		}
	}
	stalled = stalled && waitpid(pid[STALLER], &status, WNOHANG) == 0;
	if (!killed(pid[STALLER])) {
		tap_why("SIGKILL did not end it within 10 s");
		stalled = false;
	}
	ctl_cmd("temp 40050");

	for (i = OWNER; i <= OUTSIDER; i++) {
		struct report *r = &run.reports[i];

		if (why[i])
			tap_why("%s", why[i]);
		else if (r->violations)
			tap_why("%ld violations, the first: %s", r->violations,
				r->first_violation);
		tap_ok(!why[i] && !r->violations && r->calls > 0,
		       "%s: %ld calls (%ld succeeded), ended on its own, no call allowed that must not be",
		       role_name[i], r->calls, r->successes);
	}
	tap_ok(stalled, "staller: still waiting at the end, and nothing waited with it");
	if (run.reports[OWNER].pinned_kb)
		tap_why("VmPin %ld kB", run.reports[OWNER].pinned_kb);
	tap_ok(run.reports[OWNER].pinned_kb == 0,
	       "owner: no pinned pages left after its close (VmPin 0 kB)");
	tap_ok(chip_ok > 0 && chip_ok == chip_sent,
	       "chip: %ld of %ld interrupts, fatal errors and temperatures applied",
	       chip_ok, chip_sent);
	check_after(&run);
	return tap_done();
}
