#!/usr/bin/env python3
"""Soak (issue 8): a release `pushgate serve` at a steady rate for SOAK_SECONDS (default 600) against
`pushgate mock-apns` with faults mixed in (a share of 503s, a GOAWAY every N streams per connection),
plus a Publish fan-out every 15 s. Samples the gateway's RSS and open fds (/proc/PID) and the
throughput every SOAK_SAMPLE seconds, fits the RSS slope after warm-up, checks that every token of
every Send got exactly one result, and writes the figures into RELIABILITY.md (between the
`soak:begin` / `soak:end` markers).

Environment: SOAK_SECONDS (600), SOAK_RATE notifications/s (2000), SOAK_SAMPLE seconds (5),
SOAK_503 share (0.02), SOAK_GOAWAY_AFTER streams (25000), PUSHGATE_BIN (.build/release/pushgate).
Exit status 0 when nothing was lost, RSS is flat after warm-up and fds did not grow.
"""
import collections
import datetime
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(ROOT, "Tests", "interop"))
os.environ.setdefault("PUSHGATE_BIN", os.path.join(ROOT, ".build", "release", "pushgate"))

import grpc  # noqa: E402

import conftest  # noqa: E402
from mock_process import MockProcess  # noqa: E402
from pushgate.v1 import push_pb2, push_pb2_grpc, registry_pb2, registry_pb2_grpc  # noqa: E402

SECONDS = int(os.environ.get("SOAK_SECONDS", "600"))
RATE = int(os.environ.get("SOAK_RATE", "2000"))
SAMPLE = float(os.environ.get("SOAK_SAMPLE", "5"))
SHARE_503 = os.environ.get("SOAK_503", "0.02")
GOAWAY_AFTER = os.environ.get("SOAK_GOAWAY_AFTER", "25000")
PER_SEND = 100
MAX_OUTSTANDING = 64
TOKEN_POOL = 5000
SUBSCRIBERS = 200


def proc_figures(pid):
    with open("/proc/%d/status" % pid) as fh:
        rss = int(re.search(r"VmRSS:\s+(\d+) kB", fh.read()).group(1))
    return rss, len(os.listdir("/proc/%d/fd" % pid))


def slope_per_minute(points):
    """Least-squares slope of (seconds, value) points, per minute."""
    n = len(points)
    if n < 2:
        return 0.0
    mean_t = sum(t for t, _ in points) / n
    mean_v = sum(v for _, v in points) / n
    var = sum((t - mean_t) ** 2 for t, _ in points)
    return 60 * sum((t - mean_t) * (v - mean_v) for t, v in points) / var if var else 0.0


class Load:
    def __init__(self, push):
        self.push = push
        self.lock = threading.Lock()
        self.outstanding = 0
        self.sent_tokens = 0
        self.finished_tokens = 0
        self.statuses = collections.Counter()
        self.reasons = collections.Counter()
        self.lost = 0           # tokens without their one result (wrong count or order, or a failed RPC)
        self.rpc_errors = collections.Counter()
        self.skipped = 0        # sends not issued because MAX_OUTSTANDING were in flight
        self.tokens = ["%064x" % (0x50A4 << 200 | i) for i in range(TOKEN_POOL)]
        self.next_token = 0

    def issue(self):
        with self.lock:
            if self.outstanding >= MAX_OUTSTANDING:
                self.skipped += 1
                return
            self.outstanding += 1
            start = self.next_token
            self.next_token = (start + PER_SEND) % TOKEN_POOL
            self.sent_tokens += PER_SEND
        tokens = [self.tokens[(start + i) % TOKEN_POOL] for i in range(PER_SEND)]
        request = push_pb2.SendRequest(notifications=[push_pb2.Notification(
            app="soak", tokens=tokens, alert=push_pb2.Alert(title="soak", body="steady"))])
        future = self.push.Send.future(request, timeout=60)
        future.add_done_callback(lambda f: self.done(f, tokens))

    def done(self, future, tokens):
        with self.lock:
            self.outstanding -= 1
            try:
                results = future.result().results
            except grpc.RpcError as error:
                self.rpc_errors[str(error.code())] += 1
                self.lost += len(tokens)
                return
            if [r.token for r in results] != tokens:
                self.lost += len(tokens)
                return
            self.finished_tokens += len(results)
            for r in results:
                self.statuses[push_pb2.Status.Name(r.status)] += 1
                if r.reason:
                    self.reasons[r.reason.split(":")[0]] += 1


