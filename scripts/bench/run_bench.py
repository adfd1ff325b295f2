#!/usr/bin/env python3
"""`make bench` (through scripts/bench.sh): one run that measures, side by side on this machine,

  ceiling   h2load straight to pushgate mock-apns over TLS (the mock handles at least that)
  Pushgate  `pushgate bench` rows (Send batches with 1 and 4 APNs connections, SendStream, 1-token
            Sends at a fixed rate, the mock delaying 20 ms, memory, a flood past queue_limit)
  peer      aioapns (Python) to the same mock with one connection
  FCM       the same against `pushgate mock-fcm`: h2load's ceiling (with an OAuth2 access token the
            script gets from the mock's token endpoint) and Pushgate Send batches with 1 and 4
            FCM connections (`pushgate bench --provider fcm`)
  HTTP/1.1  ADM against `pushgate mock-adm` (HTTP/1.1, as Amazon) and FCM against `mock-fcm --http1`:
            the ceiling of `h2load --h1` with 4 connections and one request in flight on each (as the
            gateway: no pipelining), and Pushgate Send batches over 4 connections
  Audience  issue 45 (audience_bench.py): the 1M Publish on PostgreSQL; pushgate import of 1M rows,
            its bad rows, a kill -9 and a re-run
  SNS       the SNS API (issue 39, sns_bench.py): a Publish to N subscribers through it and through
            gRPC on one gateway, and PublishBatch / Publish throughput with h2load

and writes BENCHMARKS.md: the machine, date, commit, the exact commands, what they printed, ratios
and the issue's targets marked met / missed. The mock runs WITHOUT provider-token verification for
every row (equal for all; every client still sends a real ES256 JWT in `authorization`).
Only 127.0.0.1 is used; every step is bounded in count and time."""
import argparse
import base64
import datetime
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import tempfile
import time

import audience_bench
import sns_bench

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.path.join(ROOT, ".build", "release", "pushgate")
TOPIC = "com.example.bench"
TOKEN = "b" * 63 + "0"
# The payload the gateway builds for the bench notification (title + body), byte for byte.
PAYLOAD = '{"aps":{"alert":{"title":"Bench","body":"Hello from pushgate bench"}}}'
# FCM: the messages:send body the gateway builds for `pushgate bench --provider fcm`'s notification
# (title, body, data {"bench":"1"}) with its first token, byte for byte (FCMMessageBuilder's order).
FCM_TOKEN = "bench-0:APA91b" + ("Bq3xK9_mZ-7vLw2cT8nRj4Yh0dEsUa5o" * 5)[:152 - len("bench-0:APA91b")]
FCM_BODY = ('{"message":{"token":"%s","notification":{"title":"Bench","body":"Hello from pushgate bench"},'
            '"data":{"bench":"1"},"android":{"priority":"HIGH"},"apns":{"headers":{"apns-priority":"10"}}}}' % FCM_TOKEN)
FCM_SCOPE = "https://www.googleapis.com/auth/firebase.messaging"
# ADM: `pushgate bench --provider adm`'s first registration id (700 bytes, as real v3 ids) and the
# body the gateway builds for its notification (ADMMessageBuilder: alert fields and data as data).
ADM_TOKEN = ("amzn1.adm-registration.v3.bench-0." + "Y29tLmFtYXpvbi5EZXZpY2VNZXNzYWdpbmcuUmVnaXN0cmF0aW9uSWRFbmNyeXB0aW9uS2V5" * 10)[:700]
ADM_BODY = '{"data":{"title":"Bench","body":"Hello from pushgate bench","bench":"1"}}'
ADM_CLIENT_ID = "amzn1.application-oa2-client.bench"
# Huawei Push Kit v3: `pushgate bench --provider hms`'s first push token (130 bytes) and the body the
# gateway builds for its notification (HMSMessageBuilder: the alert in payload.notification, the data
# as clickAction.data).
HMS_TOKEN = ("MAMzLg0_" + "Y29tLmFtYXpvbi5EZXZpY2VNZXNzYWdpbmcuUmVnaXN0cmF0aW9uSWRFbmNyeXB0aW9uS2V5" * 10)[:130]
HMS_BODY = ('{"target":{"token":["%s"]},"payload":{"notification":{"category":"MARKETING","title":"Bench",'
            '"body":"Hello from pushgate bench","clickAction":{"actionType":0,"data":{"bench":"1"}}}}}' % HMS_TOKEN)


def rel(path):
    return os.path.relpath(path, ROOT) if path.startswith(ROOT) else path


