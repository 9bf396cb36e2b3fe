#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# make-seed.sh OUT.img: a NoCloud seed (label cidata) with vmtest's user-data
# and a fresh instance id, so cloud-init treats every run as a new instance.
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"

[ $# -eq 1 ] || apex_die "usage: $0 OUT.img"
apex_need cloud-localds cloud-image-utils

meta=$(mktemp)
trap 'rm -f "$meta"' EXIT
printf 'instance-id: apex-vmtest-%s\nlocal-hostname: apex-guest\n' "$(date +%s%N)" >"$meta"
cloud-localds "$1" "$(dirname "$0")/user-data" "$meta"
