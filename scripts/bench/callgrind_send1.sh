#!/usr/bin/env bash
# Gateway instructions per 1-token Send, steady state (callgrind counts are repeatable on a loaded
# machine; wall clock is not). The gateway (`loops: 1`, 1 APNs connection) runs under callgrind
# against a `pushgate mock-apns` outside valgrind; h2load is the gRPC client (h2c, one 1-token
# SendRequest per stream). Collection is zeroed after a warm-up and dumped after COUNT more Sends,
# so the dump holds exactly COUNT Sends and nothing of the start-up.
#   scripts/bench/callgrind_send1.sh [BINARY] [COUNT] [STREAMS] [PATH]
# STREAMS: h2load -m (100: batched turns, as at full speed; 1 with RATE set: one Send per turn).
# PATH: /pushgate.v1.Push/Send (default) or /pushgate.v1.Push/SendStream (one stream per h2load
# request, one message on it). Output: $OUT (default /tmp/pushgate-callgrind/: callgrind.out.*,
# annotate.txt), and a table of the instructions per Send by library
# (scripts/bench/callgrind_by_library.py).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-.build/release/pushgate}
count=${2:-20000}
streams=${3:-100}
path=${4:-/pushgate.v1.Push/Send}
rate=${RATE:-}
# TOKENS: tokens per SendRequest (1 by default; 1000 for the batched rows' A/B).
tokens=${TOKENS:-1}
# HEADER: one more request header field, e.g. 'grpc-timeout: 10S' (a client that sets deadlines).
header=${HEADER:-}
out=${OUT:-/tmp/pushgate-callgrind}
. scripts/bench/callgrind_common.sh
callgrind_start_mock
cat >"$out/pushgate.json" <<EOF
{"listen": "127.0.0.1:0", "loops": 1, "store": "$out/pushgate.db",
 "apps": [{"name": "bench", "platform": "apns", "bundle_id": "com.example.bench", "team_id": "BENCHTEAM1",
   "key_id": "BENCHKEY01", "key_file": "$out/AuthKey.p8", "url": "https://127.0.0.1:$mport",
   "ca_file": "$out/ca.pem", "connections": 1}]}
EOF
# One 1-token SendRequest as `pushgate bench` sends it, gRPC-framed (flag 0, length, message).
python3 - "$out/send1.grpc" "$tokens" <<'EOF'
import struct, sys
def varint(n):
    out = b""
    while n >= 0x80:
        out += bytes([n & 0x7F | 0x80])
        n >>= 7
    return out + bytes([n])
def field(n, b): return bytes([n << 3 | 2]) + varint(len(b)) + b
alert = field(1, b"Bench") + field(3, b"Hello from pushgate bench")
tokens = b"".join(field(2, ("%064x" % (i + 1)).encode()) for i in range(int(sys.argv[2])))
note = field(1, b"bench") + tokens + field(3, alert)
msg = field(1, note)
open(sys.argv[1], "wb").write(b"\0" + struct.pack(">I", len(msg)) + msg)
EOF
valgrind --tool=callgrind --callgrind-out-file="$out/callgrind.out.%p" \
  "$out/pushgate" serve --config "$out/pushgate.json" >"$out/gateway.log" 2>&1 &
gateway=$!
for _ in $(seq 600); do grep -q "msg=listening" "$out/gateway.log" 2>/dev/null && break; sleep 0.1; done
gport=$(sed -n 's/.*msg=listening address=127.0.0.1:\([0-9]*\).*/\1/p' "$out/gateway.log" | head -1)
h2() {
  local n=$1
  local extra=()
  [ -n "$rate" ] && extra=(--rps "$rate")
  [ -n "$header" ] && extra+=(-H "$header")
  h2load -n "$n" -c 1 -m "$streams" -t 1 "${extra[@]}" -d "$out/send1.grpc" \
    -H 'content-type: application/grpc' -H 'te: trailers' "http://127.0.0.1:$gport$path" \
    | grep -E "^finished|^requests:|^status codes:"
}
h2 $((2000 / tokens + 8)) >/dev/null  # warm-up: connections made, caches filled
callgrind_control -z "$gateway" >/dev/null
h2 "$count"
callgrind_report "$count" "for $count Sends of $tokens token(s)" "per Send" "$tokens" "per token"
