#!/usr/bin/env python3
"""The SNS API's rows of `make bench` (issue 39), measured in the same run as the others:

  fan-out  one gateway, N subscribers of topic "bench" bulk-loaded before it starts: 3 Publishes
           through the gRPC API (its Connect JSON door) alternating with 3 through the SNS API
           (boto3), each timed from the call until GetMessage says the fan-out completed; the
           medians and their ratio (the target: SNS within 10% of gRPC)
  batch    h2load (h2c, 4 connections x 16 streams) posting one PublishBatch of 10 messages, signed
           once by botocore's SigV4Auth, to a topic of ONE subscriber: every message is delivered,
           so the row pays for the fan-out it causes, not only for storing the messages
  single   the same with a Publish of one message a request

Run by run_bench.py (`make bench`), or alone to check the flow (a debug build's numbers mean nothing):

  .venv/bin/python scripts/bench/sns_bench.py --bin .build/debug/pushgate --subscribers 2000 --quick
"""
import argparse
import http.client
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

import run_bench as rb

REGION = "us-east-1"
ACCOUNT = "000000000000"
TOPIC = "bench"
BATCH_TOPIC = "bench-batch"
# BenchPublish.swift's message (`pushgate bench --mode publish`), so the rows compare with that one.
MESSAGE = r'{"default":"Hello from pushgate bench","APNS":"{\"aps\":{\"alert\":\"Hello\"}}"}'
ROUNDS = 3
POLL_SECONDS = 0.005
FORM_TYPE = "application/x-www-form-urlencoded; charset=utf-8"


def topic_arn(name):
    return "arn:aws:sns:%s:%s:%s" % (REGION, ACCOUNT, name)


def run(r, work, quick, subscribers=None, batch_requests=None, single_requests=None):
    """Every SNS row on one mock and one gateway; the results for rows() and targets(), or None when
    the set-up failed (make bench still writes the other rows)."""
    try:
        return measure(r, work, quick, subscribers, batch_requests, single_requests)
    except (Exception, SystemExit) as error:
        print("bench: the SNS rows failed: %s" % error, file=sys.stderr)
        return None


def measure(r, work, quick, subscribers, batch_requests, single_requests):
    """run() without the net: the sizes are make bench's unless given (the debug check's)."""
    subscribers = subscribers or (20000 if quick else 100000)
    mock, mock_port, ca = rb.start_mock(work, "sns-mock")
    gateway = None
    try:
        gateway = Gateway.start(r, work, "https://127.0.0.1:%d" % mock_port, ca, subscribers)
        out = {"subscribers": subscribers}
        out["fanout"] = compare_publish(r, gateway, subscribers)
        out["batch"] = h2load_publish(r, work, gateway, "sns-publishbatch-h2load-c4", batch_entries(10),
                                      10, batch_requests or (2000 if quick else 5000))
        out["single"] = h2load_publish(r, work, gateway, "sns-publish-h2load-c4",
                                       {"Action": "Publish", "TopicArn": topic_arn(BATCH_TOPIC), "Message": MESSAGE,
                                        "MessageStructure": "json"}, 1, single_requests or (4000 if quick else 20000))
        return out
    finally:
        if gateway is not None:
            rb.stop(gateway.proc)
            gateway.log.close()
        rb.stop(mock)