class Runner:
    def __init__(self, work, quick):
        self.work = work
        self.quick = quick
        self.commands = []  # (label, command line as shown)
        self.outputs = {}

    def run(self, label, argv, timeout):
        shown = " ".join(shlex.quote(rel(a)) if a.startswith(ROOT) else shlex.quote(a) for a in argv)
        self.commands.append((label, shown))
        print("bench: %s: %s" % (label, shown), file=sys.stderr, flush=True)
        started = time.monotonic()
        proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
        took = time.monotonic() - started
        with open(os.path.join(self.work, label + ".out"), "w") as fh:
            fh.write(proc.stdout + "\n--- stderr ---\n" + proc.stderr)
        print("bench: %s: done in %.1f s (exit %d)" % (label, took, proc.returncode), file=sys.stderr, flush=True)
        self.outputs[label] = proc
        return proc

    def bench(self, label, args, timeout=120):
        proc = self.run(label, [BIN, "bench", "--json", "--quiet"] + args, timeout)
        try:
            return json.loads(proc.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            print(proc.stdout + proc.stderr, file=sys.stderr)
            return None


def median(values):
    """The median of a non-empty list (the mean of the middle two for an even count)."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def median_of(count, run, key):
    """Runs `run` `count` times; returns the result whose `key` is the median, with the keys of
    all runs (in run order) under "runs". Failed runs (None, or no key) count as missing."""
    results = [run() for _ in range(count)]
    valid = [d for d in results if d is not None and key(d) is not None]
    if not valid:
        return results[-1]
    ordered = sorted(valid, key=key)
    chosen = ordered[(len(ordered) - 1) // 2]
    copies = [dict(d) if d is not None else None for d in results]  # no cycle through `chosen`
    chosen["runs"] = [key(d) if d is not None and key(d) is not None else None for d in results]
    chosen["run_results"] = copies
    return chosen


def stall_fraction(d):
    probe = (d or {}).get("stall_probe") or {}
    return probe.get("slow_fraction")


def stall_note(d):
    """The machine stall probe of a --rate run (and of each of its repeats): how often a fixed
    piece of work took over 5x its median, i.e. how often the machine itself stalled."""
    probe = (d or {}).get("stall_probe")
    if not probe:
        return "no stall probe"
    text = "machine stall probe (fixed work every ms): p50 %s µs, p99 %s µs, max %s µs, over 5× the median %s%% of the time" % (
        fmt(probe.get("p50_us")), fmt(probe.get("p99_us")), fmt(probe.get("max_us")),
        fmt(100 * (stall_fraction(d) or 0), 2))
    runs = d.get("run_results") or []
    if len(runs) > 1:
        text += " (each run, p99 ms / p99 ms outside stalls / stalled %%: %s)" % ", ".join(
            "failed" if r is None else "%s / %s / %s" % (
                fmt(g(r, "latency_ms", "p99"), 2), fmt(g(r, "latency_outside_stalls_ms", "p99"), 2),
                fmt(100 * (stall_fraction(r) or 0), 2))
            for r in runs)
    return text


def outside_stalls_note(d):
    """The latency of the RPCs that were in flight at no moment the stall probe saw the machine
    stalled, and how many were (the target is judged on all RPCs; this says where the tail is)."""
    clean = (d or {}).get("latency_outside_stalls_ms")
    if not clean:
        return ""
    total = (clean.get("samples") or 0) + (clean.get("in_stalls") or 0)
    return "; the %s RPCs in flight at no moment the machine stalled: p50 %s ms, p99 %s ms, p999 %s ms (%s%% of RPCs met a stall)" % (
        fmt(clean.get("samples")), fmt(clean.get("p50"), 3), fmt(clean.get("p99"), 3), fmt(clean.get("p999"), 3),
        fmt(100.0 * (clean.get("in_stalls") or 0) / total if total else None, 1))


def provider_note(d):
    """The gateway's own provider-request latency over the run (its metrics histogram): the share of
    an RPC's latency spent on the round trip to the mock."""
    p = (d or {}).get("provider_request_ms")
    if not p:
        return ""
    return "; provider requests (gateway histogram): mean %s ms, p50 ~%s ms, p99 ~%s ms" % (
        fmt(p.get("mean"), 3), fmt(p.get("p50"), 3), fmt(p.get("p99"), 2))


def runs_note(d, digits=0):
    """'median of 3 runs: a, b, c' for a row chosen by median_of, else ''."""
    values = (d or {}).get("runs") or []
    if len(values) < 2:
        return ""
    return "median of %d runs: %s" % (len(values), ", ".join("failed" if v is None else fmt(v, digits) for v in values))


def parse_h2load(text):
    out = {}
    m = re.search(r"finished in ([\d.]+)(ms|s), ([\d.]+) req/s", text)
    if m:
        out["elapsed_s"] = float(m.group(1)) / (1000 if m.group(2) == "ms" else 1)
        out["rps"] = float(m.group(3))
    m = re.search(r"requests: (\d+) total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed", text)
    if m:
        out["total"], out["done"], out["succeeded"], out["failed"] = map(int, m.groups())
    m = re.search(r"status codes: (\d+) 2xx", text)
    if m:
        out["2xx"] = int(m.group(1))
    m = re.search(r"time for request:\s+(\S+)\s+(\S+)\s+(\S+)", text)
    if m:
        out["request_min"], out["request_max"], out["request_mean"] = m.groups()
    return out


def machine():
    model = "unknown"
    with open("/proc/cpuinfo") as fh:
        for line in fh:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as fh:
        mem_kib = int(fh.readline().split()[1])
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True,
                           text=True).stdout.strip()
    swift = subprocess.run(["swift", "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    h2load = subprocess.run(["h2load", "--version"], capture_output=True, text=True).stdout.strip()
    return {"nproc": os.cpu_count(), "cpu": model, "mem_gib": round(mem_kib / 1024 / 1024, 1),
            "kernel": platform.release(), "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "commit": commit + (" (with uncommitted changes)" if dirty else ""),
            "swift": swift[0] if swift else "?", "h2load": h2load}


def load_average():
    """The 1-, 5- and 15-minute load averages (/proc/loadavg): other work on this 2-core machine."""
    with open("/proc/loadavg") as fh:
        return " ".join(fh.read().split()[:3])


def start_mock(work, name, extra=(), kind="mock-apns"):
    log = open(os.path.join(work, name + ".log"), "w")
    ca = os.path.join(work, name + "-ca.pem")
    proc = subprocess.Popen([BIN, kind, "--listen", "127.0.0.1:0", "--write-ca", ca] + list(extra),
                            stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 20
    port = None
    while time.time() < deadline and port is None:
        time.sleep(0.05)
        with open(log.name) as fh:
            text = fh.read()
        m = re.search(kind + r" listening on 127\.0\.0\.1:(\d+)", text)
        # mock-fcm writes its service account just after it says it listens: wait for that too.
        account_written = "--write-service-account" not in extra or "wrote the service account" in text
        if m and "wrote the certificate" in text and account_written:
            port = int(m.group(1))
    if port is None:
        proc.kill()
        raise SystemExit("bench: %s did not start:\n%s" % (kind, open(log.name).read()))
    return proc, port, ca


def fcm_access_token(work, account_path):
    """An access token from mock-fcm's token endpoint, the way a Google client gets one: an RS256
    assertion signed with the service account's key, exchanged with `nghttp` (this mock speaks
    HTTP/2 only). h2load then sends it as `authorization: Bearer …` on every request."""
    import urllib.parse

    token_uri, fields = fcm_assertion_form(account_path)
    form = os.path.join(work, "token-form.txt")
    with open(form, "w") as fh:
        fh.write(urllib.parse.urlencode(fields))
    proc = subprocess.run(["nghttp", "-H", "content-type: application/x-www-form-urlencoded", "-d", form,
                           token_uri], capture_output=True, text=True, timeout=30)
    try:
        return json.loads(proc.stdout)["access_token"]
    except (ValueError, KeyError):
        raise SystemExit("bench: no access token from %s: %s %s" % (token_uri, proc.stdout, proc.stderr))


def post_form_http1(url, ca, form):
    """POSTs a form over HTTPS with HTTP/1.1 (urllib) and returns the JSON answer's access_token."""
    import ssl
    import urllib.parse
    import urllib.request

    context = ssl.create_default_context(cafile=ca)
    request = urllib.request.Request(url, data=urllib.parse.urlencode(form).encode(),
                                     headers={"content-type": "application/x-www-form-urlencoded"})
    with urllib.request.urlopen(request, context=context, timeout=30) as answer:
        return json.loads(answer.read())["access_token"]


def fcm_assertion_form(account_path):
    import jwt  # PyJWT + cryptography (scripts/requirements.txt)

    with open(account_path) as fh:
        account = json.load(fh)
    now = int(time.time())
    assertion = jwt.encode({"iss": account["client_email"], "scope": FCM_SCOPE, "aud": account["token_uri"],
                            "iat": now, "exp": now + 3600}, account["private_key"], algorithm="RS256",
                           headers={"kid": account.get("private_key_id", "")})
    return account["token_uri"], {"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": assertion}


def h1_ceiling(r, label, n, url, body_path, headers, secret, runs):
    """`h2load --h1`, 4 connections, one request in flight on each (the gateway's HTTP/1.1 way); the
    median of `runs` runs, as the HTTP/2 ceilings: one run of these swung from ~30k to ~46k/s
    between make bench runs while the gateway's row held at ~31k."""
    argv = ["h2load", "--h1", "-n", n, "-c", "4", "-m", "1", "-t", "2", "-d", body_path]
    for header in headers:
        argv += ["-H", header]

    def one_run():
        proc = r.run(label, argv + [url], timeout=120)
        r.commands[-1] = (label, r.commands[-1][1].replace(secret, "$ACCESS_TOKEN"))
        return parse_h2load(proc.stdout)
    return median_of(runs, one_run, lambda d: d.get("rps"))


def stop(proc):
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def webpush_request(work, port, ca):
    """One subscription from mock-webpush's door, a body encrypted for it with http_ece and a
    VAPID Authorization signed with PyJWT (both from PyPI, not Pushgate's code): what h2load posts."""
    import ssl
    import urllib.request

    import http_ece
    import jwt
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    origin = "127.0.0.1:%d" % port
    request = urllib.request.Request("https://%s/_mock/subscriptions" % origin, method="POST",
                                     data=json.dumps({"count": 1, "host": origin}).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, context=ssl.create_default_context(cafile=ca), timeout=10) as response:
        [subscription] = json.load(response)

    def b64url(text):
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))

    receiver = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), b64url(subscription["keys"]["p256dh"]))
    body = http_ece.encrypt(b'{"title":"Bench","body":"Hello from pushgate bench","data":{"bench":"1"}}',
                            private_key=ec.generate_private_key(ec.SECP256R1()), dh=receiver,
                            auth_secret=b64url(subscription["keys"]["auth"]), version="aes128gcm")
    body_path = os.path.join(work, "webpush-body.bin")
    with open(body_path, "wb") as fh:
        fh.write(body)
    vapid = ec.generate_private_key(ec.SECP256R1())
    pem = vapid.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption())
    token = jwt.encode({"aud": "https://" + origin, "exp": int(time.time()) + 12 * 3600,
                        "sub": "mailto:bench@example.com"}, pem, algorithm="ES256")
    key = base64.urlsafe_b64encode(vapid.public_key().public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)).rstrip(b"=").decode()
    return subscription["endpoint"], body_path, "vapid t=%s, k=%s" % (token, key)


