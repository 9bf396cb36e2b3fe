// SPDX-License-Identifier: GPL-2.0-only
/*
 * Gasket interrupts. Interrupt i of the device description uses MSI-X
 * vector i; its INTVECCTL register (shared by up to four interrupts in
 * "packed" registers) tells the chip which vector to raise. Each interrupt
 * counts its arrivals and may signal one eventfd set by the owner.
 */
#include <linux/eventfd.h>
#include <linux/interrupt.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "gasket_compat.h"
#include "gasket_core.h"
#include "gasket_interrupt.h"

struct gasket_interrupt_data;

/* What a vector's handler gets: no search for the interrupt number. */
struct gasket_vector {
	struct gasket_interrupt_data *data;
	int interrupt;
};

struct gasket_interrupt_data {
	struct gasket_dev *gdev;
	int num_interrupts;
	int num_requested;		/* vectors with a handler */
	struct gasket_vector *vectors;
	atomic_long_t *counts;
	spinlock_t eventfd_lock;	/* Protects: eventfd_ctxs */
	struct eventfd_ctx **eventfd_ctxs;
};

/* Checks the descriptors once, so setup cannot program nonsense. */
static int gasket_interrupt_desc_check(struct gasket_dev *gdev)
{
	const struct gasket_driver_desc *desc = gdev->desc;
	const struct gasket_interrupt_desc *irq;
	int i;

	for (i = 0; i < desc->num_interrupts; i++) {
		irq = &desc->interrupts[i];
		if (irq->index < 0 || irq->index >= desc->num_interrupts ||
		    irq->packing > GASKET_UNPACKED ||
		    irq->reg + sizeof(u64) >
		    desc->bar_descriptions[desc->interrupt_bar_index].size)
			goto bad;
		if (irq->packing != GASKET_UNPACKED &&
		    (desc->interrupt_pack_width < 1 ||
		     desc->interrupt_pack_width > 16))
			goto bad;
	}
	return 0;

bad:
	dev_err(gdev->dev, "invalid interrupt description %d\n", i);
	return -EINVAL;
}

void gasket_interrupt_setup(struct gasket_dev *gdev)
{
	const struct gasket_driver_desc *desc = gdev->desc;
	int bar = desc->interrupt_bar_index;
	const struct gasket_interrupt_desc *irq;
	unsigned int shift;
	u64 mask;
	int i;

	if (!gdev->interrupt_data)
		return;

	for (i = 0; i < desc->num_interrupts; i++) {
		irq = &desc->interrupts[i];
		if (irq->packing == GASKET_UNPACKED) {
			gasket_dev_write_64(gdev, irq->index, bar, irq->reg);
			continue;
		}
		shift = irq->packing * desc->interrupt_pack_width;
		mask = GENMASK_ULL(desc->interrupt_pack_width - 1, 0) << shift;
		gasket_read_modify_write_64(gdev, bar, irq->reg, mask,
					    (u64)irq->index << shift);
	}
}

/* Count the interrupt, tell the device driver, signal the eventfd. */
static void gasket_interrupt_raise(struct gasket_interrupt_data *data,
				   int interrupt)
{
	struct gasket_dev *gdev = data->gdev;
	unsigned long flags;

	atomic_long_inc(&data->counts[interrupt]);
	if (gdev->desc->interrupt_cb)
		gdev->desc->interrupt_cb(gdev, interrupt);

	spin_lock_irqsave(&data->eventfd_lock, flags);
	if (data->eventfd_ctxs[interrupt])
		gasket_eventfd_signal(data->eventfd_ctxs[interrupt]);
	spin_unlock_irqrestore(&data->eventfd_lock, flags);
}

static irqreturn_t gasket_interrupt_handler(int irq, void *arg)
{
	struct gasket_vector *vector = arg;

	gasket_interrupt_raise(vector->data, vector->interrupt);
	return IRQ_HANDLED;
}

static void gasket_interrupt_free_irqs(struct gasket_interrupt_data *data)
{
	struct pci_dev *pci_dev = data->gdev->pci_dev;

	while (data->num_requested--)
		free_irq(pci_irq_vector(pci_dev, data->num_requested),
			 &data->vectors[data->num_requested]);
	data->num_requested = 0;
}

static void gasket_interrupt_free_data(struct gasket_interrupt_data *data)
{
	kfree(data->eventfd_ctxs);
	kfree(data->counts);
	kfree(data->vectors);
	kfree(data);
}