class Gateway:
    """`pushgate serve` with app "bench" (4 APNs connections to the mock, as the Publish rows) and an
    admin SNS credential, on a fresh store holding N subscribers of TOPIC and 1 of BATCH_TOPIC."""

    def __init__(self, proc, log, port, metrics_port, access_key, secret):
        self.proc, self.log, self.port, self.metrics_port = proc, log, port, metrics_port
        self.access_key, self.secret = access_key, secret

    @classmethod
    def start(cls, r, work, mock_url, ca, subscribers):
        store = os.path.join(work, "sns-gateway.db")
        for label, argv in (
                ("sns-load-subscribers", ["--topic", TOPIC, "--count", str(subscribers)]),
                # Another token than any of TOPIC's: the batch rows' one subscriber.
                ("sns-load-subscriber-batch", ["--topic", BATCH_TOPIC, "--count", "1", "--first", str(subscribers)])):
            proc = r.run(label, [rb.BIN, "load-subscribers", "--store", store, "--app", "bench"] + argv, timeout=600)
            if proc.returncode != 0:
                raise SystemExit("bench: %s failed: %s" % (label, proc.stderr))
        secret_file = os.path.join(work, "sns.secret")
        proc = r.run("sns-credential", [rb.BIN, "sns-credential", "--secret-file", secret_file, "--admin"], timeout=30)
        found = re.search(r"access_key_id:\s+(\S+)", proc.stdout)
        if proc.returncode != 0 or not found:
            raise SystemExit("bench: sns-credential failed: %s" % proc.stderr)
        with open(secret_file) as fh:
            secret = fh.read().strip()
        p8 = os.path.join(work, "sns-AuthKey.p8")
        subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", p8],
                       check=True, capture_output=True)
        config = os.path.join(work, "sns-gateway.json")
        with open(config, "w") as fh:
            json.dump({"listen": "127.0.0.1:0", "metrics_listen": "127.0.0.1:0", "store": store,
                       "apps": [{"name": "bench", "platform": "apns", "bundle_id": rb.TOPIC, "team_id": "BENCHTEAM1",
                                 "key_id": "BENCHKEY01", "key_file": p8, "url": mock_url, "ca_file": ca,
                                 "connections": 4}],
                       "sns": {"region": REGION, "account_id": ACCOUNT,
                               "credentials": [{"access_key_id": found.group(1), "secret_access_key_file": secret_file,
                                                "apps": ["*"], "admin": True}]}}, fh, indent=1)
        argv = [rb.BIN, "serve", "--config", config]
        r.commands.append(("sns-gateway", " ".join(rb.rel(a) for a in argv)
                           + "  # app bench -> the mock, 4 APNs conns; sns.credentials: the admin pair above"))
        log = open(os.path.join(work, "sns-gateway.log"), "w+")
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        ports = {}
        deadline = time.time() + 30
        while time.time() < deadline and len(ports) < 2 and proc.poll() is None:
            time.sleep(0.05)
            log.seek(0)
            text = log.read()
            for key, pattern in (("api", r"msg=listening address=127\.0\.0\.1:(\d+)"),
                                 ("metrics", r"msg=\"metrics listening\" address=127\.0\.0\.1:(\d+)")):
                m = re.search(pattern, text)
                if m:
                    ports[key] = int(m.group(1))
        if len(ports) < 2:
            rb.stop(proc)
            log.seek(0)
            raise SystemExit("bench: the SNS gateway did not start:\n%s" % log.read())
        return cls(proc, log, ports["api"], ports["metrics"], found.group(1), secret)


class Connect:
    """The gRPC API's Connect door (JSON over HTTP/1.1, one kept-alive connection): the gRPC
    Publish of these rows and the GetMessage polls of both kinds of Publish."""

    def __init__(self, port):
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def call(self, method, message):
        self.connection.request("POST", "/pushgate.v1.Push/" + method, json.dumps(message),
                                {"content-type": "application/json"})
        answer = self.connection.getresponse()
        body = answer.read()
        if answer.status != 200:
            raise RuntimeError("%s: HTTP %d %s" % (method, answer.status, body[:300]))
        return json.loads(body)

    def warm_up(self):
        """Opens the connection with a GetMessage of no message (its 404 answer is the point)."""
        try:
            self.call("GetMessage", {"messageId": "warm-up"})
        except RuntimeError:
            pass

    def close(self):
        self.connection.close()


def timed_fanout(publish, connect, limit):
    """publish() (returns the message id), then GetMessage every 5 ms until the fan-out completed or
    expired or `limit` seconds passed: seconds from the call, the Publish's own ms, the counts."""
    start = time.monotonic()
    message_id = publish()
    answered = time.monotonic()
    message = {}
    while time.monotonic() - start < limit:
        message = connect.call("GetMessage", {"messageId": message_id})
        if message.get("state") in ("MESSAGE_STATE_COMPLETED", "MESSAGE_STATE_EXPIRED"):
            break
        time.sleep(POLL_SECONDS)
    return {"seconds": time.monotonic() - start, "publish_ms": (answered - start) * 1000,
            "state": message.get("state", "-"), "total": int(message.get("total", 0)),
            "delivered": int(message.get("delivered", 0)), "failed": int(message.get("failed", 0))}


