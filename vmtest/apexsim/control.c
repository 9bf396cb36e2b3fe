// SPDX-License-Identifier: GPL-2.0-only OR MIT
/* Control channel: commands and client connections. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "control.h"
#include "log.h"

#define CTL_MAX_ARGS	6

/* Appends to a fixed buffer; output is cut, never overrun. */
struct strbuf {
	char *p;
	size_t len, cap;
};

static void sb_printf(struct strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void sb_printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (sb->len + 1 >= sb->cap)
		return;
	va_start(ap, fmt);
	n = vsnprintf(sb->p + sb->len, sb->cap - sb->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		sb->len += (size_t)n < sb->cap - sb->len ?
			   (size_t)n : sb->cap - sb->len - 1;
}

static void sb_list(struct strbuf *sb, const char *key, const uint64_t *v,
		    size_t n)
{
	size_t i;

	sb_printf(sb, " %s=", key);
	for (i = 0; i < n; i++)
		sb_printf(sb, "%s%" PRIu64, i ? "," : "", v[i]);
}

static unsigned int bits(uint32_t v, unsigned int shift, uint32_t mask)
{
	return (v >> shift) & mask;
}

/* Every key=value, space separated, after a leading space. */
static void ctl_state(const struct ctl_ctx *ctx, struct strbuf *sb)
{
	const struct apex_chip *c = ctx->chip;
	const struct apex_counters *n = &c->cnt;
	uint64_t scu3 = 0, dc = 0, simple, ext, l2, vec[APEX_IRQ_SOURCES];
	unsigned int i, irq_fds = 0;
	bool connected = ctx->vu && ctx->vu->fd >= 0;

	apex_chip_peek(c, APEX_SCU_3, &scu3);
	apex_chip_peek(c, APEX_OMC0_DC, &dc);
	apex_chip_count_valid(c, &simple, &ext, &l2);
	for (i = 0; i < APEX_IRQ_SOURCES; i++)
		vec[i] = apex_chip_vector_of(c, i);
	for (i = 0; connected && i < APEX_NUM_VECTORS; i++)
		irq_fds += ctx->vu->irq_fd[i] >= 0;

	sb_printf(sb, " removed=%d connected=%d bus_master=%d", c->removed,
		  connected, c->bus_master);
	sb_printf(sb, " gcb_reset=%d ram_shutdown=%d clock_gated=%d",
		  c->gcb_in_reset, c->ram_shut_down,
		  !!(scu3 & SCU3_CUR_GATED_GCB));
	sb_printf(sb, " axi_quiesced=%d pwr_state_ovr=%u clk_div=%u",
		  !!(c->axi_quiesce & AXI_QUIESCE_BIT),
		  bits(c->scu3, SCU3_RG_PWR_STATE_OVR_SHIFT, 3),
		  bits(c->scu3, SCU3_RG_GCB_CLKDIV_SHIFT, 3));
	sb_printf(sb, " axi_clk_125m=%d mcu_clk_250m=%d idlegen=%#" PRIx64,
		  !!(c->scu3 & SCU3_RG_AXI_CLK_125M),
		  !!(c->scu3 & SCU3_RG_8051_CLK_250M), c->idlegen);
	sb_printf(sb, " dma_pause=%d dma_paused=%d gcb_running=%d",
		  (int)(c->user_dma_pause & USER_DMA_PAUSE_BIT),
		  c->user_dma_paused, apex_chip_gcb_running(c));
	sb_printf(sb, " temp=%d temp_code=%u sensor_enabled=%d ramp=%d",
		  c->temp_mc, apex_temp_to_code(c->temp_mc),
		  apex_chip_sensor_enabled(c), c->ramp.active);
	sb_printf(sb, " warn1=%d warn1_en=%d warn1_active=%d",
		  apex_code_to_temp(bits(c->omc_d4, OMC_D4_THM_WARN1_SHIFT,
					 OMC_CODE_MASK)),
		  !!(c->omc_d4 & OMC_D4_THM_WARN_EN),
		  !!(dc & OMC_DC_WARN_O));
	sb_printf(sb, " warn2=%d warn2_en=%d warn2_active=%d",
		  apex_code_to_temp(bits(c->omc_d8, OMC_D8_THM_WARN2_SHIFT,
					 OMC_CODE_MASK)),
		  !!(c->omc_d8 & OMC_D8_SD_EN), !!(dc & OMC_DC_SD_O));
	sb_printf(sb, " simple_entries=%" PRIu64 " pt_valid_simple=%" PRIu64
		  " pt_valid_extended=%" PRIu64 " pt_valid_l2=%" PRIu64,
		  c->simple_entries, simple, ext, l2);
	sb_list(sb, "vectors", vec, APEX_IRQ_SOURCES);
	sb_printf(sb, " reg_reads=%" PRIu64 " reg_writes=%" PRIu64
		  " bad_accesses=%" PRIu64 " unknown_accesses=%" PRIu64,
		  n->reg_reads, n->reg_writes, n->bad_accesses,
		  n->unknown_accesses);
	sb_printf(sb, " irqs_raised=%" PRIu64 " irqs_dropped=%" PRIu64,
		  n->irqs_raised, n->irqs_dropped);
	sb_list(sb, "irq_counts", n->irq_vector, APEX_NUM_VECTORS);
	sb_printf(sb, " te_completed=%" PRIu64 " te_faults=%" PRIu64
		  " te_status=%" PRIu64 " te_fault_addr=%#" PRIx64,
		  c->te.completed, n->te_faults, c->te.status,
		  c->te.fault_addr);
	sb_printf(sb, " te_bytes=%" PRIu64 " te_rate=%u late_dma=%" PRIu64,
		  n->te_bytes, c->te_rate_kib_s, n->late_dma);
	sb_printf(sb, " hib_error=%#" PRIx64 " scalar_error=%#" PRIx64
		  " gcb_resets=%" PRIu64 " function_resets=%" PRIu64,
		  c->hib_error, c->scalar_error, n->gcb_resets,
		  n->function_resets);
	sb_printf(sb, " fault_reset_stuck=%d fault_ram_stuck=%d"
		  " fault_dma_pause_stuck=%d", c->fault.reset_stuck,
		  c->fault.ram_stuck, c->fault.dma_pause_stuck);
	sb_printf(sb, " dma_windows=%zu irq_fds=%u",
		  connected ? ctx->vu->gmem->count : 0, irq_fds);
	/* As the driver prints it: ID3 first. */
	sb_printf(sb, " unique_id=%08x%08x%08x%08x", c->efuse[3], c->efuse[2],
		  c->efuse[1], c->efuse[0]);
}

static bool parse_i64(const char *s, int64_t *v)
{
	char *end;

	if (!s || !*s)
		return false;
	errno = 0;
	*v = strtoll(s, &end, 0);
	return !errno && !*end;
}

static bool parse_on_off(const char *s, bool *v)
{
	if (s && !strcmp(s, "on"))
		*v = true;
	else if (s && !strcmp(s, "off"))
		*v = false;
	else
		return false;
	return true;
}

static bool temp_ok(int64_t mc)
{
	return mc >= APEX_SENSOR_MIN_MC && mc <= APEX_SENSOR_MAX_MC;
}

static void cmd_get(struct ctl_ctx *ctx, char **argv, struct strbuf *sb)
{
	const char *key = argv[1];
	char state[CTL_REPLY_MAX], pat[64];
	struct strbuf st = { state, 0, sizeof(state) };
	const char *p;
	size_t len;

	ctl_state(ctx, &st);
	snprintf(pat, sizeof(pat), " %s=", key);
	p = strstr(state, pat);
	if (!p || strchr(key, '=') || strchr(key, ' ')) {
		sb_printf(sb, "err unknown key %s", key);
		return;
	}
	p += strlen(pat);
	len = strcspn(p, " ");
	sb_printf(sb, "ok %.*s", (int)len, p);
}

static void cmd_reg(struct ctl_ctx *ctx, char **argv, struct strbuf *sb)
{
	const char *arg = argv[1];
	int64_t off;
	uint64_t v;

	if (!parse_i64(arg, &off) || off < 0 || off >= APEX_BAR2_SIZE) {
		sb_printf(sb, "err bad offset");
		return;
	}
	if (!apex_chip_peek(ctx->chip, (uint32_t)off, &v)) {
		sb_printf(sb, "err no register at %#" PRIx64, (uint64_t)off);
		return;
	}
	sb_printf(sb, "ok %#0*" PRIx64,
		  apex_chip_reg_width((uint32_t)off) * 2 + 2, v);
}

static void cmd_fault(struct ctl_ctx *ctx, char **argv, struct strbuf *sb)
{
	struct apex_faults *f = &ctx->chip->fault;
	bool on, *slot;

	if (!argv[1])
		slot = NULL;
	else if (!strcmp(argv[1], "reset_stuck"))
		slot = &f->reset_stuck;
	else if (!strcmp(argv[1], "ram_stuck"))
		slot = &f->ram_stuck;
	else if (!strcmp(argv[1], "dma_pause_stuck"))
		slot = &f->dma_pause_stuck;
	else
		slot = NULL;
	if (!slot || !parse_on_off(argv[2], &on)) {
		sb_printf(sb, "err usage: fault reset_stuck|ram_stuck|dma_pause_stuck on|off");
		return;
	}
	*slot = on;
	log_msg("control: fault %s %s", argv[1], on ? "on" : "off");
	apex_chip_settle(ctx->chip);
	sb_printf(sb, "ok");
}

static void cmd_raise(struct ctl_ctx *ctx, char **argv, struct strbuf *sb)
{
	const char *arg = argv[1];
	int64_t src;

	if (arg && !strcmp(arg, "fatal")) {
		apex_chip_inject_fatal(ctx->chip);
	} else if (parse_i64(arg, &src) && src >= 0 &&
		   src < APEX_IRQ_SOURCES) {
		log_msg("control: raise source %" PRId64, src);
		apex_chip_raise(ctx->chip, (unsigned int)src);
	} else {
		sb_printf(sb, "err usage: raise fatal|SOURCE (0..%d)",
			  APEX_IRQ_SOURCES - 1);
		return;
	}
	sb_printf(sb, "ok");
}

static void cmd_temp(struct ctl_ctx *ctx, char **argv, struct strbuf *sb)
{
	const char *arg = argv[1];
	int64_t mc;

	if (!parse_i64(arg, &mc) || !temp_ok(mc)) {
		sb_printf(sb, "err usage: temp MILLIDEG (%d..%d)",
			  APEX_SENSOR_MIN_MC, APEX_SENSOR_MAX_MC);
		return;
	}
	apex_chip_set_temp(ctx->chip, (int32_t)mc);
	sb_printf(sb, "ok");
}

static void cmd_ramp(struct ctl_ctx *ctx, char **argv, struct strbuf *sb)
{
	int64_t from, to, step, interval;

	if (!parse_i64(argv[1], &from) || !parse_i64(argv[2], &to) ||
	    !parse_i64(argv[3], &step) || !parse_i64(argv[4], &interval) ||
	    !temp_ok(from) || !temp_ok(to) || step <= 0 ||
	    step > APEX_SENSOR_MAX_MC - APEX_SENSOR_MIN_MC || interval <= 0 ||
	    interval > 3600000) {
		sb_printf(sb, "err usage: ramp FROM TO STEP_MC INTERVAL_MS "
			  "(temps %d..%d, step > 0, interval 1..3600000)",
			  APEX_SENSOR_MIN_MC, APEX_SENSOR_MAX_MC);
		return;
	}
	apex_chip_ramp(ctx->chip, (int32_t)from, (int32_t)to, (int32_t)step,
		       (uint32_t)interval);
	sb_printf(sb, "ok");
}

static void cmd_copy_rate(struct ctl_ctx *ctx, char **argv, struct strbuf *sb)
{
	int64_t rate;

	if (!parse_i64(argv[1], &rate) || rate < 0 ||
	    rate > TE_RATE_MAX_KIB_S) {
		sb_printf(sb, "err usage: copy-rate KIB_PER_S (0..%u, 0 = full speed)",
			  TE_RATE_MAX_KIB_S);
		return;
	}
	ctx->chip->te_rate_kib_s = (uint32_t)rate;
	log_msg("control: test engine copy rate %" PRId64 " KiB/s", rate);
	sb_printf(sb, "ok");
}

static void cmd_reset_counters(struct ctl_ctx *ctx, char **argv,
			       struct strbuf *sb)
{
	uint64_t late_dma = ctx->chip->cnt.late_dma;

	(void)argv;
	memset(&ctx->chip->cnt, 0, sizeof(ctx->chip->cnt));
	/* It decides apexsim's exit status, so no client may clear it. */
	ctx->chip->cnt.late_dma = late_dma;
	ctx->chip->te.completed = 0;
	sb_printf(sb, "ok");
}

static void cmd_state(struct ctl_ctx *ctx, char **argv, struct strbuf *sb)
{
	(void)argv;
	sb_printf(sb, "ok");
	ctl_state(ctx, sb);
}

static void cmd_remove(struct ctl_ctx *ctx, char **argv, struct strbuf *sb)
{
	(void)argv;
	ctx->chip->removed = true;
	log_msg("control: surprise removal");
	sb_printf(sb, "ok");
}

static void cmd_help(struct ctl_ctx *ctx, char **argv, struct strbuf *sb);

struct ctl_cmd {
	const char *name;
	int argc;		/* words, the command's name included */
	const char *usage;
	void (*fn)(struct ctl_ctx *ctx, char **argv, struct strbuf *sb);
};

static const struct ctl_cmd ctl_cmds[] = {
	{ "state", 1, "state", cmd_state },
	{ "get", 2, "get KEY", cmd_get },
	{ "reg", 2, "reg OFFSET", cmd_reg },
	{ "fault", 3, "fault reset_stuck|ram_stuck|dma_pause_stuck on|off",
	  cmd_fault },
	{ "raise", 2, "raise fatal|SOURCE", cmd_raise },
	{ "temp", 2, "temp MILLIDEG", cmd_temp },
	{ "ramp", 5, "ramp FROM TO STEP_MC INTERVAL_MS", cmd_ramp },
	{ "copy-rate", 2, "copy-rate KIB_PER_S", cmd_copy_rate },
	{ "remove", 1, "remove", cmd_remove },
	{ "reset-counters", 1, "reset-counters", cmd_reset_counters },
	{ "help", 1, "help", cmd_help },
};

#define CTL_NCMDS (sizeof(ctl_cmds) / sizeof(ctl_cmds[0]))

static void cmd_help(struct ctl_ctx *ctx, char **argv, struct strbuf *sb)
{
	size_t i;

	(void)ctx;
	(void)argv;
	sb_printf(sb, "ok");
	for (i = 0; i < CTL_NCMDS; i++)
		sb_printf(sb, "%s%s", i ? " | " : " ", ctl_cmds[i].usage);
}

void ctl_execute(struct ctl_ctx *ctx, const char *line, char *out,
		 size_t outlen)
{
	struct strbuf sb = { out, 0, outlen };
	char buf[CTL_LINE_MAX + 1], *argv[CTL_MAX_ARGS + 1] = { NULL };
	char *save = NULL, *tok;
	int argc = 0;
	size_t i;

	out[0] = '\0';
	snprintf(buf, sizeof(buf), "%s", line);
	for (tok = strtok_r(buf, " \t", &save); tok;
	     tok = strtok_r(NULL, " \t", &save)) {
		if (argc == CTL_MAX_ARGS) {
			sb_printf(&sb, "err too many arguments");
			return;
		}
		argv[argc++] = tok;
	}
	if (!argc) {
		sb_printf(&sb, "err empty request");
		return;
	}
	for (i = 0; i < CTL_NCMDS; i++) {
		if (strcmp(argv[0], ctl_cmds[i].name))
			continue;
		if (argc != ctl_cmds[i].argc)
			sb_printf(&sb, "err usage: %s", ctl_cmds[i].usage);
		else
			ctl_cmds[i].fn(ctx, argv, &sb);
		return;
	}
	sb_printf(&sb, "err unknown request '%.40s' (try help)", argv[0]);
}

/* --- connections --------------------------------------------------------- */

void ctl_init(struct ctl_server *srv, int listen_fd, struct ctl_ctx ctx)
{
	memset(srv, 0, sizeof(*srv));
	srv->listen_fd = listen_fd;
	srv->ctx = ctx;
}

static void ctl_drop(struct ctl_server *srv, size_t i, const char *why)
{
	log_trace("control: client %d %s", srv->client[i].fd, why);
	close(srv->client[i].fd);
	srv->client[i] = srv->client[--srv->nclients];
}

void ctl_accept(struct ctl_server *srv)
{
	static const char busy[] = "err too many control clients\n";

	for (;;) {
		int fd = accept4(srv->listen_fd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct ctl_client *cl;

		if (fd < 0)
			return;
		if (srv->nclients == CTL_MAX_CLIENTS) {
			log_msg("control: too many clients, refusing one");
			if (send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL) < 0)
				log_trace("control: refusal not sent");
			close(fd);
			continue;
		}
		cl = &srv->client[srv->nclients++];
		memset(cl, 0, sizeof(*cl));
		cl->fd = fd;
		log_trace("control: client %d connected", fd);
	}
}

static void ctl_flush(struct ctl_client *cl)
{
	while (cl->out_len) {
		ssize_t n = send(cl->fd, cl->out, cl->out_len,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n <= 0)
			return;
		memmove(cl->out, cl->out + n, cl->out_len - (size_t)n);
		cl->out_len -= (size_t)n;
	}
}

/* Queue a reply line; false if the client stopped reading. */
static bool ctl_queue(struct ctl_client *cl, const char *reply)
{
	size_t len = strlen(reply);

	if (cl->out_len + len + 1 > sizeof(cl->out))
		return false;
	memcpy(cl->out + cl->out_len, reply, len);
	cl->out[cl->out_len + len] = '\n';
	cl->out_len += len + 1;
	return true;
}

static bool ctl_line(struct ctl_server *srv, struct ctl_client *cl,
		     const char *line)
{
	char reply[CTL_REPLY_MAX];

	if (!*line)
		return true;
	ctl_execute(&srv->ctx, line, reply, sizeof(reply));
	log_trace("control: '%s' -> '%.60s'", line, reply);
	return ctl_queue(cl, reply);
}

/* Split the input into lines; an overlong line gets one error reply. */
static bool ctl_input(struct ctl_server *srv, struct ctl_client *cl,
		      const char *data, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		char ch = data[i];

		if (ch == '\n') {
			bool ok = true;

			if (cl->discarding)
				cl->discarding = false;
			else {
				if (cl->in_len && cl->in[cl->in_len - 1] == '\r')
					cl->in_len--;
				cl->in[cl->in_len] = '\0';
				ok = ctl_line(srv, cl, cl->in);
			}
			cl->in_len = 0;
			if (!ok)
				return false;
		} else if (cl->discarding) {
			continue;
		} else if (cl->in_len == CTL_LINE_MAX) {
			cl->discarding = true;
			cl->in_len = 0;
			if (!ctl_queue(cl, "err line too long"))
				return false;
		} else {
			cl->in[cl->in_len++] = ch;
		}
	}
	return true;
}

void ctl_service(struct ctl_server *srv, size_t i, short revents)
{
	struct ctl_client *cl = &srv->client[i];
	char buf[1024];
	ssize_t n;

	if (revents & POLLOUT)
		ctl_flush(cl);
	if (!(revents & (POLLIN | POLLHUP | POLLERR)))
		return;
	n = recv(cl->fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		ctl_drop(srv, i, "disconnected");
		return;
	}
	if (!ctl_input(srv, cl, buf, (size_t)n)) {
		log_msg("control: client does not read its replies, dropped");
		ctl_drop(srv, i, "dropped");
		return;
	}
	ctl_flush(cl);
}

short ctl_events(const struct ctl_server *srv, size_t i)
{
	return POLLIN | (srv->client[i].out_len ? POLLOUT : 0);
}

void ctl_fini(struct ctl_server *srv)
{
	while (srv->nclients)
		ctl_drop(srv, srv->nclients - 1, "closed");
	if (srv->listen_fd >= 0)
		close(srv->listen_fd);
	srv->listen_fd = -1;
}
