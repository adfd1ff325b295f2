"""Metrics: a gateway with `metrics_listen` serves Prometheus text on /metrics (parsed here with the
reference `prometheus_client` parser) and /healthz; the notification counters and latency histograms
add up to exactly what the independent APNs look-alike received."""
import json
import os
import re
import time
import urllib.error
import urllib.request

import grpc
import pytest
from prometheus_client.parser import text_string_to_metric_families

from conftest import Server, wait_metrics_port, app_config
from pushgate.v1 import push_pb2, push_pb2_grpc, registry_pb2, registry_pb2_grpc

TOPIC = "com.example.metrics"
DEAD = "dd" * 32
SEND = "pushgate.v1.Push/Send"


def token(n):
    return "%064x" % (0x3E7000 + n)


@pytest.fixture(scope="module")
def gateway(tmp_path_factory, lookalike):
    config = {"metrics_listen": "127.0.0.1:0",
              "apps": [app_config("metricsapp", TOPIC, lookalike), app_config("idleapp", "com.example.idle", lookalike)]}
    s = Server(config, str(tmp_path_factory.mktemp("metrics")))
    s.metrics_port = wait_metrics_port(s)
    yield s
    s.stop()
    assert s.proc.returncode == 0, "pushgate exited with %s:\n%s" % (s.proc.returncode, "".join(s.log))


def http(gateway, path, method="GET"):
    request = urllib.request.Request("http://127.0.0.1:%d%s" % (gateway.metrics_port, path), method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read().decode()


def scrape(gateway):
    status, headers, body = http(gateway, "/metrics")
    assert status == 200
    assert headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    samples = {}
    types = {}
    for family in text_string_to_metric_families(body):
        types[family.name] = family.type
        for sample in family.samples:
            key = (sample.name, tuple(sorted(sample.labels.items())))
            assert key not in samples, "duplicate sample %s" % (key,)
            samples[key] = sample.value
    return samples, types


def value(samples, name, **labels):
    return samples.get((name, tuple(sorted(labels.items()))), 0)


def total(samples, name, **labels):
    """The sum over every sample of `name` whose labels include `labels`."""
    return sum(v for (n, ls), v in samples.items() if n == name and set(labels.items()) <= set(ls))


def test_counters_and_histograms_match_what_apns_received(gateway, lookalike):
    channel = grpc.insecure_channel(gateway.address)
    push = push_pb2_grpc.PushStub(channel)
    registry = registry_pb2_grpc.RegistryStub(channel)
    before = len(lookalike.requests)

    # Send: 30 live tokens and the look-alike's unregistered one (410), in two notifications.
    reply = push.Send(push_pb2.SendRequest(notifications=[
        push_pb2.Notification(app="metricsapp", tokens=[token(i) for i in range(20)] + [DEAD],
                              alert=push_pb2.Alert(body="a")),
        push_pb2.Notification(app="metricsapp", tokens=[token(i) for i in range(20, 30)],
                              alert=push_pb2.Alert(body="b"))]), timeout=30)
    assert [r.status for r in reply.results].count(push_pb2.STATUS_REJECTED) == 1
    # SendStream: two requests (one of them to the dead token again).
    replies = list(push.SendStream(iter([
        push_pb2.SendRequest(notifications=[push_pb2.Notification(app="metricsapp", tokens=[token(40), DEAD],
                                                                  alert=push_pb2.Alert(body="c"))]),
        push_pb2.SendRequest(notifications=[push_pb2.Notification(app="metricsapp", tokens=[token(41)],
                                                                  alert=push_pb2.Alert(body="d"))])]), timeout=30))
    assert len(replies) == 2
    # A Send that fails validation (unknown app): counted as an RPC, nothing sent.
    with pytest.raises(grpc.RpcError) as info:
        push.Send(push_pb2.SendRequest(notifications=[push_pb2.Notification(
            app="nosuchapp", tokens=[token(99)], alert=push_pb2.Alert(body="x"))]), timeout=10)
    assert info.value.code() == grpc.StatusCode.NOT_FOUND
    # Publish: a topic with 4 live endpoints and the dead one, fanned out in the background.
    registry.CreateTopic(registry_pb2.CreateTopicRequest(name="metrics"), timeout=10)
    for t in [token(50 + i) for i in range(4)] + [DEAD]:
        e = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="metricsapp", token=t), timeout=10)
        registry.Subscribe(registry_pb2.SubscribeRequest(topic="metrics", endpoint_id=e.id), timeout=10)
    message_id = push.Publish(push_pb2.PublishRequest(topic="metrics", message="hello"), timeout=10).message_id
    deadline = time.time() + 30
    while push.GetMessage(push_pb2.GetMessageRequest(message_id=message_id), timeout=10).state != \
            push_pb2.MESSAGE_STATE_COMPLETED:
        assert time.time() < deadline, "fan-out did not complete"
        time.sleep(0.05)
    channel.close()

    received = [h for h, _ in lookalike.requests[before:] if h.get("apns-topic") == TOPIC]
    dead = sum(1 for h in received if h[":path"] == "/3/device/" + DEAD)
    assert (len(received), dead) == (31 + 3 + 5, 3)

    samples, types = scrape(gateway)
    n = "pushgate_notifications_total"
    assert types["pushgate_notifications"] == "counter"
    assert value(samples, n, app="metricsapp", platform="apns", status="delivered", reason="") == len(received) - dead
    assert value(samples, n, app="metricsapp", platform="apns", status="rejected", reason="Unregistered") == dead
    assert total(samples, n, app="metricsapp") == len(received), "no other outcomes"
    assert total(samples, n, app="idleapp") == 0

    assert types["pushgate_provider_request_seconds"] == "histogram"
    provider = "pushgate_provider_request_seconds"
    assert value(samples, provider + "_count", app="metricsapp") == len(received)
    assert value(samples, provider + "_bucket", app="metricsapp", le="+Inf") == len(received)
    assert 0 < value(samples, provider + "_sum", app="metricsapp") < len(received) * 5
    buckets = sorted((float(dict(ls)["le"]), v) for (name, ls), v in samples.items()
                     if name == provider + "_bucket" and dict(ls)["app"] == "metricsapp")
    assert [v for _, v in buckets] == sorted(v for _, v in buckets), "buckets are cumulative"

    # Send latency: one per SendRequest (2 Sends and the 2 SendStream requests, the invalid one too).
    assert value(samples, "pushgate_send_seconds_count") == 4
    assert value(samples, "pushgate_send_seconds_bucket", le="+Inf") == 4
    assert value(samples, "pushgate_rpc_total", method=SEND, code="OK") == 1
    assert value(samples, "pushgate_rpc_total", method=SEND, code="NOT_FOUND") == 1
    assert value(samples, "pushgate_rpc_total", method="pushgate.v1.Push/SendStream", code="OK") == 1
    assert value(samples, "pushgate_rpc_total", method="pushgate.v1.Push/Publish", code="OK") == 1
    assert value(samples, "pushgate_rpc_total", method="pushgate.v1.Registry/CreateEndpoint", code="OK") == 5
    assert value(samples, "pushgate_rpc_seconds_count", method=SEND) == 2
    rpcs = total(samples, "pushgate_rpc_total")
    assert total(samples, "pushgate_rpc_seconds_count") == rpcs

    assert value(samples, "pushgate_provider_connections", app="metricsapp") == 1
    assert value(samples, "pushgate_provider_connections", app="idleapp") == 0
    assert value(samples, "pushgate_provider_streams_in_flight", app="metricsapp") == 0
    assert value(samples, "pushgate_queue_depth", app="metricsapp") == 0
    assert ("pushgate_fanouts_running", ()) in samples
    age = samples[("pushgate_provider_token_age_seconds", (("app", "metricsapp"),))]
    assert 0 <= age < 300
    # Both apps use the same (team, key), hence the same token.
    assert samples[("pushgate_provider_token_age_seconds", (("app", "idleapp"),))] == age