def compare_publish(r, gateway, subscribers):
    """ROUNDS gRPC Publishes and ROUNDS SNS Publishes to TOPIC, alternating (gRPC first), on the
    same gateway; each waits for the previous fan-out to complete."""
    import boto3
    from botocore.config import Config

    sns = boto3.client("sns", endpoint_url="http://127.0.0.1:%d" % gateway.port, region_name=REGION,
                       aws_access_key_id=gateway.access_key, aws_secret_access_key=gateway.secret,
                       config=Config(retries={"total_max_attempts": 1}, read_timeout=120))
    connect = Connect(gateway.port)
    r.commands.append(("sns-vs-grpc-publish", (
        "# in sns_bench.py: 1 untimed gRPC Publish, then %d x [Connect POST /pushgate.v1.Push/Publish {topic: %s, message_structure: json}, "
        "boto3 sns.publish(TopicArn=%s, MessageStructure='json')], message %s; each then "
        "POST /pushgate.v1.Push/GetMessage every 5 ms until MESSAGE_STATE_COMPLETED") % (
            ROUNDS, TOPIC, topic_arn(TOPIC), MESSAGE)))
    try:
        # Neither client's first call (boto3 loads its model, both connect) is in a timed one.
        sns.list_topics()
        connect.warm_up()

        def grpc_publish():
            return connect.call("Publish", {"topic": TOPIC, "message": MESSAGE, "messageStructure": "json"})["messageId"]

        def sns_publish():
            return sns.publish(TopicArn=topic_arn(TOPIC), Message=MESSAGE, MessageStructure="json")["MessageId"]

        limit = 60 + subscribers / 1000
        # One untimed Publish first: the gateway's first fan-out opens its APNs connections, which
        # would otherwise be in the first (gRPC) round only.
        warm_up = timed_fanout(grpc_publish, connect, limit)
        grpc_runs, sns_runs = [], []
        for _ in range(ROUNDS):
            grpc_runs.append(timed_fanout(grpc_publish, connect, limit))
            sns_runs.append(timed_fanout(sns_publish, connect, limit))
    finally:
        connect.close()
        sns.close()
    out = {"grpc": summary(grpc_runs, subscribers), "sns": summary(sns_runs, subscribers), "warm_up": warm_up}
    if out["grpc"]["seconds"] and out["sns"]["seconds"]:
        out["ratio"] = out["sns"]["seconds"] / out["grpc"]["seconds"]
    return out


def summary(runs, subscribers):
    complete = [x for x in runs if x["state"] == "MESSAGE_STATE_COMPLETED" and x["delivered"] == subscribers]
    return {"runs": runs, "all_delivered": len(complete) == len(runs),
            "seconds": statistics.median(x["seconds"] for x in complete) if complete else None,
            "publish_ms": statistics.median(x["publish_ms"] for x in complete) if complete else None}


def batch_entries(count):
    entries = {"Action": "PublishBatch", "TopicArn": topic_arn(BATCH_TOPIC)}
    for i in range(1, count + 1):
        prefix = "PublishBatchRequestEntries.member.%d." % i
        entries.update({prefix + "Id": "m%d" % i, prefix + "Message": MESSAGE, prefix + "MessageStructure": "json"})
    return entries


