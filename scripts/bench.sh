#!/usr/bin/env bash
# `make bench`: on a release build, measures the h2load ceiling, the mock's own ceiling, Pushgate
# (pushgate bench) and the aioapns peer side by side against `pushgate mock-apns` on 127.0.0.1,
# and writes the table into BENCHMARKS.md. Every step is bounded in count and time (~30 minutes). PUSHGATE_TEST_PG_URL (the
# Makefile starts a private PostgreSQL) adds the PostgreSQL Publish rows.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .build/release/pushgate ] || { echo "bench.sh: build first (make bench does: make release)"; exit 2; }
[ -x .venv/bin/python ] || { echo "bench.sh: the venv is missing (make bench runs make venv)"; exit 2; }
command -v h2load >/dev/null || { echo "bench.sh: h2load is missing (Debian nghttp2-client; make deps)"; exit 2; }
exec timeout 1900 .venv/bin/python scripts/bench/run_bench.py "$@"