def test_every_documented_metric_is_served_with_help_and_type(gateway):
    _, _, body = http(gateway, "/metrics")
    names = set(re.findall(r"^# TYPE (\S+) ", body, re.M))
    # The metrics table of docs/operations.md is the documentation: served and documented are the same set.
    operations = open(os.path.join(os.path.dirname(__file__), "..", "..", "docs", "operations.md")).read()
    documented = set(re.findall(r"^\| `((?:pushgate|process)_\w+)` \|", operations, re.M))
    assert "pushgate_provider_protections_total" in documented
    assert names == documented
    assert set(re.findall(r"^# HELP (\S+) ", body, re.M)) == names


def test_healthz_and_other_paths(gateway):
    status, _, body = http(gateway, "/healthz")
    assert (status, body) == (200, "ok\n")
    assert http(gateway, "/")[0] == 404
    assert http(gateway, "/metrics/extra")[0] == 404
    status, headers, _ = http(gateway, "/metrics", method="POST")
    assert status == 405 and headers["Allow"] == "GET"


def test_metrics_listen_is_validated(tmp_path, lookalike):
    with pytest.raises(RuntimeError, match="metrics_listen"):
        Server({"metrics_listen": "nonsense", "apps": [app_config("a", TOPIC, lookalike)]}, str(tmp_path))


def test_messages_published_scheduled_and_cancelled_are_counted_by_target(gateway):
    channel = grpc.insecure_channel("127.0.0.1:%d" % gateway.port)
    registry = registry_pb2_grpc.RegistryStub(channel)
    push = push_pb2_grpc.PushStub(channel)
    endpoint = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(
        app="metricsapp", token=token(900), user_id="metrics-user"), timeout=10)
    before, _ = scrape(gateway)
    push.Publish(push_pb2.PublishRequest(endpoint_id=endpoint.id, message="now"), timeout=10)
    later = push.Publish(push_pb2.PublishRequest(
        user_id="metrics-user", message="later", deliver_at=int(time.time() * 1000) + 600_000), timeout=10)
    push.CancelMessage(push_pb2.CancelMessageRequest(message_id=later.message_id), timeout=10)
    after, _ = scrape(gateway)
    name = "pushgate_messages_total"
    for target, event in (("endpoint", "published"), ("user", "scheduled"), ("user", "cancelled")):
        assert value(after, name, target=target, event=event) == value(before, name, target=target, event=event) + 1
    channel.close()
