#!/usr/bin/env python3
"""`make bench-scale`'s audience rows (issue 45): one Publish to 1,000,000 subscribers on SQLite and on
PostgreSQL, and with TEN_MILLION=1 to 10,000,000 on SQLite, each on a release build against one
`pushgate mock-apns` over 4 connections. For each: the subscribers loaded by `pushgate
load-subscribers` (50,000 a transaction: its time, its peak RSS, the largest the SQLite WAL grew),
the store's size per subscriber, the gateway's RSS before the Publish and its peak during the
fan-out (sampled every 20 ms), and the fan-out's time from the call until GetMessage says COMPLETED.
Checks: 10M in at most 11x the 1M time of the same run, the gateway's peak RSS within 16 MB of the
1M run's, PostgreSQL at least 0.8x SQLite's rate. Writes its own section of BENCHMARKS.md between
the `bench-audience` markers. Everything is on 127.0.0.1; every step is bounded in time."""
import datetime
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scale  # noqa: E402  (Child, stubs, psql, machine, write, ROOT)

BIN = scale.BIN
BEGIN, END = "<!-- bench-audience:begin -->", "<!-- bench-audience:end -->"


def log(message):
    print("bench-audience: " + message, file=sys.stderr, flush=True)


def rss_kib(pid):
    try:
        for line in open("/proc/%d/status" % pid):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


class Sampler(threading.Thread):
    """The largest value of `read()` every 20 ms until stopped."""

    def __init__(self, read):
        super().__init__(daemon=True)
        self.read, self.peak, self.running = read, 0, True
        self.start()

    def run(self):
        while self.running:
            value = self.read()
            if value is not None:
                self.peak = max(self.peak, value)
            time.sleep(0.02)

    def stop(self):
        self.running = False
        self.join()
        return self.peak


def cpu_seconds(match):
    """User + system CPU seconds of the processes whose /proc/PID/stat names `match` (e.g. "(postgres)"),
    or of one pid."""
    pids = [match] if isinstance(match, int) else [int(p) for p in os.listdir("/proc") if p.isdigit()]
    total = 0
    for pid in pids:
        try:
            stat = open("/proc/%d/stat" % pid).read()
        except OSError:
            continue
        if isinstance(match, str) and match not in stat:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return None


