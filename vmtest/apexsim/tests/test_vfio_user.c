// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * vfio-user framing over a socketpair: QEMU's handshake as its
 * vfio-user-pci sends it, then malformed and unexpected messages. After
 * each bad message the stream must still be in sync: the next good
 * request gets its own reply.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "unit.h"
#include "vfio_user.h"

/* QEMU 10.1's VERSION capabilities, as caps_json() builds them. */
static const char qemu_caps[] =
	"{\"capabilities\": {\"migration\": {\"pgsize\": 4096, "
	"\"max_bitmap_size\": 268435456}, \"max_msg_fds\": 16, "
	"\"max_data_xfer_size\": 1048576, \"pgsizes\": 4096, "
	"\"max_dma_maps\": 65535, \"write_multiple\": true}}";

static struct {
	struct apex_chip chip;
	struct guest_mem gmem;
	struct pci_config cfg;
	struct vu_conn vu;
	int cli;
	uint16_t next_id;
} vt;

static void vt_setup(void)
{
	int sv[2] = { -1, -1 };

	socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
	gmem_init(&vt.gmem);
	pcicfg_init(&vt.cfg);
	apex_chip_init(&vt.chip, &vt.gmem, 1);
	vu_init(&vt.vu, sv[0], &vt.chip, &vt.gmem, &vt.cfg);
	vt.chip.irq_fn = vu_raise;
	vt.chip.irq_opaque = &vt.vu;
	vt.cli = sv[1];
}

static void vt_teardown(void)
{
	vu_close(&vt.vu);
	if (vt.cli >= 0)
		close(vt.cli);
	vt.cli = -1;
}

static void vt_send_raw(const void *buf, size_t len, const int *fds,
			size_t nfds)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * 32)];
	} ctl;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (nfds) {
		struct cmsghdr *cm;

		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}
	if (sendmsg(vt.cli, &mh, MSG_NOSIGNAL) != (ssize_t)len)
		unit_fail(__FILE__, __LINE__, "sendmsg: %s", strerror(errno));
}

static uint16_t vt_send(uint16_t cmd, uint32_t flags, const void *payload,
			size_t len, const int *fds, size_t nfds)
{
	uint8_t buf[4096];
	struct vu_hdr h = {
		.id = vt.next_id++, .cmd = cmd,
		.size = (uint32_t)(VU_HDR_SIZE + len), .flags = flags,
	};

	memcpy(buf, &h, sizeof(h));
	if (len)
		memcpy(buf + VU_HDR_SIZE, payload, len);
	vt_send_raw(buf, VU_HDR_SIZE + len, fds, nfds);
	return h.id;
}

/* Next reply; its payload length, or -1 if there is none. */
static int vt_reply(struct vu_hdr *h, void *buf, size_t cap)
{
	ssize_t n = recv(vt.cli, h, sizeof(*h), MSG_DONTWAIT);

	if (n != (ssize_t)sizeof(*h) || h->size < VU_HDR_SIZE ||
	    h->size - VU_HDR_SIZE > cap)
		return -1;
	n = h->size - VU_HDR_SIZE;
	if (n && recv(vt.cli, buf, (size_t)n, MSG_DONTWAIT) != n)
		return -1;
	return (int)n;
}

/* Send a command, let the server run, fetch the reply. */
static int vt_call(uint16_t cmd, const void *payload, size_t len,
		   struct vu_hdr *h, void *reply, size_t cap)
{
	uint16_t id = vt_send(cmd, 0, payload, len, NULL, 0);
	int n;

	vu_handle(&vt.vu);
	n = vt_reply(h, reply, cap);
	if (n >= 0 && (h->id != id || h->cmd != cmd))
		return -2;
	return n;
}

static bool vt_ok(const struct vu_hdr *h)
{
	return h->flags == VU_TYPE_REPLY && h->error == 0;
}

static bool vt_err(const struct vu_hdr *h, uint32_t err)
{
	return h->flags == (VU_TYPE_REPLY | VU_FLAG_ERROR) &&
	       h->error == err && h->size == VU_HDR_SIZE;
}

/* A region read of COUNT bytes: false unless its reply is right. */
static bool vt_read_ok(uint32_t region, uint64_t off, uint32_t count,
		       uint64_t *val)
{
	struct vu_region_rw rw = { off, region, count };
	uint8_t reply[sizeof(rw) + 8];
	struct vu_hdr h;

	*val = 0;
	if (vt_call(VU_REGION_READ, &rw, sizeof(rw), &h, reply,
		    sizeof(reply)) != (int)(sizeof(rw) + count) || !vt_ok(&h))
		return false;
	memcpy(val, reply + sizeof(rw), count);
	return true;
}

