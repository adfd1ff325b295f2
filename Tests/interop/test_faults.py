"""The fault suite (issue 8): the real gateway against `pushgate mock-apns` / `pushgate mock-fcm`
child processes that inject faults (and, for faults below HTTP/2, a TCP proxy in front of them).

For every fault:
- every token of every Send gets exactly one result, in order (nothing lost);
- the mock's own count of 200s per token proves no duplicates: none at all for faults that lose no
  connection (the mock's answered requests then equal the sum of the results' `attempts` exactly),
  and at most the requests in flight on the connections that died for the others (the documented
  at-least-once window: a request whose answer was lost with its connection is sent again);
- a token the gateway reports DELIVERED was accepted by the mock, and one it reports REJECTED or
  FAILED was not (outside that window);
- afterwards the gateway is healthy: Health SERVING, and a following Send delivers.

`FAULTS_LONG=1` (`make test-faults`) runs the long form: 20,000 tokens per batch instead of 1,000 and a
30-second provider outage instead of 3 seconds. The assertions count; they never time anything.
"""
import collections
import json
import os
import threading
import time

import grpc
import pytest

from conftest import Server
from fault_proxy import FaultProxy
from grpc.health.v1 import health_pb2, health_pb2_grpc
from mock_process import MockProcess
from pushgate.v1 import push_pb2, push_pb2_grpc, registry_pb2, registry_pb2_grpc

LONG = os.environ.get("FAULTS_LONG") == "1"
TOKENS = 20_000 if LONG else 1_000
OUTAGE_SECONDS = 30 if LONG else 3
CALL_TIMEOUT = 300 if LONG else 120
# Fast liveness for the cases about liveness (a stalled peer, a blackhole), so they take seconds, not
# the production defaults. Only there: on a loaded 2-core machine a debug-build mock can be silent
# for over a second while it works through a thousand requests, and a 1 s PING timeout would then
# (rightly, by its own rule) give the connection up and resend what was in flight.
FAST = {"connect_timeout_seconds": 1, "ping_interval_seconds": 1, "ping_timeout_seconds": 1}

DELIVERED, REJECTED, FAILED = push_pb2.STATUS_DELIVERED, push_pb2.STATUS_REJECTED, push_pb2.STATUS_FAILED


def apns_tokens(base, count=TOKENS):
    return ["%064x" % (base + i) for i in range(count)]


def fcm_tokens(base, count=TOKENS):
    return ["fault-%08d:APA91b%s" % (base + i, "f" * 100) for i in range(count)]


