// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * apex-power: the power and clock tunables, each set through
 * its module parameter (/sys/module/apex/parameters), its per-device
 * override (/sys/class/apex/apex_0) or its ioctl, then checked in the chip
 * itself through apexsim's control channel: power save really holds the
 * GCB in reset while the node is closed, software clock gating really
 * stops the test engine, the performance level really sets the divider.
 * Runs as root with nothing else holding the device open; leaves every
 * tunable at its default.
 *
 *   apex-power [DEVICE]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "apexdev.h"
#include "ctl.h"
#include "tap.h"
#include "te.h"

#define PARAM_DIR "/sys/module/apex/parameters/"
#define COPY_SIZE (16 * APEX_PAGE)
#define GATED_WAIT_MS 1500

static const char *dev;

static int param_write(const char *name, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), PARAM_DIR "%s", name);
	return sysfs_write(path, val);
}

static long long param_read(const char *name)
{
	char path[128], buf[32];
	FILE *f;

	snprintf(path, sizeof(path), PARAM_DIR "%s", name);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	if (buf[0] == 'Y')
		return 1;
	if (buf[0] == 'N')
		return 0;
	return buf[0] ? strtoll(buf, NULL, 0) : -1;
}

/* The chip's state KEY (apexsim `get KEY`) is @want. */
static bool chip_is(const char *key, long long want)
{
	long long got = -1;
	int err = ctl_get(key, &got);

	if (err) {
		tap_why("control channel: get %s: %s", key, strerror(-err));
		return false;
	}
	if (got != want) {
		tap_why("chip %s=%lld, want %lld", key, got, want);
		return false;
	}
	return true;
}

static bool attr_is(const char *attr, long long want)
{
	long long got = sysfs_num(dev, attr);

	if (got != want)
		tap_why("%s reads %lld, want %lld", attr, got, want);
	return got == want;
}