/* A region read of COUNT bytes; the value, or ~0 on failure. */
static uint64_t vt_read(uint32_t region, uint64_t off, uint32_t count)
{
	uint64_t v;

	return vt_read_ok(region, off, count, &v) ? v : ~0ull;
}

/* A region write; false if a reply was asked for and was not right. */
static bool vt_write(uint32_t flags, uint32_t region, uint64_t off,
		     uint32_t count, uint64_t val)
{
	uint8_t msg[sizeof(struct vu_region_rw) + 8];
	struct vu_region_rw rw = { off, region, count };
	struct vu_hdr h;

	memcpy(msg, &rw, sizeof(rw));
	memcpy(msg + sizeof(rw), &val, count);
	vt_send(VU_REGION_WRITE, flags, msg, sizeof(rw) + count, NULL, 0);
	vu_handle(&vt.vu);
	if (flags & VU_FLAG_NO_REPLY)
		return true;
	return vt_reply(&h, msg, sizeof(msg)) == sizeof(rw) && vt_ok(&h) &&
	       !memcmp(msg, &rw, sizeof(rw));
}

static bool vt_no_reply(void)
{
	struct vu_hdr h;
	uint8_t buf[64];

	return vt_reply(&h, buf, sizeof(buf)) == -1;
}

/* The stream is in sync: a fresh request gets its own, right reply. */
static bool vt_in_sync(void)
{
	return vt_read(VU_REGION_CONFIG, 0, 4) == 0x089a1ac1;
}

static void test_qemu_handshake(void)
{
	uint8_t req[sizeof(qemu_caps) + 4], reply[512];
	struct vu_device_info info = { .argsz = sizeof(info) };
	struct vu_region_info ri;
	struct vu_irq_info ii;
	struct vu_dma_map map = { sizeof(map), 3, 0, 0, 2 << 20 };
	struct vu_hdr h;
	uint32_t i;
	int n, memfd;

	vt_setup();
	memset(req, 0, 4);
	memcpy(req + 4, qemu_caps, sizeof(qemu_caps));
	n = vt_call(VU_VERSION, req, sizeof(req), &h, reply, sizeof(reply));
	CHECK(n > 4 && vt_ok(&h));
	CHECK(h.size <= VU_HDR_SIZE + sizeof(req));
	CHECK_EQ(reply[0] | reply[1] | reply[2] | reply[3], 0);
	CHECK_EQ(reply[n - 1], 0);
	CHECK(strstr((char *)reply + 4, "\"max_msg_fds\":16"));
	CHECK(!strstr((char *)reply + 4, "write_multiple"));

	/* Guest RAM, a memfd as with memory-backend-memfd. */
	memfd = memfd_create("guest", MFD_CLOEXEC);
	CHECK(ftruncate(memfd, 2 << 20) == 0);
	vt_send(VU_DMA_MAP, 0, &map, sizeof(map), &memfd, 1);
	close(memfd);
	vu_handle(&vt.vu);
	CHECK_EQ(vt_reply(&h, reply, sizeof(reply)), 0);
	CHECK(vt_ok(&h));
	CHECK(gmem_ptr(&vt.gmem, 0x1000, 8, true));

	n = vt_call(VU_DEVICE_GET_INFO, &info, sizeof(info), &h, reply,
		    sizeof(reply));
	CHECK_EQ(n, sizeof(info));
	memcpy(&info, reply, sizeof(info));
	CHECK_EQ(info.flags, VU_DEVICE_FLAGS_RESET | VU_DEVICE_FLAGS_PCI);
	CHECK_EQ(info.num_regions, 9);
	CHECK_EQ(info.num_irqs, 5);

	for (i = 0; i < VU_NUM_REGIONS; i++) {
		ri = (struct vu_region_info){ .argsz = sizeof(ri), .index = i };
		n = vt_call(VU_DEVICE_GET_REGION_INFO, &ri, sizeof(ri), &h,
			    reply, sizeof(reply));
		CHECK_EQ(n, sizeof(ri));
		memcpy(&ri, reply, sizeof(ri));
		CHECK_EQ(ri.index, i);
		CHECK_EQ(ri.size, i == 2 ? 1 << 20 : i == 7 ? 256 : 0);
		CHECK_EQ(ri.flags, ri.size ? 3 : 0);	/* never MMAP */
	}
	for (i = 0; i < VU_NUM_IRQS; i++) {
		ii = (struct vu_irq_info){ .argsz = sizeof(ii), .index = i };
		n = vt_call(VU_DEVICE_GET_IRQ_INFO, &ii, sizeof(ii), &h,
			    reply, sizeof(reply));
		if (i == 1 || i >= 3) {
			CHECK(n == 0 && vt_err(&h, EINVAL));
			continue;
		}
		CHECK_EQ(n, sizeof(ii));
		memcpy(&ii, reply, sizeof(ii));
		CHECK_EQ(ii.count, i == 2 ? 13 : 1);
	}

	/* Config space, read whole the way QEMU reads it at realize. */
	{
		struct vu_region_rw rw = { 0, VU_REGION_CONFIG, 256 };

		n = vt_call(VU_REGION_READ, &rw, sizeof(rw), &h, reply,
			    sizeof(reply));
		CHECK_EQ(n, sizeof(rw) + 256);
		CHECK_EQ(reply[16] | reply[17] << 8, 0x1ac1);
		CHECK_EQ(reply[18] | reply[19] << 8, 0x089a);
		CHECK_EQ(reply[16 + 0x0b], 0x08);
		CHECK_EQ(reply[16 + 0x0a], 0x80);
		CHECK_EQ(reply[16 + 0x34], 0x40);
		CHECK_EQ(reply[16 + 0x40], 0x11);
		CHECK_EQ(reply[16 + 0x42], 12);
		CHECK_EQ(vt_read(VU_REGION_CONFIG, 0x44, 4), 0x46800 | 2);
		CHECK_EQ(vt_read(VU_REGION_CONFIG, 0x48, 4), 0x46068 | 2);
		CHECK_EQ(vt_read(VU_REGION_CONFIG, 0x18, 4), 0x4);
		CHECK_EQ(vt_read(VU_REGION_CONFIG, 0x30, 4), 0);
	}
	/* Posted BAR write, then a read that must see it. */
	vt_write(VU_FLAG_NO_REPLY, VU_REGION_BAR2, TE_SRC, 8, 0xabcd000);
	CHECK(vt_no_reply());
	CHECK_EQ(vt_read(VU_REGION_BAR2, TE_SRC, 8), 0xabcd000);
	CHECK_EQ(vt_read(VU_REGION_BAR2, APEX_HIB_PAGE_TABLE_SIZE, 8), 8192);
	CHECK_EQ(vt_read(VU_REGION_BAR2, APEX_SCU_3, 4), 0x80050410);

	CHECK(vt_write(0, VU_REGION_CONFIG, 4, 2, 6));
	CHECK(vt.chip.bus_master);
	n = vt_call(VU_DEVICE_RESET, NULL, 0, &h, reply, sizeof(reply));
	CHECK(n == 0 && vt_ok(&h));
	CHECK_EQ(vt_read(VU_REGION_BAR2, TE_SRC, 8), 0);
	CHECK(!vt.chip.bus_master);
	CHECK_EQ(vt_read(VU_REGION_CONFIG, 4, 2), 0);
	vt_teardown();
}

