#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# fake-prog.sh MODE: a TAP-producing program for the tap.sh checks.
case $1 in
good) printf "ok 1 - first\n# a note\nok 2 - second # SKIP no such thing\n\
1..2\n1 passed, 0 failed\n" ;;
bad) printf 'ok 1 - first\nnot ok 2 - second # why\n1..2\n1 passed, 1 failed\n'; exit 1 ;;
crash) printf 'ok 1 - first\nstray output\n'; kill -SEGV $$ ;;
short) printf 'ok 1 - first\n1..3\n1 passed, 0 failed\n' ;;
hang) printf 'ok 1 - first\n'; sleep 30 ;;
esac
