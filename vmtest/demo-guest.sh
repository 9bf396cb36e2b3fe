#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# The guest half of `make demo` (stage1 of the demo's test disk): install
# apex-dkms as a user would and show what a user wants to see. Plain text on
# stdout; the exit status says whether every step worked.
set -uo pipefail
failed=0

# show CMD...: print the command like a shell session, then its output.
show() {
	printf '\n$ %s\n' "$*"
	"$@" 2>&1 || { echo "(exit status $?)"; failed=1; }
}

printf '%s, kernel %s\n' "$(. /etc/os-release && echo "$PRETTY_NAME")" "$(uname -r)"
printf "\n\$ apt-get update && apt-get install -y apex-dkms    \
(DKMS builds the modules: 2-3 min under TCG)\n"
if { apt-get update && apt-get install -y apex-dkms; } >/var/log/apex-demo-install.log 2>&1; then
	grep -E '^(Setting up|Unpacking|Selecting)' /var/log/apex-demo-install.log | grep apex-dkms
else
	tail -n 30 /var/log/apex-demo-install.log
	echo "(apt-get install failed)"
	failed=1
fi
udevadm settle -t 30 >/dev/null 2>&1
for _ in $(seq 30); do
	[ -e /dev/apex_0 ] && break
	sleep 1
done

show lspci -nn -k -d 1ac1:089a
show dkms status
show ls -l /dev/apex_0
show /mnt/apextest/tests/apex-demo /dev/apex_0
exit "$failed"
