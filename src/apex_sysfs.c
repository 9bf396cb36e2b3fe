// SPDX-License-Identifier: GPL-2.0-only
/* Apex sysfs: the read-only attributes of /sys/class/apex/apex_N. */

#include <linux/device.h>
#include <linux/sysfs.h>

#include "apex_main.h"
#include "apex_sysfs.h"

/* node_0_*: a count from page table 0, the only one the chip has. */
#define APEX_PT_COUNT_ATTR_RO(_name, _count)				\
static ssize_t _name##_show(struct device *dev,				\
			    struct device_attribute *attr, char *buf)	\
{									\
	return sysfs_emit(buf, "%u\n", _count(gasket_dev_from_device(dev), 0)); \
}									\
static DEVICE_ATTR_RO(_name)

APEX_PT_COUNT_ATTR_RO(node_0_page_table_entries,
		      gasket_page_table_num_entries);
APEX_PT_COUNT_ATTR_RO(node_0_simple_page_table_entries,
		      gasket_page_table_num_simple_entries);
APEX_PT_COUNT_ATTR_RO(node_0_num_mapped_pages,
		      gasket_page_table_num_mapped_pages);

/* 128 bits of eFuse, most significant word first. */
static ssize_t unique_id_show(struct device *dev, struct device_attribute *attr,
			      char *buf)
{
	struct apex_dev *adev = apex_from_device(dev);
	ssize_t ret = -ENODEV;

	mutex_lock(&adev->power.lock);
	if (!adev->unreachable)
		ret = sysfs_emit(buf, "%08x%08x%08x%08x\n",
				 apex_read32(adev, APEX_EFUSE_ID3),
				 apex_read32(adev, APEX_EFUSE_ID2),
				 apex_read32(adev, APEX_EFUSE_ID1),
				 apex_read32(adev, APEX_EFUSE_ID0));
	mutex_unlock(&adev->power.lock);
	return ret;
}
static DEVICE_ATTR_RO(unique_id);

static struct attribute *apex_sysfs_attrs[] = {
	&dev_attr_node_0_page_table_entries.attr,
	&dev_attr_node_0_simple_page_table_entries.attr,
	&dev_attr_node_0_num_mapped_pages.attr,
	&dev_attr_unique_id.attr,
	NULL
};

const struct attribute_group apex_sysfs_group = {
	.attrs = apex_sysfs_attrs,
};