class Rig:
    """A mock provider (plus an optional proxy) and a gateway with one app delivering to it."""

    def __init__(self, tmp_path, kind="mock-apns", flags=(), proxy=None, app_extra=None, ca_file=None):
        self.mock = MockProcess(kind, str(tmp_path / "mock"), flags)
        self.proxy = FaultProxy(self.mock.port, **proxy).start() if proxy is not None else None
        port = self.proxy.port if self.proxy else None
        extra = dict(app_extra or {})
        if ca_file:
            extra["ca_file"] = ca_file
        self.app = "faulty"
        app = self.mock.apns_app(self.app, port, **extra) if kind == "mock-apns" else self.mock.fcm_app(self.app, port, **extra)
        self.gateway = Server({"apps": [app]}, str(tmp_path))
        self.channel = grpc.insecure_channel(self.gateway.address)
        self.push = push_pb2_grpc.PushStub(self.channel)
        self.results = {}      # token -> its one result, over every Send of the test
        self.attempts = 0      # sum of `attempts` over those results

    def notification(self, tokens):
        return push_pb2.Notification(app=self.app, tokens=tokens, alert=push_pb2.Alert(title="fault", body="suite"))

    def _take(self, tokens, results):
        assert [r.token for r in results] == tokens, "one result per token, in order"
        for r in results:
            assert r.token not in self.results, "token %s got a second result" % r.token
            self.results[r.token] = r
            self.attempts += r.attempts
        return results

    def send(self, tokens):
        """One Send of all `tokens`."""
        reply = self.push.Send(push_pb2.SendRequest(notifications=[self.notification(tokens)]), timeout=CALL_TIMEOUT)
        return self._take(tokens, list(reply.results))

    def send_stream(self, tokens, per_request=250):
        """A SendStream of requests of `per_request` tokens each; answers come in request order."""
        batches = [tokens[i:i + per_request] for i in range(0, len(tokens), per_request)]
        replies = self.push.SendStream(iter([push_pb2.SendRequest(notifications=[self.notification(b)]) for b in batches]),
                                       timeout=CALL_TIMEOUT)
        results = []
        for batch, reply in zip(batches, replies):
            results += self._take(batch, list(reply.results))
        assert len(results) == len(tokens), "every request of the stream was answered"
        return results

    def assert_healthy(self, tokens):
        """Health SERVING, and a following Send delivers (at least one token: faults that draw
        shares may still hit a few of them three times)."""
        reply = health_pb2_grpc.HealthStub(self.channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
        results = self.send(tokens)
        assert any(r.status == DELIVERED for r in results), [(r.status, r.reason) for r in results]
        assert self.gateway.alive()

    def finish(self):
        """Stops everything; returns the mock's final stats. The gateway must stop cleanly."""
        self.channel.close()
        if self.proxy:
            self.proxy.stop()
        self.gateway.stop()
        stats = self.mock.stop()
        assert self.gateway.proc.returncode == 0, "".join(self.gateway.log[-50:])
        return stats

    def check(self, stats, window=0):
        """The accounting every fault must pass; `window` bounds the duplicates (requests that may
        have been answered on a connection that died before the answer was read). Returns the
        number of duplicates."""
        per_token = stats["delivered_per_token"]
        duplicates = 0
        misreported = []
        for token, result in self.results.items():
            accepted = per_token.get(token, 0)
            if result.status == DELIVERED:
                assert accepted >= 1, "DELIVERED but the provider never accepted %s" % token
                duplicates += accepted - 1
            elif accepted:
                misreported.append((token, result.status, result.reason))
                duplicates += accepted
        unknown = set(per_token) - set(self.results)
        assert not unknown, "the provider accepted tokens nobody sent: %s" % sorted(unknown)[:3]
        warnings = "".join([line for line in self.gateway.log if "level=warning" in line][-20:])
        assert duplicates <= window, "%d duplicates, window %d; the gateway's warnings:\n%s" % (
            duplicates, window, warnings)
        assert len(misreported) <= window, misreported[:5]
        sends = stats["requests"] if "sends" not in stats else stats["sends"]
        if window == 0:
            # Nothing was lost with a connection: every request the mock answered is an attempt
            # the gateway counted, and the other way round.
            assert sends == self.attempts, (sends, self.attempts)
        self.record_figures(duplicates, window, sends)
        return duplicates

    def record_figures(self, duplicates, window, provider_requests):
        """With FAULTS_FIGURES=FILE, appends this fault's figures as a JSON line (for RELIABILITY.md)."""
        path = os.environ.get("FAULTS_FIGURES")
        if not path:
            return
        counts = collections.Counter(push_pb2.Status.Name(r.status) for r in self.results.values())
        with open(path, "a") as fh:
            fh.write(json.dumps({
                "test": os.environ.get("PYTEST_CURRENT_TEST", "?").split(" ")[0].split("::")[-1],
                "long": LONG, "tokens": len(self.results), "results": dict(counts),
                "lost": 0, "duplicates": duplicates, "window": window, "provider_requests": provider_requests,
                "attempts": self.attempts}) + "\n")


def statuses(results):
    return collections.Counter((r.status, r.reason.split(":")[0]) for r in results)


def wait_completed(push, message_id, seconds):
    """The message's state once COMPLETED, or as it is after `seconds`."""
    deadline = time.time() + seconds
    while True:
        state = push.GetMessage(push_pb2.GetMessageRequest(message_id=message_id), timeout=10)
        if state.state == push_pb2.MESSAGE_STATE_COMPLETED or time.time() >= deadline:
            return state
        time.sleep(0.2)


# --- 5xx / 429 bursts ------------------------------------------------------------------------------

@pytest.mark.parametrize("flag,reason", [("--fail-503", "ServiceUnavailable"), ("--fail-500", "InternalServerError"),
                                         ("--fail-429", "TooManyRequests")])
def test_apns_error_bursts_are_retried_and_reported(tmp_path, flag, reason):
    rig = Rig(tmp_path, flags=[flag, "0.3"])
    try:
        results = rig.send(apns_tokens(0x100000))
        counts = statuses(results)
        assert set(counts) <= {(DELIVERED, ""), (FAILED, reason)}, counts
        assert counts[(DELIVERED, "")] > TOKENS * 0.9, counts
        for r in results:
            assert r.status == DELIVERED or r.attempts == 3, "FAILED only after 3 sends"
        rig.assert_healthy(apns_tokens(0x900000, 20))
    finally:
        stats = rig.finish()
    assert stats["by_reason"].get(reason, 0) > 0
    rig.check(stats)


def test_fcm_unavailable_and_quota_bursts_with_retry_after(tmp_path):
    rig = Rig(tmp_path, kind="mock-fcm", flags=["--fail-503", "0.15", "--fail-429", "0.1", "--retry-after", "1"])
    try:
        results = rig.send(fcm_tokens(0))
        counts = statuses(results)
        assert set(counts) <= {(DELIVERED, ""), (FAILED, "UNAVAILABLE"), (FAILED, "QUOTA_EXCEEDED")}, counts
        assert counts[(DELIVERED, "")] > TOKENS * 0.9, counts
        rig.assert_healthy(fcm_tokens(900_000, 20))
    finally:
        stats = rig.finish()
    rig.check(stats)


# --- GOAWAY -------------------------------------------------------------------------------------------

def test_goaway_mid_batch_resends_only_what_was_not_processed(tmp_path):
    # last-stream-id = the stream that triggered it: streams above it are refused and resent.
    rig = Rig(tmp_path, flags=["--goaway-after", "150"])
    try:
        results = rig.send_stream(apns_tokens(0x200000))
        assert all(r.status == DELIVERED for r in results), statuses(results)
        rig.assert_healthy(apns_tokens(0x900000, 20))
    finally:
        stats = rig.finish()
    assert stats["goaways_sent"] >= TOKENS // 150
    rig.check(stats)


def test_goaway_below_in_flight_streams_resends_them(tmp_path):
    # last-stream-id below streams still waiting for their answer (the mock delays answers): the
    # gateway must resend exactly those, none twice. Only the first two connections: a provider that
    # did this on every connection would be answering one request per connection (the first, which
    # raises the stream limit), and refused streams are resent without counting an attempt.
    rig = Rig(tmp_path, flags=["--goaway-after", "300", "--goaway-below-in-flight", "--delay-ms", "20",
                               "--faulty-connections", "2"])
    try:
        results = rig.send(apns_tokens(0x300000))
        assert all(r.status == DELIVERED for r in results), statuses(results)
        rig.assert_healthy(apns_tokens(0x900000, 20))
    finally:
        stats = rig.finish()
    assert stats["goaways_sent"] == 2 and stats["streams_refused"] > 0, stats
    rig.check(stats)


def test_fcm_goaway_mid_batch(tmp_path):
    rig = Rig(tmp_path, kind="mock-fcm", flags=["--goaway-after", "150"])
    try:
        results = rig.send_stream(fcm_tokens(100_000))
        assert all(r.status == DELIVERED for r in results), statuses(results)
        rig.assert_healthy(fcm_tokens(900_000, 20))
    finally:
        stats = rig.finish()
    assert stats["goaways_sent"] >= TOKENS // 150
    rig.check(stats)


# --- Connections that die -----------------------------------------------------------------------------

def test_tcp_reset_mid_stream(tmp_path):
    # The proxy resets (RST) the first two connections once 16 KB of answers went through; the
    # requests in flight are retried (one attempt each), so all of them are delivered.
    rig = Rig(tmp_path, flags=["--delay-ms", "5"], proxy={"mode": "reset", "reset_after_bytes": 16 * 1024,
                                                           "reset_connections": 2})
    try:
        results = rig.send(apns_tokens(0x400000))
        assert rig.proxy.resets == 2
        assert all(r.status == DELIVERED for r in results), statuses(results)
        assert any(r.attempts > 1 for r in results), "the reset hit requests in flight"
        rig.assert_healthy(apns_tokens(0x900000, 20))
        log = "".join(rig.gateway.log)
    finally:
        stats = rig.finish()
    assert "connection closed" in log
    # The window: what was in flight on the two connections that died (at most 1000 streams each).
    rig.check(stats, window=2 * 1000)


def test_peer_that_stops_answering_is_detected_by_ping(tmp_path):
    # The first connection goes silent after 200 streams (reads nothing, answers nothing, stays
    # open): the PING gets no answer within ping_timeout_seconds, the connection is replaced.
    rig = Rig(tmp_path, flags=["--stall-after", "200", "--faulty-connections", "1"], app_extra=FAST)
    try:
        results = rig.send(apns_tokens(0x500000))
        assert all(r.status == DELIVERED for r in results), statuses(results)
        rig.assert_healthy(apns_tokens(0x900000, 20))
        log = "".join(rig.gateway.log)
    finally:
        stats = rig.finish()
    assert stats["connections_stalled"] == 1 and stats["connections_opened"] >= 2, stats
    assert "no answer to PING" in log
    rig.check(stats, window=1000)


def test_peer_that_accepts_and_never_handshakes(tmp_path):
    # A blackhole: TCP accepted, not a byte back. connect_timeout_seconds bounds each attempt; after
    # three the requests are FAILED (ProviderUnreachable), then the provider comes back.
    rig = Rig(tmp_path, proxy={"mode": "blackhole"}, app_extra=FAST)
    try:
        results = rig.send(apns_tokens(0x600000, 50))
        assert {(r.status, r.reason.split(":")[0]) for r in results} == {(FAILED, "ProviderUnreachable")}
        assert "did not finish in time" in results[0].reason
        assert rig.proxy.blackholed >= 3
        rig.proxy.set_mode("pass")
        rig.assert_healthy(apns_tokens(0x900000, 20))
    finally:
        stats = rig.finish()
    rig.check(stats)


def test_max_concurrent_streams_lowered_to_one_mid_run(tmp_path):
    # One request at a time after the first 100 (each a full round trip): fewer tokens.
    rig = Rig(tmp_path, flags=["--lower-streams-after", "100", "--faulty-connections", "1"])
    try:
        results = rig.send(apns_tokens(0x700000, 2000 if LONG else 300))
        assert all(r.status == DELIVERED for r in results), statuses(results)
        rig.assert_healthy(apns_tokens(0x900000, 20))
    finally:
        stats = rig.finish()
    assert stats["stream_limits_lowered"] == 1
    assert stats["connections_opened"] == 1, "a lowered limit is no reason to reconnect"
    rig.check(stats)


# --- TLS -----------------------------------------------------------------------------------------------

def test_tls_handshake_failure_not_tls(tmp_path):
    # The peer answers the ClientHello with bytes that are not TLS.
    rig = Rig(tmp_path, proxy={"mode": "garbage"})
    try:
        results = rig.send(apns_tokens(0x800000, 50))
        assert {(r.status, r.reason.split(":")[0]) for r in results} == {(FAILED, "ProviderUnreachable")}
        rig.proxy.set_mode("pass")
        rig.assert_healthy(apns_tokens(0x900000, 20))
    finally:
        stats = rig.finish()
    rig.check(stats)


def test_tls_handshake_failure_untrusted_certificate(tmp_path):
    # The gateway does not trust the provider's certificate: every handshake fails on our side.
    other = MockProcess("mock-apns", str(tmp_path / "other"))
    other.stop()
    rig = Rig(tmp_path, ca_file=other.ca_file)
    try:
        results = rig.send(apns_tokens(0x810000, 50))
        assert {(r.status, r.reason.split(":")[0]) for r in results} == {(FAILED, "ProviderUnreachable")}
        reply = health_pb2_grpc.HealthStub(rig.channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
    finally:
        stats = rig.finish()
    assert stats["handshake_failures"] >= 3 and stats["requests"] == 0, stats
    rig.check(stats)


# --- Provider tokens -----------------------------------------------------------------------------------

def test_expired_provider_token_storm(tmp_path):
    # 30% of requests are answered 403 ExpiredProviderToken whatever their token. Each is sent
    # once more (the cache does not re-sign a token younger than 20 minutes: Apple would answer
    # TooManyProviderTokenUpdates), and a second refusal is final (REJECTED).
    rig = Rig(tmp_path, flags=["--expired-token-share", "0.3"])
    try:
        results = rig.send(apns_tokens(0xA00000))
        counts = statuses(results)
        assert set(counts) <= {(DELIVERED, ""), (REJECTED, "ExpiredProviderToken")}, counts
        assert counts[(DELIVERED, "")] > TOKENS * 0.8, counts
        assert all(r.attempts == 2 for r in results if r.status == REJECTED)
        rig.assert_healthy(apns_tokens(0x900000, 20))
    finally:
        stats = rig.finish()
    assert stats["by_reason"]["ExpiredProviderToken"] > 0
    rig.check(stats)


# --- Provider down, then back ----------------------------------------------------------------------------

def test_provider_down_then_back(tmp_path):
    """Sends and a Publish fan-out while the provider refuses connections for OUTAGE_SECONDS:
    each token of the Sends still gets exactly one result (FAILED while down: Send's contract is
    synchronous); the Publish holds its recipients and delivers every one once the provider is back."""
    rig = Rig(tmp_path, flags=["--delay-ms", "2"], proxy={"mode": "pass"})
    try:
        rig.send(apns_tokens(0xB00000, 200))
        registry = registry_pb2_grpc.RegistryStub(rig.channel)
        registry.CreateTopic(registry_pb2.CreateTopicRequest(name="outage"), timeout=10)
        subscribers = apns_tokens(0xC00000, 300)
        for token in subscribers:
            endpoint = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app=rig.app, token=token), timeout=10)
            registry.Subscribe(registry_pb2.SubscribeRequest(topic="outage", endpoint_id=endpoint.id), timeout=10)

        rig.proxy.set_mode("down")
        down_until = time.time() + OUTAGE_SECONDS
        message = rig.push.Publish(push_pb2.PublishRequest(topic="outage", message="while down"), timeout=10)
        batch = 0
        while time.time() < down_until:
            rig.send(apns_tokens(0xD00000 + batch * 100, 20))
            batch += 1
            time.sleep(0.2)
        rig.proxy.set_mode("pass")
        during = [r for t, r in rig.results.items() if int(t, 16) >= 0xD00000]
        assert batch >= 2 and len(during) == batch * 20
        assert all(r.status == FAILED and r.reason.split(":")[0] in ("ProviderUnreachable", "ConnectionLost")
                   for r in during), statuses(during)

        state = wait_completed(rig.push, message.message_id, 90)
        assert state.state == push_pb2.MESSAGE_STATE_COMPLETED, state
        # The fan-out held its recipients through the outage: every one delivered once it was back.
        assert state.total == len(subscribers) and state.delivered == len(subscribers), state
        assert state.waiting_for_provider == 0, state

        after = rig.send(apns_tokens(0xE00000))
        assert all(r.status == DELIVERED for r in after), statuses(after)
        rig.assert_healthy(apns_tokens(0x900000, 20))
    finally:
        stats = rig.finish()
    # Publish results are not in rig.results: take their tokens out of the mock's counts first.
    published = {t: stats["delivered_per_token"].pop(t) for t in subscribers if t in stats["delivered_per_token"]}
    assert len(published) == state.delivered and all(c == 1 for c in published.values())
    # The proxy cut the open connection when it went down: what was in flight is the window.
    rig.check(stats, window=1000)