int gasket_interrupt_init(struct gasket_dev *gdev)
{
	struct pci_dev *pci_dev = gdev->pci_dev;
	int n = gdev->desc->num_interrupts;
	struct gasket_interrupt_data *data;
	int ret, i;

	if (!n)
		return 0;
	ret = gasket_interrupt_desc_check(gdev);
	if (ret)
		return ret;

	data = kzalloc(sizeof(*data), GFP_KERNEL);
	if (!data)
		return -ENOMEM;
	data->gdev = gdev;
	data->num_interrupts = n;
	spin_lock_init(&data->eventfd_lock);
	data->vectors = kcalloc(n, sizeof(*data->vectors), GFP_KERNEL);
	data->counts = kcalloc(n, sizeof(*data->counts), GFP_KERNEL);
	data->eventfd_ctxs = kcalloc(n, sizeof(*data->eventfd_ctxs),
				     GFP_KERNEL);
	if (!data->vectors || !data->counts || !data->eventfd_ctxs) {
		ret = -ENOMEM;
		goto err_free_data;
	}

	ret = pci_alloc_irq_vectors(pci_dev, n, n, PCI_IRQ_MSIX);
	if (ret < 0) {
		dev_err(gdev->dev, "cannot get %d MSI-X vectors: %d\n", n, ret);
		goto err_free_data;
	}

	for (i = 0; i < n; i++) {
		data->vectors[i].data = data;
		data->vectors[i].interrupt = i;
		ret = request_irq(pci_irq_vector(pci_dev, i),
				  gasket_interrupt_handler, 0, gdev->name,
				  &data->vectors[i]);
		if (ret) {
			dev_err(gdev->dev, "cannot request MSI-X vector %d: %d\n",
				i, ret);
			goto err_free_irqs;
		}
		data->num_requested++;
	}

	gdev->interrupt_data = data;
	gasket_interrupt_setup(gdev);
	dev_dbg(gdev->dev, "%d MSI-X vectors requested and routed\n", n);
	return 0;

err_free_irqs:
	gasket_interrupt_free_irqs(data);
	pci_free_irq_vectors(pci_dev);
err_free_data:
	gasket_interrupt_free_data(data);
	return ret;
}

void gasket_interrupt_fini(struct gasket_dev *gdev)
{
	struct gasket_interrupt_data *data = gdev->interrupt_data;

	if (!data)
		return;
	gasket_interrupt_free_irqs(data);
	pci_free_irq_vectors(gdev->pci_dev);
	gasket_interrupt_clear_all_eventfds(gdev);
	gdev->interrupt_data = NULL;
	gasket_interrupt_free_data(data);
}

int gasket_interrupt_status(struct gasket_dev *gdev)
{
	if (gdev->desc->num_interrupts && !gdev->interrupt_data)
		return GASKET_STATUS_LAMED;
	return GASKET_STATUS_ALIVE;
}

/* Installs @ctx (may be NULL) for @interrupt and drops the old one. */
static void gasket_interrupt_swap_eventfd(struct gasket_interrupt_data *data,
					  int interrupt,
					  struct eventfd_ctx *ctx)
{
	struct eventfd_ctx *old;
	unsigned long flags;

	spin_lock_irqsave(&data->eventfd_lock, flags);
	old = data->eventfd_ctxs[interrupt];
	data->eventfd_ctxs[interrupt] = ctx;
	spin_unlock_irqrestore(&data->eventfd_lock, flags);
	if (old)
		eventfd_ctx_put(old);
}

int gasket_interrupt_set_eventfd(struct gasket_dev *gdev, u64 interrupt,
				 u64 event_fd)
{
	struct gasket_interrupt_data *data = gdev->interrupt_data;
	struct eventfd_ctx *ctx;

	if (!data || interrupt >= data->num_interrupts)
		return -EINVAL;
	if (event_fd > INT_MAX)
		return -EBADF;

	ctx = eventfd_ctx_fdget(event_fd);
	if (IS_ERR(ctx))
		/* A descriptor that exists but is no eventfd is a bad fd too. */
		return PTR_ERR(ctx) == -EINVAL ? -EBADF : PTR_ERR(ctx);

	gasket_interrupt_swap_eventfd(data, interrupt, ctx);
	return 0;
}

int gasket_interrupt_clear_eventfd(struct gasket_dev *gdev, u64 interrupt)
{
	struct gasket_interrupt_data *data = gdev->interrupt_data;

	if (!data || interrupt >= data->num_interrupts)
		return -EINVAL;
	gasket_interrupt_swap_eventfd(data, interrupt, NULL);
	return 0;
}

void gasket_interrupt_clear_all_eventfds(struct gasket_dev *gdev)
{
	struct gasket_interrupt_data *data = gdev->interrupt_data;
	int i;

	for (i = 0; data && i < data->num_interrupts; i++)
		gasket_interrupt_swap_eventfd(data, i, NULL);
}

int gasket_interrupt_loopback(struct gasket_dev *gdev, u64 interrupt)
{
	struct gasket_interrupt_data *data = gdev->interrupt_data;

	if (!data || interrupt >= data->num_interrupts)
		return -EINVAL;
	gasket_interrupt_raise(data, interrupt);
	return 0;
}

void gasket_interrupt_reset_counts(struct gasket_dev *gdev)
{
	struct gasket_interrupt_data *data = gdev->interrupt_data;
	int i;

	for (i = 0; data && i < data->num_interrupts; i++)
		atomic_long_set(&data->counts[i], 0);
}

u64 gasket_interrupt_count(struct gasket_dev *gdev, int interrupt)
{
	struct gasket_interrupt_data *data = gdev->interrupt_data;

	if (!data || interrupt < 0 || interrupt >= data->num_interrupts)
		return 0;
	return atomic_long_read(&data->counts[interrupt]);
}