def signed(gateway, parameters):
    """The form body and the header fields botocore's SigV4Auth signs it with, for host
    127.0.0.1:PORT (h2load sends that as :authority, which the gateway takes as the host)."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    body = urllib.parse.urlencode(dict(parameters, Version="2010-03-31")).encode()
    request = AWSRequest(method="POST", url="http://127.0.0.1:%d/" % gateway.port, data=body,
                         headers={"Content-Type": FORM_TYPE})
    SigV4Auth(Credentials(gateway.access_key, gateway.secret), "sns", REGION).add_auth(request)
    return body, [("content-type", FORM_TYPE), ("x-amz-date", request.headers["X-Amz-Date"]),
                  ("authorization", request.headers["Authorization"])]


def delivered_count(gateway):
    """pushgate_notifications_total{app="bench",status="delivered"} from the gateway's /metrics."""
    connection = http.client.HTTPConnection("127.0.0.1", gateway.metrics_port, timeout=10)
    try:
        connection.request("GET", "/metrics")
        text = connection.getresponse().read().decode()
    finally:
        connection.close()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("pushgate_notifications_total{") and 'app="bench"' in line
               and 'status="delivered"' in line)


def h2load_publish(r, work, gateway, label, parameters, per_request, requests):
    """One signed request posted `requests` times by h2load (-c 4 -m 16), after one check that the
    gateway takes it (200, every batch entry Successful); then how long the fan-out of what h2load
    published took to drain, from the gateway's delivered count."""
    body, headers = signed(gateway, parameters)
    body_path = os.path.join(work, label + ".form")
    with open(body_path, "wb") as fh:
        fh.write(body)
    before = delivered_count(gateway)
    check = http.client.HTTPConnection("127.0.0.1", gateway.port, timeout=30)
    check.request("POST", "/", body, dict(headers))
    answer = check.getresponse()
    text = answer.read().decode(errors="replace")
    check.close()
    successful = text.count("<MessageId>")
    if answer.status != 200 or successful != per_request:
        return {"error": "the check request: HTTP %d, %d of %d published: %s" % (
            answer.status, successful, per_request, text[:300])}
    argv = ["h2load", "-n", str(requests), "-c", "4", "-m", "16", "-t", "2", "-T", "60s", "-d", body_path]
    for name, value in headers:
        argv += ["-H", "%s: %s" % (name, value)]
    try:
        proc = r.run(label, argv + ["http://127.0.0.1:%d/" % gateway.port], timeout=90)
    except subprocess.TimeoutExpired:
        return {"error": "h2load timed out"}
    finally:
        signature = dict(headers)["authorization"]
        r.commands[-1] = (label, r.commands[-1][1].replace(signature, "$SIGV4_AUTHORIZATION"))
    out = rb.parse_h2load(proc.stdout)
    out.update(requests=requests, messages_per_request=per_request)
    if out.get("rps") is not None:
        out["messages_per_s"] = per_request * out["rps"]
    expected = before + per_request * (1 + out.get("2xx", 0))
    ended = time.monotonic()
    delivered, last_change = delivered_count(gateway), ended
    while delivered < expected and time.monotonic() - last_change < 15 and time.monotonic() - ended < 120:
        time.sleep(0.1)
        now = delivered_count(gateway)
        if now != delivered:
            delivered, last_change = now, time.monotonic()
    out["delivered"] = int(delivered - before)
    out["expected_deliveries"] = int(expected - before)
    out["drained_s"] = (last_change - ended) if delivered >= expected else None
    if out["drained_s"] is not None and out.get("elapsed_s"):
        # Published and delivered: what a caller sustains once the fan-out has to keep up.
        out["delivered_per_s"] = out["delivered"] / (out["elapsed_s"] + out["drained_s"])
    out["all_200"] = out.get("2xx") == requests and out.get("succeeded") == requests
    return out


# --- The table ------------------------------------------------------------------------------------