# --- A Publish across a provider outage (issue 23, item 5) --------------------------------------------

HELD_SUBSCRIBERS = 20_000
HELD_OUTAGE_SECONDS = 60


def test_a_publish_outlives_a_60_second_provider_outage(tmp_path):
    """A 20,000-subscriber Publish while the provider refuses every connection for 60 s: its
    recipients are held for the provider (GetMessage `waiting_for_provider`,
    `pushgate_fanout_holds_total{event="held"}`), none is FAILED, and once the provider is back every
    subscriber is delivered exactly once (before: FAILED after 3 attempts, and never delivered)."""
    from conftest import load_subscribers, wait_metrics_port
    from test_hardening import metric

    mock = MockProcess("mock-apns", str(tmp_path / "mock"))
    proxy = FaultProxy(mock.port, mode="pass").start()
    store = str(tmp_path / "held.db")
    load_subscribers(store, "outage", "held", HELD_SUBSCRIBERS)
    gateway = Server({"apps": [mock.apns_app("held", proxy.port, connect_timeout_seconds=1)],
                      "metrics_listen": "127.0.0.1:0"}, str(tmp_path), store=store)
    gateway.metrics_port = wait_metrics_port(gateway)
    channel = grpc.insecure_channel(gateway.address)
    push = push_pb2_grpc.PushStub(channel)
    try:
        proxy.set_mode("down")
        back_at = time.time() + HELD_OUTAGE_SECONDS
        message_id = push.Publish(push_pb2.PublishRequest(topic="outage", message="through the outage"),
                                  timeout=10).message_id
        most_waiting = 0
        while time.time() < back_at:
            state = push.GetMessage(push_pb2.GetMessageRequest(message_id=message_id), timeout=10)
            assert state.failed == 0 and state.delivered == 0, state
            assert state.state == push_pb2.MESSAGE_STATE_FANNING_OUT, state
            most_waiting = max(most_waiting, state.waiting_for_provider)
            time.sleep(1)
        assert most_waiting == HELD_SUBSCRIBERS, most_waiting
        assert metric(gateway, "pushgate_fanout_holds_total", app="held", event="held") >= HELD_SUBSCRIBERS
        assert any("fan-out waiting for the provider" in line for line in gateway.log)

        proxy.set_mode("pass")
        state = wait_completed(push, message_id, 120)
        assert state.state == push_pb2.MESSAGE_STATE_COMPLETED, state
        assert (state.total, state.delivered, state.failed, state.waiting_for_provider) == (HELD_SUBSCRIBERS,) * 2 + (0, 0), state
        assert metric(gateway, "pushgate_notifications_total", app="held", status="failed") == 0
        assert metric(gateway, "pushgate_notifications_total", app="held", status="delivered") == HELD_SUBSCRIBERS
    finally:
        channel.close()
        proxy.stop()
        gateway.stop()
        stats = mock.stop()
    per_token = stats["delivered_per_token"]
    assert len(per_token) == HELD_SUBSCRIBERS and all(count == 1 for count in per_token.values())


