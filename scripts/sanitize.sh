#!/usr/bin/env bash
# `make test-asan` / `make test-tsan`: the unit tests and the interop suite (the real binary on
# loopback) built with AddressSanitizer (+LeakSanitizer) or ThreadSanitizer, in a build directory of
# their own (.build-asan, .build-tsan) so the normal build is untouched. Reports go to files under
# <build dir>/reports (child processes of the interop suite included); any report fails the run.
#
#   scripts/sanitize.sh address|thread [pytest args...]
#
# Suppressions (each with its reason) are in scripts/sanitizers/.
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:?address or thread}
shift
case "$kind" in
    address) short=asan ;;
    thread) short=tsan ;;
    *) echo "sanitize.sh: address or thread, not $kind" >&2; exit 2 ;;
esac
SWIFT=${SWIFT:-swift}
PY=${PY:-.venv/bin/python}
scratch=.build-$short
reports=$PWD/$scratch/reports
rm -rf "$reports"
mkdir -p "$reports"

$SWIFT build --build-tests --sanitize="$kind" --scratch-path "$scratch"
bin=$($SWIFT build --sanitize="$kind" --scratch-path "$scratch" --show-bin-path)

# log_path: one file per process that reported (pid suffix); the suite's children inherit it.
export ASAN_OPTIONS="log_path=$reports/asan:detect_leaks=1:suppressions=$PWD/scripts/sanitizers/asan.supp"
export LSAN_OPTIONS="suppressions=$PWD/scripts/sanitizers/lsan.supp:print_suppressions=0"
export TSAN_OPTIONS="log_path=$reports/tsan:suppressions=$PWD/scripts/sanitizers/tsan.supp:second_deadlock_stack=1"

status=0
echo "== unit tests under $kind sanitizer"
# Leak checking is off for the unit-test process: several tests leave fixtures alive on purpose or
# by a cycle of their own (event loops never shut down, recorders holding their sessions), which
# says nothing about the product. Leaks are checked where they matter: in every pushgate process
# the interop suite runs (below).
ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" \
    $SWIFT test --skip-build --sanitize="$kind" --scratch-path "$scratch" --no-parallel || status=1
echo "== interop suite under $kind sanitizer ($bin/pushgate)"
# The sanitized binary is 2-3x (ASan) or 5-15x (TSan) slower and uses far more memory: the generous
# timeouts of the suite hold, but the tests that measure what a sanitizer changes are left out: the
# bench smoke test (a throughput floor), and the four that bound the process's RSS: the queue-limit
# flood (a 200 MB peak), the gzip bomb (RSS may not jump), the unread client (RSS goes back down
# after) and the doors' 30 clients that do not read (RSS +256 MB: ASan took 297 MB): ASan's shadow
# memory and its quarantine of freed blocks alone go past them.
PUSHGATE_BIN=$bin/pushgate $PY -m pytest -q Tests/interop \
    -k "not bench_smoke and not bounded_memory and not memory_does_not_jump and not memory_goes_back_down \
        and not clients_that_do_not_read" "$@" \
    || status=1

if compgen -G "$reports/*" >/dev/null; then
    echo "== $kind sanitizer reports:"
    for file in "$reports"/*; do
        echo "--- $file"
        cat "$file"
    done
    status=1
else
    echo "== no $kind sanitizer reports"
fi
exit $status
