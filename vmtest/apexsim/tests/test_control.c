// SPDX-License-Identifier: GPL-2.0-only OR MIT
/* Control channel: commands, then clients on a real listening socket. */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "control.h"
#include "fixture.h"
#include "unit.h"

static char reply[CTL_REPLY_MAX];

static const char *run(struct ctl_ctx *ctx, const char *line)
{
	ctl_execute(ctx, line, reply, sizeof(reply));
	return reply;
}

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static void test_state_and_get(void)
{
	struct fixture *fx = fx_setup();
	struct ctl_ctx ctx = { &fx->chip, NULL };
	static const char *const keys[] = {
		"gcb_reset", "ram_shutdown", "clock_gated", "axi_quiesced",
		"pwr_state_ovr", "dma_paused", "temp", "clk_div",
		"simple_entries", "pt_valid_simple", "pt_valid_extended",
		"reg_reads", "reg_writes", "irqs_raised", "te_completed",
		"hib_error", "removed", "connected", "irq_counts", "vectors",
	};
	size_t i;

	CHECK(starts(run(&ctx, "state"), "ok "));
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char pat[64];

		snprintf(pat, sizeof(pat), " %s=", keys[i]);
		CHECK(strstr(reply, pat));
	}
	CHECK(!strcmp(run(&ctx, "get temp"), "ok 40050"));
	CHECK(!strcmp(run(&ctx, "get gcb_reset"), "ok 1"));
	CHECK(!strcmp(run(&ctx, "get connected"), "ok 0"));
	CHECK(!strcmp(run(&ctx, "get simple_entries"), "ok 8192"));
	{
		char id[64];

		snprintf(id, sizeof(id), "ok %08x%08x%08x%08x",
			 (unsigned int)fx_rd(fx, APEX_EFUSE_ID0 + 12),
			 (unsigned int)fx_rd(fx, APEX_EFUSE_ID0 + 8),
			 (unsigned int)fx_rd(fx, APEX_EFUSE_ID0 + 4),
			 (unsigned int)fx_rd(fx, APEX_EFUSE_ID0));
		CHECK(!strcmp(run(&ctx, "get unique_id"), id));
	}
	CHECK(starts(run(&ctx, "get nosuchkey"), "err "));
	CHECK(starts(run(&ctx, "get temp=1"), "err "));
	CHECK(fx_quit_reset(fx));
	fx_wr(fx, APEX_HIB_PAGE_TABLE, FX_RAM_IOVA | 1);
	CHECK(!strcmp(run(&ctx, "get gcb_reset"), "ok 0"));
	CHECK(!strcmp(run(&ctx, "get pwr_state_ovr"), "ok 2"));
	CHECK(!strcmp(run(&ctx, "get pt_valid_simple"), "ok 1"));
	fx_teardown(fx);
}

static void test_reg(void)
{
	struct fixture *fx = fx_setup();
	struct ctl_ctx ctx = { &fx->chip, NULL };

	CHECK(!strcmp(run(&ctx, "reg 0x1a318"), "ok 0x80050410"));
	CHECK(!strcmp(run(&ctx, "reg 0x46000"), "ok 0x0000000000002000"));
	CHECK(!strcmp(run(&ctx, "reg 286720"), "ok 0x0000000000002000"));
	CHECK(starts(run(&ctx, "reg 0x44100"), "err "));
	CHECK(starts(run(&ctx, "reg 0x100000"), "err "));
	CHECK(starts(run(&ctx, "reg -8"), "err "));
	CHECK(starts(run(&ctx, "reg zz"), "err "));
	/* Peeking is not an access. */
	CHECK_EQ(fx->chip.cnt.reg_reads, 0);
	fx_teardown(fx);
}

