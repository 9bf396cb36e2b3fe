// SPDX-License-Identifier: GPL-2.0-only
/* vma->vm_flags became read-only behind vm_flags_set/clear() in 6.3. */
#include <linux/mm.h>

void gasket_probe(struct vm_area_struct *vma);
void gasket_probe(struct vm_area_struct *vma)
{
	vm_flags_set(vma, VM_DONTEXPAND);
	vm_flags_clear(vma, VM_MAYWRITE);
}
