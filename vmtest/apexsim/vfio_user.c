// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * vfio-user transport. The stream is framed by the header's size field
 * alone, so every message, however malformed, is consumed whole (or
 * discarded whole when too large) and the next one starts in the right
 * place. Errors are answered with an error reply unless the message asked
 * for none; descriptors that come with a message that takes none are
 * closed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "vfio_user.h"

#define ERRORS_LOGGED_MAX	200

/* A received command, for the handlers. */
struct vu_msg {
	struct vu_hdr hdr;
	const uint8_t *body;
	size_t len;
	int *fds;		/* set an entry to -1 to keep the descriptor */
	size_t nfds;
};

static const char *vu_cmd_name(unsigned int cmd)
{
	switch (cmd) {
	case VU_VERSION:
		return "VERSION";
	case VU_DMA_MAP:
		return "DMA_MAP";
	case VU_DMA_UNMAP:
		return "DMA_UNMAP";
	case VU_DEVICE_GET_INFO:
		return "DEVICE_GET_INFO";
	case VU_DEVICE_GET_REGION_INFO:
		return "GET_REGION_INFO";
	case VU_DEVICE_GET_IRQ_INFO:
		return "GET_IRQ_INFO";
	case VU_DEVICE_SET_IRQS:
		return "SET_IRQS";
	case VU_REGION_READ:
		return "REGION_READ";
	case VU_REGION_WRITE:
		return "REGION_WRITE";
	case VU_DEVICE_RESET:
		return "DEVICE_RESET";
	}
	return "unknown";
}

/* Log a rejected message; a misbehaving client cannot flood the log. */
static void vu_log_error(struct vu_conn *vu, const struct vu_hdr *h,
			 const char *why)
{
	vu->errors++;
	if (vu->errors <= ERRORS_LOGGED_MAX)
		log_msg("vfio-user: %s (cmd %u, id %u, size %u, flags %#x): %s",
			vu_cmd_name(h->cmd), h->cmd, h->id, h->size, h->flags,
			why);
	else if (vu->errors == ERRORS_LOGGED_MAX + 1)
		log_msg("vfio-user: more rejected messages, no longer logged");
}

void vu_init(struct vu_conn *vu, int fd, struct apex_chip *chip,
	     struct guest_mem *gmem, struct pci_config *cfg)
{
	size_t i;

