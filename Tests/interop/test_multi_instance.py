"""Several `pushgate serve` processes on one PostgreSQL database: the registry is shared, a Publish
accepted by one instance is fanned out by another, and when an instance is killed (-9) mid-fan-out
the others take its leased chunks over and every subscriber still gets the message, with duplicates
bounded by the dead instance's in-flight pages.

Needs a PostgreSQL server: PUSHGATE_TEST_PG_URL (`make interop` / `make test` start a private one with
scripts/pg-test-server.sh). The kill test runs a short form (20,000 subscribers, 2 instances) unless
PUSHGATE_SCALE_SUBSCRIBERS asks for more (`make scale`: 100,000 and 3 instances)."""
import collections
import os
import re
import signal
import time
import urllib.parse

import pytest

from conftest import PG_URL, Server, app_config, bench_token, database, load_subscribers, psql, start_instances  # noqa: F401 (database is a fixture)
from pushgate.v1 import push_pb2, push_pb2_grpc, registry_pb2, registry_pb2_grpc

pytestmark = pytest.mark.skipif(
    not PG_URL, reason="PUSHGATE_TEST_PG_URL is not set: no PostgreSQL server for the multi-instance tests "
                       "(`make interop` starts one with scripts/pg-test-server.sh)")

SCALE = int(os.environ.get("PUSHGATE_SCALE_SUBSCRIBERS", "20000"))
# FanOut.pagesInFlight pages of (at most) 1000 subscriptions per chunk an instance works at once.
PAGES_IN_FLIGHT, PAGE_SIZE = 3, 1000


def owner_of(server):
    """The fan-out lease owner id the instance logged at start (its claims are `owner/<random>`)."""
    for line in server.log:
        m = re.search(r"instance=(pushgate-[0-9a-f-]+)", line)
        if m:
            return m.group(1)
    raise AssertionError("no instance id in the log:\n" + "".join(server.log))


def wait_finished(push, message_id, timeout):
    deadline = time.time() + timeout
    while True:
        message = push.GetMessage(push_pb2.GetMessageRequest(message_id=message_id), timeout=10)
        if message.state in (push_pb2.MESSAGE_STATE_COMPLETED, push_pb2.MESSAGE_STATE_EXPIRED) or time.time() > deadline:
            return message
        time.sleep(0.1)


def test_registry_writes_on_one_instance_are_visible_on_another(tmp_path, lookalike, database):
    import grpc

    config = {"apps": [app_config("shared", "com.example.shared", lookalike)]}
    a, b = start_instances(tmp_path, database, [config, config])
    try:
        with grpc.insecure_channel(a.address) as ca, grpc.insecure_channel(b.address) as cb:
            ra, rb = registry_pb2_grpc.RegistryStub(ca), registry_pb2_grpc.RegistryStub(cb)
            ra.CreateTopic(registry_pb2.CreateTopicRequest(name="news"), timeout=10)
            endpoint = ra.CreateEndpoint(
                registry_pb2.CreateEndpointRequest(app="shared", token="ab" * 32, custom_user_data="u1"), timeout=10)
            # The same registration through the other instance is the same endpoint (SNS idempotency).
            again = rb.CreateEndpoint(
                registry_pb2.CreateEndpointRequest(app="shared", token="AB" * 32, custom_user_data="u1"), timeout=10)
            assert again.id == endpoint.id
            with pytest.raises(grpc.RpcError) as clash:
                rb.CreateEndpoint(
                    registry_pb2.CreateEndpointRequest(app="shared", token="ab" * 32, custom_user_data="u2"), timeout=10)
            assert clash.value.code() == grpc.StatusCode.ALREADY_EXISTS and endpoint.id in clash.value.details()
            sub = rb.Subscribe(registry_pb2.SubscribeRequest(topic="news", endpoint_id=endpoint.id), timeout=10)
            listed = ra.ListSubscriptions(registry_pb2.ListSubscriptionsRequest(topic="news"), timeout=10)
            assert [s.id for s in listed.subscriptions] == [sub.id]
            assert [t.name for t in rb.ListTopics(registry_pb2.ListTopicsRequest(), timeout=10).topics] == ["news"]
            rb.UpdateEndpoint(registry_pb2.UpdateEndpointRequest(id=endpoint.id, enabled=False), timeout=10)
            assert not ra.GetEndpoint(registry_pb2.GetEndpointRequest(id=endpoint.id), timeout=10).enabled
            ra.DeleteTopic(registry_pb2.DeleteTopicRequest(name="news"), timeout=10)
            assert not rb.ListTopics(registry_pb2.ListTopicsRequest(), timeout=10).topics
    finally:
        for s in (a, b):
            s.stop()
    assert a.proc.returncode == 0 and b.proc.returncode == 0


