// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * apexsim: serves one emulated Apex to QEMU over vfio-user.
 *
 *   apexsim --socket PATH --control PATH [--log FILE] [--trace]
 *
 * Both sockets are listening once the --socket path exists. One
 * single-threaded poll() loop serves QEMU's connection, the control
 * clients, the model's deferred work (a timerfd) and SIGTERM/SIGINT (a
 * signalfd). apexsim exits with status 0 when QEMU disconnects or on
 * SIGTERM/SIGINT, or with status 3 if the chip ever tried to reach memory
 * the guest had unmapped (late DMA: the driver released memory the chip
 * still used).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "apex_chip.h"
#include "control.h"
#include "guest_mem.h"
#include "log.h"
#include "pci_config.h"
#include "vfio_user.h"

struct sim {
	const char *socket_path;
	const char *control_path;
	int sig_fd;
	int timer_fd;
	int vfio_listen_fd;
	struct guest_mem gmem;
	struct pci_config cfg;
	struct apex_chip chip;
	struct vu_conn vu;
	struct ctl_server ctl;
	bool quit;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: apexsim --socket PATH --control PATH [--log FILE] [--trace]\n"
		"  --socket PATH   vfio-user socket QEMU's vfio-user-pci connects to\n"
		"  --control PATH  control channel socket (line protocol, see README.md)\n"
		"  --log FILE      append the log to FILE instead of stderr\n"
		"  --trace         also log every register access and message\n");
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* FNV-1a: a stable per-device id seed from the socket path. */
static uint64_t path_seed(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 0x100000001b3ull;
	}
	return h;
}

/* Listen on PATH; it appears only once the socket is listening. */
static int listen_unix(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char tmp[sizeof(sa.sun_path)];
	int fd;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.new", path) >= sizeof(tmp)) {
		fprintf(stderr, "apexsim: socket path too long: %s\n", path);
		return -1;
	}
	memcpy(sa.sun_path, tmp, sizeof(tmp));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		goto fail;
	unlink(tmp);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fd, 8) < 0 || rename(tmp, path) < 0) {
		unlink(tmp);
		goto fail;
	}
	return fd;
fail:
	fprintf(stderr, "apexsim: cannot listen on %s: %s\n", path,
		strerror(errno));
	if (fd >= 0)
		close(fd);
	return -1;
}

static void arm_timer(struct sim *s)
{
	uint64_t due = apex_chip_next_deadline(&s->chip);
	struct itimerspec its = { 0 };

	if (due != UINT64_MAX) {
		its.it_value.tv_sec = (time_t)(due / 1000);
		its.it_value.tv_nsec = (long)(due % 1000) * 1000000;
		if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
			its.it_value.tv_nsec = 1;	/* 0 would disarm */
	}
	timerfd_settime(s->timer_fd, TFD_TIMER_ABSTIME, &its, NULL);
}

static void close_vfio_listener(struct sim *s)
{
	if (s->vfio_listen_fd < 0)
		return;
	close(s->vfio_listen_fd);
	s->vfio_listen_fd = -1;
	unlink(s->socket_path);
}

static void vfio_event(struct sim *s)
{
	if (s->vu.fd < 0) {
		int fd = accept4(s->vfio_listen_fd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0)
			return;
		/* One client per device: no second connection is taken. */
		close_vfio_listener(s);
		s->vu.fd = fd;
		log_msg("vfio-user: client connected");
		return;
	}
	if (vu_handle(&s->vu) == 0) {
		log_msg("vfio-user: client disconnected, exiting");
		s->quit = true;
	}
}

static void signal_event(struct sim *s)
{
	struct signalfd_siginfo si;

	if (read(s->sig_fd, &si, sizeof(si)) == sizeof(si)) {
		log_msg("signal %u, exiting", si.ssi_signo);
		s->quit = true;
	}
}

enum { PFD_SIGNAL, PFD_TIMER, PFD_VFIO, PFD_CONTROL, PFD_CLIENTS };