	memset(vu, 0, sizeof(*vu));
	vu->fd = fd;
	vu->chip = chip;
	vu->gmem = gmem;
	vu->cfg = cfg;
	for (i = 0; i < APEX_NUM_VECTORS; i++)
		vu->irq_fd[i] = -1;
	vu->intx_fd = -1;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void vu_drop_fds(struct vu_conn *vu)
{
	size_t i;

	for (i = 0; i < vu->nfds; i++)
		close_fd(&vu->fds[i]);
	vu->nfds = 0;
}

/* --- sending ------------------------------------------------------------ */

static int vu_send_all(struct vu_conn *vu, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = send(vu->fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			/* The client reads replies promptly; wait for room. */
			usleep(1000);
			continue;
		}
		if (n <= 0) {
			log_msg("vfio-user: send failed: %s", strerror(errno));
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void vu_reply(struct vu_conn *vu, const struct vu_msg *m,
		     const void *payload, size_t len)
{
	uint8_t buf[VU_HDR_SIZE + VU_MAX_XFER + sizeof(struct vu_region_rw)];
	struct vu_hdr h = m->hdr;

	if (m->hdr.flags & VU_FLAG_NO_REPLY)
		return;
	if (len > sizeof(buf) - VU_HDR_SIZE) {
		log_msg("vfio-user: reply of %zu bytes too large", len);
		return;
	}
	h.size = (uint32_t)(VU_HDR_SIZE + len);
	h.flags = VU_TYPE_REPLY;
	h.error = 0;
	memcpy(buf, &h, VU_HDR_SIZE);
	if (len)
		memcpy(buf + VU_HDR_SIZE, payload, len);
	vu_send_all(vu, buf, VU_HDR_SIZE + len);
}

static void vu_reply_error(struct vu_conn *vu, const struct vu_hdr *req,
			   int err)
{
	struct vu_hdr h = *req;

	if (req->flags & VU_FLAG_NO_REPLY)
		return;
	h.size = VU_HDR_SIZE;
	h.flags = VU_TYPE_REPLY | VU_FLAG_ERROR;
	h.error = (uint32_t)err;
	vu_send_all(vu, &h, sizeof(h));
}

/* --- commands ------------------------------------------------------------ */

static int vu_cmd_version(struct vu_conn *vu, struct vu_msg *m)
{
	/* Richest first; the reply must not be larger than the request. */
	static const char *const caps[] = {
		"{\"capabilities\":{\"max_msg_fds\":" VU_STR(VU_MAX_FDS) ","
		"\"max_data_xfer_size\":" VU_STR(VU_MAX_XFER) ","
		"\"max_dma_maps\":" VU_STR(VU_MAX_DMA_MAPS) ","
		"\"pgsizes\":" VU_STR(VU_PGSIZE) "}}",
		"{\"capabilities\":{\"max_msg_fds\":" VU_STR(VU_MAX_FDS) "}}",
		"{}",
	};
	uint8_t reply[4 + 128];
	uint16_t major, minor;
	size_t i, len = 4;

	if (m->len < 4)
		return -EINVAL;
	memcpy(&major, m->body, 2);
	memcpy(&minor, m->body + 2, 2);
	log_msg("vfio-user: client version %u.%u, %.*s", major, minor,
		(int)(m->len > 4 ? strnlen((const char *)m->body + 4,
					   m->len - 4) : 0),
		(const char *)m->body + 4);
	if (major != 0)
		return -ENOTSUP;
	memset(reply, 0, 4);
	for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		size_t n = strlen(caps[i]) + 1;

		if (VU_HDR_SIZE + 4 + n <= m->hdr.size) {
			memcpy(reply + 4, caps[i], n);
			len += n;
			break;
		}
	}
	vu->versioned = true;
	vu_reply(vu, m, reply, len);
	return 0;
}

static int vu_cmd_dma_map(struct vu_conn *vu, struct vu_msg *m)
{
	struct vu_dma_map d;
	int fd = -1, ret;

	if (m->len < sizeof(d) || m->nfds > 1)
		return -EINVAL;
	memcpy(&d, m->body, sizeof(d));
	if (m->nfds == 1) {
		fd = m->fds[0];
		m->fds[0] = -1;
	}
	ret = gmem_map(vu->gmem, d.addr, d.size, fd, d.offset,
		       d.flags & VU_DMA_FLAG_WRITE);
	if (fd >= 0)
		close(fd);
	log_msg("vfio-user: DMA map %#" PRIx64 "+%#" PRIx64 " %s%s: %s",
		d.addr, d.size, fd >= 0 ? "mapped" : "no descriptor",
		d.flags & VU_DMA_FLAG_WRITE ? "" : ", read-only",
		ret ? strerror(-ret) : "ok");
	if (ret)
		return ret;
	vu_reply(vu, m, NULL, 0);
	return 0;
}

static int vu_cmd_dma_unmap(struct vu_conn *vu, struct vu_msg *m)
{
	struct vu_dma_unmap d;
	int ret = 0;

	if (m->len < sizeof(d))
		return -EINVAL;
	memcpy(&d, m->body, sizeof(d));
	if (d.flags & ~VU_DMA_UNMAP_ALL)
		return -ENOTSUP;
	if (d.flags & VU_DMA_UNMAP_ALL)
		gmem_fini(vu->gmem);
	else
		ret = gmem_unmap(vu->gmem, d.addr, d.size);
	log_msg("vfio-user: DMA unmap %#" PRIx64 "+%#" PRIx64 "%s: %s",
		d.addr, d.size, d.flags ? " (all)" : "",
		ret ? strerror(-ret) : "ok");
	if (ret)
		return ret;
	vu_reply(vu, m, &d, sizeof(d));
	return 0;
}

static int vu_cmd_device_info(struct vu_conn *vu, struct vu_msg *m)
{
	struct vu_device_info info = {
		.argsz = sizeof(info),
		.flags = VU_DEVICE_FLAGS_RESET | VU_DEVICE_FLAGS_PCI,
		.num_regions = VU_NUM_REGIONS,
		.num_irqs = VU_NUM_IRQS,
	};
	uint32_t argsz;

	if (m->len < sizeof(argsz))
		return -EINVAL;
	memcpy(&argsz, m->body, sizeof(argsz));
	if (argsz < sizeof(info))
		return -EINVAL;
	vu_reply(vu, m, &info, sizeof(info));
	return 0;
}

static int vu_cmd_region_info(struct vu_conn *vu, struct vu_msg *m)
{
	struct vu_region_info req, info = { .argsz = sizeof(info) };

	if (m->len < sizeof(req))
		return -EINVAL;
	memcpy(&req, m->body, sizeof(req));
	if (req.argsz < sizeof(info) || req.index >= VU_NUM_REGIONS)
		return -EINVAL;
	info.index = req.index;
	/* No MMAP flag: every BAR2 access comes to us. */
	if (req.index == VU_REGION_BAR2) {
		info.flags = VU_REGION_FLAG_READ | VU_REGION_FLAG_WRITE;
		info.size = PCICFG_BAR2_BYTES;
	} else if (req.index == VU_REGION_CONFIG) {
		info.flags = VU_REGION_FLAG_READ | VU_REGION_FLAG_WRITE;
		info.size = PCICFG_SIZE;
	}
	vu_reply(vu, m, &info, sizeof(info));
	return 0;
}

static int vu_cmd_irq_info(struct vu_conn *vu, struct vu_msg *m)
{
	struct vu_irq_info req, info = { .argsz = sizeof(info) };

	if (m->len < sizeof(req))
		return -EINVAL;
	memcpy(&req, m->body, sizeof(req));
	if (req.argsz < sizeof(info))
		return -EINVAL;
	info.index = req.index;
	info.flags = VU_IRQ_INFO_EVENTFD;
	if (req.index == VU_IRQ_INTX) {
		info.count = 1;
	} else if (req.index == VU_IRQ_MSIX) {
		info.flags |= VU_IRQ_INFO_NORESIZE;
		info.count = APEX_NUM_VECTORS;
	} else {
		/* No MSI, error or request interrupts; QEMU expects this. */
		log_trace("vfio-user: no interrupt index %u", req.index);
		vu_reply_error(vu, &m->hdr, EINVAL);
		return 0;
	}
	vu_reply(vu, m, &info, sizeof(info));
	return 0;
}

static bool one_bit(uint32_t v)
{
	return v && !(v & (v - 1));
}

/* Signal an interrupt: an 8-byte 1 to its eventfd. */
static bool vu_signal(int fd)
{
	uint64_t one = 1;

	if (fd < 0)
		return false;
	if (write(fd, &one, sizeof(one)) == sizeof(one))
		return true;
	log_msg("vfio-user: eventfd write failed: %s", strerror(errno));
	return false;
}

static int vu_cmd_set_irqs(struct vu_conn *vu, struct vu_msg *m)
{
	uint32_t data, action, i, max;
	struct vu_irq_set s;
	int *slots;

	if (m->len < sizeof(s))
		return -EINVAL;
	memcpy(&s, m->body, sizeof(s));
	data = s.flags & VU_IRQ_DATA_MASK;
	action = s.flags & VU_IRQ_ACTIONS;
	if (!one_bit(data) || !one_bit(action) ||
	    (s.flags & ~(VU_IRQ_DATA_MASK | VU_IRQ_ACTIONS)))
		return -EINVAL;
	if (s.index == VU_IRQ_MSIX) {
		slots = vu->irq_fd;
		max = APEX_NUM_VECTORS;
	} else if (s.index == VU_IRQ_INTX) {
		slots = &vu->intx_fd;
		max = 1;
	} else {
		return -EINVAL;
	}
	if (s.start > max || s.count > max - s.start)
		return -EINVAL;
	if (data != VU_IRQ_DATA_EVENTFD && m->nfds)
		return -EINVAL;

	if (data == VU_IRQ_DATA_EVENTFD) {
		if (action != VU_IRQ_ACTION_TRIGGER)
			return -ENOTSUP;
		if (m->nfds && m->nfds != s.count)
			return -EINVAL;
		for (i = 0; i < s.count; i++) {
			close_fd(&slots[s.start + i]);
			if (m->nfds) {
				slots[s.start + i] = m->fds[i];
				m->fds[i] = -1;
			}
		}
		log_msg("vfio-user: irq index %u vectors %u..%u %s", s.index,
			s.start, s.start + s.count - 1,
			m->nfds ? "assigned" : "released");
	} else if (action != VU_IRQ_ACTION_TRIGGER) {
		/* Not maskable (no MASKABLE flag): nothing to do. */
	} else if (data == VU_IRQ_DATA_NONE && s.count == 0) {
		for (i = 0; i < max; i++)
			close_fd(&slots[i]);
		log_msg("vfio-user: irq index %u disabled", s.index);
	} else {
		if (data == VU_IRQ_DATA_BOOL && m->len < sizeof(s) + s.count)
			return -EINVAL;
		for (i = 0; i < s.count; i++)
			if (data == VU_IRQ_DATA_NONE || m->body[sizeof(s) + i])
				vu_signal(slots[s.start + i]);
	}
	vu_reply(vu, m, NULL, 0);
	return 0;
}

/* The chip and its config space as at power-on: everything the driver set is lost. */
static void vu_function_reset(struct vu_conn *vu)
{
	pcicfg_init(vu->cfg);
	apex_chip_set_bus_master(vu->chip, false);
	apex_chip_reset(vu->chip);
}

/* Checks a region access; the BAR takes single 1/2/4/8-byte accesses. */
static int vu_rw_check(const struct vu_region_rw *rw)
{
	if (rw->region == VU_REGION_CONFIG)
		return rw->count && rw->offset < PCICFG_SIZE &&
		       rw->count <= PCICFG_SIZE - rw->offset ? 0 : -EINVAL;
	if (rw->region != VU_REGION_BAR2)
		return -EINVAL;
	if (rw->count != 1 && rw->count != 2 && rw->count != 4 &&
	    rw->count != 8)
		return -EINVAL;
	return rw->offset < PCICFG_BAR2_BYTES &&
	       rw->count <= PCICFG_BAR2_BYTES - rw->offset ? 0 : -EINVAL;
}

static int vu_cmd_region_read(struct vu_conn *vu, struct vu_msg *m)
{
	uint8_t reply[sizeof(struct vu_region_rw) + VU_MAX_XFER];
	struct vu_region_rw rw;
	uint8_t *data = reply + sizeof(rw);
	int ret;

	if (m->len < sizeof(rw))
		return -EINVAL;
	memcpy(&rw, m->body, sizeof(rw));
	ret = vu_rw_check(&rw);
	if (ret)
		return ret;
	if (vu->chip->removed) {
		/* What a root port returns for a device that has gone. */
		memset(data, 0xff, rw.count);
	} else if (rw.region == VU_REGION_CONFIG) {
		pcicfg_read(vu->cfg, rw.offset, data, rw.count);
	} else {
		uint64_t v = apex_chip_read(vu->chip, (uint32_t)rw.offset,
					    rw.count);

		memcpy(data, &v, rw.count);	/* little endian */
	}
	memcpy(reply, &rw, sizeof(rw));
	vu_reply(vu, m, reply, sizeof(rw) + rw.count);
	return 0;
}

static int vu_cmd_region_write(struct vu_conn *vu, struct vu_msg *m)
{
	struct vu_region_rw rw;
	int ret;

	if (m->len < sizeof(rw))
		return -EINVAL;
	memcpy(&rw, m->body, sizeof(rw));
	ret = vu_rw_check(&rw);
	if (ret)
		return ret;
	if (m->len != sizeof(rw) + rw.count)
		return -EINVAL;
	if (vu->chip->removed) {
		/* Dropped, as on the bus once the device has gone. */
	} else if (rw.region == VU_REGION_CONFIG) {
		if (pcicfg_write(vu->cfg, rw.offset, m->body + sizeof(rw),
				 rw.count) == PCICFG_WRITE_RESET)
			vu_function_reset(vu);
		apex_chip_set_bus_master(vu->chip,
					 pcicfg_bus_master(vu->cfg));
	} else {
		uint64_t v = 0;

		memcpy(&v, m->body + sizeof(rw), rw.count);
		apex_chip_write(vu->chip, (uint32_t)rw.offset, rw.count, v);
	}
	vu_reply(vu, m, &rw, sizeof(rw));
	return 0;
}

static int vu_cmd_device_reset(struct vu_conn *vu, struct vu_msg *m)
{
	vu_function_reset(vu);
	vu_reply(vu, m, NULL, 0);
	return 0;
}

static int vu_execute(struct vu_conn *vu, struct vu_msg *m)
{
	bool takes_fds = m->hdr.cmd == VU_DMA_MAP ||
			 m->hdr.cmd == VU_DEVICE_SET_IRQS;

	if (m->nfds && !takes_fds)
		return -EINVAL;
	switch (m->hdr.cmd) {
	case VU_VERSION:
		return vu_cmd_version(vu, m);
	case VU_DMA_MAP:
		return vu_cmd_dma_map(vu, m);
	case VU_DMA_UNMAP:
		return vu_cmd_dma_unmap(vu, m);
	case VU_DEVICE_GET_INFO:
		return vu_cmd_device_info(vu, m);
	case VU_DEVICE_GET_REGION_INFO:
		return vu_cmd_region_info(vu, m);
	case VU_DEVICE_GET_IRQ_INFO:
		return vu_cmd_irq_info(vu, m);
	case VU_DEVICE_SET_IRQS:
		return vu_cmd_set_irqs(vu, m);
	case VU_REGION_READ:
		return vu_cmd_region_read(vu, m);
	case VU_REGION_WRITE:
		return vu_cmd_region_write(vu, m);
	case VU_DEVICE_RESET:
		return vu_cmd_device_reset(vu, m);
	}
	return -ENOTSUP;
}

static void vu_dispatch(struct vu_conn *vu)
{
	struct vu_msg m = {
		.hdr = vu->hdr,
		.body = vu->body,
		.len = vu->body_len,
		.fds = vu->fds,
		.nfds = vu->nfds,
	};
	int ret;

	vu->messages++;
	log_trace("vfio-user: %s id %u size %u flags %#x fds %zu",
		  vu_cmd_name(m.hdr.cmd), m.hdr.id, m.hdr.size, m.hdr.flags,
		  m.nfds);
	if ((m.hdr.flags & VU_TYPE_MASK) != VU_TYPE_COMMAND) {
		/* We send no commands, so nothing may be answered. */
		vu_log_error(vu, &m.hdr, "not a command, dropped");
		return;
	}
	if (!vu->versioned && m.hdr.cmd != VU_VERSION)
		log_trace("vfio-user: command before VERSION");
	ret = vu_execute(vu, &m);
	if (ret < 0) {
		char why[64];

		snprintf(why, sizeof(why), "rejected: %s%s", strerror(-ret),
			 m.nfds && ret == -EINVAL ? " (descriptors?)" : "");
		vu_log_error(vu, &m.hdr, why);
		vu_reply_error(vu, &m.hdr, -ret);
	}
}

/* --- receiving ----------------------------------------------------------- */

/* recv() that also collects descriptors sent with the current message. */
static ssize_t vu_recv(struct vu_conn *vu, void *buf, size_t len)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * VU_MAX_FDS)];
	} ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	struct cmsghdr *cm;
	ssize_t n;

	n = recvmsg(vu->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return n;
	if (mh.msg_flags & MSG_CTRUNC)
		log_msg("vfio-user: more than %d descriptors in one message, the rest were closed",
			VU_MAX_FDS);
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		size_t i, count;
		int fd;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		count = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < count; i++) {
			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(fd));
			if (vu->nfds < VU_MAX_FDS)
				vu->fds[vu->nfds++] = fd;
			else
				close(fd);
		}
	}
	return n;
}