static void test_msix_eventfds(void)
{
	struct vu_irq_set s = {
		sizeof(s), VU_IRQ_DATA_EVENTFD | VU_IRQ_ACTION_TRIGGER,
		VU_IRQ_MSIX, 0, APEX_NUM_VECTORS,
	};
	int efd[APEX_NUM_VECTORS];
	uint8_t reply[64];
	struct vu_hdr h;
	uint64_t v = 0;
	int i;

	vt_setup();
	for (i = 0; i < APEX_NUM_VECTORS; i++)
		efd[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	vt_send(VU_DEVICE_SET_IRQS, 0, &s, sizeof(s), efd, APEX_NUM_VECTORS);
	vu_handle(&vt.vu);
	CHECK(vt_reply(&h, reply, sizeof(reply)) == 0 && vt_ok(&h));
	/* Source 12 routed (INTVECCTL) to vector 12 fires eventfd 12. */
	CHECK(vt_write(0, VU_REGION_BAR2, APEX_HIB_FATAL_ERR_INTVECCTL, 8, 12));
	apex_chip_raise(&vt.chip, APEX_IRQ_FATAL_ERR);
	CHECK(read(efd[12], &v, 8) == 8 && v == 1);
	CHECK(read(efd[0], &v, 8) < 0);
	/* The client triggers vector 3 itself (DATA_BOOL). */
	{
		uint8_t msg[sizeof(s) + 1];
		struct vu_irq_set t = {
			sizeof(msg), VU_IRQ_DATA_BOOL | VU_IRQ_ACTION_TRIGGER,
			VU_IRQ_MSIX, 3, 1,
		};

		memcpy(msg, &t, sizeof(t));
		msg[sizeof(t)] = 1;
		vt_send(VU_DEVICE_SET_IRQS, 0, msg, sizeof(msg), NULL, 0);
		vu_handle(&vt.vu);
		CHECK(vt_reply(&h, reply, sizeof(reply)) == 0 && vt_ok(&h));
		CHECK(read(efd[3], &v, 8) == 8 && v == 1);
	}
	/* Disable all: DATA_NONE, count 0. */
	s = (struct vu_irq_set){ sizeof(s),
		VU_IRQ_DATA_NONE | VU_IRQ_ACTION_TRIGGER, VU_IRQ_MSIX, 0, 0 };
	vt_send(VU_DEVICE_SET_IRQS, 0, &s, sizeof(s), NULL, 0);
	vu_handle(&vt.vu);
	CHECK(vt_reply(&h, reply, sizeof(reply)) == 0 && vt_ok(&h));
	CHECK_EQ(vt.vu.irq_fd[12], -1);
	apex_chip_raise(&vt.chip, APEX_IRQ_FATAL_ERR);
	CHECK_EQ(vt.chip.cnt.irqs_dropped, 1);
	for (i = 0; i < APEX_NUM_VECTORS; i++)
		close(efd[i]);
	vt_teardown();
}

static void test_split_writes(void)
{
	struct vu_region_rw rw = { 0, VU_REGION_CONFIG, 2 };
	uint8_t msg[VU_HDR_SIZE + sizeof(rw)], reply[64];
	struct vu_hdr h = { 77, VU_REGION_READ, sizeof(msg), 0, 0 };
	size_t i;

	vt_setup();
	memcpy(msg, &h, sizeof(h));
	memcpy(msg + VU_HDR_SIZE, &rw, sizeof(rw));
	for (i = 0; i < sizeof(msg); i++) {
		vt_send_raw(msg + i, 1, NULL, 0);
		CHECK_EQ(vu_handle(&vt.vu), 1);
		if (i + 1 < sizeof(msg))
			CHECK(vt_no_reply());
	}
	CHECK_EQ(vt_reply(&h, reply, sizeof(reply)), sizeof(rw) + 2);
	CHECK_EQ(h.id, 77);
	CHECK_EQ(reply[16] | reply[17] << 8, 0x1ac1);
	vt_teardown();
}

static void test_size_below_header(void)
{
	struct vu_hdr h = { 5, VU_DEVICE_GET_INFO, 8, 0, 0 };
	uint8_t reply[64];

	vt_setup();
	vt_send_raw(&h, sizeof(h), NULL, 0);
	CHECK_EQ(vu_handle(&vt.vu), 1);
	CHECK_EQ(vt_reply(&h, reply, sizeof(reply)), 0);
	CHECK(vt_err(&h, EINVAL) && h.id == 5);
	CHECK(vt_in_sync());
	vt_teardown();
}

static void test_oversized_discarded(void)
{
	const uint32_t size = 3 << 20;
	struct vu_hdr h = { 9, VU_REGION_WRITE, size, 0, 0 };
	static uint8_t junk[64 << 10];
	uint8_t reply[64];
	uint32_t sent = VU_HDR_SIZE;

	vt_setup();
	memset(junk, 0xa5, sizeof(junk));
	vt_send_raw(&h, sizeof(h), NULL, 0);
	CHECK_EQ(vu_handle(&vt.vu), 1);
	CHECK_EQ(vt_reply(&h, reply, sizeof(reply)), 0);
	CHECK(vt_err(&h, E2BIG) && h.id == 9);
	while (sent < size) {
		uint32_t n = size - sent < sizeof(junk) ? size - sent :
			     sizeof(junk);

		vt_send_raw(junk, n, NULL, 0);
		CHECK_EQ(vu_handle(&vt.vu), 1);
		sent += n;
	}
	CHECK(vt_no_reply());
	CHECK(vt_in_sync());
	vt_teardown();
}

static void test_unknown_command(void)
{
	struct vu_hdr h;
	uint8_t reply[64];
	uint32_t payload = 0;

	vt_setup();
	CHECK_EQ(vt_call(99, &payload, sizeof(payload), &h, reply,
			 sizeof(reply)), 0);
	CHECK(vt_err(&h, ENOTSUP));
	/* Not advertised, so REGION_WRITE_MULTI is unknown too. */
	CHECK_EQ(vt_call(15, &payload, sizeof(payload), &h, reply,
			 sizeof(reply)), 0);
	CHECK(vt_err(&h, ENOTSUP));
	vt_send(99, VU_FLAG_NO_REPLY, &payload, sizeof(payload), NULL, 0);
	vu_handle(&vt.vu);
	CHECK(vt_no_reply());
	CHECK(vt_in_sync());
	vt_teardown();
}

static void test_bad_region_access(void)
{
	struct vu_region_rw bad[] = {
		{ 0, 5, 4 },				/* no such region */
		{ 0, 9, 4 },
		{ 1 << 20, VU_REGION_BAR2, 4 },		/* past the BAR */
		{ (1 << 20) - 4, VU_REGION_BAR2, 8 },
		{ 0, VU_REGION_BAR2, 3 },		/* odd count */
		{ 0, VU_REGION_BAR2, 16 },
		{ 250, VU_REGION_CONFIG, 8 },		/* past config */
		{ 0, VU_REGION_CONFIG, 0 },
	};
	struct vu_region_info ri = { .argsz = sizeof(ri), .index = 9 };
	uint8_t reply[64];
	struct vu_hdr h;
	size_t i;

	vt_setup();
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_EQ(vt_call(VU_REGION_READ, &bad[i], sizeof(bad[i]), &h,
				 reply, sizeof(reply)), 0);
		CHECK(vt_err(&h, EINVAL));
	}
	/* A write whose data does not match its count. */
	CHECK_EQ(vt_call(VU_REGION_WRITE, &bad[0], sizeof(bad[0]), &h, reply,
			 sizeof(reply)), 0);
	CHECK(vt_err(&h, EINVAL));
	CHECK_EQ(vt_call(VU_DEVICE_GET_REGION_INFO, &ri, sizeof(ri), &h,
			 reply, sizeof(reply)), 0);
	CHECK(vt_err(&h, EINVAL));
	/* Truncated payloads. */
	CHECK_EQ(vt_call(VU_DEVICE_GET_REGION_INFO, &ri, 8, &h, reply,
			 sizeof(reply)), 0);
	CHECK(vt_err(&h, EINVAL));
	CHECK_EQ(vt_call(VU_REGION_READ, &bad[0], 4, &h, reply,
			 sizeof(reply)), 0);
	CHECK(vt_err(&h, EINVAL));
	CHECK(vt_in_sync());
	CHECK_EQ(vt.chip.cnt.reg_reads, 0);
	vt_teardown();
}