def main():
    workdir = tempfile.mkdtemp(prefix="pushgate-soak.")
    print("soak: %d s at %d notifications/s (%d-token Sends), 503 share %s, GOAWAY every %s streams; %s"
          % (SECONDS, RATE, PER_SEND, SHARE_503, GOAWAY_AFTER, workdir), flush=True)
    mock = MockProcess("mock-apns", os.path.join(workdir, "mock"),
                       ["--fail-503", SHARE_503, "--goaway-after", GOAWAY_AFTER, "--no-json-check"])
    gateway = conftest.Server({"apps": [mock.apns_app("soak")]}, workdir)
    pid = gateway.proc.pid
    channel = grpc.insecure_channel(gateway.address)
    push = push_pb2_grpc.PushStub(channel)
    registry = registry_pb2_grpc.RegistryStub(channel)
    registry.CreateTopic(registry_pb2.CreateTopicRequest(name="soak"), timeout=30)
    for i in range(SUBSCRIBERS):
        endpoint = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(
            app="soak", token="%064x" % (0xF4 << 200 | i)), timeout=30)
        registry.Subscribe(registry_pb2.SubscribeRequest(topic="soak", endpoint_id=endpoint.id), timeout=30)

    load = Load(push)
    published = []
    samples = []
    start = time.time()
    interval = PER_SEND / RATE
    next_send = start
    next_sample = start
    next_publish = start + 15
    last_finished, last_t = 0, start
    while True:
        now = time.time()
        if now - start >= SECONDS:
            break
        if now >= next_sample:
            rss, fds = proc_figures(pid)
            with load.lock:
                finished = load.finished_tokens
            rate = (finished - last_finished) / (now - last_t) if now > last_t else 0
            samples.append((round(now - start, 1), rss, fds, round(rate)))
            last_finished, last_t = finished, now
            next_sample += SAMPLE
            if len(samples) % max(1, int(60 / SAMPLE)) == 1:
                print("soak: t=%4.0fs rss=%6d kB fds=%3d throughput=%6.0f/s" % samples[-1], flush=True)
        if now >= next_publish:
            try:
                reply = push.Publish(push_pb2.PublishRequest(topic="soak", message="soak %d" % len(published)),
                                     timeout=30)
                published.append(reply.message_id)
            except grpc.RpcError as error:
                load.rpc_errors["Publish " + str(error.code())] += 1
            next_publish += 15
        if now >= next_send:
            load.issue()
            next_send += interval
            if next_send < now - 1:   # fell behind by more than a second: do not burst to catch up
                next_send = now
        time.sleep(max(0, min(next_send, next_sample) - time.time()))
    # Drain what is in flight.
    deadline = time.time() + 90
    while time.time() < deadline:
        with load.lock:
            if load.outstanding == 0:
                break
        time.sleep(0.1)
    incomplete = 0
    fanout_counts = collections.Counter()
    for message_id in published:
        for _ in range(600):
            state = push.GetMessage(push_pb2.GetMessageRequest(message_id=message_id), timeout=30)
            if state.state == push_pb2.MESSAGE_STATE_COMPLETED:
                break
            time.sleep(0.1)
        if state.state != push_pb2.MESSAGE_STATE_COMPLETED or \
                state.delivered + state.failed + state.rejected + state.skipped != state.total:
            incomplete += 1
        fanout_counts.update(delivered=state.delivered, failed=state.failed)
    channel.close()
    gateway.stop()
    stats = mock.stop()
    elapsed = time.time() - start

    warmup = min(120, max(30, SECONDS // 4))
    steady = [(t, rss) for t, rss, _, _ in samples if t >= warmup]
    slope = slope_per_minute(steady)
    rss_at_warmup = steady[0][1] if steady else 0
    rss_end = samples[-1][1] if samples else 0
    steady_minutes = (steady[-1][0] - steady[0][0]) / 60 if len(steady) > 1 else 0
    projected = slope * steady_minutes
    flat = projected <= max(4096, 0.05 * rss_at_warmup)
    fds_steady = [fds for t, _, fds, _ in samples if t >= warmup]
    fds_ok = not fds_steady or max(fds_steady) - min(fds_steady) <= 4
    rates = [r for t, _, _, r in samples if t >= warmup]
    with load.lock:
        outstanding = load.outstanding
    lost = load.lost + outstanding * PER_SEND
    ok = lost == 0 and flat and fds_ok and incomplete == 0

    figures = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "seconds": SECONDS, "rate": RATE, "elapsed": round(elapsed), "warmup": warmup,
        "sent": load.sent_tokens, "finished": load.finished_tokens, "lost": lost,
        "statuses": dict(load.statuses), "reasons": dict(load.reasons), "rpc_errors": dict(load.rpc_errors),
        "skipped_sends": load.skipped, "publishes": len(published), "fanout": dict(fanout_counts),
        "fanouts_incomplete": incomplete,
        "rss_start": samples[0][1] if samples else 0, "rss_warmup": rss_at_warmup, "rss_end": rss_end,
        "rss_max": max(s[1] for s in samples) if samples else 0,
        "slope_kb_per_min": round(slope, 1), "projected_kb": round(projected), "flat": flat,
        "fds_min": min(s[2] for s in samples) if samples else 0, "fds_max": max(s[2] for s in samples) if samples else 0,
        "fds_ok": fds_ok,
        "throughput_mean": round(sum(rates) / len(rates)) if rates else 0,
        "throughput_min": min(rates) if rates else 0, "throughput_max": max(rates) if rates else 0,
        "mock": {k: v for k, v in stats.items() if k != "delivered_per_token"},
        "ok": ok,
    }
    write_report(figures, samples)
    print("soak: %s — sent %d, results %d, lost %d; RSS %d → %d kB after warm-up (slope %.1f kB/min, %s); "
          "fds %d–%d; throughput mean %d/s (min %d)"
          % ("OK" if ok else "FAILED", load.sent_tokens, load.finished_tokens, lost, rss_at_warmup, rss_end, slope,
             "flat" if flat else "GROWING", figures["fds_min"], figures["fds_max"], figures["throughput_mean"],
             figures["throughput_min"]), flush=True)
    return 0 if ok else 1


def write_report(f, samples):
    path = os.path.join(ROOT, "RELIABILITY.md")
    text = open(path).read() if os.path.exists(path) else "# Reliability\n\n<!-- soak:begin -->\n<!-- soak:end -->\n"
    every = max(1, int(30 / SAMPLE))
    rows = "\n".join("| %d | %d | %d | %d |" % s for i, s in enumerate(samples) if i % every == 0 or i == len(samples) - 1)
    statuses = ", ".join("%s %d" % kv for kv in sorted(f["statuses"].items()))
    reasons = ", ".join("%s %d" % kv for kv in sorted(f["reasons"].items())) or "none"
    mock = f["mock"]
    section = """<!-- soak:begin -->
Last run: %(date)s, `SOAK_SECONDS=%(seconds)d`, %(rate)d notifications/s offered in 100-token Sends, 503 share
%(share)s and a GOAWAY every %(goaway)s streams per connection at the mock, a Publish to 200 subscribers every 15 s.
Release build, `--loops 2`, on this machine (2 cores, shared with other work). **%(verdict)s.**

| Figure | Value |
| --- | --- |
| notifications sent / with their one result / lost | %(sent)d / %(finished)d / **%(lost)d** |
| results | %(statuses)s (reasons: %(reasons)s) |
| failed RPCs / Sends not issued (64 in flight) | %(rpc_errors)s / %(skipped)d |
| Publish fan-outs (all COMPLETED, counts add up) | %(publishes)d (%(fanout_delivered)d delivered, %(fanout_failed)d failed; %(incomplete)d incomplete) |
| mock: requests, 503s, GOAWAYs, connections | %(m_requests)d, %(m_503)d, %(m_goaways)d, %(m_connections)d |
| RSS at start / after warm-up (%(warmup)d s) / end / max | %(rss_start)d / %(rss_warmup)d / %(rss_end)d / %(rss_max)d kB |
| RSS slope after warm-up | **%(slope).1f kB/min** (%(projected)+d kB over the steady part: %(flat)s) |
| open fds min / max | %(fds_min)d / %(fds_max)d |
| throughput after warm-up, mean / min / max | %(tmean)d / %(tmin)d / %(tmax)d notifications/s |

Samples (every 30 s):

| t (s) | RSS (kB) | fds | notifications/s |
| --- | --- | --- | --- |
%(rows)s
<!-- soak:end -->""" % {
        "date": f["date"], "seconds": f["seconds"], "rate": f["rate"], "share": SHARE_503, "goaway": GOAWAY_AFTER,
        "verdict": "Passed" if f["ok"] else "Failed", "sent": f["sent"], "finished": f["finished"], "lost": f["lost"],
        "statuses": statuses, "reasons": reasons, "rpc_errors": sum(f["rpc_errors"].values()),
        "skipped": f["skipped_sends"], "publishes": f["publishes"],
        "fanout_delivered": f["fanout"].get("delivered", 0), "fanout_failed": f["fanout"].get("failed", 0),
        "incomplete": f["fanouts_incomplete"], "m_requests": mock["requests"],
        "m_503": mock["by_status"].get("503", 0), "m_goaways": mock["goaways_sent"],
        "m_connections": mock["connections_opened"], "warmup": f["warmup"], "rss_start": f["rss_start"],
        "rss_warmup": f["rss_warmup"], "rss_end": f["rss_end"], "rss_max": f["rss_max"],
        "slope": f["slope_kb_per_min"], "projected": f["projected_kb"],
        "flat": "flat" if f["flat"] else "GROWING", "fds_min": f["fds_min"], "fds_max": f["fds_max"],
        "tmean": f["throughput_mean"], "tmin": f["throughput_min"], "tmax": f["throughput_max"], "rows": rows}
    begin, end = text.find("<!-- soak:begin -->"), text.find("<!-- soak:end -->")
    if begin < 0 or end < 0:
        text += "\n" + section + "\n"
    else:
        text = text[:begin] + section + text[end + len("<!-- soak:end -->"):]
    with open(path, "w") as fh:
        fh.write(text)


if __name__ == "__main__":
    sys.exit(main())
