# Shared by the callgrind scripts (sourced, not run): a mock-apns for the gateway under callgrind to
# send to, and the report of a dump.

# Copies $bin into $out (fresh) for valgrind, makes an APNs key and starts `pushgate mock-apns` on a
# free port of 127.0.0.1 outside valgrind; sets mock, mport (and gateway, empty, for the trap).
callgrind_start_mock() {
  rm -rf "$out" && mkdir -p "$out"
  # valgrind 3.19 cannot read Swift 6.3's DWARF 5: a copy without debug info (symbols stay).
  cp "$bin" "$out/pushgate" && strip -g "$out/pushgate"
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$out/AuthKey.p8" 2>/dev/null
  "$out/pushgate" mock-apns --listen 127.0.0.1:0 --write-ca "$out/ca.pem" >"$out/mock.log" 2>&1 &
  mock=$!
  gateway=
  trap 'kill $mock $gateway 2>/dev/null || true' EXIT
  for _ in $(seq 100); do grep -q "wrote the certificate" "$out/mock.log" 2>/dev/null && break; sleep 0.1; done
  mport=$(sed -n 's/.*mock-apns listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$out/mock.log" | head -1)
}

# Dumps the gateway's counts, stops it, and prints the total and the table by library per unit:
#   callgrind_report UNITS "for <what>" "per <unit>" [DIVISOR "per <smaller unit>"]
# (the table is per UNIT)
callgrind_report() {
  local units=$1 what=$2 per=$3 divisor=${4:-} per_small=${5:-}
  callgrind_control -d "$gateway" >/dev/null
  kill -INT "$gateway"; wait "$gateway" || true
  dump=$(ls -S "$out"/callgrind.out.*.1 2>/dev/null | head -1)
  total=$(callgrind_annotate "$dump" 2>/dev/null | sed -n 's/^\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,)
  local line="instructions: $total $what = $((total / units)) $per"
  [ -n "$divisor" ] && line="$line, $((total / units / divisor)) $per_small"
  echo "$line"
  # Every function (the default threshold shows only the top 99 %, i.e. the thread's outer frames).
  callgrind_annotate --threshold=100 --auto=no "$dump" 2>/dev/null | swift demangle --simplified >"$out/annotate.txt"
  python3 scripts/bench/callgrind_by_library.py "$out/annotate.txt" "$units"
  echo "breakdown by function: $out/annotate.txt (inclusive: callgrind_annotate --inclusive=yes --tree=calling $dump)"
}