static void test_no_reply_honoured(void)
{
	struct vu_region_rw rw = { 0, 5, 4 };

	vt_setup();
	/* Even an error is not answered when no reply was asked for. */
	vt_send(VU_REGION_READ, VU_FLAG_NO_REPLY, &rw, sizeof(rw), NULL, 0);
	vu_handle(&vt.vu);
	CHECK(vt_no_reply());
	vt_write(VU_FLAG_NO_REPLY, VU_REGION_BAR2, TE_DST, 8, 0x5000);
	vt_write(VU_FLAG_NO_REPLY, VU_REGION_BAR2, TE_LEN, 8, 64);
	CHECK(vt_no_reply());
	CHECK_EQ(vt_read(VU_REGION_BAR2, TE_DST, 8), 0x5000);
	CHECK_EQ(vt_read(VU_REGION_BAR2, TE_LEN, 8), 64);
	vt_teardown();
}

static void test_fds_on_wrong_message(void)
{
	struct vu_device_info info = { .argsz = sizeof(info) };
	uint8_t reply[64], buf[1];
	struct vu_hdr h;
	int p[2];

	vt_setup();
	CHECK(pipe2(p, O_NONBLOCK | O_CLOEXEC) == 0);
	vt_send(VU_DEVICE_GET_INFO, 0, &info, sizeof(info), &p[1], 1);
	close(p[1]);
	vu_handle(&vt.vu);
	CHECK_EQ(vt_reply(&h, reply, sizeof(reply)), 0);
	CHECK(vt_err(&h, EINVAL));
	/* The server closed its copy: the pipe has no writer left. */
	CHECK_EQ(read(p[0], buf, 1), 0);
	close(p[0]);
	CHECK(vt_in_sync());
	vt_teardown();
}