static void vu_rx_reset(struct vu_conn *vu)
{
	vu_drop_fds(vu);
	free(vu->body);
	vu->body = NULL;
	vu->body_len = 0;
	vu->body_got = 0;
	vu->hdr_got = 0;
}

/* A header is in: validate its size, then expect the body. */
static void vu_header_done(struct vu_conn *vu)
{
	struct vu_hdr *h = &vu->hdr;
	char why[64];

	memcpy(h, vu->hdr_buf, VU_HDR_SIZE);
	if (h->size < VU_HDR_SIZE) {
		snprintf(why, sizeof(why), "size %u smaller than the header",
			 h->size);
		vu_log_error(vu, h, why);
		vu_reply_error(vu, h, EINVAL);
		vu_rx_reset(vu);
		return;
	}
	if (h->size > VU_MAX_MSG) {
		snprintf(why, sizeof(why), "size %u above %u, discarded",
			 h->size, VU_MAX_MSG);
		vu_log_error(vu, h, why);
		vu_reply_error(vu, h, E2BIG);
		vu->discard_left = h->size - VU_HDR_SIZE;
		vu_rx_reset(vu);
		return;
	}
	vu->body_len = h->size - VU_HDR_SIZE;
	vu->body = malloc(vu->body_len ? vu->body_len : 1);
	if (!vu->body) {
		vu_log_error(vu, h, "out of memory, discarded");
		vu_reply_error(vu, h, ENOMEM);
		vu->discard_left = vu->body_len;
		vu_rx_reset(vu);
	}
}

