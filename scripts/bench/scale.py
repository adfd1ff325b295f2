#!/usr/bin/env python3
"""`make bench-scale`: a 100,000-subscriber Publish fanned out by 1, 2 and 3 `pushgate serve`
instances sharing one PostgreSQL database (release build), against one `pushgate mock-apns`.

For each instance count, several runs: a fresh database, the subscribers bulk-loaded with
`pushgate load-subscribers`, the instances started, one Publish through the first instance, timed
until GetMessage reports COMPLETED. Writes (or replaces) its own section of BENCHMARKS.md, between
the `bench-scale` markers, and leaves the rest of the file alone.

Needs PUSHGATE_TEST_PG_URL (the Makefile starts a private server with scripts/pg-test-server.sh) and
the venv's grpcio (stubs are generated from proto/ into a temporary directory). Only 127.0.0.1 is
used; every step is bounded in time."""
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.path.join(ROOT, ".build", "release", "pushgate")
BEGIN, END = "<!-- bench-scale:begin -->", "<!-- bench-scale:end -->"
SUBSCRIBERS = int(os.environ.get("SCALE_SUBSCRIBERS", "100000"))
RUNS = int(os.environ.get("SCALE_RUNS", "3"))
# (instances, fan-out workers per instance). The last row is a control: one instance with as many
# workers as three instances have, to tell the gain of more instances from that of more concurrency.
VARIANTS = [(1, 2), (2, 2), (3, 2), (1, 6)]
FANOUT = {"workers": 2, "chunk_size": 5000, "lease_seconds": 30, "poll_ms": 100}


def log(message):
    print("bench-scale: " + message, file=sys.stderr, flush=True)


def psql(url, sql):
    return subprocess.run(["psql", "-qAtX", "-v", "ON_ERROR_STOP=1", url, "-c", sql],
                          check=True, capture_output=True, text=True, timeout=60).stdout.strip()


def stubs(work):
    from grpc_tools import protoc

    include = os.path.join(os.path.dirname(protoc.__file__), "_proto")
    protos = []
    for dirpath, _, files in os.walk(os.path.join(ROOT, "proto", "pushgate")):
        protos += [os.path.relpath(os.path.join(dirpath, f), os.path.join(ROOT, "proto"))
                   for f in files if f.endswith(".proto")]
    out = os.path.join(work, "gen")
    os.makedirs(out)
    assert protoc.main(["protoc", "-I" + os.path.join(ROOT, "proto"), "-I" + include, "--python_out=" + out,
                        "--grpc_python_out=" + out] + sorted(protos)) == 0
    sys.path.insert(0, out)


class Child:
    def __init__(self, name, argv, work, marker):
        self.log_path = os.path.join(work, name + ".log")
        self.proc = subprocess.Popen(argv, stdout=open(self.log_path, "w"), stderr=subprocess.STDOUT)
        deadline = time.time() + 30
        while time.time() < deadline:
            m = re.search(marker, open(self.log_path).read())
            if m:
                self.match = m
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("%s did not start:\n%s" % (name, open(self.log_path).read()))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def publish_and_wait(push, sender, limit_s):
    """One Publish to the topic `bench`, then GetMessage every 5 ms until the fan-out is over or
    `limit_s` has passed: (the last Message, seconds from the call, milliseconds until answered)."""
    from pushgate.v1 import push_pb2

    request = push_pb2.PublishRequest(topic="bench", message_structure="json", message=json.dumps(
        {"default": "Hello from %s" % sender, "APNS": json.dumps({"aps": {"alert": "Hello"}})}))
    started = time.monotonic()
    reply = push.Publish(request, timeout=30)
    accepted_ms = (time.monotonic() - started) * 1000
    deadline = time.time() + limit_s
    while time.time() < deadline:
        message = push.GetMessage(push_pb2.GetMessageRequest(message_id=reply.message_id), timeout=30)
        if message.state in (push_pb2.MESSAGE_STATE_COMPLETED, push_pb2.MESSAGE_STATE_EXPIRED):
            break
        time.sleep(0.005)
    return message, time.monotonic() - started, accepted_ms


def one_run(work, base_url, mock_port, variant, run):
    count, workers = variant
    import grpc
    from pushgate.v1 import push_pb2, push_pb2_grpc

    name = "scale_%s" % os.urandom(5).hex()
    psql(base_url, "CREATE DATABASE %s" % name)
    url = urllib.parse.urlunsplit(urllib.parse.urlsplit(base_url)._replace(path="/" + name))
    servers = []
    try:
        started = time.monotonic()
        subprocess.run([BIN, "load-subscribers", "--store", url, "--topic", "bench", "--app", "bench",
                        "--count", str(SUBSCRIBERS)], check=True, capture_output=True, timeout=600)
        load_s = time.monotonic() - started
        config = {"listen": "127.0.0.1:0", "store": url, "fanout": dict(FANOUT, workers=workers),
                  "apps": [{"name": "bench", "platform": "apns", "bundle_id": "com.example.bench",
                            "team_id": "TEAM123456", "key_id": "KEY1234567",
                            "key_file": os.path.join(work, "AuthKey.p8"),
                            "url": "https://127.0.0.1:%d" % mock_port, "ca_file": os.path.join(work, "mock-ca.pem")}]}
        path = os.path.join(work, "pushgate.json")
        with open(path, "w") as fh:
            json.dump(config, fh)
        for i in range(count):
            servers.append(Child("gateway-%d-%d-%d" % (count, run, i), [BIN, "serve", "--config", path], work,
                                 r"msg=listening address=127\.0\.0\.1:(\d+)"))
        port = int(servers[0].match.group(1))
        with grpc.insecure_channel("127.0.0.1:%d" % port) as channel:
            message, seconds, accepted_ms = publish_and_wait(push_pb2_grpc.PushStub(channel), "bench-scale", 600)
        chunks = int(psql(url, "SELECT count(*) FROM fanout_chunks"))
        ok = message.state == push_pb2.MESSAGE_STATE_COMPLETED and message.delivered == SUBSCRIBERS
        result = {"variant": variant, "run": run, "seconds": seconds, "rate": message.delivered / seconds,
                  "publish_ms": accepted_ms, "delivered": message.delivered, "total": message.total, "ok": ok,
                  "chunks": chunks, "load_s": load_s}
        log("%d instance(s) x %d workers, run %d: %.2f s, %.0f/s, %s" % (
            count, workers, run, seconds, result["rate"], "ok" if ok else "NOT COMPLETE: %s" % message))
        return result
    finally:
        for s in servers:
            s.stop()
        psql(base_url, "DROP DATABASE %s WITH (FORCE)" % name)


