#!/usr/bin/env bash
# Fails when the committed generated code differs from what proto/ generates (see gen-proto.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
scripts/gen-proto.sh "$tmp"
for d in CPushgateProto/generated CPushgateProto/include PushProto/Generated; do
  if ! diff -r "$tmp/$d" "Sources/$d" >/dev/null; then
    diff -r "$tmp/$d" "Sources/$d" | head -20 >&2
    echo "error: Sources/$d is stale; run 'make proto' and commit the result" >&2
    exit 1
  fi
done
echo "generated protobuf code is up to date"
