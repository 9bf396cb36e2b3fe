#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# console-check.sh CONSOLE_LOG: print the kernel's warnings, bugs, oopses and
# sanitizer reports from a guest's serial console; exit 1 if there are any.
# DMA-API errors are warnings; that checker running out of entries (it
# then stops checking) and kmemleak's reports count too.
# Only kernel messages count: a timestamp, and not the "name[pid]:" of a
# user process logging through /dev/kmsg.
set -euo pipefail

console=${1:?usage: console-check.sh CONSOLE_LOG}
[ -f "$console" ] || exit 0
bad='WARNING:|BUG:|Oops|lockdep|UBSAN|general protection fault'
bad+='|Call Trace|kernel BUG at|Kernel panic'
bad+='|DMA-API: debugging out of memory|suspected memory leak'
# What a lockdep kernel prints at every boot.
benign='RCU lockdep checking is enabled'
problems=$(tr -d '\r' <"$console" |
	grep -aE '^\[ *[0-9]+\.[0-9]+\] ' |
	grep -avE '^\[ *[0-9]+\.[0-9]+\] [^ ]+\[[0-9]+\]: ' |
	grep -aE "$bad" | grep -avE "$benign" || true)
[ -z "$problems" ] || { printf '%s\n' "$problems"; exit 1; }