static void test_faults_and_raise(void)
{
	struct fixture *fx = fx_setup();
	struct ctl_ctx ctx = { &fx->chip, NULL };

	fx_setup_interrupts(fx);
	CHECK(!strcmp(run(&ctx, "fault reset_stuck on"), "ok"));
	CHECK(!fx_quit_reset(fx));
	CHECK(!strcmp(run(&ctx, "get fault_reset_stuck"), "ok 1"));
	CHECK(!strcmp(run(&ctx, "fault reset_stuck off"), "ok"));
	CHECK(!strcmp(run(&ctx, "get gcb_reset"), "ok 0"));
	CHECK(!strcmp(run(&ctx, "fault ram_stuck on"), "ok"));
	CHECK(!strcmp(run(&ctx, "fault dma_pause_stuck on"), "ok"));
	CHECK(fx->chip.fault.ram_stuck && fx->chip.fault.dma_pause_stuck);
	CHECK(starts(run(&ctx, "fault ram_stuck maybe"), "err usage"));
	CHECK(starts(run(&ctx, "fault cpu_on_fire on"), "err usage"));
	CHECK(starts(run(&ctx, "fault ram_stuck"), "err usage"));

	CHECK(!strcmp(run(&ctx, "raise fatal"), "ok"));
	CHECK_EQ(fx_irqs_on(fx, APEX_IRQ_FATAL_ERR), 1);
	CHECK_EQ(fx->chip.scalar_error, SCALAR_ERR_FATAL);
	CHECK(!strcmp(run(&ctx, "raise 9"), "ok"));
	CHECK_EQ(fx_irqs_on(fx, 9), 1);
	CHECK(starts(run(&ctx, "raise 13"), "err "));
	CHECK(!strcmp(run(&ctx, "get irq_counts"),
		      "ok 0,0,0,0,0,0,0,0,0,1,0,0,1"));
	CHECK(!strcmp(run(&ctx, "reset-counters"), "ok"));
	CHECK(!strcmp(run(&ctx, "get irqs_raised"), "ok 0"));
	fx_teardown(fx);
}

static void test_temp_ramp_remove(void)
{
	struct fixture *fx = fx_setup();
	struct ctl_ctx ctx = { &fx->chip, NULL };

	CHECK(!strcmp(run(&ctx, "temp 85050"), "ok"));
	CHECK_EQ(fx->chip.temp_mc, 85050);
	CHECK(!strcmp(run(&ctx, "temp -40000"), "ok"));
	CHECK(starts(run(&ctx, "temp 150001"), "err usage"));
	CHECK(starts(run(&ctx, "temp 12C"), "err usage"));
	CHECK(!strcmp(run(&ctx, "ramp 50050 100050 1000 20"), "ok"));
	CHECK(fx->chip.ramp.active);
	CHECK(!strcmp(run(&ctx, "get ramp"), "ok 1"));
	CHECK(starts(run(&ctx, "ramp 50050 100050 0 20"), "err usage"));
	CHECK(starts(run(&ctx, "ramp 50050 100050 10 0"), "err usage"));
	CHECK(starts(run(&ctx, "ramp 1 2 3"), "err usage: ramp"));
	CHECK(!strcmp(run(&ctx, "copy-rate 128"), "ok"));
	CHECK_EQ(fx->chip.te_rate_kib_s, 128);
	CHECK(!strcmp(run(&ctx, "get te_rate"), "ok 128"));
	CHECK(starts(run(&ctx, "copy-rate -1"), "err usage: copy-rate"));
	CHECK(starts(run(&ctx, "copy-rate 99999999"), "err usage: copy-rate"));
	CHECK(starts(run(&ctx, "copy-rate fast"), "err usage: copy-rate"));
	CHECK_EQ(fx->chip.te_rate_kib_s, 128);
	CHECK(!strcmp(run(&ctx, "copy-rate 0"), "ok"));
	CHECK(!strcmp(run(&ctx, "get te_bytes"), "ok 0"));
	CHECK(!strcmp(run(&ctx, "remove"), "ok"));
	CHECK(fx->chip.removed);
	CHECK(!strcmp(run(&ctx, "get removed"), "ok 1"));
	fx_teardown(fx);
}

static void test_bad_requests(void)
{
	struct fixture *fx = fx_setup();
	struct ctl_ctx ctx = { &fx->chip, NULL };

	CHECK(starts(run(&ctx, ""), "err "));
	CHECK(starts(run(&ctx, "   "), "err "));
	CHECK(starts(run(&ctx, "frobnicate"), "err unknown"));
	CHECK(starts(run(&ctx, "state extra"), "err usage"));
	CHECK(starts(run(&ctx, "a b c d e f g h"), "err too many"));
	CHECK(starts(run(&ctx, "help"), "ok "));
	CHECK(strstr(reply, "ramp FROM TO STEP_MC INTERVAL_MS"));
	fx_teardown(fx);
}

/* --- over a socket ---------------------------------------------------- */