def test_held_recipients_are_failed_once_max_hold_seconds_has_passed(tmp_path):
    """With `fanout.max_hold_seconds` 3 and a provider that stays down, the held recipients are FAILED
    with their last reason and the limit named (WatchEvents, GetMessage, given_up counted)."""
    from conftest import wait_metrics_port
    from test_hardening import metric

    mock = MockProcess("mock-apns", str(tmp_path / "mock"))
    proxy = FaultProxy(mock.port, mode="pass").start()
    gateway = Server({"apps": [mock.apns_app("held", proxy.port, connect_timeout_seconds=1)],
                      "fanout": {"max_hold_seconds": 3}, "metrics_listen": "127.0.0.1:0"}, str(tmp_path))
    gateway.metrics_port = wait_metrics_port(gateway)
    channel = grpc.insecure_channel(gateway.address)
    push = push_pb2_grpc.PushStub(channel)
    registry = registry_pb2_grpc.RegistryStub(channel)
    try:
        endpoint = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="held", token="%064x" % 0xABC),
                                           timeout=10)
        events = push.WatchEvents(push_pb2.WatchEventsRequest(), timeout=60)
        proxy.set_mode("down")
        message_id = push.Publish(push_pb2.PublishRequest(endpoint_id=endpoint.id, message="never"),
                                  timeout=10).message_id
        state = wait_completed(push, message_id, 40)
        assert state.state == push_pb2.MESSAGE_STATE_COMPLETED, state
        assert (state.total, state.failed, state.waiting_for_provider) == (1, 1, 0), state
        event = next(e for e in events if e.kind == push_pb2.DeliveryEvent.KIND_FAILED)
        events.cancel()
        assert event.message_id == message_id and "fanout.max_hold_seconds" in event.reason, event
        assert event.reason.startswith("ProviderUnreachable"), event.reason
        assert metric(gateway, "pushgate_fanout_holds_total", app="held", event="given_up") == 1
        assert any("fan-out gave up waiting for the provider" in line for line in gateway.log)
    finally:
        channel.close()
        proxy.stop()
        gateway.stop()
        mock.stop()