def rows(res):
    """run_bench.render()'s rows: (name, rate, p50, p99, errors, cpu, notes)."""
    if res is None:
        return [("**SNS API**", "run failed", "-", "-", "-", "-", "")]
    n = rb.fmt(res["subscribers"])
    fan = res["fanout"]
    sns, grpc = fan["sns"], fan["grpc"]

    def secs(part):
        return ", ".join("%.3f" % x["seconds"] for x in part["runs"])

    out = [("**SNS API Publish** to %s subscribers (bulk-loaded), 4 APNs conns: subscribers/s" % n,
            rb.fmt(res["subscribers"] / sns["seconds"]) if sns["seconds"] else "run failed", "-", "-",
            "delivered to all: SNS %s, gRPC %s" % ("yes" if sns["all_delivered"] else "**no**",
                                                   "yes" if grpc["all_delivered"] else "**no**"), "-",
            "fan-out %s s (median of %d: %s; SNS Publish answered in %s ms); **gRPC Publish, same gateway and run: "
            "%s s** (%s; Connect JSON); ratio SNS / gRPC **%s×**; alternating gRPC, SNS" % (
                rb.fmt(sns["seconds"], 3), ROUNDS, secs(sns), rb.fmt(sns["publish_ms"], 1),
                rb.fmt(grpc["seconds"], 3), secs(grpc), rb.fmt(fan.get("ratio"), 2)))]
    for key, name in (("batch", "**SNS PublishBatch**, 10 messages a request, h2load 4 conns × 16 streams: messages/s"),
                      ("single", "**SNS Publish** (1 message a request), h2load 4 conns × 16 streams: messages/s")):
        d = res.get(key) or {}
        if "error" in d or d.get("rps") is None:
            out.append((name, "run failed", "-", "-", d.get("error", "-"), "-", ""))
            continue
        out.append((name, rb.fmt(d["messages_per_s"]), "-", "mean %s" % d.get("request_mean", "-"),
                    "%s failed, %s of %s 2xx%s" % (rb.fmt(d.get("failed")), rb.fmt(d.get("2xx")),
                                                   rb.fmt(d["requests"]), "" if d["all_200"] else " (**not all 200**)"),
                    "-",
                    "%s requests/s × %d, answered (stored); to a topic of 1 subscriber, every message delivered: "
                    "%s of %s%s; signed once by botocore's SigV4Auth" % (
                        rb.fmt(d["rps"]), d["messages_per_request"], rb.fmt(d["delivered"]),
                        rb.fmt(d["expected_deliveries"]),
                        ", the last %s s after h2load ended (published and delivered: %s messages/s)" % (
                            rb.fmt(d["drained_s"], 1), rb.fmt(d.get("delivered_per_s")))
                        if d["drained_s"] is not None else ", **not all** within the wait")))
    return out


def targets(res):
    """run_bench.render()'s target lines: (text, measured, met or None)."""
    fan = (res or {}).get("fanout") or {}
    sns, grpc, ratio = fan.get("sns") or {}, fan.get("grpc") or {}, fan.get("ratio")
    text = "SNS Publish as fast as gRPC Publish (ratio ≤ 1.10)"
    if ratio is None:
        return [(text, "run failed", None)]
    return [(text, "%s s / %s s = %s× (%s subscribers, medians of %d)" % (
        rb.fmt(sns["seconds"], 3), rb.fmt(grpc["seconds"], 3), rb.fmt(ratio, 2), rb.fmt(res["subscribers"]), ROUNDS),
        ratio <= 1.10 and sns["all_delivered"] and grpc["all_delivered"])]


def main():
    parser = argparse.ArgumentParser(description="Only the SNS rows of make bench.")
    parser.add_argument("--bin", default=rb.BIN, help="the pushgate binary (default: the release build)")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--subscribers", type=int)
    parser.add_argument("--batch-requests", type=int)
    parser.add_argument("--single-requests", type=int)
    args = parser.parse_args()
    rb.BIN = os.path.abspath(args.bin)
    work = tempfile.mkdtemp(prefix="pushgate-sns-bench.")
    r = rb.Runner(work, args.quick)
    res = measure(r, work, args.quick, args.subscribers, args.batch_requests, args.single_requests)
    with open(os.path.join(work, "sns-results.json"), "w") as fh:
        json.dump(res, fh, indent=1)
    for cells in rows(res):
        print("| %s |" % " | ".join(cells))
    for text, measured, ok in targets(res):
        print("| %s | %s | %s |" % (text, measured, "n/a" if ok is None else ("met" if ok else "missed")))
    print("```sh")
    for label, shown in r.commands:
        print("# %s\n%s" % (label, shown))
    print("```")
    print("bench: raw outputs in %s" % work, file=sys.stderr)


if __name__ == "__main__":
    main()
