// SPDX-License-Identifier: GPL-2.0-only
/*
 * Apex (Coral Edge TPU, PCIe): the PCI driver, and the description from
 * which the gasket framework serves /dev/apex_N.
 */

#include <linux/device.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/sizes.h>
#include <linux/slab.h>

#include "apex_ioctl.h"
#include "apex_main.h"
#include "apex_session.h"
#include "apex_sysfs.h"
#include "apex_thermal.h"
#include "apex_tunables.h"

#define APEX_DRIVER_VERSION	"1.2"

#define APEX_PCI_VENDOR_ID	0x1ac1
#define APEX_PCI_DEVICE_ID	0x089a

/* mmap() offsets of BAR2 and of the coherent buffer in /dev/apex_N. */
#define APEX_BAR_OFFSET		0
#define APEX_CM_OFFSET		0x1000000
#define APEX_CH_MEM_BYTES	(PAGE_SIZE * GASKET_MAX_NUM_COHERENT_PAGES)

/* Bits per MSI-X vector number in the packed INTVECCTL registers. */
#define APEX_INTERRUPT_PACK_WIDTH	7

/*
 * The parts of BAR2 user space may map: the tile, the scalar core and the
 * queues' CSRs. With 16 KiB pages a mapping also covers what lies around
 * its window (libedgetpu's beagle_csr_offsets.h lists every register):
 * - 0x40000-0x43fff: more tile registers, its debug and memory-access
 *   ones, nothing else. Safe.
 * - 0x44000-0x47fff: also the page-table, interrupt-routing and MSI-X
 *   registers at 0x46000, with which a process could aim the chip's DMA
 *   anywhere. Never.
 * - 0x48000-0x4bfff: also the idle register at 0x4a000, which only the
 *   driver's reset sequence writes.
 */
static const struct gasket_mappable_region apex_mappable_regions[] = {
	{ 0x40000, 0x1000, SZ_16K },
	{ 0x44000, 0x1000, 0 },
	{ 0x48000, 0x1000, 0 },
};

static const struct gasket_page_table_config apex_page_table_configs[] = {
	{
		.size_reg = APEX_HIB_PAGE_TABLE_SIZE,
		.max_entries = APEX_PAGE_TABLE_ENTRIES,
		.base_reg = APEX_HIB_PAGE_TABLE,
		.extended_reg = APEX_HIB_EXTENDED_TABLE,
		.extended_bit = APEX_EXTENDED_SHIFT,
	},
};

static const struct gasket_interrupt_desc apex_interrupts[] = {
	{ APEX_INTERRUPT_INSTR_QUEUE, APEX_HIB_INSTR_QUEUE_INTVECCTL,
	  GASKET_UNPACKED },
	{ APEX_INTERRUPT_INPUT_ACTV_QUEUE, APEX_HIB_INPUT_ACTV_QUEUE_INTVECCTL,
	  GASKET_UNPACKED },
	{ APEX_INTERRUPT_PARAM_QUEUE, APEX_HIB_PARAM_QUEUE_INTVECCTL,
	  GASKET_UNPACKED },
	{ APEX_INTERRUPT_OUTPUT_ACTV_QUEUE, APEX_HIB_OUTPUT_ACTV_QUEUE_INTVECCTL,
	  GASKET_UNPACKED },
	{ APEX_INTERRUPT_SC_HOST_0, APEX_HIB_SC_HOST_INTVECCTL, GASKET_PACK_0 },
	{ APEX_INTERRUPT_SC_HOST_1, APEX_HIB_SC_HOST_INTVECCTL, GASKET_PACK_1 },
	{ APEX_INTERRUPT_SC_HOST_2, APEX_HIB_SC_HOST_INTVECCTL, GASKET_PACK_2 },
	{ APEX_INTERRUPT_SC_HOST_3, APEX_HIB_SC_HOST_INTVECCTL, GASKET_PACK_3 },
	{ APEX_INTERRUPT_TOP_LEVEL_0, APEX_HIB_TOP_LEVEL_INTVECCTL,
	  GASKET_PACK_0 },
	{ APEX_INTERRUPT_TOP_LEVEL_1, APEX_HIB_TOP_LEVEL_INTVECCTL,
	  GASKET_PACK_1 },
	{ APEX_INTERRUPT_TOP_LEVEL_2, APEX_HIB_TOP_LEVEL_INTVECCTL,
	  GASKET_PACK_2 },
	{ APEX_INTERRUPT_TOP_LEVEL_3, APEX_HIB_TOP_LEVEL_INTVECCTL,
	  GASKET_PACK_3 },
	{ APEX_INTERRUPT_FATAL_ERR, APEX_HIB_FATAL_ERR_INTVECCTL,
	  GASKET_UNPACKED },
};

static_assert(ARRAY_SIZE(apex_interrupts) == APEX_INTERRUPT_COUNT);

