"""Web Push and the addresses push services resolve to (issue #38, item 6), with the real `pushgate
serve` and `pushgate mock-webpush` on loopback:

- a subscription whose (allowed) push service host is or resolves to a loopback address is REJECTED
  naming host and address, counted, and the push service sees nothing, unless the app sets
  `allow_private_addresses`;
- a system resolver that takes 3 s (getaddrinfo interposed with LD_PRELOAD, tests/interop/slow_dns.c)
  delays only the deliveries waiting for those names: other calls on the same (single) event loop
  go on, and three slow names take 3 s, not 9."""
import json
import os
import subprocess
import threading
import time

import grpc

from conftest import HERE, Server, wait_metrics_port
from mock_process import MockProcess, pushgate_binary
from pushgate.v1 import push_pb2, push_pb2_grpc
from test_hardening import metric

SLOW = ["a.slow.test", "b.slow.test", "c.slow.test"]


def browser(subscription):
    return json.dumps({k: v for k, v in subscription.items() if k != "private_key"})


def push_service(directory):
    """A mock-webpush whose certificate names localhost, 127.0.0.1 and the slow names."""
    ca, key = os.path.join(directory, "push.pem"), os.path.join(directory, "push.key")
    names = ",".join(["DNS:localhost", "IP:127.0.0.1"] + ["DNS:" + n for n in SLOW])
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", key, "-out", ca, "-days", "2", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=" + names], check=True, capture_output=True)
    mock = MockProcess("mock-webpush", os.path.join(directory, "mock"), flags=["--cert", ca, "--key", key])
    mock.ca_file = ca
    return mock


def webpush_app(directory, mock, hosts, **extra):
    vapid = os.path.join(directory, "vapid.pem")
    if not os.path.exists(vapid):
        subprocess.run([pushgate_binary(), "vapid-key", "--out", vapid], capture_output=True, check=True)
    app = {"name": "web", "platform": "webpush", "vapid_key_file": vapid, "vapid_subject": "mailto:ops@example.com",
           "ca_file": mock.ca_file, "allowed_hosts": hosts}
    app.update(extra)
    return app


def send(stub, subscriptions, timeout=30):
    notification = push_pb2.Notification(app="web", tokens=[browser(s) for s in subscriptions],
                                         alert=push_pb2.Alert(title="t", body="b"))
    return list(stub.Send(push_pb2.SendRequest(notifications=[notification]), timeout=timeout).results)


def test_a_push_service_on_loopback_is_refused_and_sees_nothing_without_allow_private_addresses(tmp_path):
    directory = str(tmp_path)
    mock = push_service(directory)
    hosts = ["localhost:%d" % mock.port, "127.0.0.1:%d" % mock.port]
    by_name = mock.subscriptions(2, prefix="name-")
    by_address = mock.subscriptions(1, prefix="ip-", host="127.0.0.1:%d" % mock.port)
    refusing = Server({"apps": [webpush_app(directory, mock, hosts)], "metrics_listen": "127.0.0.1:0"}, directory)
    try:
        refusing.metrics_port = wait_metrics_port(refusing)
        with grpc.insecure_channel(refusing.address) as channel:
            results = send(push_pb2_grpc.PushStub(channel), by_name + by_address)
        hint = " (set allow_private_addresses to allow)"
        for result in results[:2]:
            assert result.status == push_pb2.STATUS_REJECTED, result
            assert result.reason in ("the push service host localhost resolved to 127.0.0.1, a loopback address"
                                     + hint, "the push service host localhost resolved to ::1, a loopback address"
                                     + hint), result.reason
        assert results[2].status == push_pb2.STATUS_REJECTED
        assert results[2].reason == "the push service host 127.0.0.1 is a loopback address" + hint
        assert metric(refusing, "pushgate_provider_protections_total", app="web",
                      event="private_address_refused") == 3
        assert any("connection refused" in line and "127.0.0.1" in line for line in refusing.log)
    finally:
        refusing.stop()
    # Nothing reached the push service: its only connections were this test's two subscription
    # requests. (With allow_private_addresses the same subscriptions are delivered: test_webpush.py.)
    stats = mock.stop()
    assert stats["pushes"] == 0 and stats["connections_opened"] == 2, stats


def test_a_slow_resolver_delays_only_the_deliveries_waiting_for_it(tmp_path):
    directory = str(tmp_path)
    shim = os.path.join(directory, "slow_dns.so")
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", shim, os.path.join(HERE, "slow_dns.c"), "-ldl"],
                   check=True)
    lookups = os.path.join(directory, "slow-lookups.log")
    env = {k: v for k, v in os.environ.items() if k not in ("HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy")}
    env.update(LD_PRELOAD=shim, SLOW_DNS_LOG=lookups)
    mock = push_service(directory)
    hosts = ["%s:%d" % (name, mock.port) for name in SLOW] + ["localhost:%d" % mock.port]
    slow = [mock.subscriptions(1, prefix=name.split(".")[0] + "-", host="%s:%d" % (name, mock.port))[0]
            for name in SLOW]
    [fast] = mock.subscriptions(1, prefix="fast-")
    app = webpush_app(directory, mock, hosts, allow_private_addresses=True, connections=2)
    # One event loop: before the fix, the gRPC call and every provider connection shared the thread
    # that getaddrinfo blocked.
    server = Server({"apps": [app]}, directory, env=env, loops=1)
    try:
        with grpc.insecure_channel(server.address) as channel:
            stub = push_pb2_grpc.PushStub(channel)
            assert send(stub, [fast])[0].status == push_pb2.STATUS_DELIVERED
            outcome = {}

            def slow_send():
                started = time.monotonic()
                outcome["results"] = send(stub, slow)
                outcome["seconds"] = time.monotonic() - started

            thread = threading.Thread(target=slow_send)
            thread.start()
            time.sleep(0.5)  # the three lookups are under way
            fast_seconds = []
            for _ in range(5):
                started = time.monotonic()
                [result] = send(stub, [fast])
                fast_seconds.append(time.monotonic() - started)
                assert result.status == push_pb2.STATUS_DELIVERED, result
            thread.join(30)
            assert max(fast_seconds) < 1.0, fast_seconds
            assert [r.status for r in outcome["results"]] == [push_pb2.STATUS_DELIVERED] * 3, outcome
            # Three slow names looked up at once: about 3 s, not 9.
            assert 2.9 <= outcome["seconds"] < 6, outcome["seconds"]
    finally:
        server.stop()
    with open(lookups) as fh:
        assert sorted(fh.read().split()) == SLOW, "one query per name"
    assert mock.stop()["pushes"] == 9  # 1 + 5 fast, 3 slow
