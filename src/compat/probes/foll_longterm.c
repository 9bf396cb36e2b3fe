// SPDX-License-Identifier: GPL-2.0-only
/* FOLL_LONGTERM for pin_user_pages_fast(), for pins held until unmap. */
#include <linux/mm.h>

int gasket_probe(unsigned long start, struct page **pages);
int gasket_probe(unsigned long start, struct page **pages)
{
	return pin_user_pages_fast(start, 1, FOLL_WRITE | FOLL_LONGTERM, pages);
}