static const struct attribute_group *apex_groups[] = {
	&apex_sysfs_group,
	&apex_session_group,
	&apex_thermal_group,
	NULL
};

/* Hard IRQ: note a fatal error for the status, pass thermal ones on. */
static void apex_interrupt_cb(struct gasket_dev *gdev, int interrupt)
{
	struct apex_dev *adev = apex_from_gasket(gdev);

	if (interrupt != APEX_INTERRUPT_FATAL_ERR) {
		apex_thermal_interrupt(adev, interrupt);
		return;
	}
	if (!test_and_set_bit(APEX_EVENT_FATAL, &adev->events))
		dev_err(&adev->pdev->dev,
			"fatal error interrupt: device DEAD until reset\n");
	/* MAP/UNMAP see it at once, without reading a register. */
	gasket_set_status_dead(gdev);
}

/* Set under both locks that guard register access, in lock order. */
static void apex_set_unreachable(struct apex_dev *adev, bool unreachable)
{
	mutex_lock(&adev->thermal.lock);
	mutex_lock(&adev->power.lock);
	adev->unreachable = unreachable;
	mutex_unlock(&adev->power.lock);
	mutex_unlock(&adev->thermal.lock);
}

/* device_restore_cb: the chip lost its state; set it up as probe does. */
static int apex_restore_cb(struct gasket_dev *gdev, bool in_use)
{
	struct apex_dev *adev = apex_from_gasket(gdev);
	int ret;

	apex_set_unreachable(adev, false);
	ret = apex_session_restore(adev, in_use);
	if (!ret)
		apex_thermal_open(adev);
	return ret;
}

static const struct gasket_driver_desc apex_desc = {
	.name = "apex",
	.driver_version = APEX_DRIVER_VERSION,
	.owner = THIS_MODULE,

	.bar_descriptions = {
		[APEX_BAR_INDEX] = {
			.size = APEX_BAR_BYTES,
			.permissions = VM_READ | VM_WRITE,
			.base = APEX_BAR_OFFSET,
			.num_mappable_regions = ARRAY_SIZE(apex_mappable_regions),
			.mappable_regions = apex_mappable_regions,
		},
	},
	.coherent_buffer_description = {
		.size = APEX_CH_MEM_BYTES,
		.permissions = VM_READ | VM_WRITE,
		.base = APEX_CM_OFFSET,
	},

	.num_page_tables = ARRAY_SIZE(apex_page_table_configs),
	.page_table_bar_index = APEX_BAR_INDEX,
	.page_table_configs = apex_page_table_configs,

	.interrupt_bar_index = APEX_BAR_INDEX,
	.num_interrupts = APEX_INTERRUPT_COUNT,
	.interrupts = apex_interrupts,
	.interrupt_pack_width = APEX_INTERRUPT_PACK_WIDTH,

	.sysfs_groups = apex_groups,

	.device_open_cb = apex_session_open_cb,
	.device_close_cb = apex_session_close_cb,
	.device_reset_cb = apex_session_reset_cb,
	.device_quiesce_cb = apex_session_quiesce_cb,
	.device_restore_cb = apex_restore_cb,
	.device_status_cb = apex_session_status_cb,
	.interrupt_cb = apex_interrupt_cb,
	.ioctl_handler_cb = apex_ioctl,
};

/* What the rest of the driver assumes about the function, checked once. */
static int apex_check_hardware(struct pci_dev *pdev)
{
	resource_size_t bar_len = pci_resource_len(pdev, APEX_BAR_INDEX);
	int vectors;

	if (bar_len < APEX_BAR_BYTES) {
		dev_err(&pdev->dev, "BAR%d is %pa bytes, the chip has %#x\n",
			APEX_BAR_INDEX, &bar_len, APEX_BAR_BYTES);
		return -ENODEV;
	}
	vectors = pci_msix_vec_count(pdev);
	if (vectors < APEX_INTERRUPT_COUNT) {
		dev_err(&pdev->dev, "MSI-X offers %d vectors, the chip has %d\n",
			max(vectors, 0), APEX_INTERRUPT_COUNT);
		return -ENODEV;
	}
	return 0;
}

