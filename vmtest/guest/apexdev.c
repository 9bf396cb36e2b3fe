// SPDX-License-Identifier: GPL-2.0-only OR MIT
/* Helpers shared by the guest test programs; see apexdev.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "apexdev.h"
#include "tap.h"

size_t kernel_page(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

bool bar2_window_maps(unsigned long off, size_t page)
{
	/* The windows and the largest page that maps each (apex_main.c). */
	static const struct {
		unsigned long off;
		size_t max_page;
	} windows[] = { { 0x40000, 16384 }, { 0x44000, 4096 }, { 0x48000, 4096 } };
	size_t i;

	for (i = 0; i < sizeof(windows) / sizeof(windows[0]); i++)
		if (windows[i].off == off)
			return off % page == 0 && page <= windows[i].max_page;
	return false;
}

const char *errname(int err)
{
	static char buf[16];
	const char *name;

	if (!err)
		return "0";
	name = strerrorname_np(err);
	if (name)
		return name;
	snprintf(buf, sizeof(buf), "errno %d", err);
	return buf;
}

const char *apex_dev_path(int argc, char **argv)
{
	const char *env = getenv("APEX_DEV");

	if (argc > 1 && argv[1][0] == '/')
		return argv[1];
	return env && *env ? env : APEX_DEV_DEFAULT;
}

int xioctl(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) < 0 ? errno : 0;
}

/* /sys/class/apex/<node>/<attr>; the stable names under /dev/apex/ are
 * symlinks to apex_N, so resolve them first. */
static int sysfs_attr_path(const char *dev, const char *attr, char *path,
			   size_t len)
{
	char real[PATH_MAX];

	if (!realpath(dev, real))
		return errno;
	snprintf(path, len, "/sys/class/apex/%s/%s", basename(real), attr);
	return 0;
}

int sysfs_attr(const char *dev, const char *attr, char *buf, size_t len)
{
	char path[PATH_MAX + 64];
	ssize_t n;
	int fd, err;

	err = sysfs_attr_path(dev, attr, path, sizeof(path));
	if (err)
		return err;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return errno;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

bool chip_behind_iommu(const char *dev)
{
	char type[32], path[PATH_MAX + 64], cmdline[4096];
	struct stat st;
	size_t n;
	FILE *f;

	/* DMA or DMA-FQ: translated; "identity" passes addresses through. */
	if (!sysfs_attr(dev, "device/iommu_group/type", type, sizeof(type)))
		return !strncmp(type, "DMA", 3);
	/* 5.10 has groups without the type file: translated unless told not to. */
	if (sysfs_attr_path(dev, "device/iommu_group", path, sizeof(path)) ||
	    stat(path, &st))
		return false;
	f = fopen("/proc/cmdline", "re");
	if (!f)
		return false;
	n = fread(cmdline, 1, sizeof(cmdline) - 1, f);
	fclose(f);
	cmdline[n] = '\0';
	return !strstr(cmdline, "iommu=pt") &&
	       !strstr(cmdline, "iommu.passthrough=1");
}

int sysfs_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;
	size_t len = strlen(val);

	if (fd < 0)
		return errno;
	errno = 0;
	if (write(fd, val, len) != (ssize_t)len)
		err = errno ? errno : EIO;
	if (close(fd) && !err)
		err = errno;
	return err;
}

int sysfs_attr_write(const char *dev, const char *attr, const char *val)
{
	char path[PATH_MAX + 64];
	int err = sysfs_attr_path(dev, attr, path, sizeof(path));

	return err ? err : sysfs_write(path, val);
}

long long sysfs_num(const char *dev, const char *attr)
{
	char buf[64], *end;
	long long v;

	if (sysfs_attr(dev, attr, buf, sizeof(buf)))
		return -1;
	errno = 0;
	v = strtoll(buf, &end, 0);
	if (errno || end == buf)
		return -1;
	return v;
}

/* interrupt_counts holds one "index: count" line per source. */
long long sysfs_irq_count(const char *dev, unsigned int irq)
{
	char buf[1024], *line, *save = NULL;
	long long count;
	int idx;

	if (sysfs_attr(dev, "interrupt_counts", buf, sizeof(buf)))
		return -1;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (sscanf(line, " %i : %lld", &idx, &count) == 2 &&
		    idx == (int)irq)
			return count;
	return -1;
}