int vu_handle(struct vu_conn *vu)
{
	uint8_t scratch[VU_DISCARD_CHUNK];

	for (;;) {
		bool in_header = false;
		ssize_t n;

		if (vu->discard_left) {
			size_t want = vu->discard_left < sizeof(scratch) ?
				      vu->discard_left : sizeof(scratch);

			n = vu_recv(vu, scratch, want);
		} else if (vu->hdr_got < VU_HDR_SIZE) {
			in_header = true;
			n = vu_recv(vu, vu->hdr_buf + vu->hdr_got,
				    VU_HDR_SIZE - vu->hdr_got);
		} else {
			n = vu_recv(vu, vu->body + vu->body_got,
				    vu->body_len - vu->body_got);
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 1;
		if (n <= 0) {
			if (n < 0)
				log_msg("vfio-user: receive failed: %s",
					strerror(errno));
			if (vu->hdr_got || vu->discard_left)
				log_msg("vfio-user: connection closed in the middle of a message");
			return 0;
		}

		if (vu->discard_left) {
			vu->discard_left -= (uint64_t)n;
			vu_drop_fds(vu);
			continue;
		}
		if (in_header) {
			vu->hdr_got += (size_t)n;
			if (vu->hdr_got < VU_HDR_SIZE)
				continue;
			vu_header_done(vu);
			if (!vu->body)
				continue;
		} else {
			vu->body_got += (size_t)n;
		}
		if (vu->body_got == vu->body_len) {
			vu_dispatch(vu);
			vu_rx_reset(vu);
		}
	}
}

bool vu_raise(void *opaque, unsigned int vector)
{
	struct vu_conn *vu = opaque;

	if (vector >= APEX_NUM_VECTORS || vu->fd < 0)
		return false;
	return vu_signal(vu->irq_fd[vector]);
}

void vu_close(struct vu_conn *vu)
{
	size_t i;

	vu_rx_reset(vu);
	for (i = 0; i < APEX_NUM_VECTORS; i++)
		close_fd(&vu->irq_fd[i]);
	close_fd(&vu->intx_fd);
	close_fd(&vu->fd);
	gmem_fini(vu->gmem);
}
