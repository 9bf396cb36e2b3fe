// SPDX-License-Identifier: GPL-2.0-only
/* eventfd_signal() lost its count argument in 6.8. */
#include <linux/eventfd.h>

void gasket_probe(struct eventfd_ctx *ctx);
void gasket_probe(struct eventfd_ctx *ctx)
{
	eventfd_signal(ctx);
}
