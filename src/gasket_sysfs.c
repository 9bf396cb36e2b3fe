// SPDX-License-Identifier: GPL-2.0-only
/*
 * Gasket sysfs attributes of /sys/class/<driver>/<driver>_N, one value
 * (or one line per item) per file; documented in
 * Documentation/ABI/testing/sysfs-class-apex. The driver core adds and
 * removes them with the device, so no show runs after removal.
 */
#include <linux/device.h>
#include <linux/pci.h>
#include <linux/sysfs.h>

#include "gasket_core.h"
#include "gasket_interrupt.h"
#include "gasket_sysfs.h"

static const char *const gasket_status_names[] = {
	[GASKET_STATUS_DEAD] = "DEAD",
	[GASKET_STATUS_LAMED] = "LAMED",
	[GASKET_STATUS_ALIVE] = "ALIVE",
	[GASKET_STATUS_DRIVER_EXIT] = "DRIVER_EXIT",
};

/* One "N: 0x..." line per BAR the device uses: its base or its size. */
static ssize_t gasket_sysfs_bars_show(struct device *dev, char *buf,
				      bool sizes)
{
	const struct gasket_driver_desc *desc = gasket_dev_from_device(dev)->desc;
	const struct gasket_bar_desc *bar;
	int len = 0;
	int i;

	for (i = 0; i < GASKET_NUM_BARS; i++) {
		bar = &desc->bar_descriptions[i];
		if (bar->size)
			len += sysfs_emit_at(buf, len, "%d: 0x%llx\n", i,
					     sizes ? bar->size : bar->base);
	}
	return len;
}

static ssize_t bar_offsets_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return gasket_sysfs_bars_show(dev, buf, false);
}
static DEVICE_ATTR_RO(bar_offsets);

static ssize_t bar_sizes_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	return gasket_sysfs_bars_show(dev, buf, true);
}
static DEVICE_ATTR_RO(bar_sizes);

static ssize_t driver_version_show(struct device *dev,
				   struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  gasket_dev_from_device(dev)->desc->driver_version);
}
static DEVICE_ATTR_RO(driver_version);

static ssize_t framework_version_show(struct device *dev,
				      struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", GASKET_FRAMEWORK_VERSION);
}
static DEVICE_ATTR_RO(framework_version);

static ssize_t device_type_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", gasket_dev_from_device(dev)->desc->name);
}
static DEVICE_ATTR_RO(device_type);

static ssize_t hardware_revision_show(struct device *dev,
				      struct device_attribute *attr, char *buf)
{
	struct gasket_dev *gdev = gasket_dev_from_device(dev);
	int rev;

	rev = gdev->desc->hardware_revision_cb(gdev);
	if (rev < 0)
		return rev;
	return sysfs_emit(buf, "%d\n", rev);
}
static DEVICE_ATTR_RO(hardware_revision);

static ssize_t pci_address_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  pci_name(gasket_dev_from_device(dev)->pci_dev));
}
static DEVICE_ATTR_RO(pci_address);

static ssize_t status_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	int status = gasket_get_status(gasket_dev_from_device(dev));

	if (status < 0 || status >= ARRAY_SIZE(gasket_status_names))
		status = GASKET_STATUS_DEAD;
	return sysfs_emit(buf, "%s\n", gasket_status_names[status]);
}
static DEVICE_ATTR_RO(status);

static ssize_t is_device_owned_show(struct device *dev,
				    struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n",
			  READ_ONCE(gasket_dev_from_device(dev)->ownership.is_owned));
}
static DEVICE_ATTR_RO(is_device_owned);

static ssize_t device_owner_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n",
			  READ_ONCE(gasket_dev_from_device(dev)->ownership.owner));
}
static DEVICE_ATTR_RO(device_owner);

static ssize_t write_open_count_show(struct device *dev,
				     struct device_attribute *attr, char *buf)
{
	struct gasket_dev *gdev = gasket_dev_from_device(dev);

	return sysfs_emit(buf, "%u\n",
			  READ_ONCE(gdev->ownership.write_open_count));
}
static DEVICE_ATTR_RO(write_open_count);

static ssize_t reset_count_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n",
			  READ_ONCE(gasket_dev_from_device(dev)->reset_count));
}
static DEVICE_ATTR_RO(reset_count);

/* mmap() offset ranges user space may map, one "start-end" per line. */
static ssize_t user_mem_ranges_show(struct device *dev,
				    struct device_attribute *attr, char *buf)
{
	const struct gasket_driver_desc *desc = gasket_dev_from_device(dev)->desc;
	const struct gasket_bar_desc *bar;
	const struct gasket_mappable_region *r;
	int len = 0;
	int i, j;

	for (i = 0; i < GASKET_NUM_BARS; i++) {
		bar = &desc->bar_descriptions[i];
		for (j = 0; bar->size && j < bar->num_mappable_regions; j++) {
			r = &bar->mappable_regions[j];
			len += sysfs_emit_at(buf, len, "0x%08llx-0x%08llx\n",
					     bar->base + r->start,
					     bar->base + r->start +
					     r->length_bytes);
		}
	}
	return len;
}
static DEVICE_ATTR_RO(user_mem_ranges);

static ssize_t interrupt_counts_show(struct device *dev,
				     struct device_attribute *attr, char *buf)
{
	struct gasket_dev *gdev = gasket_dev_from_device(dev);
	int len = 0;
	int i;

	for (i = 0; i < gdev->desc->num_interrupts; i++)
		len += sysfs_emit_at(buf, len, "0x%02x: %llu\n", i,
				     gasket_interrupt_count(gdev, i));
	return len;
}
static DEVICE_ATTR_RO(interrupt_counts);

static struct attribute *gasket_sysfs_attrs[] = {
	&dev_attr_bar_offsets.attr,
	&dev_attr_bar_sizes.attr,
	&dev_attr_driver_version.attr,
	&dev_attr_framework_version.attr,
	&dev_attr_device_type.attr,
	&dev_attr_hardware_revision.attr,
	&dev_attr_pci_address.attr,
	&dev_attr_status.attr,
	&dev_attr_is_device_owned.attr,
	&dev_attr_device_owner.attr,
	&dev_attr_write_open_count.attr,
	&dev_attr_reset_count.attr,
	&dev_attr_user_mem_ranges.attr,
	&dev_attr_interrupt_counts.attr,
	NULL,
};

/* hardware_revision only exists if the device driver can tell it. */
static umode_t gasket_sysfs_is_visible(struct kobject *kobj,
				       struct attribute *attr, int n)
{
	struct gasket_dev *gdev = gasket_dev_from_device(kobj_to_dev(kobj));

	if (attr == &dev_attr_hardware_revision.attr &&
	    !gdev->desc->hardware_revision_cb)
		return 0;
	return attr->mode;
}

const struct attribute_group gasket_sysfs_group = {
	.attrs = gasket_sysfs_attrs,
	.is_visible = gasket_sysfs_is_visible,
};
