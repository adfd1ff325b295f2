#!/usr/bin/env bash
# Profiles the gateway's Send-batch path (release build): `pushgate bench` with 1,000-token Sends
# and 4 APNs connections, `perf record -g` on the child gateway for 6 s (cpu-clock sampling: this VM
# has no hardware counters), then the top symbols. Output: /tmp/pushgate-profile/.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=/tmp/pushgate-profile
mkdir -p "$out"
.build/release/pushgate bench --duration 12 --connections 4 --concurrency 8 --quiet > "$out/bench.txt" 2>&1 &
bench=$!
sleep 3
gateway=$(pgrep -P "$bench" -f "serve --config")
perf record -F 1999 -g -p "$gateway" -o "$out/perf.data" -- sleep 6
wait "$bench"
cat "$out/bench.txt"
perf report -i "$out/perf.data" --no-children --sort dso --stdio 2>/dev/null | grep -E '^ +[0-9.]+%' | head -8
perf report -i "$out/perf.data" --children --sort symbol --stdio -g none 2>/dev/null | grep -E '^ +[0-9.]+%' \
  | head -60 | swift demangle --simplified | cut -c1-160
