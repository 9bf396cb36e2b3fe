// SPDX-License-Identifier: GPL-2.0-only
/*
 * MODULE_IMPORT_NS() took a bare identifier until 6.13 and a string since.
 * The string also compiles with the old macro (as a wrong name), so probe
 * the identifier form: it fails to build on new kernels.
 */
#include <linux/module.h>

MODULE_IMPORT_NS(DMA_BUF);