def grpcio_row(r, work, url, ca, p8, seconds):
    """A gateway (default loops, 2 APNs connections) with grpcio's asyncio client sending 1-token
    Sends, 1,000 in flight on one channel (scripts/bench/grpcio_send1.py)."""
    config = os.path.join(work, "grpcio-gateway.json")
    with open(config, "w") as fh:
        json.dump({"listen": "127.0.0.1:0", "store": os.path.join(work, "grpcio-gateway.db"),
                   "apps": [{"name": "bench", "platform": "apns", "bundle_id": TOPIC, "team_id": "BENCHTEAM1",
                             "key_id": "BENCHKEY01", "key_file": p8, "url": url, "ca_file": ca,
                             "connections": 2}]}, fh)
    log = open(os.path.join(work, "grpcio-gateway.log"), "w+")
    gateway = subprocess.Popen([BIN, "serve", "--config", config], stdout=log, stderr=subprocess.STDOUT)
    try:
        port = None
        for _ in range(200):
            log.seek(0)
            found = re.search(r"msg=listening address=127\.0\.0\.1:(\d+)", log.read())
            if found:
                port = found.group(1)
                break
            time.sleep(0.05)
        if port is None:
            return None
        proc = r.run("grpcio-send-1token", [os.path.join(ROOT, ".venv", "bin", "python"),
                                            os.path.join(ROOT, "scripts", "bench", "grpcio_send1.py"),
                                            "--target", "127.0.0.1:" + port, "--app", "bench",
                                            "--concurrency", "1000", "--duration", seconds], timeout=120)
        try:
            return json.loads(proc.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return None
    finally:
        stop(gateway)
        log.close()


def make_jwt(p8, key_id, team_id):
    import jwt  # PyJWT, pinned in scripts/requirements.txt (aioapns uses it too)

    with open(p8) as fh:
        key = fh.read()
    return jwt.encode({"iss": team_id, "iat": int(time.time())}, key, algorithm="ES256", headers={"kid": key_id})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="short runs, to check the script itself")
    parser.add_argument("--output", default=os.path.join(ROOT, "BENCHMARKS.md"))
    args = parser.parse_args()
    quick = args.quick
    seconds = "3" if quick else "10"
    # The rows the throughput and latency targets are judged on run this many times and report
    # the median (the other runs in the row's notes): on a shared 2-core VM one 10-second run of
    # the same binary swings by ±25 % from one minute to the next.
    runs = 1 if quick else 3
    # A release binary whose malloc is not mimalloc's (a link order that puts libc first) measures
    # glibc's allocator instead of the product's: refuse it rather than write its figures.
    version = subprocess.run([BIN, "version"], capture_output=True, text=True, check=True).stdout
    if "allocator: mimalloc" not in version:
        sys.exit("run_bench.py: %s does not use mimalloc (pushgate version: %s)" % (BIN, version.strip()))
    work = tempfile.mkdtemp(prefix="pushgate-benchmarks.")
    r = Runner(work, quick)
    info = machine()
    info["load_start"] = load_average()

    p8 = os.path.join(work, "AuthKey.p8")
    subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", p8],
                   check=True, capture_output=True)
    with open(os.path.join(work, "payload.json"), "w") as fh:
        fh.write(PAYLOAD)
    token = make_jwt(p8, "BENCHKEY01", "BENCHTEAM1")

    results = {}
    mock, port, ca = start_mock(work, "mock")
    url = "https://127.0.0.1:%d" % port
    try:
        n = "100000" if quick else "400000"
        for conns in (1, 4):
            label = "ceiling-h2load-c%d" % conns
            argv = ["h2load", "-n", n, "-c", str(conns), "-m", "1000", "-t", str(min(conns, 2)),
                    "-d", os.path.join(work, "payload.json"), "-H", "apns-topic: " + TOPIC,
                    "-H", "apns-push-type: alert", "-H", "authorization: bearer " + token,
                    url + "/3/device/" + TOKEN]

            def ceiling_run(label=label, argv=argv):
                proc = r.run(label, argv, timeout=120)
                # The JWT is not worth printing in the commands list.
                r.commands[-1] = (label, r.commands[-1][1].replace(token, "$JWT"))
                return parse_h2load(proc.stdout)
            results[label] = median_of(runs, ceiling_run, lambda d: d.get("rps"))

        common = ["--apns", url, "--apns-ca", ca, "--tokens-per-send", "1000", "--duration", seconds]
        results["send-1conn"] = median_of(runs, lambda: r.bench(
            "pushgate-send-1000-1conn", common + ["--connections", "1", "--concurrency", "4"]),
            lambda d: d.get("notifications_per_s"))
        results["send-4conn"] = median_of(runs, lambda: r.bench(
            "pushgate-send-1000-4conn", common + ["--connections", "4", "--concurrency", "8"]),
            lambda d: d.get("notifications_per_s"))
        results["stream"] = r.bench("pushgate-sendstream", common + ["--connections", "4", "--mode", "stream",
                                                                     "--concurrency", "2", "--pipeline", "4"])
        results["rate1000"] = median_of(runs, lambda: r.bench(
            "pushgate-send-1token-1000rps",
            ["--apns", url, "--apns-ca", ca, "--tokens-per-send", "1", "--rate", "1000",
             "--duration", seconds, "--connections", "1", "--grpc-connections", "1"]),
            lambda d: (d.get("latency_ms") or {}).get("p99"))
        # 1-token Sends at full speed (issue 20), on the gateway's default loops: h2load as the gRPC
        # client (C, nothing of Pushgate's on the client side), then Pushgate's own client for Send
        # and SendStream with as many requests outstanding, then a stock client (grpcio).
        for grpc_conns in (1, 4):
            for apns_conns in (1, 2):
                label = "send1-h2load-c%d-apns%d" % (grpc_conns, apns_conns)
                results[label] = r.bench(label, [
                    "--apns", url, "--apns-ca", ca, "--client", "h2load", "--tokens-per-send", "1",
                    "--grpc-connections", str(grpc_conns), "--concurrency", "100", "--connections", str(apns_conns),
                    "--duration", seconds])
        results["stream1-h2load-c4"] = r.bench("sendstream1-h2load-c4-apns2", [
            "--apns", url, "--apns-ca", ca, "--client", "h2load", "--mode", "stream", "--tokens-per-send", "1",
            "--grpc-connections", "4", "--concurrency", "100", "--connections", "2", "--duration", seconds])
        results["send1-builtin"] = r.bench("pushgate-send-1token-64", [
            "--apns", url, "--apns-ca", ca, "--tokens-per-send", "1", "--concurrency", "64", "--grpc-connections", "4",
            "--connections", "2", "--duration", seconds])
        results["stream1-builtin"] = r.bench("pushgate-sendstream-1token-4x16", [
            "--apns", url, "--apns-ca", ca, "--mode", "stream", "--tokens-per-send", "1", "--concurrency", "4",
            "--pipeline", "16", "--connections", "2", "--duration", seconds])
        results["grpcio"] = grpcio_row(r, work, url, ca, p8, seconds)
        peer_count = "5000" if quick else "20000"
        proc = r.run("peer-aioapns", [os.path.join(ROOT, ".venv", "bin", "python"),
                                      os.path.join(ROOT, "scripts", "bench", "aioapns_peer.py"),
                                      "--port", str(port), "--ca", ca, "--p8", p8, "--count", peer_count,
                                      "--concurrency", "1000", "--max-connections", "1", "--duration", "60"],
                     timeout=120)
        try:
            results["peer"] = json.loads(proc.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            results["peer"] = None
    finally:
        stop(mock)
    with open(os.path.join(work, "mock.log")) as fh:
        finals = [l for l in fh if "final stats" in l]
    results["shared_mock_final"] = finals[-1].strip() if finals else ""

    # FCM: one mock-fcm (MAX_CONCURRENT_STREAMS 100, FCM's) for the ceiling and the Send rows.
    account = os.path.join(work, "fcm-service-account.json")
    fcm_mock, fcm_port, fcm_ca = start_mock(work, "mock-fcm", ["--write-service-account", account], kind="mock-fcm")
    fcm_url = "https://127.0.0.1:%d" % fcm_port
    try:
        with open(account) as fh:
            project = json.load(fh)["project_id"]
        with open(os.path.join(work, "fcm-body.json"), "w") as fh:
            fh.write(FCM_BODY)
        bearer = fcm_access_token(work, account)
        n = "100000" if quick else "400000"
        for conns in (1, 4):
            label = "fcm-ceiling-h2load-c%d" % conns
            argv = ["h2load", "-n", n, "-c", str(conns), "-m", "100", "-t", str(min(conns, 2)),
                    "-d", os.path.join(work, "fcm-body.json"), "-H", "content-type: application/json; charset=UTF-8",
                    "-H", "authorization: Bearer " + bearer,
                    fcm_url + "/v1/projects/%s/messages:send" % project]
            proc = r.run(label, argv, timeout=120)
            r.commands[-1] = (label, r.commands[-1][1].replace(bearer, "$ACCESS_TOKEN"))
            results[label] = parse_h2load(proc.stdout)
        fcm_common = ["--provider", "fcm", "--fcm", fcm_url, "--fcm-ca", fcm_ca, "--service-account", account,
                      "--tokens-per-send", "1000", "--duration", seconds]
        results["fcm-send-1conn"] = r.bench("pushgate-fcm-send-1000-1conn",
                                            fcm_common + ["--connections", "1", "--concurrency", "4"])
        results["fcm-send-4conn"] = r.bench("pushgate-fcm-send-1000-4conn",
                                            fcm_common + ["--connections", "4", "--concurrency", "8"])
    finally:
        stop(fcm_mock)
    with open(os.path.join(work, "mock-fcm.log")) as fh:
        finals = [l for l in fh if "final stats" in l]
    results["fcm_mock_final"] = finals[-1].strip() if finals else ""

    # HTTP/1.1: ADM against mock-adm (HTTP/1.1 by default, as Amazon), then FCM against mock-fcm --http1.
    n1 = "50000" if quick else "200000"
    secret_file = os.path.join(work, "adm-client-secret")
    adm_mock, adm_port, adm_ca = start_mock(work, "mock-adm", ["--client-id", ADM_CLIENT_ID,
                                                               "--write-client-secret", secret_file], kind="mock-adm")
    adm_url = "https://127.0.0.1:%d" % adm_port
    try:
        with open(secret_file) as fh:
            secret = fh.read().strip()
        bearer = post_form_http1(adm_url + "/auth/o2/token", adm_ca, {
            "grant_type": "client_credentials", "scope": "messaging:push", "client_id": ADM_CLIENT_ID,
            "client_secret": secret})
        body = os.path.join(work, "adm-body.json")
        with open(body, "w") as fh:
            fh.write(ADM_BODY)
        results["adm-ceiling-h1-c4"] = h1_ceiling(
            r, "adm-ceiling-h2load-h1-c4", n1, adm_url + "/messaging/registrations/%s/messages" % ADM_TOKEN, body,
            ["content-type: application/json", "accept: application/json",
             "x-amzn-type-version: com.amazon.device.messaging.ADMMessage@1.0",
             "x-amzn-accept-type: com.amazon.device.messaging.ADMSendResult@1.0", "authorization: Bearer " + bearer],
            bearer, runs)
        results["adm-send-4conn"] = r.bench("pushgate-adm-send-1000-4conn-http1", [
            "--provider", "adm", "--adm", adm_url, "--adm-ca", adm_ca, "--adm-client-id", ADM_CLIENT_ID,
            "--adm-client-secret-file", secret_file, "--tokens-per-send", "1000", "--duration", seconds,
            "--connections", "4", "--concurrency", "8"])
    finally:
        stop(adm_mock)
    account = os.path.join(work, "fcm1-service-account.json")
    fcm1_mock, fcm1_port, fcm1_ca = start_mock(work, "mock-fcm-http1", ["--http1", "--write-service-account", account],
                                               kind="mock-fcm")
    fcm1_url = "https://127.0.0.1:%d" % fcm1_port
    try:
        with open(account) as fh:
            project = json.load(fh)["project_id"]
        token_uri, form = fcm_assertion_form(account)
        bearer = post_form_http1(token_uri, fcm1_ca, form)
        results["fcm1-ceiling-h1-c4"] = h1_ceiling(
            r, "fcm-ceiling-h2load-h1-c4", n1, fcm1_url + "/v1/projects/%s/messages:send" % project,
            os.path.join(work, "fcm-body.json"),
            ["content-type: application/json; charset=UTF-8", "authorization: Bearer " + bearer], bearer, runs)
        results["fcm1-send-4conn"] = r.bench("pushgate-fcm-send-1000-4conn-http1", [
            "--provider", "fcm", "--http-version", "1.1", "--fcm", fcm1_url, "--fcm-ca", fcm1_ca,
            "--service-account", account, "--tokens-per-send", "1000", "--duration", seconds,
            "--connections", "4", "--concurrency", "8"])
    finally:
        stop(fcm1_mock)

    # Huawei Push Kit v3 (HTTP/1.1 by default: every Huawei client speaks it): h2load --h1 with a PS256
    # JWT signed by PyJWT from the service account mock-hms writes, then the gateway's Send.
    account = os.path.join(work, "hms-service-account.json")
    hms_mock, hms_port, hms_ca = start_mock(work, "mock-hms", ["--write-service-account", account], kind="mock-hms")
    hms_url = "https://127.0.0.1:%d" % hms_port
    try:
        import jwt as pyjwt
        with open(account) as fh:
            sa = json.load(fh)
        now = int(time.time())
        bearer = pyjwt.encode({"iss": sa["sub_account"], "aud": "https://oauth-login.cloud.huawei.com/oauth2/v3/token",
                               "iat": now, "exp": now + 3600}, sa["private_key"], algorithm="PS256",
                              headers={"kid": sa["key_id"], "typ": "JWT"})
        body = os.path.join(work, "hms-body.json")
        with open(body, "w") as fh:
            fh.write(HMS_BODY)
        results["hms-ceiling-h1-c4"] = h1_ceiling(
            r, "hms-ceiling-h2load-h1-c4", n1, hms_url + "/v3/%s/messages:send" % sa["project_id"], body,
            ["content-type: application/json; charset=UTF-8", "push-type: 0", "authorization: Bearer " + bearer],
            bearer, runs)
    finally:
        stop(hms_mock)
    results["hms-send-4conn"] = r.bench("pushgate-hms-send-1000-4conn-http1", [
        "--provider", "hms", "--tokens-per-send", "1000", "--duration", seconds, "--connections", "4",
        "--concurrency", "8"])

    # Web Push: the h2load ceiling to a mock-webpush (one subscription, one encrypted body, one
    # VAPID token, as fast as the mock takes them), the gateway's Send of 1,000 subscriptions to a
    # mock-webpush started with the same flags, and the encryption alone per message and subscriber.
    wp_mock, wp_port, wp_ca = start_mock(work, "mock-webpush", ["--decrypt-every", "100"], kind="mock-webpush")
    try:
        endpoint, body_path, authorization = webpush_request(work, wp_port, wp_ca)
        label = "webpush-ceiling-h2load-c1"
        argv = ["h2load", "-n", "100000" if quick else "300000", "-c", "1", "-m", "100", "-t", "1",
                "-d", body_path, "-H", "ttl: 60", "-H", "content-encoding: aes128gcm",
                "-H", "content-type: application/octet-stream", "-H", "authorization: " + authorization, endpoint]
        proc = r.run(label, argv, timeout=120)
        r.commands[-1] = (label, r.commands[-1][1].replace(authorization, "vapid t=$JWT, k=$KEY"))
        results[label] = parse_h2load(proc.stdout)
    finally:
        stop(wp_mock)
    for conns in (1, 2):
        results["webpush-send-%dconn" % conns] = r.bench("pushgate-webpush-send-1000-%dconn" % conns, [
            "--provider", "webpush", "--tokens-per-send", "1000", "--duration", seconds,
            "--connections", str(conns), "--concurrency", "4"])
    proc = r.run("webpush-encrypt", [BIN, "bench", "--mode", "encrypt", "--json", "--duration", "3"], timeout=60)
    try:
        results["webpush-encrypt"] = json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        results["webpush-encrypt"] = None

    # The 20 ms row's own ceiling: h2load on a mock with the same delay, 1 connection, 1,000 streams
    # (is the mock the limit of that row?).
    delay_mock, delay_port, _ = start_mock(work, "mock-delay20", ["--delay-ms", "20"])
    try:
        label = "ceiling-h2load-delay20-c1"
        argv = ["h2load", "-n", "100000" if quick else "300000", "-c", "1", "-m", "1000", "-t", "1",
                "-d", os.path.join(work, "payload.json"), "-H", "apns-topic: " + TOPIC,
                "-H", "apns-push-type: alert", "-H", "authorization: bearer " + token,
                "https://127.0.0.1:%d/3/device/%s" % (delay_port, TOKEN)]
        proc = r.run(label, argv, timeout=120)
        r.commands[-1] = (label, r.commands[-1][1].replace(token, "$JWT"))
        results[label] = parse_h2load(proc.stdout)
    finally:
        stop(delay_mock)

    # Rows with a mock of their own (pushgate bench starts it with these flags).
    results["delay20"] = r.bench("pushgate-delay20-1conn-1000streams",
                                 ["--delay-ms", "20", "--max-streams", "1000", "--connections", "1",
                                  "--tokens-per-send", "1000", "--concurrency", "8", "--duration", seconds])
    count = "200000" if quick else "1000000"
    results["memory"] = r.bench("pushgate-memory-1M", ["--count", count, "--tokens-per-send", "1000",
                                                       "--concurrency", "4", "--connections", "4", "--duration", "120"],
                                timeout=180)
    results["flood"] = r.bench("pushgate-flood-queue-limit",
                               ["--queue-limit", "20000", "--delay-ms", "200", "--connections", "1",
                                "--tokens-per-send", "5000", "--concurrency", "32", "--duration", "5" if not quick else "2"])
    subscribers = "20000" if quick else "100000"
    results["publish"] = r.bench("pushgate-publish-4conn", ["--mode", "publish", "--subscribers", subscribers,
                                                            "--connections", "4"], timeout=300)
    results["publish1"] = r.bench("pushgate-publish-1conn", ["--mode", "publish", "--subscribers", subscribers,
                                                             "--connections", "1"], timeout=300)
    # Issue 41: a scheduled fan-out (deliver_at 2 s ahead) timed from its deliver_at, as fast as an immediate one.
    results["publish-scheduled"] = r.bench("pushgate-publish-scheduled-4conn",
                                           ["--mode", "publish", "--subscribers", subscribers, "--connections", "4",
                                            "--deliver-after-ms", "2000"], timeout=300)
    results["sns"] = sns_bench.run(r, work, quick)
    # Issue 42: the delivery log's cost on a large fan-out: off, on at its default (0% of successes),
    # and 1% of successes, each run twice, interleaved so drift hits all three alike.
    big = "200000" if quick else "1000000"
    for round_ in (1, 2):
        for setting in ("off", "0", "1"):
            results["publish-log-%s-%d" % (setting, round_)] = r.bench(
                "pushgate-publish-%s-log-%s-%d" % (big, setting, round_),
                ["--mode", "publish", "--subscribers", big, "--connections", "4", "--delivery-log", setting],
                timeout=600)

    # Issue 45: the same 1M Publish on PostgreSQL, and pushgate import of 1M rows (kill -9 included).
    results.update(audience_bench.run_postgres_publish(r, big))
    results["import"] = audience_bench.run_import(r, work, quick)

    info["load_end"] = load_average()
    with open(os.path.join(work, "results.json"), "w") as fh:
        json.dump({"machine": info, "results": results}, fh, indent=1)
    text = render(info, results, r.commands, quick)
    # The hand-written analysis of missed targets (what the profile shows), kept next to the script.
    analysis = os.path.join(os.path.dirname(os.path.abspath(__file__)), "analysis.md")
    if os.path.exists(analysis):
        with open(analysis) as fh:
            text = text.rstrip("\n") + "\n\n" + fh.read()
    # Sections other scripts own (make bench-scale's two, between their markers) are kept as they are.
    if os.path.exists(args.output):
        with open(args.output) as fh:
            previous = fh.read()
        for name in ("bench-scale", "bench-audience"):
            begin, end = "<!-- %s:begin -->" % name, "<!-- %s:end -->" % name
            if begin in previous and end in previous:
                kept = previous[previous.index(begin):previous.index(end) + len(end)]
                text = text.rstrip("\n") + "\n\n" + kept + "\n"
    with open(args.output, "w") as fh:
        fh.write(text)
    print(text)
    print("bench: raw outputs in %s; wrote %s" % (work, rel(args.output)), file=sys.stderr)


def fmt(value, places=0):
    if value is None:
        return "-"
    if places == 0:
        return "{:,}".format(int(round(value)))
    return ("{:,.%df}" % places).format(value)


def mib(kib):
    return "-" if kib is None else "%.1f MiB" % (kib / 1024)


def g(d, *path):
    for key in path:
        if d is None:
            return None
        d = d.get(key)
    return d


def errors_text(row):
    errors = g(row, "errors") or {}
    if not errors:
        return "none"
    return "; ".join("%s × %s" % (fmt(v), k) for k, v in list(errors.items())[:3])


def render(info, res, commands, quick):
    c1, c4 = res.get("ceiling-h2load-c1") or {}, res.get("ceiling-h2load-c4") or {}
    s1, s4, st, rate, delay = res["send-1conn"], res["send-4conn"], res["stream"], res["rate1000"], res["delay20"]
    peer, mem, flood = res.get("peer"), res["memory"], res["flood"]
    ceiling4 = c4.get("rps")
    peer_rate = g(peer, "notifications_per_s")
    n4 = g(s4, "notifications_per_s")

    def ratio(a, b):
        return None if not a or not b else a / b

    rows = []

    def row(name, rate_, p50="-", p99="-", errors="-", cpu="-", notes=""):
        rows.append("| %s | %s | %s | %s | %s | %s | %s |" % (name, rate_, p50, p99, errors, cpu, notes))

    def h2load_row(name, d, ceiling):
        if d is None:
            row(name, "run failed")
            return
        row(name, fmt(d["rps"]), "-", "-", "%s failed (HTTP); %s delivered (gateway's count, warm-up included)" % (
            fmt(d.get("failed")), fmt(d.get("delivered"))), "%s / -" % fmt(d.get("gateway_cpu_percent")),
            "%s× the h2load → mock ceiling (4 conns) of this run" % fmt(ratio(d["rps"], ceiling), 2))

    def bench_row(name, d, notes=""):
        if d is None:
            row(name, "run failed", notes=notes)
            return
        lat = d["latency_ms"]
        # Every row's gateway reports its provider-request latency (the mock's share of the RPC).
        notes = (notes + provider_note(d)).lstrip("; ")
        row(name, fmt(d["notifications_per_s"]), fmt(lat["p50"], 2), fmt(lat["p99"], 2), errors_text(d),
            "%s / %s" % (fmt(g(d, "gateway", "cpu_percent")), fmt(g(d, "mock", "cpu_percent"))), notes)

    for label, d in (("c1", c1), ("c4", c4)):
        conns = label[1:]
        row("**ceiling**: h2load → mock-apns, %s conn, -m 1000 (the mock handles at least this)" % conns,
            fmt(d.get("rps")), "-", "mean %s" % d.get("request_mean", "-"),
            "%s failed, %s of %s 2xx" % (fmt(d.get("failed")), fmt(d.get("2xx")), fmt(d.get("total"))), "-",
            runs_note(d))
    bench_row("Pushgate Send, 1,000 tokens/RPC, 1 APNs conn, 4 RPCs in flight", s1, runs_note(s1))
    bench_row("Pushgate Send, 1,000 tokens/RPC, 4 APNs conns, 8 RPCs in flight", s4, runs_note(s4))
    bench_row("Pushgate SendStream, 1,000 tokens/request, 4 APNs conns, 2 streams × 4 outstanding", st,
              "latency per request message")
    if rate:
        bench_row("Pushgate Send, 1 token/RPC at a fixed 1,000 RPC/s, 1 APNs conn, 1 gRPC connection (a client's one channel)", rate,
                  "achieved %s RPC/s; schedule lag max %s ms%s%s; %s" % (
                      fmt(rate["rpcs_per_s"]), fmt(rate["max_schedule_lag_ms"], 2),
                      "; p99 " + runs_note(rate, 2) if runs_note(rate) else "", outside_stalls_note(rate),
                      stall_note(rate)))
    for grpc_conns in (1, 4):
        for apns_conns in (1, 2):
            d = res.get("send1-h2load-c%d-apns%d" % (grpc_conns, apns_conns))
            h2load_row("Pushgate Send, **1 token/RPC**, h2load as the gRPC client, %d gRPC conn(s) × 100 streams, %d APNs conn(s)"
                       % (grpc_conns, apns_conns), d, ceiling4)
    h2load_row("Pushgate SendStream, 1 token/request, h2load as the client (one request per SendStream call), 4 gRPC conns × 100 streams, 2 APNs conns",
               res.get("stream1-h2load-c4"), ceiling4)
    send1, stream1 = res.get("send1-builtin"), res.get("stream1-builtin")
    bench_row("Pushgate Send, 1 token/RPC, pushgate bench's client, 64 in flight over 4 gRPC conns, 2 APNs conns", send1)
    bench_row("Pushgate SendStream, 1 token/request, pushgate bench's client, 4 streams × 16 outstanding, 2 APNs conns", stream1,
              "latency per request message; %s× the Send row above" % fmt(ratio(g(stream1, "notifications_per_s"), g(send1, "notifications_per_s")), 2))
    gio = res.get("grpcio")
    row("Pushgate Send, 1 token/RPC, **grpcio** (Python asyncio) client, 1,000 in flight on 1 channel, 2 APNs conns",
        fmt(g(gio, "rpcs_per_s")) if gio else "run failed", "-", "-",
        "%s errors" % fmt(g(gio, "errors")) if gio else "-", "-", "what a stock client costs: the client is the bound")
    dc = res.get("ceiling-h2load-delay20-c1") or {}
    row("**ceiling**: h2load → mock-apns delaying 20 ms, 1 conn, -m 1000 (bound 50,000/s)", fmt(dc.get("rps")), "-",
        "mean %s" % dc.get("request_mean", "-"),
        "%s failed, %s of %s 2xx" % (fmt(dc.get("failed")), fmt(dc.get("2xx")), fmt(dc.get("total"))), "-", "")
    bench_row("Pushgate Send, mock delaying 20 ms, 1 APNs conn, 1,000 streams (bound 50,000/s)", delay)
    for label in ("fcm-ceiling-h2load-c1", "fcm-ceiling-h2load-c4"):
        d = res.get(label) or {}
        row("**FCM ceiling**: h2load → mock-fcm, %s conn, -m 100 (the mock handles at least this)" % label[-1],
            fmt(d.get("rps")), "-", "mean %s" % d.get("request_mean", "-"),
            "%s failed, %s of %s 2xx" % (fmt(d.get("failed")), fmt(d.get("2xx")), fmt(d.get("total"))), "-", "")
    bench_row("Pushgate **FCM** Send, 1,000 tokens/RPC, 1 FCM conn (100 streams), 4 RPCs in flight",
              res.get("fcm-send-1conn"))
    bench_row("Pushgate **FCM** Send, 1,000 tokens/RPC, 4 FCM conns (100 streams each), 8 RPCs in flight",
              res.get("fcm-send-4conn"))
    for key, name in (("adm-ceiling-h1-c4", "**ADM ceiling**: h2load --h1 → mock-adm (HTTP/1.1), 4 conns, 1 request in flight each"),
                      ("fcm1-ceiling-h1-c4", "**FCM HTTP/1.1 ceiling**: h2load --h1 → mock-fcm --http1, 4 conns, 1 request in flight each")):
        d = res.get(key) or {}
        row(name, fmt(d.get("rps")), "-", "mean %s" % d.get("request_mean", "-"),
            "%s failed, %s of %s 2xx" % (fmt(d.get("failed")), fmt(d.get("2xx")), fmt(d.get("total"))), "-",
            runs_note(d))
        if key.startswith("adm"):
            bench_row("Pushgate **ADM** Send, 1,000 registration ids/RPC, 4 ADM conns (HTTP/1.1), 8 RPCs in flight",
                      res.get("adm-send-4conn"))
        else:
            bench_row("Pushgate **FCM** Send over HTTP/1.1 (`http_version` 1.1), 1,000 tokens/RPC, 4 FCM conns, 8 RPCs in flight",
                      res.get("fcm1-send-4conn"))
    hc = res.get("hms-ceiling-h1-c4") or {}
    row("**Huawei Push Kit ceiling**: h2load --h1 → mock-hms (HTTP/1.1, v3, PS256 JWT by PyJWT), 4 conns, 1 request in flight each",
        fmt(hc.get("rps")), "-", "mean %s" % hc.get("request_mean", "-"),
        "%s failed, %s of %s 2xx" % (fmt(hc.get("failed")), fmt(hc.get("2xx")), fmt(hc.get("total"))), "-",
        runs_note(hc))
    hs = res.get("hms-send-4conn")
    bench_row("Pushgate **Huawei Push Kit** (v3) Send, 1,000 tokens/RPC, 4 conns (HTTP/1.1), 8 RPCs in flight", hs,
              "%s× the ceiling; the gateway's mock-hms was started by pushgate bench with the same defaults" % fmt(
                  ratio(g(hs, "notifications_per_s"), hc.get("rps")), 2))
    wc = res.get("webpush-ceiling-h2load-c1") or {}
    row("**Web Push ceiling**: h2load → mock-webpush (decrypting every 100th), 1 conn, -m 100, one subscription",
        fmt(wc.get("rps")), "-", "mean %s" % wc.get("request_mean", "-"),
        "%s failed, %s of %s 2xx" % (fmt(wc.get("failed")), fmt(wc.get("2xx")), fmt(wc.get("total"))), "-",
        "body encrypted once by http_ece, VAPID by PyJWT")
    for conns in (1, 2):
        d = res.get("webpush-send-%dconn" % conns)
        bench_row("Pushgate **Web Push** Send, 1,000 subscriptions/RPC, %d conn(s) to the push service, 4 RPCs in flight" % conns,
                  d, "each message encrypted per subscription (fresh key, ECDH, HKDF, AES-GCM); %s× the ceiling" % fmt(
                      ratio(g(d, "notifications_per_s"), wc.get("rps")), 2))
    enc = res.get("webpush-encrypt")
    if enc:
        row("**Web Push encryption** alone (`pushgate bench --mode encrypt`), 1 thread", fmt(enc["messages_per_s"]),
            "-", "-", "-", "-", "%s µs per message and subscriber: P-256 key pair, ECDH, 2 HKDF, AES-128-GCM of %d bytes" % (
                enc["us_per_message"], enc["plaintext_bytes"]))
    else:
        row("**Web Push encryption** alone", "run failed", "-", "-", "-", "-", "")
    for key, conns, what in (("publish", 4, ""), ("publish1", 1, ""),
                             ("publish-scheduled", 4, " scheduled 2 s ahead (deliver_at), timed from then")):
        pub = res.get(key)
        if pub is None:
            row("**Publish** fan-out%s, %d APNs conn(s)" % (what, conns), "run failed", "-", "-", "-", "-", "")
            continue
        row("**Publish** to %s subscribers (bulk-loaded)%s, %d APNs conn(s): subscribers/s" % (
                fmt(pub["subscribers"]), what, conns),
            fmt(pub["subscribers_per_second"]), "-", "-",
            "delivered %s of %s, failed %s" % (fmt(pub["delivered"]), fmt(pub["subscribers"]), fmt(pub["failed"])), "-",
            "fan-out done in %.2f s; Publish answered (committed) in %.1f ms" % (pub["seconds"], pub["publish_ms"]))
    for cells in sns_bench.rows(res.get("sns")):
        row(*cells)
    for setting, what in (("off", "delivery log off"), ("0", "delivery log at its default (0% of successes)"),
                          ("1", "delivery log keeping 1% of successes")):
        runs = [res.get("publish-log-%s-%d" % (setting, n)) for n in (1, 2)]
        done = [p for p in runs if p]
        if not done:
            row("**Publish**, %s" % what, "run failed", "-", "-", "-", "-", "")
            continue
        row("**Publish** to %s subscribers, %s, 4 APNs conns: subscribers/s (median of %d)" % (
                fmt(done[0]["subscribers"]), what, len(done)),
            fmt(median([p["subscribers_per_second"] for p in done])), "-", "-",
            "delivered %s of %s" % (fmt(min(p["delivered"] for p in done)), fmt(done[0]["subscribers"])), "-",
            "fan-out done in %s s" % ", ".join("%.2f" % p["seconds"] for p in done))
    audience_bench.rows(res, row)
    if peer:
        row("**peer**: aioapns 4.0 (Python), max_connections=1, 1,000 in flight", fmt(peer_rate), "-", "-",
            "none" if not peer["errors"] else json.dumps(peer["errors"]), "-", "%s notifications" % fmt(peer["notifications"]))
    else:
        row("**peer**: aioapns", "run failed", "-", "-", "-", "-", "")

    targets = []

    def target(text, value, ok):
        targets.append("| %s | %s | %s |" % (text, value, "n/a" if ok is None else ("**met**" if ok else "**missed**")))

    r_ceiling = ratio(n4, ceiling4)
    target("Send batches, 4 conns ≥ 0.5× h2load ceiling (4 conns)",
           "%s / %s = %s×" % (fmt(n4), fmt(ceiling4), fmt(r_ceiling, 2)), None if r_ceiling is None else r_ceiling >= 0.5)
    target("Send batches, 4 conns ≥ 100,000 notifications/s", fmt(n4), None if n4 is None else n4 >= 100000)
    r_peer = ratio(n4, peer_rate)
    target("≥ 20× aioapns", "%s / %s = %s×" % (fmt(n4), fmt(peer_rate), fmt(r_peer, 1)), None if r_peer is None else r_peer >= 20)
    p99 = g(rate, "latency_ms", "p99")
    target("1-token Send at 1,000 RPC/s: p99 < 2 ms", "p50 %s ms, p99 %s ms (%s RPC/s achieved); the machine stalled %s%% of the time (stall probe)%s" % (
        fmt(g(rate, "latency_ms", "p50"), 3), fmt(p99, 3), fmt(g(rate, "rpcs_per_s")),
        fmt(100 * (stall_fraction(rate) or 0), 2), outside_stalls_note(rate)), None if p99 is None else p99 < 2)
    s14 = g(res.get("send1-h2load-c4-apns2"), "rps")
    r14 = ratio(s14, ceiling4)
    target("1-token Send, h2load client, 4 conns -m 100 ≥ 0.35× the h2load → mock ceiling (issue 20)",
           "%s / %s = %s×" % (fmt(s14), fmt(ceiling4), fmt(r14, 2)), None if r14 is None else r14 >= 0.35)
    hms_send = g(res.get("hms-send-4conn"), "notifications_per_s")
    hms_ceiling = (res.get("hms-ceiling-h1-c4") or {}).get("rps")
    r_hms = ratio(hms_send, hms_ceiling)
    target("Huawei Push Kit Send, 4 conns ≥ 0.7× h2load --h1 → mock-hms, 4 conns (issue 43)",
           "%s / %s = %s×" % (fmt(hms_send), fmt(hms_ceiling), fmt(r_hms, 2)), None if r_hms is None else r_hms >= 0.7)
    rs = ratio(g(res.get("stream1-builtin"), "notifications_per_s"), g(res.get("send1-builtin"), "notifications_per_s"))
    target("SendStream with 1-token requests within 20% of unary 1-token Sends (issue 20)",
           "%s×" % fmt(rs, 2), None if rs is None else rs >= 0.8)
    d = g(delay, "notifications_per_s")
    target("mock delaying 20 ms, 1 conn, 1,000 streams ≥ 40,000/s",
           "%s (h2load on the same kind of mock: %s)" % (fmt(d), fmt(dc.get("rps"))), None if d is None else d >= 40000)
    pub = res.get("publish")
    if pub is None:
        target("Publish to 100,000 subscribers < 2 s", "run failed", None)
    else:
        target("Publish to %s subscribers < 2 s (4 APNs conns)" % fmt(pub["subscribers"]), "%.2f s" % pub["seconds"],
               pub["seconds"] < 2 and pub["delivered"] == pub["subscribers"])
    for cells in sns_bench.targets(res.get("sns")):
        target(*cells)
    log_seconds = {}
    for setting in ("off", "0", "1"):
        done = [res.get("publish-log-%s-%d" % (setting, n)) for n in (1, 2)]
        done = [p for p in done if p and p["delivered"] == p["subscribers"]]
        log_seconds[setting] = median([p["seconds"] for p in done]) if len(done) == 2 else None
    for setting, limit in (("0", 1.10), ("1", 1.20)):
        r_log = ratio(log_seconds[setting], log_seconds["off"])
        target("Publish fan-out with the delivery log at %s%% of successes within %d%% of the log off (issue 42)" % (
                   setting, round((limit - 1) * 100)),
               "%s s / %s s = %s× (medians of 2)" % (fmt(log_seconds[setting], 2), fmt(log_seconds["off"], 2), fmt(r_log, 2)),
               None if r_log is None else r_log <= limit)
    sqlite_1m = [res.get("publish-log-off-%d" % n) for n in (1, 2)]
    audience_bench.targets(res, target, ceiling4, [p for p in sqlite_1m if p and p["delivered"] == p["subscribers"]])
    idle = g(mem, "gateway", "rss_idle_kib")
    target("idle RSS < 64 MB", mib(idle), None if idle is None else idle * 1024 < 64e6)
    before, after = g(mem, "gateway", "rss_after_warmup_kib"), g(mem, "gateway", "rss_end_kib")
    growth = ratio(after, before)
    target("RSS after 1,000,000 tokens within 20% of before (before = after the 4-RPC warm-up)",
           "%s → %s (%s%%); vs idle %s" % (mib(before), mib(after), fmt((growth - 1) * 100 if growth else None, 1), mib(idle)),
           None if growth is None else abs(growth - 1) <= 0.2)
    flood_re = sum(v for k, v in (g(flood, "errors") or {}).items() if "RESOURCE_EXHAUSTED" in k)
    target("flood past queue_limit gets RESOURCE_EXHAUSTED, RSS bounded",
           "%s RPCs RESOURCE_EXHAUSTED, %s answered OK; gateway RSS peak %s" % (
               fmt(flood_re), fmt(g(flood, "rpcs")), mib(g(flood, "gateway", "rss_peak_kib"))),
           None if flood is None else flood_re > 0)

    mem_lines = []
    if mem:
        gw = mem["gateway"]
        mem_lines.append("| idle (started, no traffic) | %s |" % mib(gw["rss_idle_kib"]))
        mem_lines.append("| after warm-up (4 Sends of 1,000) | %s |" % mib(gw["rss_after_warmup_kib"]))
        mem_lines.append("| after %s tokens (%s/s, %s) | %s (peak %s) |" % (
            fmt(mem["results"]), fmt(mem["notifications_per_s"]), errors_text(mem), mib(gw["rss_end_kib"]), mib(gw["rss_peak_kib"])))
    if flood:
        mem_lines.append("| flood: queue_limit 20,000, mock delaying 200 ms, 32 × 5,000-token Sends in flight | "
                         "peak %s; %s |" % (mib(g(flood, "gateway", "rss_peak_kib")), errors_text(flood)))

    out = []
    out.append("# Benchmarks\n")
    out.append("Written by `make bench` (`scripts/bench.sh` → `scripts/bench/run_bench.py`); every number below is "
               "what the listed commands printed in one run%s. Do not edit by hand: run `make bench`.\n" %
               (" (**--quick run: short, not for comparison**)" if quick else ""))
    out.append("- Machine: %s cores (`nproc`), %s, %s GiB RAM, Linux %s; all processes (load generator, gateway, "
               "mock) on this one machine." % (info["nproc"], info["cpu"], info["mem_gib"], info["kernel"]))
    out.append("- Date: %s; commit `%s`; %s; %s; release build." % (info["date"], info["commit"], info["swift"], info["h2load"]))
    out.append("- Load average (1/5/15 min, `/proc/loadavg`) at the start: %s; at the end: %s. The machine is shared: "
               "other engineers' builds and tests may have run during this one, and every row competes with them "
               "for the same 2 cores." % (info.get("load_start", "?"), info.get("load_end", "?")))
    out.append("- APNs side: `pushgate mock-apns` on 127.0.0.1 **without provider-token verification** for every row "
               "(equal for all clients); every client still sends a real ES256 JWT in `authorization`. The ceiling, "
               "peer and the first four Pushgate rows share one mock (its final stats: `%s`); the other rows use "
               "a mock that `pushgate bench` starts with the flags shown." % res.get("shared_mock_final", "")[:300])
    out.append("- Payload for every APNs row: `%s`, headers `apns-topic: %s`, `apns-push-type: alert`." % (PAYLOAD, TOPIC))
    out.append("- FCM rows: `pushgate mock-fcm` (it always checks the OAuth2 access token; MAX_CONCURRENT_STREAMS "
               "100, as FCM's), one mock for the ceiling and both Send rows (its final stats: `%s`). Tokens are "
               "152-byte registration tokens `bench-<n>:APA91b…`; body per token (h2load posts it with the "
               "first token and a Bearer token fetched from the mock's token endpoint): `%s`." % (
                   res.get("fcm_mock_final", "")[:300], FCM_BODY.replace(FCM_TOKEN, "bench-0:APA91b…")))
    out.append("- HTTP/1.1 rows: `pushgate mock-adm` (HTTP/1.1, keep-alive, as Amazon) and `pushgate mock-fcm --http1`, "
               "each one mock for its ceiling and its Send row; both check the access token. The ceiling is `h2load --h1` "
               "with 4 connections and one request in flight on each (the gateway does not pipeline), connections for "
               "connections with the Pushgate row. ADM registration ids are 700 bytes (as real v3 ids); ADM body: `%s`." % ADM_BODY)
    out.append("- Latency percentiles are per RPC (SendStream: per request message), from `pushgate bench`'s log-linear "
               "histogram (within 3%). CPU is % of one core (gateway / mock) over the measured run.")
    out.append("- The two h2load ceilings, the three HTTP/1.1 (`h2load --h1`) ceilings, both batched Send rows "
               "and the 1,000 RPC/s latency row run %d times each and show the median run (by notifications/s; "
               "the latency row by p99); the notes list every run, since one 10-second run on this shared VM swings by ±25%%.\n" % (3 if not quick else 1))
    out.append("## Throughput and latency\n")
    out.append("| Row | notifications/s | p50 ms | p99 ms | errors | CPU % gateway / mock | notes |")
    out.append("| --- | ---: | ---: | ---: | --- | --- | --- |")
    out += rows
    out.append("\nRatios (one run): Pushgate Send 4 conns / h2load ceiling 4 conns = **%s×**; 1 conn / ceiling 1 conn = **%s×**; "
               "Pushgate / aioapns = **%s×**. FCM: Pushgate Send 4 conns / h2load → mock-fcm 4 conns = **%s×**; "
               "1 conn / 1 conn = **%s×**. HTTP/1.1, 4 conns each: ADM / h2load --h1 → mock-adm = **%s×**; "
               "FCM over HTTP/1.1 / h2load --h1 → mock-fcm --http1 = **%s×**.\n" % (
                   fmt(r_ceiling, 2), fmt(ratio(g(s1, "notifications_per_s"), c1.get("rps")), 2), fmt(r_peer, 1),
                   fmt(ratio(g(res.get("fcm-send-4conn"), "notifications_per_s"),
                             (res.get("fcm-ceiling-h2load-c4") or {}).get("rps")), 2),
                   fmt(ratio(g(res.get("fcm-send-1conn"), "notifications_per_s"),
                             (res.get("fcm-ceiling-h2load-c1") or {}).get("rps")), 2),
                   fmt(ratio(g(res.get("adm-send-4conn"), "notifications_per_s"),
                             (res.get("adm-ceiling-h1-c4") or {}).get("rps")), 2),
                   fmt(ratio(g(res.get("fcm1-send-4conn"), "notifications_per_s"),
                             (res.get("fcm1-ceiling-h1-c4") or {}).get("rps")), 2)))
    out.append("## Memory (gateway RSS, from /proc/PID/status)\n")
    out.append("| When | RSS |")
    out.append("| --- | --- |")
    out += mem_lines
    out.append("\n## Targets from the issue\n")
    out.append("| Target | Measured | |")
    out.append("| --- | --- | --- |")
    out += targets
    out.append("\n## Commands\n")
    out.append("```sh")
    out.append("make bench   # = make release; make venv; scripts/bench.sh")
    for label, shown in commands:
        out.append("# %s\n%s" % (label, shown))
    out.append("```")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