static void test_malformed_fd_messages(void)
{
	struct vu_irq_set s = {
		sizeof(s), VU_IRQ_DATA_EVENTFD | VU_IRQ_ACTION_TRIGGER,
		VU_IRQ_MSIX, 0, 3,
	};
	struct vu_dma_map map = { sizeof(map), 3, 0, 0x100000, 4096 };
	uint8_t reply[64], buf[1];
	struct vu_hdr h;
	int p[2], two[2];

	vt_setup();
	CHECK(pipe2(p, O_NONBLOCK | O_CLOEXEC) == 0);
	two[0] = p[1];
	two[1] = p[1];
	/* Three vectors, two descriptors. */
	vt_send(VU_DEVICE_SET_IRQS, 0, &s, sizeof(s), two, 2);
	vu_handle(&vt.vu);
	CHECK(vt_reply(&h, reply, sizeof(reply)) == 0 && vt_err(&h, EINVAL));
	/* Vectors past 13, and two data flags at once. */
	s.start = 12;
	s.count = 2;
	vt_send(VU_DEVICE_SET_IRQS, 0, &s, sizeof(s), NULL, 0);
	vu_handle(&vt.vu);
	CHECK(vt_reply(&h, reply, sizeof(reply)) == 0 && vt_err(&h, EINVAL));
	s = (struct vu_irq_set){ sizeof(s), VU_IRQ_DATA_NONE |
		VU_IRQ_DATA_BOOL | VU_IRQ_ACTION_TRIGGER, VU_IRQ_MSIX, 0, 1 };
	vt_send(VU_DEVICE_SET_IRQS, 0, &s, sizeof(s), NULL, 0);
	vu_handle(&vt.vu);
	CHECK(vt_reply(&h, reply, sizeof(reply)) == 0 && vt_err(&h, EINVAL));
	/* DMA_MAP: two descriptors; a short payload; overlap. */
	vt_send(VU_DMA_MAP, 0, &map, sizeof(map), two, 2);
	vu_handle(&vt.vu);
	CHECK(vt_reply(&h, reply, sizeof(reply)) == 0 && vt_err(&h, EINVAL));
	vt_send(VU_DMA_MAP, 0, &map, 20, NULL, 0);
	vu_handle(&vt.vu);
	CHECK(vt_reply(&h, reply, sizeof(reply)) == 0 && vt_err(&h, EINVAL));
	vt_send(VU_DMA_MAP, 0, &map, sizeof(map), NULL, 0);
	vu_handle(&vt.vu);
	CHECK(vt_reply(&h, reply, sizeof(reply)) == 0 && vt_ok(&h));
	vt_send(VU_DMA_MAP, 0, &map, sizeof(map), NULL, 0);
	vu_handle(&vt.vu);
	CHECK(vt_reply(&h, reply, sizeof(reply)) == 0 && vt_err(&h, EEXIST));
	/* A window without a descriptor exists but cannot be reached. */
	CHECK(!gmem_ptr(&vt.gmem, 0x100000, 8, false));
	close(p[1]);
	CHECK_EQ(read(p[0], buf, 1), 0);
	close(p[0]);
	CHECK(vt_in_sync());
	vt_teardown();
}