def test_publish_accepted_by_one_instance_is_fanned_out_by_another(tmp_path, lookalike, database):
    import grpc

    app = app_config("shared", "com.example.shared", lookalike)
    # A answers the API but works no fan-outs (workers 0); B works them and polls for new work.
    front = {"apps": [app], "fanout": {"workers": 0}}
    worker = {"apps": [app], "fanout": {"workers": 2, "chunk_size": 50, "poll_ms": 100}}
    a, b = start_instances(tmp_path, database, [front, worker])
    dead = "dd" * 32  # the look-alike answers 410 Unregistered for it
    try:
        tokens = load_subscribers(database, "news", "shared", 200)
        with grpc.insecure_channel(a.address) as ca, grpc.insecure_channel(b.address) as cb:
            ra = registry_pb2_grpc.RegistryStub(ca)
            gone = ra.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="shared", token=dead), timeout=10)
            ra.Subscribe(registry_pb2.SubscribeRequest(topic="news", endpoint_id=gone.id), timeout=10)
            before = len(lookalike.requests)
            reply = push_pb2_grpc.PushStub(ca).Publish(push_pb2.PublishRequest(topic="news", message="hi"), timeout=10)
            message = wait_finished(push_pb2_grpc.PushStub(ca), reply.message_id, 60)
            assert message.state == push_pb2.MESSAGE_STATE_COMPLETED, message
            assert (message.total, message.delivered, message.rejected) == (201, 200, 1), message
            # The same counts whichever instance is asked.
            assert push_pb2_grpc.PushStub(cb).GetMessage(
                push_pb2.GetMessageRequest(message_id=reply.message_id), timeout=10) == message
            # B disabled the dead token's endpoint; A sees it.
            seen = registry_pb2_grpc.RegistryStub(cb).GetEndpoint(registry_pb2.GetEndpointRequest(id=gone.id), timeout=10)
            assert not seen.enabled and seen.disabled_reason == "Unregistered"
            assert not ra.GetEndpoint(registry_pb2.GetEndpointRequest(id=gone.id), timeout=10).enabled
            # A direct publish through A is delivered by B too.
            direct = push_pb2_grpc.PushStub(ca).Publish(
                push_pb2.PublishRequest(endpoint_id=ra.ListEndpoints(
                    registry_pb2.ListEndpointsRequest(app="shared", page_size=1), timeout=10).endpoints[0].id,
                    message="direct"), timeout=10)
            assert wait_finished(push_pb2_grpc.PushStub(ca), direct.message_id, 30).delivered == 1
        counts = collections.Counter(h[":path"][len("/3/device/"):] for h, _ in lookalike.requests[before:])
        assert all(counts[t] >= 1 for t in tokens) and counts[dead] == 1
        assert sum(counts.values()) == 202  # nothing twice: no instance died
    finally:
        for s in (a, b):
            s.stop()
    assert not any("msg=fan-out" in line for line in a.log), "".join(a.log)


def test_kill_9_one_instance_mid_fan_out_the_others_finish(tmp_path, lookalike, database):
    import grpc

    count = 3 if SCALE >= 100_000 else 2
    workers, chunk = 2, 2000
    config = {"apps": [app_config("scale", "com.example.scale", lookalike)],
              "fanout": {"workers": workers, "chunk_size": chunk, "lease_seconds": 3, "poll_ms": 200}}
    load_subscribers(database, "scale", "scale", SCALE)
    servers = start_instances(tmp_path, database, [config] * count)
    victim, survivors = servers[0], servers[1:]
    victim_owner = owner_of(victim)
    try:
        with grpc.insecure_channel(survivors[0].address) as channel:
            push = push_pb2_grpc.PushStub(channel)
            before = len(lookalike.requests)
            reply = push.Publish(push_pb2.PublishRequest(topic="scale", message="every one"), timeout=10)
            # Kill the victim once the fan-out is well under way and it holds a chunk in progress, so
            # a takeover is certain (not just possible).
            held = 0
            deadline = time.time() + 120
            while time.time() < deadline:
                sent = len(lookalike.requests) - before
                if sent >= SCALE // 4:
                    held = int(psql(database, "SELECT count(*) FROM fanout_chunks WHERE state = 'working' "
                                              "AND lease_owner LIKE '%s/%%'" % victim_owner))
                    if held or sent >= SCALE * 3 // 4:
                        break
                time.sleep(0.02)
            os.kill(victim.proc.pid, signal.SIGKILL)
            victim.proc.wait(timeout=10)
            sent_at_kill = len(lookalike.requests) - before
            assert held >= 1, "the victim held no chunk in progress (%d sent)" % sent_at_kill
            assert sent_at_kill < SCALE, "the kill must land mid-fan-out"
            message = wait_finished(push, reply.message_id, 600)
        assert message.state == push_pb2.MESSAGE_STATE_COMPLETED, message
        counts = collections.Counter(h[":path"][len("/3/device/"):] for h, _ in lookalike.requests[before:])
        missing = [i for i in range(SCALE) if counts[bench_token(i)] == 0]
        assert not missing, "%d subscribers never got the message (first: %d)" % (len(missing), missing[0])
        duplicates = sum(c - 1 for c in counts.values() if c > 1)
        # The lease window: what the victim had sent and not committed, at most its workers' chunks'
        # pages in flight.
        assert duplicates <= workers * PAGES_IN_FLIGHT * PAGE_SIZE, duplicates
        # Progress counts only committed pages, so the counts are exact despite the resends.
        assert message.total == SCALE and message.delivered == SCALE, message
        print("kill test: %d subscribers, %d instances, %d sent before the kill, %d chunk(s) taken over, "
              "%d duplicates" % (SCALE, count, sent_at_kill, held, duplicates))
    finally:
        for s in servers:
            if s.alive():
                s.stop()
