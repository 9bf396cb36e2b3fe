// SPDX-License-Identifier: GPL-2.0-only
/*
 * Apex sysfs: the read-only attributes of /sys/class/apex/apex_N and the
 * layering of tunables (default -> module parameter -> per-device value).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/lockdep.h>
#include <linux/module.h>
#include <linux/string.h>

#include "apex_main.h"
#include "apex_session.h"
#include "apex_sysfs.h"
#include "apex_thermal.h"

static int apex_tunable_parse(const struct apex_tunable *tun, const char *val,
			      int *out)
{
	bool b;
	int ret;

	if (!tun->is_bool)
		return kstrtoint(val, 0, out);
	ret = kstrtobool(val, &b);
	if (!ret)
		*out = b;
	return ret;
}

/*
 * Module parameter layer. A bad value cannot fail the module load (the
 * user would lose the device over a typo), so it is replaced by the
 * built-in default with one warning, at load time and at run time alike.
 */
static int apex_tunable_param_set(const char *val, const struct kernel_param *kp)
{
	struct apex_tunable *tun = kp->arg;
	int v;

	if (apex_tunable_parse(tun, val, &v)) {
		pr_warn("%s: \"%.*s\" is not a valid value, using the default %d\n",
			kp->name, (int)strcspn(val, "\n"), val, tun->def);
		v = tun->def;
	} else if (v < tun->min || v > tun->max) {
		pr_warn("%s=%d is outside %d..%d, using the default %d\n",
			kp->name, v, tun->min, tun->max, tun->def);
		v = tun->def;
	}
	WRITE_ONCE(tun->param, v);
	return 0;
}

static int apex_tunable_param_get(char *buffer, const struct kernel_param *kp)
{
	const struct apex_tunable *tun = kp->arg;
	int v = READ_ONCE(tun->param);

	if (tun->is_bool)
		return sysfs_emit(buffer, "%c\n", v ? 'Y' : 'N');
	return sysfs_emit(buffer, "%d\n", v);
}

const struct kernel_param_ops apex_tunable_param_ops = {
	.set = apex_tunable_param_set,
	.get = apex_tunable_param_get,
};

/**
 * apex_tunable_get() - the value a device uses for a tunable now
 * @adev: the device
 * @tun: the tunable
 *
 * The per-device value if one was written, else the module parameter.
 *
 * Context: adev->lock held.
 * Return: the effective value, always within the tunable's range.
 */
int apex_tunable_get(struct apex_dev *adev, const struct apex_tunable *tun)
{
	const struct apex_override *ovr = &adev->ovr[tun->id];

	lockdep_assert_held(&adev->lock);
	return ovr->set ? ovr->value : READ_ONCE(tun->param);
}

ssize_t apex_tunable_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	struct apex_tunable *tun = container_of(attr, struct apex_tunable, dattr);
	struct apex_dev *adev = apex_from_device(dev);
	int v;

	mutex_lock(&adev->lock);
	v = apex_tunable_get(adev, tun);
	mutex_unlock(&adev->lock);
	return sysfs_emit(buf, "%d\n", v);
}

/* Per-device layer: a value in range, or "default" to follow the module. */
ssize_t apex_tunable_store(struct device *dev, struct device_attribute *attr,
			   const char *buf, size_t count)
{
	struct apex_tunable *tun = container_of(attr, struct apex_tunable, dattr);
	struct apex_dev *adev = apex_from_device(dev);
	struct apex_override ovr = { .set = false };

	if (!sysfs_streq(buf, "default")) {
		if (apex_tunable_parse(tun, buf, &ovr.value) ||
		    ovr.value < tun->min || ovr.value > tun->max) {
			dev_warn_ratelimited(dev,
					     "%s: takes %d..%d or \"default\"\n",
					     attr->attr.name, tun->min, tun->max);
			return -EINVAL;
		}
		ovr.set = true;
	}

	mutex_lock(&adev->lock);
	adev->ovr[tun->id] = ovr;
	if (!adev->gone) {
		apex_session_tunable_changed(adev, tun->id);
		apex_thermal_tunable_changed(adev, tun->id);
	}
	mutex_unlock(&adev->lock);
	return count;
}

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

	mutex_lock(&adev->lock);
	if (!adev->gone)
		ret = sysfs_emit(buf, "%08x%08x%08x%08x\n",
				 apex_read32(adev, APEX_EFUSE_ID3),
				 apex_read32(adev, APEX_EFUSE_ID2),
				 apex_read32(adev, APEX_EFUSE_ID1),
				 apex_read32(adev, APEX_EFUSE_ID0));
	mutex_unlock(&adev->lock);
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