static void test_reply_typed_dropped(void)
{
	uint32_t payload = 0;

	vt_setup();
	vt_send(VU_DEVICE_GET_INFO, VU_TYPE_REPLY, &payload, sizeof(payload),
		NULL, 0);
	vt_send(VU_DEVICE_GET_INFO, 0x7, &payload, sizeof(payload), NULL, 0);
	vu_handle(&vt.vu);
	CHECK(vt_no_reply());
	CHECK_EQ(vt.vu.errors, 2);
	CHECK(vt_in_sync());
	vt_teardown();
}

static void test_dma_unmap(void)
{
	struct vu_dma_map map = { sizeof(map), 3, 0, 0x200000, 8192 };
	struct vu_dma_unmap um = { sizeof(um), 0, 0x200000, 4096 };
	uint8_t reply[64];
	struct vu_hdr h;
	int memfd = memfd_create("guest", MFD_CLOEXEC);

	vt_setup();
	CHECK(ftruncate(memfd, 8192) == 0);
	vt_send(VU_DMA_MAP, 0, &map, sizeof(map), &memfd, 1);
	close(memfd);
	vu_handle(&vt.vu);
	CHECK(vt_reply(&h, reply, sizeof(reply)) == 0 && vt_ok(&h));
	/* Half a window is not unmapped. */
	CHECK_EQ(vt_call(VU_DMA_UNMAP, &um, sizeof(um), &h, reply,
			 sizeof(reply)), 0);
	CHECK(vt_err(&h, EINVAL));
	um.size = 8192;
	CHECK_EQ(vt_call(VU_DMA_UNMAP, &um, sizeof(um), &h, reply,
			 sizeof(reply)), sizeof(um));
	CHECK(vt_ok(&h));
	CHECK_EQ(vt.gmem.count, 0);
	vt_send(VU_DMA_MAP, 0, &map, sizeof(map), NULL, 0);
	um.flags = VU_DMA_UNMAP_ALL;
	vu_handle(&vt.vu);
	CHECK(vt_reply(&h, reply, sizeof(reply)) == 0 && vt_ok(&h));
	CHECK_EQ(vt_call(VU_DMA_UNMAP, &um, sizeof(um), &h, reply,
			 sizeof(reply)), sizeof(um));
	CHECK_EQ(vt.gmem.count, 0);
	vt_teardown();
}

