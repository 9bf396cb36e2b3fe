// SPDX-License-Identifier: GPL-2.0-only
/*
 * Apex tunables: the layering of default -> module parameter -> per-device
 * value, the parameter ops and the per-device attributes. The files that
 * declare tunables apply them; see apex_tunables.h.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/string.h>

#include "apex_main.h"
#include "apex_tunables.h"

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
 * apex_tunables_init() - a device's per-device layer, all following the module
 * @tunables: the device's layer, zeroed
 */
void apex_tunables_init(struct apex_tunables *tunables)
{
	mutex_init(&tunables->lock);
}

/**
 * apex_tunable_get() - the value a device uses for a tunable now
 * @adev: the device
 * @tun: the tunable
 *
 * The per-device value if one was written, else the module parameter.
 *
 * Context: may sleep; takes adev->tunables.lock, the innermost apex lock.
 * Return: the effective value, always within the tunable's range.
 */
int apex_tunable_get(struct apex_dev *adev, const struct apex_tunable *tun)
{
	const struct apex_override *ovr = &adev->tunables.ovr[tun->id];
	int v;

	mutex_lock(&adev->tunables.lock);
	v = ovr->set ? ovr->value : READ_ONCE(tun->param);
	mutex_unlock(&adev->tunables.lock);
	return v;
}

ssize_t apex_tunable_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	struct apex_tunable *tun = container_of(attr, struct apex_tunable, dattr);
	struct apex_dev *adev = apex_from_device(dev);

	return sysfs_emit(buf, "%d\n", apex_tunable_get(adev, tun));
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

	mutex_lock(&adev->tunables.lock);
	adev->tunables.ovr[tun->id] = ovr;
	mutex_unlock(&adev->tunables.lock);
	dev_dbg(dev, "%s: %s\n", attr->attr.name,
		ovr.set ? "per-device value" : "follows the module parameter");
	if (tun->changed)
		tun->changed(adev, tun);
	return count;
}

