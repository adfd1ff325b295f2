#!/usr/bin/env bash
# Builds the libFuzzer targets in Fuzz/ and runs each for FUZZ_SECONDS (default 30) on a copy of its
# checked-in corpus (Fuzz/corpus/<target>), so normal runs never grow the corpus. A crash, sanitizer
# report or broken invariant fails the run; the input is saved as Fuzz/artifacts/<target>-crash-…
# Reproduce one with:  Fuzz/.build/debug/<target> Fuzz/artifacts/<target>-crash-…
#
#   FUZZ_SECONDS=60 scripts/fuzz.sh                 all targets, 60 s each
#   FUZZ_TARGETS="json-payload" scripts/fuzz.sh     some of them
set -uo pipefail
cd "$(dirname "$0")/.."

SWIFT=${SWIFT:-swift}
SECONDS_PER_TARGET=${FUZZ_SECONDS:-30}
TARGETS=${FUZZ_TARGETS:-"grpc-deframer proto-send-request proto-reflection proto-json sns-message filter-policy json-payload grpc-message http1-messages gzip-inflate connect-http1 aws-query-form sigv4-canonical xml-writer"}
# FUZZ_RUNS: stop a target after this many executions instead (make fuzz-long), still bounded by
# FUZZ_SECONDS as a safety limit.
RUNS=${FUZZ_RUNS:-}
# -sanitize=fuzzer instruments the Swift code for coverage and links libFuzzer; the -Xcc flags do the
# same for the C targets (the protoc-c descriptors). -parse-as-library: the targets have no main.swift.
FLAGS=(-c debug -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xcc -fsanitize=fuzzer-no-link,address)

mkdir -p Fuzz/artifacts
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# ld.gold warns about every ASan helper symbol; show the rest.
if ! (cd Fuzz && "$SWIFT" build "${FLAGS[@]}") >"$WORK/build.log" 2>&1; then
    grep -v "Cannot export local symbol" "$WORK/build.log" | tail -n 60 >&2
    echo "fuzz: the build failed" >&2
    exit 1
fi
grep -v "Cannot export local symbol" "$WORK/build.log" | tail -n 1
BIN=$(cd Fuzz && "$SWIFT" build "${FLAGS[@]}" --show-bin-path)
failed=()
for target in $TARGETS; do
    runs=()
    if [[ -n $RUNS ]]; then runs=(-runs="$RUNS"); fi
    echo "== fuzz $target (${RUNS:+$RUNS runs, at most }${SECONDS_PER_TARGET}s)"
    cp -r "Fuzz/corpus/$target" "$WORK/$target"
    # Dictionaries: the JSON tokens for the JSON-based targets, plus the target's own.
    dict=()
    dict_files=()
    case $target in
        grpc-deframer | proto-send-request | proto-reflection | grpc-message | gzip-inflate) ;;
        aws-query-form | sigv4-canonical | xml-writer) ;;
        *) dict_files+=(Fuzz/dict/json.dict) ;;
    esac
    if [[ -f Fuzz/dict/$target.dict ]]; then dict_files+=("Fuzz/dict/$target.dict"); fi
    if [[ ${#dict_files[@]} -gt 0 ]]; then
        cat "${dict_files[@]}" >"$WORK/$target.dict"
        dict=(-dict="$WORK/$target.dict")
    fi
    "$BIN/$target" -max_total_time="$SECONDS_PER_TARGET" "${runs[@]}" -timeout=10 -print_final_stats=1 "${dict[@]}" \
        -artifact_prefix="Fuzz/artifacts/$target-" "$WORK/$target" >"$WORK/$target.log" 2>&1
    status=$?
    grep -E "(INITED|DONE)[[:space:]]+cov|^Done [0-9]+ runs" "$WORK/$target.log"
    if [[ $status -ne 0 ]]; then
        tail -n 40 "$WORK/$target.log"
        failed+=("$target")
    fi
done

if [[ ${#failed[@]} -gt 0 ]]; then
    echo "fuzz: FAILED: ${failed[*]} (inputs in Fuzz/artifacts/)" >&2
    exit 1
fi
echo "fuzz: all targets ran ${RUNS:+$RUNS runs or }${SECONDS_PER_TARGET}s without a crash"