def machine():
    cpu = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    pg = subprocess.run(["psql", "-qAtX", os.environ["PUSHGATE_TEST_PG_URL"], "-c", "SHOW server_version"],
                        capture_output=True, text=True).stdout.strip()
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    load = open("/proc/loadavg").read().split()[:3] if os.path.exists("/proc/loadavg") else ["?"] * 3
    return "%s, %d cores, %s; PostgreSQL %s; commit %s; load average at the end %s" % (
        cpu, os.cpu_count(), platform.platform(), pg, commit, " ".join(load))


def section(results, started):
    lines = [BEGIN, "## Scale-out: one Publish, 1–3 instances on one PostgreSQL (`make bench-scale`)", "",
             "Generated by `scripts/bench/scale.py` on %s (%s). Release build." % (
                 started.strftime("%Y-%m-%d %H:%M UTC"), machine()), "",
             "Each run: a fresh database, %s subscribers of one APNs app bulk-loaded (`pushgate load-subscribers`), "
             "N `pushgate serve` processes on it (config `fanout`: %s), one `pushgate mock-apns` (no token "
             "verification), a Publish through the first instance, timed from the call until `GetMessage` says "
             "COMPLETED. %d runs per row; the median run is shown. Everything (PostgreSQL, mock, gateways, this script) shares the same cores, so "
             "the figures show the overhead and the spreading of work more than the gain a machine per "
             "instance would bring." % ("{:,}".format(SUBSCRIBERS), json.dumps(FANOUT), RUNS), "",
             "| Instances | Workers each | Fan-out time (s) | Subscribers/s | Publish answered (ms) | Chunks | All runs (s) |",
             "| ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for variant in VARIANTS:
        rows = sorted([r for r in results if r["variant"] == variant], key=lambda r: r["seconds"])
        if not rows:
            continue
        median = rows[len(rows) // 2]
        lines.append("| %d | %d | %.2f | %s | %.1f | %d | %s |" % (
            variant[0], variant[1], median["seconds"], "{:,}".format(int(median["rate"])), median["publish_ms"], median["chunks"],
            ", ".join("%.2f%s" % (r["seconds"], "" if r["ok"] else " (incomplete)") for r in rows)))
    lines += ["", "The last row is a control: one instance with the workers of three. Each worker keeps 3 pages "
              "of 1,000 in flight, so more instances also mean more requests in flight; the control tells that "
              "gain from the gain of more processes.", "",
              "Load time of %s subscribers into PostgreSQL (bulk loader, batches of 50,000): %.1f s (median)." % (
        "{:,}".format(SUBSCRIBERS), statistics.median(r["load_s"] for r in results)), END]
    return "\n".join(lines) + "\n"


def write(text, begin=BEGIN, end=END):
    """Puts `text` (which starts with `begin` and ends with `end`) into BENCHMARKS.md in place of the
    section between those markers, or at the end when there is none."""
    path = os.path.join(ROOT, "BENCHMARKS.md")
    current = open(path).read() if os.path.exists(path) else "# Benchmarks\n"
    if begin in current and end in current:
        before = current[:current.index(begin)]
        after = current[current.index(end) + len(end):].lstrip("\n")
        current = before + text + ("\n" + after if after else "")
    else:
        current = current.rstrip("\n") + "\n\n" + text
    with open(path, "w") as fh:
        fh.write(current)


def start_mock_apns(work):
    """An APNs signing key (AuthKey.p8) and a `pushgate mock-apns` writing its CA into `work`: (the
    mock's Child, its port), once the CA file is there."""
    subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out",
                    os.path.join(work, "AuthKey.p8")], check=True, capture_output=True)
    mock = Child("mock-apns", [BIN, "mock-apns", "--listen", "127.0.0.1:0", "--write-ca",
                               os.path.join(work, "mock-ca.pem")], work, r"mock-apns listening on 127\.0\.0\.1:(\d+)")
    deadline = time.time() + 10
    while not os.path.exists(os.path.join(work, "mock-ca.pem")) and time.time() < deadline:
        time.sleep(0.05)
    return mock, int(mock.match.group(1))


def main():
    base = os.environ.get("PUSHGATE_TEST_PG_URL")
    if not base:
        sys.exit("bench-scale: PUSHGATE_TEST_PG_URL is not set (run it through `make bench-scale`)")
    started = datetime.datetime.now(datetime.timezone.utc)
    with tempfile.TemporaryDirectory(prefix="pushgate-scale.") as work:
        stubs(work)
        mock, port = start_mock_apns(work)
        try:
            results = [one_run(work, base, port, variant, run) for run in range(RUNS) for variant in VARIANTS]
        finally:
            mock.stop()
    write(section(results, started))
    log("wrote the scale-out section of BENCHMARKS.md")
    if not all(r["ok"] for r in results):
        sys.exit("bench-scale: some runs did not complete")


if __name__ == "__main__":
    main()