static int apex_pci_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct apex_dev *adev;
	int ret;

	ret = apex_check_hardware(pdev);
	if (ret)
		return ret;

	/* devm: freed after the (devm) hwmon device that points to it. */
	adev = devm_kzalloc(&pdev->dev, sizeof(*adev), GFP_KERNEL);
	if (!adev)
		return -ENOMEM;
	adev->pdev = pdev;
	apex_tunables_init(&adev->tunables);
	apex_session_init(adev);
	apex_thermal_init(adev);

	ret = gasket_pci_add_device(pdev, &apex_desc, &adev->gdev);
	if (ret)
		return ret;
	gasket_dev_set_drvdata(adev->gdev, adev);
	dev_dbg(&pdev->dev, "probe: BAR%d mapped, resetting the chip\n",
		APEX_BAR_INDEX);

	ret = apex_session_probe(adev);
	if (ret)
		goto err_remove_device;
	ret = apex_thermal_probe(adev);
	if (ret)
		goto err_remove_device;
	ret = gasket_enable_device(adev->gdev);
	if (ret)
		goto err_remove_device;

	/* The node appears only now: an open never meets a chip half set up. */
	apex_session_idle(adev);
	apex_thermal_open(adev);
	ret = gasket_publish_device(adev->gdev);
	if (ret)
		goto err_remove_device;
	/* What PCI error recovery restores after the link reset. */
	pci_save_state(pdev);
	dev_dbg(&pdev->dev, "probe: done\n");
	return 0;

err_remove_device:
	apex_set_unreachable(adev, true);
	/* Interrupts first: one may queue the thermal work again. */
	gasket_pci_remove_device(pdev);
	apex_thermal_remove(adev);
	return ret;
}

static void apex_pci_remove(struct pci_dev *pdev)
{
	struct gasket_dev *gdev = pci_get_drvdata(pdev);
	struct apex_dev *adev = apex_from_gasket(gdev);

	/* Stops the chip's DMA (device_quiesce_cb) before anything is freed. */
	gasket_disable_device(gdev);
	/*
	 * No register access from hwmon or the thermal work once this is
	 * set; the devm hwmon device goes only after we return.
	 */
	apex_set_unreachable(adev, true);
	apex_thermal_remove(adev);
	gasket_pci_remove_device(pdev);
	dev_dbg(&pdev->dev, "removed\n");
}

/*
 * The chip is about to lose its state: a function reset, error recovery,
 * system sleep. Its DMA stops; the session's buffers stay mapped.
 */
static void apex_offline(struct pci_dev *pdev)
{
	struct gasket_dev *gdev = pci_get_drvdata(pdev);

	gasket_offline_device(gdev);
	apex_set_unreachable(apex_from_gasket(gdev), true);
}

/* ... and is back, in its power-on state: restore what the driver set. */
static int apex_online(struct pci_dev *pdev)
{
	return gasket_online_device(pci_get_drvdata(pdev));
}

/* After sysfs "reset" and the other function resets the PCI core does. */
static void apex_reset_done(struct pci_dev *pdev)
{
	apex_online(pdev);
}

static pci_ers_result_t apex_error_detected(struct pci_dev *pdev,
					    pci_channel_state_t state)
{
	if (state == pci_channel_io_perm_failure) {
		dev_err(&pdev->dev, "PCI error: the device is lost\n");
		return PCI_ERS_RESULT_DISCONNECT;
	}
	dev_err(&pdev->dev, "PCI error: resetting the device\n");
	apex_offline(pdev);
	return PCI_ERS_RESULT_NEED_RESET;
}

static pci_ers_result_t apex_slot_reset(struct pci_dev *pdev)
{
	pci_restore_state(pdev);
	pci_save_state(pdev);	/* restoring used it up */
	if (apex_online(pdev))
		return PCI_ERS_RESULT_DISCONNECT;
	dev_info(&pdev->dev, "recovered from the PCI error\n");
	return PCI_ERS_RESULT_RECOVERED;
}

static const struct pci_error_handlers apex_error_handlers = {
	.error_detected = apex_error_detected,
	.slot_reset = apex_slot_reset,
	.reset_prepare = apex_offline,
	.reset_done = apex_reset_done,
};

/* System sleep and hibernation; the PCI core saves and restores the config. */
static int apex_suspend(struct device *dev)
{
	apex_offline(to_pci_dev(dev));
	return 0;
}

static int apex_resume(struct device *dev)
{
	/* A chip that did not come back is DEAD and says so; the system resumes. */
	apex_online(to_pci_dev(dev));
	return 0;
}

static const struct dev_pm_ops apex_pm_ops = {
	.suspend = apex_suspend,
	.resume = apex_resume,
	.freeze = apex_suspend,
	.thaw = apex_resume,
	.poweroff = apex_suspend,
	.restore = apex_resume,
};

static const struct pci_device_id apex_pci_ids[] = {
	{ PCI_DEVICE(APEX_PCI_VENDOR_ID, APEX_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, apex_pci_ids);

static struct pci_driver apex_pci_driver = {
	.name = "apex",
	.id_table = apex_pci_ids,
	.probe = apex_pci_probe,
	.remove = apex_pci_remove,
	.err_handler = &apex_error_handlers,
	.driver.pm = &apex_pm_ops,
};
module_pci_driver(apex_pci_driver);

MODULE_DESCRIPTION("Google Apex (Coral Edge TPU) PCIe driver");
MODULE_VERSION(APEX_DRIVER_VERSION);
MODULE_LICENSE("GPL");