int pt_map(int fd, const void *host, uint64_t dev, size_t size)
{
	struct gasket_page_table_ioctl io = {
		.page_table_index = 0,
		.size = size,
		.host_address = (uintptr_t)host,
		.device_address = dev,
	};

	return xioctl(fd, GASKET_IOCTL_MAP_BUFFER, &io);
}

int pt_map_flags(int fd, const void *host, uint64_t dev, size_t size,
		 uint32_t flags)
{
	struct gasket_page_table_ioctl_flags io = {
		.base = {
			.page_table_index = 0,
			.size = size,
			.host_address = (uintptr_t)host,
			.device_address = dev,
		},
		.flags = flags,
	};

	return xioctl(fd, GASKET_IOCTL_MAP_BUFFER_FLAGS, &io);
}

int pt_unmap(int fd, const void *host, uint64_t dev, size_t size)
{
	struct gasket_page_table_ioctl io = {
		.page_table_index = 0,
		.size = size,
		.host_address = (uintptr_t)host,
		.device_address = dev,
	};

	return xioctl(fd, GASKET_IOCTL_UNMAP_BUFFER, &io);
}

int pt_partition(int fd, uint64_t simple_entries)
{
	struct gasket_page_table_ioctl io = {
		.page_table_index = 0,
		.size = simple_entries,
	};

	return xioctl(fd, GASKET_IOCTL_PARTITION_PAGE_TABLE, &io);
}

int pt_simple_size(int fd, uint64_t *entries)
{
	struct gasket_page_table_ioctl io = { .page_table_index = 0 };
	int err = xioctl(fd, GASKET_IOCTL_SIMPLE_PAGE_TABLE_SIZE, &io);

	*entries = io.size;
	return err;
}

int set_eventfd(int fd, uint64_t irq, int efd)
{
	struct gasket_interrupt_eventfd io = {
		.interrupt = irq,
		.event_fd = (uint64_t)efd,
	};

	return xioctl(fd, GASKET_IOCTL_SET_EVENTFD, &io);
}

int clear_eventfd(int fd, uint64_t irq)
{
	return ioctl(fd, GASKET_IOCTL_CLEAR_EVENTFD, (unsigned long)irq) < 0 ?
		       errno : 0;
}

int dev_reset(int fd, bool legacy)
{
	unsigned long req = legacy ? GASKET_IOCTL_RESET_LEGACY :
				     GASKET_IOCTL_RESET;

	return ioctl(fd, req, 0UL) < 0 ? errno : 0;
}

void *buf_alloc(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void buf_free(void *buf, size_t size)
{
	if (buf)
		munmap(buf, size);
}

/* xorshift: cheap, and every 4-byte word differs between seeds. */
static uint32_t pattern_next(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

void buf_fill(void *buf, size_t size, uint32_t seed)
{
	uint32_t s = seed | 1, *p = buf;
	size_t i;

	for (i = 0; i < size / 4; i++)
		p[i] = pattern_next(&s);
}

long buf_check(const void *buf, size_t size, uint32_t seed)
{
	const uint32_t *p = buf;
	uint32_t s = seed | 1;
	size_t i;

	for (i = 0; i < size / 4; i++)
		if (p[i] != pattern_next(&s))
			return (long)(i * 4);
	return -1;
}

long buf_check_byte(const void *buf, size_t size, uint8_t byte)
{
	const uint8_t *p = buf;
	size_t i;

	for (i = 0; i < size; i++)
		if (p[i] != byte)
			return (long)i;
	return -1;
}

long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

bool run_command(char **argv, long *ms)
{
	long start = now_ms();
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return false;
	if (!pid) {
		execvp(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		return false;
	*ms = now_ms() - start;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		tap_why("exit status 0x%x", status);
	return WIFEXITED(status) && !WEXITSTATUS(status);
}

long long proc_status_num(const char *name)
{
	char line[256];
	size_t len = strlen(name);
	long long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, name, len) && line[len] == ':') {
			if (sscanf(line + len + 1, " %lli", &v) != 1)
				v = -1;
			break;
		}
	}
	fclose(f);
	return v;
}
