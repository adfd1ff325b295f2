#!/usr/bin/env bash
# Fails when the committed protoc-c output in Sources/CPushgateProto differs from what proto/ generates.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
scripts/gen-proto.sh "$tmp"
for d in generated include; do
  if ! diff -r "$tmp/$d" "Sources/CPushgateProto/$d" >/dev/null; then
    diff -r "$tmp/$d" "Sources/CPushgateProto/$d" | head -20 >&2
    echo "error: Sources/CPushgateProto is stale; run 'make proto' and commit the result" >&2
    exit 1
  fi
done
echo "protoc-c output is up to date"
