#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Host checks of src/compat/probe.sh with this machine's gcc and probes
# written here against the C library's headers: which probes it decides
# build, against the same probes compiled one by one (GASKET_PROBE_EACH=1),
# and how many compiler runs that takes (a wrapper counts them), when all
# probes build, when some fail (errors, a warning under -Werror, an error
# inside a macro from a header), when one fails fatally (a missing header:
# each alone then), and when even the baseline fails. The kernel's own
# probes are checked against every kernel of the compile matrix
# (tests/compile-matrix.sh).
#
# Prints "PASS name" or "FAIL name: why" per check, then "N passed, N failed".
set -uo pipefail

probe=$(realpath "$(dirname "$0")/../src/compat/probe.sh")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source-path=SCRIPTDIR source=lib/results.sh
source "$(dirname "$0")/lib/results.sh"

# The compiler, through a wrapper that counts its runs in $work/runs.
cat >"$work/cc" <<'EOF'
#!/bin/sh
echo run >>"$CC_RUNS"
exec gcc "$@"
EOF
chmod +x "$work/cc"
export CC_RUNS=$work/runs
mkdir -p "$work/include"
echo '#define CALL_WITH_TWO(f) f(1, 2)' >"$work/include/probe_macros.h"

# probe NAME BODY: a probe file in the current set ($set).
probe() {
	printf '%s\n' "$2" >"$set/$1.c"
}

# new_set NAME: an empty probe set with the baseline, in $set.
new_set() {
	set=$work/$1
	mkdir -p "$set"
	probe baseline '#include <stddef.h>
int gasket_probe(void);
int gasket_probe(void) { return 0; }'
}

# run_probe MODE SET: probe.sh on SET (MODE each or together); the header
# in $out, the exit status in $rc, the compiler runs in $runs.
run_probe() {
	local each=0
	[ "$1" = each ] && each=1
	rm -rf "$work/out" "$CC_RUNS"
	: >"$CC_RUNS"
	rc=0
	out=$(GASKET_PROBE_EACH=$each "$probe" "$2" "$work/out" "$work/cc" \
		-Wall -I"$work/include" 2>"$work/stderr") || rc=$?
	runs=$(wc -l <"$CC_RUNS")
}

# defined: the probes the header says built, sorted, space-separated.
defined() {
	sed -n 's/^#define GASKET_HAVE_\([A-Z_]*\) 1$/\1/p' <<<"$out" | tr 'A-Z' 'a-z' | sort |
		tr '\n' ' ' | sed 's/ $//'
}

# same_as_each SET EXPECTED RUNS NAME: together gives EXPECTED with RUNS
# compiler runs; each alone gives the same header.
same_as_each() {
	local set=$1 expected=$2 want_runs=$3 name=$4 together got
	run_probe together "$set"
	together=$out got=$(defined)
	result "$name: builds are $expected" "$([ $rc = 0 ] && [ "$got" = "$expected" ]; echo $?)" \
		"exit $rc, built: '$got'"
	result "$name: $want_runs compiler runs" "$([ "$runs" = "$want_runs" ]; echo $?)" \
		"$runs runs"
	run_probe each "$set"
	result "$name: each alone decides the same" "$([ $rc = 0 ] && [ "$out" = "$together" ]; echo $?)" \
		"exit $rc; together: $together; each alone: $out"
}

# All build: one compiler run.
new_set all
probe has_strlen '#include <string.h>
size_t gasket_probe(const char *s);
size_t gasket_probe(const char *s) { return strlen(s); }'
probe has_abs '#include <stdlib.h>
int gasket_probe(int x);
int gasket_probe(int x) { return abs(x); }'
same_as_each "$work/all" "has_abs has_strlen" 1 "all build"

# Some fail: two runs (all together, then the rest together).
new_set some
cp "$work/all/has_strlen.c" "$work/all/has_abs.c" "$work/some/"
probe too_many_args '#include <string.h>
size_t gasket_probe(const char *s);
size_t gasket_probe(const char *s) { return strlen(s, 1); }'
probe undeclared '#include <string.h>
int gasket_probe(void);
int gasket_probe(void) { return no_such_function(); }'
probe unused_warning '#include <string.h>
int gasket_probe(void);
int gasket_probe(void) { int unused; return 0; }'
probe macro_from_header '#include <stdlib.h>
#include <probe_macros.h>
int gasket_probe(void);
int gasket_probe(void) { return CALL_WITH_TWO(abs); }'
same_as_each "$work/some" "has_abs has_strlen" 2 "four of six fail"

# A fatal error stops the compiler at that probe: each alone, after the
# one run together.
new_set fatal
cp "$work/some/"*.c "$work/fatal/"
probe missing_header '#include <no_such_header_for_probe_check.h>
int gasket_probe(void);
int gasket_probe(void) { return 0; }'
same_as_each "$work/fatal" "has_abs has_strlen" 9 "a missing header"

# The baseline failing is an error, with the log's end.
new_set broken
probe baseline 'int gasket_probe(void);
int gasket_probe(void) { return undeclared_in_baseline; }'
run_probe together "$work/broken"
result "baseline fails: exit 1, says so" \
	"$([ $rc = 1 ] && grep -q 'even the baseline probe failed' "$work/stderr"; echo $?)" \
	"exit $rc, stderr: $(head -c 300 "$work/stderr")"

results_end
