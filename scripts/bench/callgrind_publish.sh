#!/usr/bin/env bash
# Gateway instructions per Publish recipient, steady state of a fan-out (callgrind counts are
# repeatable on a loaded machine; wall clock is not). A topic of N subscribers is loaded into a fresh
# SQLite store (`pushgate load-subscribers`); the gateway (its defaults: a loop per core, the app's
# CONNS APNs connections, delivery log off) runs under callgrind against a `pushgate mock-apns`
# outside valgrind. Collection is zeroed just before the Publish (curl, gRPC over h2c) and dumped
# when GetMessage says the fan-out completed, so the dump holds the fan-out and nothing of the
# start-up.
#   scripts/bench/callgrind_publish.sh [BINARY] [SUBSCRIBERS]
# Output: $OUT (default /tmp/pushgate-callgrind-publish/: callgrind.out.*, annotate.txt), and a table
# of the instructions per recipient by library (scripts/bench/callgrind_by_library.py). Compare with
# `TOKENS=1000 scripts/bench/callgrind_send1.sh BIN 100 4` (per token of a batched Send): what the
# fan-out adds on top of the delivery engine.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-.build/release/pushgate}
n=${2:-100000}
out=${OUT:-/tmp/pushgate-callgrind-publish}
conns=${CONNS:-4}
. scripts/bench/callgrind_common.sh
callgrind_start_mock
"$out/pushgate" load-subscribers --store "$out/pushgate.db" --topic bench --app bench --count "$n" >/dev/null
cat >"$out/pushgate.json" <<EOF
{"listen": "127.0.0.1:0", "store": "$out/pushgate.db", "delivery_log": {"enabled": false},
 "apps": [{"name": "bench", "platform": "apns", "bundle_id": "com.example.bench", "team_id": "BENCHTEAM1",
   "key_id": "BENCHKEY01", "key_file": "$out/AuthKey.p8", "url": "https://127.0.0.1:$mport",
   "ca_file": "$out/ca.pem", "connections": $conns}]}
EOF
# gRPC messages by hand (the protobuf wire format, a few fields): the Publish, the GetMessage
# request for its id, and the state and delivered count of the answer.
cat >"$out/messages.py" <<'EOF'
import struct, sys
def varint(n):
    out = b""
    while n >= 0x80:
        out += bytes([n & 0x7F | 0x80]); n >>= 7
    return out + bytes([n])
def field(n, b): return bytes([n << 3 | 2]) + varint(len(b)) + b
def framed(msg): return b"\0" + struct.pack(">I", len(msg)) + msg
def read_varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 0x7F) << s; s += 7
        if c < 0x80: return v, i
def fields(b):
    i = 0
    while i < len(b):
        key, i = read_varint(b, i)
        if key & 7 == 2:
            n, i = read_varint(b, i); yield key >> 3, b[i:i + n]; i += n
        else:
            v, i = read_varint(b, i); yield key >> 3, v
what = sys.argv[1]
if what == "publish":
    message = b'{"default":"Hello from pushgate bench","APNS":"{\\"aps\\":{\\"alert\\":\\"Hello\\"}}"}'
    sys.stdout.buffer.write(framed(field(1, b"bench") + field(3, message) + field(4, b"json")))
elif what == "get":
    answer = dict(fields(open(sys.argv[2], "rb").read()[5:]))
    sys.stdout.buffer.write(framed(field(1, answer[1])))
else:
    answer = dict(fields(open(sys.argv[2], "rb").read()[5:]))
    print(answer.get(2, 0), answer.get(4, 0))
EOF
python3 "$out/messages.py" publish >"$out/publish.grpc"
valgrind --tool=callgrind --callgrind-out-file="$out/callgrind.out.%p" \
  "$out/pushgate" serve --config "$out/pushgate.json" >"$out/gateway.log" 2>&1 &
gateway=$!
for _ in $(seq 600); do grep -q "msg=listening" "$out/gateway.log" 2>/dev/null && break; sleep 0.1; done
gport=$(sed -n 's/.*msg=listening address=127.0.0.1:\([0-9]*\).*/\1/p' "$out/gateway.log" | head -1)
# A moment for the connections to the mock (made at start-up) to settle.
sleep 2
grpc() { curl -s --http2-prior-knowledge -H 'content-type: application/grpc' -H 'te: trailers' --data-binary @"$2" "http://127.0.0.1:$gport/pushgate.v1.Push/$1"; }
callgrind_control -z "$gateway" >/dev/null
grpc Publish "$out/publish.grpc" > "$out/publish.resp"
python3 "$out/messages.py" get "$out/publish.resp" >"$out/get.grpc"
# GetMessage until the fan-out completed (state 3), or an hour.
for _ in $(seq 3600); do
  grpc GetMessage "$out/get.grpc" >"$out/get.resp"
  st=$(python3 "$out/messages.py" state "$out/get.resp")
  set -- $st
  [ "$1" = 3 ] && break
  sleep 1
done
echo "state, delivered: $st"
callgrind_report "$n" "for $n recipients" "per recipient"