static struct {
	char dir[64];
	char path[96];
	struct ctl_server srv;
} cs;

static bool cs_setup(struct fixture *fx)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	snprintf(cs.dir, sizeof(cs.dir), "/tmp/apexsim-test-XXXXXX");
	if (!mkdtemp(cs.dir))
		return false;
	snprintf(cs.path, sizeof(cs.path), "%s/ctl", cs.dir);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", cs.path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fd, 32) < 0)
		return false;
	ctl_init(&cs.srv, fd, (struct ctl_ctx){ &fx->chip, NULL });
	return true;
}

static void cs_teardown(void)
{
	ctl_fini(&cs.srv);
	unlink(cs.path);
	rmdir(cs.dir);
}

static int cs_connect(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", cs.path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* One round of the poll loop's control part. */
static void cs_pump(void)
{
	size_t i;

	ctl_accept(&cs.srv);
	for (i = cs.srv.nclients; i-- > 0;) {
		struct pollfd p = { cs.srv.client[i].fd,
				    ctl_events(&cs.srv, i), 0 };

		if (poll(&p, 1, 0) > 0)
			ctl_service(&cs.srv, i, p.revents);
	}
}

/* What the client has received so far. */
static const char *cs_read(int fd)
{
	static char buf[8192];
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);

	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static void test_socket_clients(void)
{
	struct fixture *fx = fx_setup();
	const char *r;
	int idle, a;

	CHECK(cs_setup(fx));
	idle = cs_connect();		/* like QEMU's chardev: says nothing */
	a = cs_connect();
	CHECK(idle >= 0 && a >= 0);
	cs_pump();
	CHECK_EQ(cs.srv.nclients, 2);
	/* Two requests in one write, CRLF on the second. */
	CHECK(write(a, "get temp\nget gcb_reset\r\n", 24) == 24);
	cs_pump();
	CHECK(!strcmp(cs_read(a), "ok 40050\nok 1\n"));
	/* A request split over writes. */
	CHECK(write(a, "get te", 6) == 6);
	cs_pump();
	CHECK(!strcmp(cs_read(a), ""));
	CHECK(write(a, "_completed\n", 11) == 11);
	cs_pump();
	CHECK(!strcmp(cs_read(a), "ok 0\n"));
	/* An overlong line: one error, then the client still works. */
	{
		char big[600];

		memset(big, 'x', sizeof(big));
		CHECK(write(a, big, sizeof(big)) == sizeof(big));
		CHECK(write(a, "\nget removed\n", 13) == 13);
	}
	cs_pump();
	cs_pump();
	r = cs_read(a);
	CHECK(!strcmp(r, "err line too long\nok 0\n"));
	/* Blank lines get no reply. */
	CHECK(write(a, "\n\n", 2) == 2);
	cs_pump();
	CHECK(!strcmp(cs_read(a), ""));
	CHECK(!strcmp(cs_read(idle), ""));
	close(a);
	cs_pump();
	CHECK_EQ(cs.srv.nclients, 1);
	close(idle);
	cs_pump();
	CHECK_EQ(cs.srv.nclients, 0);
	cs_teardown();
	fx_teardown(fx);
}

static void test_socket_client_limit(void)
{
	struct fixture *fx = fx_setup();
	int fd[CTL_MAX_CLIENTS + 1];
	int i;

	CHECK(cs_setup(fx));
	for (i = 0; i <= CTL_MAX_CLIENTS; i++)
		fd[i] = cs_connect();
	cs_pump();
	CHECK_EQ(cs.srv.nclients, CTL_MAX_CLIENTS);
	CHECK(starts(cs_read(fd[CTL_MAX_CLIENTS]), "err too many"));
	for (i = 0; i <= CTL_MAX_CLIENTS; i++)
		close(fd[i]);
	cs_pump();
	CHECK_EQ(cs.srv.nclients, 0);
	cs_teardown();
	fx_teardown(fx);
}

const struct unit_test control_tests[] = {
	{ "control: state and get", test_state_and_get },
	{ "control: reg peeks without counting", test_reg },
	{ "control: faults and raise", test_faults_and_raise },
	{ "control: temp, ramp, remove", test_temp_ramp_remove },
	{ "control: bad requests", test_bad_requests },
	{ "control: clients over the socket", test_socket_clients },
	{ "control: client limit", test_socket_client_limit },
	{ NULL, NULL },
};
