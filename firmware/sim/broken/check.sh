#!/bin/sh
# broken/check.sh [MAKE] - build each broken variant of the hilrun virtual
# board firmware and check that it fails, with the error broken/README.md
# records. Run from firmware/sim by `make check-broken`.
set -u

make=${1:-make}
fail=0

# expect TARGET TEXT: `make TARGET` must fail and print TEXT.
expect() {
	out=$($make --no-print-directory "$1" 2>&1)
	rc=$?
	if [ $rc = 0 ]; then
		echo "FAIL $1: succeeded, want a failure"
		fail=1
	elif printf '%s\n' "$out" | grep -qF -- "$2"; then
		echo "ok   $1 failed: $2"
	else
		echo "FAIL $1: failed without \"$2\"; output:"
		printf '%s\n' "$out" | sed 's/^/     /'
		fail=1
	fi
}

expect broken-missing-header "fatal error: hilrun_missing.h: No such file or directory"
expect broken-undefined "undefined reference to \`hilrun_undefined_function'"
expect broken-overflow "region \`RAM' overflowed by"

if [ $fail != 0 ]; then
	echo "check-broken failed"
	exit 1
fi
echo "check-broken passed"