static void test_short_header_then_eof(void)
{
	uint8_t half[10] = { 1, 0, 4, 0, 32 };

	vt_setup();
	vt_send_raw(half, sizeof(half), NULL, 0);
	CHECK_EQ(vu_handle(&vt.vu), 1);
	close(vt.cli);
	vt.cli = -1;
	CHECK_EQ(vu_handle(&vt.vu), 0);
	vt_teardown();
}

static void test_config_write_mask(void)
{
	vt_setup();
	CHECK(vt_write(0, VU_REGION_CONFIG, 0, 4, 0xffffffff));	/* RO */
	CHECK(vt_write(0, VU_REGION_CONFIG, 4, 2, 0xffff));
	CHECK(vt_write(0, VU_REGION_CONFIG, 0x3c, 1, 0x0b));
	CHECK(vt_in_sync());
	CHECK_EQ(vt_read(VU_REGION_CONFIG, 4, 2), 0x0547);
	CHECK(vt.chip.bus_master);
	CHECK_EQ(vt_read(VU_REGION_CONFIG, 0x3c, 1), 0x0b);
	vt_teardown();
}

/* D3hot -> D0 loses what the driver set, as No_Soft_Reset clear says. */
static void test_d3hot_resets_function(void)
{
	const uint64_t pmcsr = PCICFG_PM_CAP + 4;

	vt_setup();
	CHECK_EQ(vt_read(VU_REGION_CONFIG, 0x34, 1), PCICFG_MSIX_CAP);
	CHECK_EQ(vt_read(VU_REGION_CONFIG, PCICFG_MSIX_CAP + 1, 1),
		 PCICFG_PM_CAP);
	CHECK_EQ(vt_read(VU_REGION_CONFIG, PCICFG_PM_CAP, 2), 0x0001);
	CHECK(vt_write(0, VU_REGION_CONFIG, 4, 2, 0x0006));
	vt.chip.simple_entries = 5;
	CHECK(vt_write(0, VU_REGION_CONFIG, pmcsr, 2, 0));	/* D0 -> D0 */
	CHECK_EQ(vt.chip.simple_entries, 5);
	CHECK(vt_write(0, VU_REGION_CONFIG, pmcsr, 2, 3));	/* D3hot */
	CHECK_EQ(vt_read(VU_REGION_CONFIG, pmcsr, 2), 3);
	CHECK_EQ(vt.chip.simple_entries, 5);
	CHECK_EQ(vt.chip.cnt.function_resets, 0);
	CHECK(vt_write(0, VU_REGION_CONFIG, pmcsr, 2, 0));	/* D0 */
	CHECK_EQ(vt.chip.cnt.function_resets, 1);
	CHECK_EQ(vt.chip.simple_entries, APEX_PAGE_TABLE_ENTRIES);
	CHECK(vt.chip.gcb_in_reset);
	CHECK(!vt.chip.bus_master);
	CHECK_EQ(vt_read(VU_REGION_CONFIG, 4, 2), 0);
	CHECK_EQ(vt_read(VU_REGION_CONFIG, pmcsr, 2), 0);
	CHECK(vt_in_sync());
	vt_teardown();
}

/*
 * After `remove` the connection stays and the chip answers as a device
 * that has left the bus: reads all ones, writes dropped, no interrupt.
 */
static void test_removed_answers_all_ones(void)
{
	uint64_t v, raised;

	vt_setup();
	CHECK(vt_write(0, VU_REGION_CONFIG, 4, 2, 0x0006));
	CHECK(vt_read_ok(VU_REGION_BAR2, TE_ID, 8, &v));
	CHECK_EQ(v, TE_ID_VALUE);
	vt.chip.removed = true;
	CHECK(vt_read_ok(VU_REGION_BAR2, TE_ID, 8, &v));
	CHECK_EQ(v, ~0ull);
	CHECK(vt_read_ok(VU_REGION_CONFIG, 0, 4, &v));
	CHECK_EQ(v, 0xffffffffull);
	CHECK(vt_write(0, VU_REGION_CONFIG, 4, 2, 0));
	CHECK(vt.chip.bus_master);
	raised = vt.chip.cnt.irqs_raised;
	apex_chip_raise(&vt.chip, 0);
	CHECK_EQ(vt.chip.cnt.irqs_raised, raised);
	CHECK(vt_read_ok(VU_REGION_BAR2, TE_ID, 4, &v));
	CHECK_EQ(v, 0xffffffffull);
	vt_teardown();
}