static int open_dev(void)
{
	int fd = open(dev, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		tap_why("open: %s", strerror(errno));
	return fd;
}

/* Open and close once, so the open and last-close hooks run. */
static bool cycle(void)
{
	int fd = open_dev();

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static bool set_ok(int err, const char *what)
{
	if (err)
		tap_why("writing %s: %s", what, errname(err));
	return !err;
}

static void test_power_save(void)
{
	int fd;

	tap_ok(chip_is("gcb_reset", 1) && chip_is("ram_shutdown", 1),
	       "allow_power_save=1 (default): closed chip held in reset, RAM off");
	fd = open_dev();
	tap_ok(fd >= 0 && chip_is("gcb_reset", 0) && chip_is("ram_shutdown", 0) &&
		       chip_is("gcb_running", 1),
	       "open brings the chip out of reset, RAM on, GCB running");
	if (fd >= 0)
		close(fd);
	tap_ok(chip_is("gcb_reset", 1) && chip_is("ram_shutdown", 1),
	       "the last close puts it back into reset");

	tap_ok(set_ok(param_write("allow_power_save", "0"), "allow_power_save") &&
		       param_read("allow_power_save") == 0 && cycle() &&
		       chip_is("gcb_reset", 0) && chip_is("gcb_running", 1),
	       "/sys/module/apex/parameters/allow_power_save=0: chip stays powered after close");
	tap_ok(set_ok(param_write("allow_power_save", "1"), "allow_power_save") &&
		       cycle() && chip_is("gcb_reset", 1),
	       "allow_power_save=1 again: reset after close");

	tap_ok(set_ok(sysfs_attr_write(dev, "allow_power_save", "0"),
		      "apex_0/allow_power_save") &&
		       attr_is("allow_power_save", 0) && cycle() &&
		       chip_is("gcb_reset", 0),
	       "per-device allow_power_save=0 overrides the module parameter 1");
	tap_ok(set_ok(sysfs_attr_write(dev, "allow_power_save", "default"),
		      "apex_0/allow_power_save") &&
		       attr_is("allow_power_save", 1) && cycle() &&
		       chip_is("gcb_reset", 1),
	       "per-device \"default\" follows the module parameter again");

	tap_ok(sysfs_attr_write(dev, "allow_power_save", "2") == EINVAL &&
		       sysfs_attr_write(dev, "allow_power_save", "abc") == EINVAL &&
		       attr_is("allow_power_save", 1),
	       "per-device allow_power_save 2 or abc: EINVAL, value unchanged");
	tap_ok(set_ok(param_write("allow_power_save", "0"), "allow_power_save") &&
		       set_ok(param_write("allow_power_save", "7"), "allow_power_save") &&
		       param_read("allow_power_save") == 1,
	       "module parameter allow_power_save=7: clamped to the default 1 (with a warning)");
}

static void test_hw_gating(void)
{
	int fd = open_dev();

	tap_ok(fd >= 0 && chip_is("pwr_state_ovr", 2),
	       "allow_hw_clock_gating=1 (default): chip may gate its clock (pwr_state_ovr 2)");
	tap_ok(set_ok(sysfs_attr_write(dev, "allow_hw_clock_gating", "0"),
		      "apex_0/allow_hw_clock_gating") &&
		       chip_is("pwr_state_ovr", 3),
	       "per-device allow_hw_clock_gating=0 applies at once (pwr_state_ovr 3)");
	tap_ok(set_ok(sysfs_attr_write(dev, "allow_hw_clock_gating", "default"),
		      "apex_0/allow_hw_clock_gating") &&
		       chip_is("pwr_state_ovr", 2),
	       "per-device \"default\" restores it at once");
	tap_ok(set_ok(param_write("allow_hw_clock_gating", "0"),
		      "allow_hw_clock_gating") &&
		       chip_is("pwr_state_ovr", 2),
	       "module parameter allow_hw_clock_gating=0 waits for the next open");
	if (fd >= 0)
		close(fd);
	fd = open_dev();
	tap_ok(fd >= 0 && chip_is("pwr_state_ovr", 3),
	       "... and applies at the next open (pwr_state_ovr 3)");
	if (fd >= 0)
		close(fd);
	tap_ok(set_ok(param_write("allow_hw_clock_gating", "1"),
		      "allow_hw_clock_gating") &&
		       cycle(),
	       "allow_hw_clock_gating back to 1");
}

static int gate(int fd, bool on)
{
	struct apex_gate_clock_ioctl io = { .enable = on };

	return xioctl(fd, APEX_IOCTL_GATE_CLOCK, &io);
}

/* A session with a buffer pair mapped and source 4 bound, for copies. */
struct session {
	int fd, efd;
	struct te te;
	void *src, *dst;
};

static bool session_open(struct session *s)
{
	int err;

	memset(s, 0, sizeof(*s));
	s->fd = open_dev();
	if (s->fd < 0)
		return false;
	s->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	s->src = buf_alloc(COPY_SIZE);
	s->dst = buf_alloc(COPY_SIZE);
	err = te_map(&s->te, s->fd);
	if (!err)
		err = set_eventfd(s->fd, 4, s->efd);
	if (!err)
		err = pt_map(s->fd, s->src, apex_simple_addr(16), COPY_SIZE);
	if (!err)
		err = pt_map(s->fd, s->dst, apex_simple_addr(64), COPY_SIZE);
	if (err)
		tap_why("session setup: %s", errname(err));
	return !err;
}

static void session_close(struct session *s)
{
	te_unmap(&s->te);
	if (s->fd >= 0)
		close(s->fd);
	if (s->efd >= 0)
		close(s->efd);
	buf_free(s->src, COPY_SIZE);
	buf_free(s->dst, COPY_SIZE);
}

static void start_copy(const struct session *s)
{
	buf_fill(s->src, COPY_SIZE, 61);
	memset(s->dst, 0, COPY_SIZE);
	efd_drain(s->efd);
	te_write(&s->te, TE_STATUS, TE_STATUS_DONE | TE_STATUS_ERROR);
	te_write(&s->te, TE_SRC, apex_simple_addr(16));
	te_write(&s->te, TE_DST, apex_simple_addr(64));
	te_write(&s->te, TE_LEN, COPY_SIZE);
	te_write(&s->te, TE_IRQ, 4);
	te_write(&s->te, TE_DOORBELL, 1);
}

/* The copy started by start_copy() finished well within @ms. */
static bool copy_done(const struct session *s, int ms)
{
	uint64_t events = efd_wait(s->efd, ms);
	uint64_t status = te_read(&s->te, TE_STATUS);

	if (!events || status != TE_STATUS_DONE) {
		tap_why("after %d ms: %s, TE_STATUS 0x%llx", ms,
			events ? "interrupt" : "no interrupt",
			(unsigned long long)status);
		return false;
	}
	if (buf_check(s->dst, COPY_SIZE, 61) >= 0) {
		tap_why("wrong bytes");
		return false;
	}
	return true;
}

static void test_sw_gating(void)
{
	struct session s;
	uint64_t status;
	bool have;

	have = tap_ok(session_open(&s), "open a session with two mapped buffers");
	if (!have) {
		tap_skip_dep("the session", "software clock gating");
		session_close(&s);
		return;
	}
	tap_ok(gate(s.fd, true) == 0 && chip_is("clock_gated", 0) &&
		       chip_is("axi_quiesced", 0),
	       "allow_sw_clock_gating=0 (default): GATE_CLOCK succeeds and changes nothing");
	tap_ok(set_ok(param_write("allow_sw_clock_gating", "1"),
		      "allow_sw_clock_gating") &&
		       gate(s.fd, true) == 0 && chip_is("clock_gated", 1) &&
		       chip_is("axi_quiesced", 1) && chip_is("gcb_running", 0),
	       "allow_sw_clock_gating=1: GATE_CLOCK gates the GCB clock and quiesces AXI");

	start_copy(&s);
	efd_wait(s.efd, GATED_WAIT_MS);
	status = te_read(&s.te, TE_STATUS);
	if (status != TE_STATUS_BUSY)
		tap_why("TE_STATUS 0x%llx after %d ms", (unsigned long long)status,
			GATED_WAIT_MS);
	tap_ok(status == TE_STATUS_BUSY,
	       "while gated the test engine does not run (still BUSY after %d ms)",
	       GATED_WAIT_MS);
	tap_ok(gate(s.fd, false) == 0 && chip_is("clock_gated", 0) &&
		       chip_is("axi_quiesced", 0) && copy_done(&s, 10000),
	       "GATE_CLOCK off: clock back, the pending copy completes");

	tap_ok(set_ok(param_write("allow_sw_clock_gating", "0"),
		      "allow_sw_clock_gating") &&
		       set_ok(sysfs_attr_write(dev, "allow_sw_clock_gating", "1"),
			      "apex_0/allow_sw_clock_gating") &&
		       gate(s.fd, true) == 0 && chip_is("clock_gated", 1),
	       "per-device allow_sw_clock_gating=1 overrides the module parameter 0");
	tap_ok(gate(s.fd, false) == 0 && chip_is("clock_gated", 0) &&
		       set_ok(sysfs_attr_write(dev, "allow_sw_clock_gating", "default"),
			      "apex_0/allow_sw_clock_gating") &&
		       gate(s.fd, true) == 0 && chip_is("clock_gated", 0),
	       "per-device \"default\": gating ignored again");
	session_close(&s);
}

static int perf(int fd, uint32_t level)
{
	struct apex_performance_expectation_ioctl io = { .performance = level };

	return xioctl(fd, APEX_IOCTL_PERFORMANCE_EXPECTATION, &io);
}

static void test_performance(void)
{
	static const char *const names[] = { "LOW", "MED", "HIGH", "MAX" };
	struct session s;
	uint32_t level;
	int err;

	if (!tap_ok(session_open(&s), "open a session for the performance levels")) {
		tap_skip_dep("the session", "performance levels");
		session_close(&s);
		return;
	}
	tap_ok(chip_is("clk_div", 0), "a new session runs at full speed (clk_div 0)");
	for (level = APEX_PERFORMANCE_LOW; level <= APEX_PERFORMANCE_MAX; level++) {
		err = perf(s.fd, level);
		if (err)
			tap_why("%s", errname(err));
		tap_ok(!err && chip_is("clk_div", APEX_PERFORMANCE_MAX - level),
		       "PERFORMANCE_EXPECTATION %s sets the GCB clock divider to %u",
		       names[level], APEX_PERFORMANCE_MAX - level);
	}
	err = perf(s.fd, APEX_PERFORMANCE_LOW);
	if (!err)
		err = perf(s.fd, APEX_PERFORMANCE_MAX + 1);
	if (err != EINVAL)
		tap_why("got %s", errname(err));
	tap_ok(err == EINVAL && chip_is("clk_div", 3),
	       "PERFORMANCE_EXPECTATION 4 -> EINVAL, divider unchanged");
	start_copy(&s);
	tap_ok(copy_done(&s, 10000), "the test engine still copies at LOW");
	session_close(&s);
	if (session_open(&s))
		tap_ok(chip_is("clk_div", 0), "the next session starts at MAX again");
	else
		tap_ok(false, "the next session starts at MAX again");
	session_close(&s);
}

static void test_bypass(void)
{
	int fd;

	/* Start from a running chip: bypass also skips leaving reset. */
	tap_ok(set_ok(sysfs_attr_write(dev, "allow_power_save", "0"),
		      "apex_0/allow_power_save") &&
		       cycle() && chip_is("gcb_running", 1) &&
		       set_ok(sysfs_attr_write(dev, "allow_power_save", "default"),
			      "apex_0/allow_power_save") &&
		       set_ok(sysfs_attr_write(dev, "bypass_top_level", "1"),
			      "apex_0/bypass_top_level") &&
		       set_ok(sysfs_attr_write(dev, "allow_sw_clock_gating", "1"),
			      "apex_0/allow_sw_clock_gating"),
	       "per-device bypass_top_level=1 together with allow_sw_clock_gating=1");
	fd = open_dev();
	tap_ok(fd >= 0 && gate(fd, true) == 0 && chip_is("clock_gated", 0) &&
		       perf(fd, APEX_PERFORMANCE_LOW) == 0 && chip_is("clk_div", 0),
	       "with bypass_top_level the driver leaves clocks alone: no gating, no divider");
	if (fd >= 0)
		close(fd);
	tap_ok(chip_is("gcb_reset", 0),
	       "with bypass_top_level the last close does not enter power save");
	tap_ok(set_ok(sysfs_attr_write(dev, "bypass_top_level", "default"),
		      "apex_0/bypass_top_level") &&
		       set_ok(sysfs_attr_write(dev, "allow_sw_clock_gating", "default"),
			      "apex_0/allow_sw_clock_gating") &&
		       cycle() && chip_is("gcb_reset", 1) && attr_is("bypass_top_level", 0),
	       "bypass_top_level back to default: power save again after the next session");
}

/* Whatever failed above, leave the defaults behind. */
static void restore_defaults(void)
{
	static const char *const tun[] = {
		"allow_power_save", "allow_sw_clock_gating",
		"allow_hw_clock_gating", "bypass_top_level",
	};
	static const char *const def[] = { "1", "0", "1", "0" };
	size_t i;

	for (i = 0; i < 4; i++) {
		sysfs_attr_write(dev, tun[i], "default");
		param_write(tun[i], def[i]);
	}
	cycle();
}

int main(int argc, char **argv)
{
	long long v;

	if (argc > 2 || (argc == 2 && argv[1][0] != '/')) {
		fputs("usage: apex-power [DEVICE]\n", stderr);
		return 2;
	}
	dev = apex_dev_path(argc, argv);
	if (!tap_ok(ctl_get("gcb_reset", &v) == 0,
		    "apexsim control channel answers (%s)", ctl_path(0)) ||
	    !tap_ok(sysfs_num(dev, "node_0_page_table_entries") > 0,
		    "%s is bound to the driver", dev)) {
		tap_skip_dep("the control channel or the device",
			     "power and clock tests");
		return tap_done();
	}
	test_power_save();
	test_hw_gating();
	test_sw_gating();
	test_performance();
	test_bypass();
	restore_defaults();
	return tap_done();
}