static int run(struct sim *s)
{
	struct pollfd pfd[PFD_CLIENTS + CTL_MAX_CLIENTS];

	while (!s->quit) {
		size_t i, n = PFD_CLIENTS;
		uint64_t expirations;

		pfd[PFD_SIGNAL] = (struct pollfd){ s->sig_fd, POLLIN, 0 };
		pfd[PFD_TIMER] = (struct pollfd){ s->timer_fd, POLLIN, 0 };
		pfd[PFD_VFIO] = (struct pollfd){
			s->vu.fd >= 0 ? s->vu.fd : s->vfio_listen_fd, POLLIN, 0 };
		pfd[PFD_CONTROL] = (struct pollfd){ s->ctl.listen_fd, POLLIN, 0 };
		for (i = 0; i < s->ctl.nclients; i++)
			pfd[n++] = (struct pollfd){ s->ctl.client[i].fd,
						    ctl_events(&s->ctl, i), 0 };
		arm_timer(s);

		if (poll(pfd, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			log_msg("poll failed: %s", strerror(errno));
			return 1;
		}
		s->chip.now_ms = now_ms();
		if (pfd[PFD_SIGNAL].revents)
			signal_event(s);
		if (pfd[PFD_TIMER].revents &&
		    read(s->timer_fd, &expirations, sizeof(expirations)) < 0)
			log_trace("timerfd read: %s", strerror(errno));
		if (pfd[PFD_VFIO].revents)
			vfio_event(s);
		/* Highest first: dropping a client moves the last one down. */
		for (i = s->ctl.nclients; i-- > 0;)
			if (pfd[PFD_CLIENTS + i].revents)
				ctl_service(&s->ctl, i,
					    pfd[PFD_CLIENTS + i].revents);
		if (pfd[PFD_CONTROL].revents)
			ctl_accept(&s->ctl);
		apex_chip_tick(&s->chip);
	}
	return 0;
}

static int setup_signals(struct sim *s)
{
	sigset_t set;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -1;
	s->sig_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return s->sig_fd < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "control", required_argument, NULL, 'c' },
		{ "log", required_argument, NULL, 'l' },
		{ "trace", no_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct sim s;	/* large: the page table lives here */
	const char *log_path = NULL;
	int ctl_fd, ret = 1, opt;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 's':
			s.socket_path = optarg;
			break;
		case 'c':
			s.control_path = optarg;
			break;
		case 'l':
			log_path = optarg;
			break;
		case 't':
			log_trace_enabled = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!s.socket_path || !s.control_path || optind != argc) {
		usage(stderr);
		return 2;
	}
	if (log_open(log_path) < 0) {
		fprintf(stderr, "apexsim: cannot open log %s: %s\n", log_path,
			strerror(errno));
		return 1;
	}

	s.sig_fd = -1;
	s.timer_fd = -1;
	s.vfio_listen_fd = -1;
	gmem_init(&s.gmem);
	pcicfg_init(&s.cfg);
	apex_chip_init(&s.chip, &s.gmem, path_seed(s.socket_path));
	vu_init(&s.vu, -1, &s.chip, &s.gmem, &s.cfg);
	s.chip.irq_fn = vu_raise;
	s.chip.irq_opaque = &s.vu;
	s.chip.now_ms = now_ms();

	if (setup_signals(&s) < 0) {
		perror("apexsim: signalfd");
		goto out;
	}
	s.timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (s.timer_fd < 0) {
		perror("apexsim: timerfd");
		goto out;
	}
	/* Control first: the vfio-user path appearing means both listen. */
	ctl_fd = listen_unix(s.control_path);
	if (ctl_fd < 0)
		goto out;
	ctl_init(&s.ctl, ctl_fd, (struct ctl_ctx){ &s.chip, &s.vu });
	s.vfio_listen_fd = listen_unix(s.socket_path);
	if (s.vfio_listen_fd < 0)
		goto out_ctl;
	log_msg("apexsim: Apex 1ac1:089a on %s, control on %s", s.socket_path,
		s.control_path);

	ret = run(&s);
	if (ret == 0 && s.chip.cnt.late_dma) {
		log_msg("apexsim: error: %" PRIu64 " late DMA accesses: the chip"
			" tried to reach memory the guest had unmapped",
			s.chip.cnt.late_dma);
		ret = 3;
	}

	vu_close(&s.vu);
	close_vfio_listener(&s);
out_ctl:
	ctl_fini(&s.ctl);
	unlink(s.control_path);
out:
	if (s.timer_fd >= 0)
		close(s.timer_fd);
	if (s.sig_fd >= 0)
		close(s.sig_fd);
	gmem_fini(&s.gmem);
	log_msg("apexsim: exit %d", ret);
	log_close();
	return ret;
}