def one(work, mock_port, engine, subscribers, base_url):
    import grpc
    from pushgate.v1 import push_pb2_grpc

    if engine == "sqlite":
        store = os.path.join(work, "audience-%d.db" % subscribers)
        name = None
    else:
        name = "audience_%s" % os.urandom(4).hex()
        scale.psql(base_url, "CREATE DATABASE %s" % name)
        store = urllib.parse.urlunsplit(urllib.parse.urlsplit(base_url)._replace(path="/" + name))
    gateway = None
    try:
        wal = Sampler(lambda: size(store + "-wal")) if engine == "sqlite" else None
        started = time.monotonic()
        loader = subprocess.Popen([BIN, "load-subscribers", "--store", store, "--topic", "bench", "--app", "bench",
                                   "--count", str(subscribers)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        # wait4: this loader's own peak RSS (RUSAGE_CHILDREN is the largest of all children so far).
        _, status, usage = os.wait4(loader.pid, 0)
        loader.returncode = os.waitstatus_to_exitcode(status)
        if loader.returncode != 0:
            raise RuntimeError("load-subscribers failed: %s" % loader.stderr.read().decode(errors="replace"))
        load_s = time.monotonic() - started
        loader_kib = usage.ru_maxrss
        wal_peak = wal.stop() if wal else None
        if engine == "sqlite":
            store_bytes = size(store) + (size(store + "-wal") or 0)
        else:
            store_bytes = int(scale.psql(base_url, "SELECT pg_database_size('%s')" % name))
        config = {"listen": "127.0.0.1:0", "store": store,
                  "apps": [{"name": "bench", "platform": "apns", "bundle_id": "com.example.bench",
                            "team_id": "TEAM123456", "key_id": "KEY1234567", "key_file": os.path.join(work, "AuthKey.p8"),
                            "url": "https://127.0.0.1:%d" % mock_port, "ca_file": os.path.join(work, "mock-ca.pem"),
                            "connections": 4}]}
        path = os.path.join(work, "audience.json")
        with open(path, "w") as fh:
            json.dump(config, fh)
        gateway = scale.Child("gateway-%s-%d" % (engine, subscribers), [BIN, "serve", "--config", path], work,
                              r"msg=listening address=127\.0\.0\.1:(\d+)")
        port = int(gateway.match.group(1))
        with grpc.insecure_channel("127.0.0.1:%d" % port) as channel:
            push = push_pb2_grpc.PushStub(channel)
            time.sleep(0.5)
            rss_before = rss_kib(gateway.proc.pid)
            sampler = Sampler(lambda: rss_kib(gateway.proc.pid))
            gateway_cpu, postgres_cpu = cpu_seconds(gateway.proc.pid), cpu_seconds("(postgres)")
            message, seconds, _ = scale.publish_and_wait(push, "bench-audience", 3600)
            rss_peak = sampler.stop()
            gateway_cpu = cpu_seconds(gateway.proc.pid) - gateway_cpu
            postgres_cpu = cpu_seconds("(postgres)") - postgres_cpu
        result = {"engine": engine, "subscribers": subscribers, "seconds": seconds, "rate": message.delivered / seconds,
                  "delivered": message.delivered, "ok": message.delivered == subscribers, "load_s": load_s,
                  "loader_peak_kib": loader_kib, "wal_peak_bytes": wal_peak,
                  "store_bytes": store_bytes, "rss_before_kib": rss_before, "rss_peak_kib": rss_peak,
                  "gateway_cpu_us": gateway_cpu / subscribers * 1e6,
                  "postgres_cpu_us": postgres_cpu / subscribers * 1e6 if engine == "postgres" else None}
        log("%s %d: load %.1f s, fan-out %.2f s (%.0f/s), gateway RSS %s -> peak %s KiB, store %d bytes, WAL peak %s" % (
            engine, subscribers, load_s, seconds, result["rate"], rss_before, rss_peak, store_bytes, wal_peak))
        return result
    finally:
        try:
            if gateway:
                gateway.stop()
        finally:
            if name:
                scale.psql(base_url, "DROP DATABASE %s WITH (FORCE)" % name)
            else:
                for suffix in ("", "-wal", "-shm"):
                    if os.path.exists(store + suffix):
                        os.remove(store + suffix)


def mib(kib):
    return "-" if kib is None else "%.1f MiB" % (kib / 1024)


def section(results, started, ten):
    rows = ["| Store | Subscribers | Fan-out (s) | Subscribers/s | Gateway RSS before → peak | Store size | "
            "Load (s, rows/s) | Loader peak RSS | Largest WAL | CPU µs a recipient |", "| --- | ---: | ---: | ---: | --- | --- | --- | --- | --- | --- |"]
    for r in results:
        rows.append("| %s | %s | %.2f | %s | %s → %s | %.2f GB (%d bytes a subscriber) | %.1f (%s/s) | %s | %s | %s |" % (
            "SQLite" if r["engine"] == "sqlite" else "PostgreSQL", "{:,}".format(r["subscribers"]), r["seconds"],
            "{:,}".format(int(r["rate"])), mib(r["rss_before_kib"]), mib(r["rss_peak_kib"]), r["store_bytes"] / 1e9,
            r["store_bytes"] // r["subscribers"], r["load_s"], "{:,}".format(int(r["subscribers"] / r["load_s"])),
            mib(r["loader_peak_kib"]), "-" if r["wal_peak_bytes"] is None else "%.1f MB" % (r["wal_peak_bytes"] / 1e6),
            "gateway %.2f%s" % (r["gateway_cpu_us"], "" if r["postgres_cpu_us"] is None else
                                ", PostgreSQL %.2f" % r["postgres_cpu_us"])))
    by = {(r["engine"], r["subscribers"]): r for r in results}
    checks = []
    one_sqlite, one_pg, ten_sqlite = by.get(("sqlite", 1000000)), by.get(("postgres", 1000000)), by.get(("sqlite", 10000000))
    if one_sqlite and one_pg:
        ratio = one_pg["rate"] / one_sqlite["rate"]
        checks.append("- PostgreSQL / SQLite at 1M: %.2f× (target ≥ 0.8×): **%s**" % (ratio, "met" if ratio >= 0.8 else "missed"))
    if one_sqlite and ten_sqlite:
        ratio = ten_sqlite["seconds"] / one_sqlite["seconds"]
        growth = (ten_sqlite["rss_peak_kib"] - one_sqlite["rss_peak_kib"]) / 1024
        checks.append("- 10M / 1M fan-out time: %.2f× (target ≤ 11×): **%s**" % (ratio, "met" if ratio <= 11 else "missed"))
        checks.append("- gateway peak RSS, 10M − 1M: %+.1f MiB (target within 16 MB): **%s**" % (
            growth, "met" if abs(growth) * 1.048576 <= 16 else "missed"))
    text = [BEGIN, "## Audience scale: one Publish to 1M (and 10M) subscribers (`make bench-scale`)", "",
            "Generated by `scripts/bench/audience_scale.py` on %s (%s). Release build; one `pushgate mock-apns` "
            "(no token verification), the gateway with 4 APNs connections and the default `fanout` settings; "
            "subscribers loaded by `pushgate load-subscribers` (50,000 a transaction) before the gateway starts; "
            "the fan-out timed from the Publish call until `GetMessage` says COMPLETED; RSS sampled every 20 ms; CPU: "
            "the processes' user + system time during the fan-out over the subscribers (the mock's is not counted). "
            "%s" % (started.strftime("%Y-%m-%d %H:%M UTC"), scale.machine(),
                    "The 10M row: `make bench-scale TEN_MILLION=1`." if ten else
                    "The 10M row is opt-in (`make bench-scale TEN_MILLION=1`, ~5 minutes more); see docs/scaling.md for the last one measured."),
            ""] + rows + [""] + checks + [END]
    return "\n".join(text) + "\n"


def main():
    base = os.environ.get("PUSHGATE_TEST_PG_URL")
    if not base:
        sys.exit("bench-audience: PUSHGATE_TEST_PG_URL is not set (run it through `make bench-scale`)")
    ten = os.environ.get("TEN_MILLION") == "1"
    started = datetime.datetime.now(datetime.timezone.utc)
    with tempfile.TemporaryDirectory(prefix="pushgate-audience.") as work:
        scale.stubs(work)
        mock, port = scale.start_mock_apns(work)
        try:
            runs = [("sqlite", 1000000), ("postgres", 1000000)] + ([("sqlite", 10000000)] if ten else [])
            results = [one(work, port, engine, count, base) for engine, count in runs]
        finally:
            mock.stop()
    scale.write(section(results, started, ten), BEGIN, END)
    log("wrote the audience section of BENCHMARKS.md")
    if not all(r["ok"] for r in results):
        sys.exit("bench-audience: some fan-outs did not complete")


if __name__ == "__main__":
    main()