/* Descriptors as QEMU sends them: guest RAM memfds or eventfds. */
static int replay_fds(const uint8_t *msg, size_t nfds, int *fds)
{
	struct vu_hdr h;
	struct vu_dma_map map;
	size_t i;

	memcpy(&h, msg, sizeof(h));
	for (i = 0; i < nfds; i++) {
		if (h.cmd == VU_DMA_MAP) {
			memcpy(&map, msg + VU_HDR_SIZE, sizeof(map));
			fds[i] = memfd_create("guest", MFD_CLOEXEC);
			if (ftruncate(fds[i], (off_t)(map.offset + map.size)))
				return -1;
		} else {
			fds[i] = eventfd(0, EFD_CLOEXEC);
		}
		if (fds[i] < 0)
			return -1;
	}
	return 0;
}

/* A recorded session: every request gets its reply, none fails. */
static void test_recorded_session(void)
{
	const char *dir = getenv("APEXSIM_TEST_DATA");
	char path[512], *line = NULL;
	size_t cap = 0, n = 0, i;
	uint8_t msg[4096], reply[512];
	struct vu_hdr h, r;
	FILE *f;

	snprintf(path, sizeof(path), "%s/qemu-session.txt", dir ? dir : "tests");
	f = fopen(path, "re");
	CHECK(f);
	vt_setup();
	while (getline(&line, &cap, f) > 0) {
		int fds[VU_MAX_FDS], nfds, off, len = 0;

		if (line[0] == '#')
			continue;
		CHECK(sscanf(line, "%d %n", &nfds, &off) == 1);
		CHECK(nfds >= 0 && nfds <= VU_MAX_FDS);
		while (sscanf(line + off + 2 * len, "%2hhx", &msg[len]) == 1)
			CHECK(++len < (int)sizeof(msg));
		CHECK(replay_fds(msg, (size_t)nfds, fds) == 0);
		vt_send_raw(msg, (size_t)len, fds, (size_t)nfds);
		for (i = 0; i < (size_t)nfds; i++)
			close(fds[i]);
		CHECK_EQ(vu_handle(&vt.vu), 1);
		memcpy(&h, msg, sizeof(h));
		n++;
		if (h.flags & VU_FLAG_NO_REPLY) {
			CHECK(vt_no_reply());
			continue;
		}
		CHECK(vt_reply(&r, reply, sizeof(reply)) >= 0);
		CHECK(r.id == h.id && r.cmd == h.cmd);
		/* Only QEMU's probes for absent interrupt indexes fail. */
		CHECK(vt_ok(&r) || (h.cmd == VU_DEVICE_GET_IRQ_INFO &&
				    vt_err(&r, EINVAL)));
	}
	free(line);
	fclose(f);
	CHECK_EQ(n, 344);
	CHECK_EQ(vt.vu.errors, 0);
	CHECK_EQ(vt.chip.cnt.bad_accesses, 0);
	CHECK_EQ(vt.chip.cnt.unknown_accesses, 0);
	/* Probe, open and close, power save: the chip ends in reset. */
	CHECK(vt.chip.gcb_in_reset && vt.chip.ram_shut_down);
	CHECK_EQ(vt.chip.cnt.gcb_resets, 3);
	CHECK(!vt.chip.bus_master);	/* the unload disabled the device */
	CHECK(apex_chip_sensor_enabled(&vt.chip));
	CHECK_EQ(vt.gmem.count, 6);	/* the RAM windows at the end */
	CHECK(vt_in_sync());
	vt_teardown();
}

const struct unit_test vfio_user_tests[] = {
	{ "vfio-user: recorded QEMU 11.1 session replays cleanly", test_recorded_session },
	{ "vfio-user: handshake replies (version, infos, config)", test_qemu_handshake },
	{ "vfio-user: MSI-X eventfds", test_msix_eventfds },
	{ "vfio-user: a message split across writes", test_split_writes },
	{ "vfio-user: size smaller than the header", test_size_below_header },
	{ "vfio-user: oversized message discarded, stream in sync", test_oversized_discarded },
	{ "vfio-user: unknown commands", test_unknown_command },
	{ "vfio-user: wrong region, offset, count", test_bad_region_access },
	{ "vfio-user: no-reply flag honoured", test_no_reply_honoured },
	{ "vfio-user: descriptors on a message that takes none", test_fds_on_wrong_message },
	{ "vfio-user: malformed SET_IRQS and DMA_MAP", test_malformed_fd_messages },
	{ "vfio-user: reply-typed messages dropped", test_reply_typed_dropped },
	{ "vfio-user: DMA unmap", test_dma_unmap },
	{ "vfio-user: short header, then the client closes", test_short_header_then_eof },
	{ "vfio-user: config space write mask", test_config_write_mask },
	{ "vfio-user: D3hot -> D0 resets the function", test_d3hot_resets_function },
	{ "vfio-user: a removed chip reads all ones, drops writes and interrupts",
	  test_removed_answers_all_ones },
	{ NULL, NULL },
};
