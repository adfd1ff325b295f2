"""FCM HTTP v1 delivery end to end: stock grpcio stubs against `pushgate serve` with an fcm app,
delivering to the independent FCM look-alike (its own token endpoint checks our RS256 assertions)
and, in the same topic, to the independent APNs look-alike."""
import json
import time

import grpc
import pytest

from conftest import Server, app_config, fcm_app_config, wait_done
from mock_process import MockProcess
from pushgate.v1 import push_pb2, push_pb2_grpc, registry_pb2, registry_pb2_grpc


@pytest.fixture(scope="module")
def gateway(tmp_path_factory, lookalike, fcm_lookalike):
    config = {"apps": [fcm_app_config("android", fcm_lookalike), app_config("ios", "com.example.ios", lookalike)]}
    s = Server(config, str(tmp_path_factory.mktemp("pushgate-fcm")))
    yield s
    s.stop()
    assert s.proc.returncode == 0, "pushgate exited with %s:\n%s" % (s.proc.returncode, "".join(s.log))


@pytest.fixture
def stubs(gateway):
    channel = grpc.insecure_channel(gateway.address)
    yield push_pb2_grpc.PushStub(channel), registry_pb2_grpc.RegistryStub(channel)
    channel.close()


def fcm_token(n):
    return "fcm-token-%06d:APA91b%s" % (n, "x" * 120)


def messages_for(fcm, tokens, since):
    wanted = set(tokens)
    return [m for t, m in fcm.messages[since:] if t in wanted]




def test_send_many_tokens_over_one_connection_with_one_access_token(stubs, fcm_lookalike):
    push, _ = stubs
    connections, token_requests = fcm_lookalike.connections, fcm_lookalike.token_requests
    since = len(fcm_lookalike.messages)
    tokens = [fcm_token(n) for n in range(500)]
    n = push_pb2.Notification(app="android", tokens=tokens,
                              alert=push_pb2.Alert(title="Hi", body="there", image="https://example.com/a.png"),
                              data_json=json.dumps({"order": "42"}), priority=5, collapse_id="news",
                              expiration=int(time.time()) + 600)
    response = push.Send(push_pb2.SendRequest(notifications=[n]), timeout=30)
    assert [r.status for r in response.results] == [push_pb2.STATUS_DELIVERED] * 500
    assert all(r.id.startswith("projects/lookalike-project/messages/") for r in response.results)
    assert [r.token for r in response.results] == tokens
    fetched = fcm_lookalike.token_requests - token_requests
    assert fetched <= 1, "one access token for all of them"
    # The token exchange has a short connection of its own; one connection carries every send.
    assert fcm_lookalike.connections - connections - fetched <= 1
    received = messages_for(fcm_lookalike, tokens, since)
    assert len(received) == 500
    message = received[0]
    assert message["notification"] == {"title": "Hi", "body": "there", "image": "https://example.com/a.png"}
    assert message["data"] == {"order": "42"}
    assert message["android"]["priority"] == "NORMAL"
    assert message["android"]["collapse_key"] == "news"
    ttl = message["android"]["ttl"]
    assert ttl.endswith("s") and 590 <= int(ttl[:-1]) <= 600
    assert fcm_lookalike.max_open_streams > 1, "requests are multiplexed"


def test_bad_fcm_input_names_the_field(stubs):
    push, _ = stubs
    cases = [
        (push_pb2.Notification(app="android", tokens=["bad token!"], alert=push_pb2.Alert(body="x")),
         "notifications[0].tokens[0]"),
        (push_pb2.Notification(app="android", tokens=[fcm_token(1)], data_json='{"n": 1}'),
         "notifications[0].data_json"),
        (push_pb2.Notification(app="android", tokens=[fcm_token(1)], payload_json='{"token": "x"}'),
         "notifications[0].payload_json"),
    ]
    for notification, field in cases:
        with pytest.raises(grpc.RpcError) as info:
            push.Send(push_pb2.SendRequest(notifications=[notification]), timeout=10)
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert field in info.value.details(), info.value.details()


def test_a_refused_access_token_is_renewed_once(stubs, fcm_lookalike):
    push, _ = stubs
    first = push.Send(push_pb2.SendRequest(notifications=[
        push_pb2.Notification(app="android", tokens=[fcm_token(7)], alert=push_pb2.Alert(body="a"))]), timeout=10)
    assert first.results[0].status == push_pb2.STATUS_DELIVERED
    before = fcm_lookalike.token_requests
    fcm_lookalike.revoke_tokens()
    time.sleep(0.1)
    tokens = [fcm_token(n) for n in range(100, 150)]
    response = push.Send(push_pb2.SendRequest(notifications=[
        push_pb2.Notification(app="android", tokens=tokens, alert=push_pb2.Alert(body="b"))]), timeout=30)
    assert [r.status for r in response.results] == [push_pb2.STATUS_DELIVERED] * 50
    assert fcm_lookalike.token_requests == before + 1, "fifty 401s, one renewal"


def test_unregistered_disables_the_endpoint(stubs, fcm_lookalike):
    push, registry = stubs
    endpoint = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="android", token="fcm-unregistered-token"),
                                       timeout=10)
    assert endpoint.token == "fcm-unregistered-token", "FCM tokens are stored as they are"
    published = push.Publish(push_pb2.PublishRequest(endpoint_id=endpoint.id, message="hello"), timeout=10)
    done = wait_done(push, published.message_id)
    assert done.rejected == 1
    after = registry.GetEndpoint(registry_pb2.GetEndpointRequest(id=endpoint.id), timeout=10)
    assert not after.enabled
    assert after.disabled_reason == "UNREGISTERED"


def test_a_topic_delivers_the_apns_and_gcm_payloads_to_each(stubs, lookalike, fcm_lookalike):
    push, registry = stubs
    topic = "mixed-%d" % time.time_ns()
    registry.CreateTopic(registry_pb2.CreateTopicRequest(name=topic), timeout=10)
    ios_token = "%064x" % time.time_ns()
    android_tokens = [fcm_token(900), fcm_token(901)]
    endpoints = [registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="ios", token=ios_token), timeout=10)]
    endpoints += [registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="android", token=t), timeout=10)
                  for t in android_tokens]
    for endpoint in endpoints:
        registry.Subscribe(registry_pb2.SubscribeRequest(topic=topic, endpoint_id=endpoint.id), timeout=10)

    def publish(message, attributes=None):
        apns_since, fcm_since = len(lookalike.requests), len(fcm_lookalike.messages)
        published = push.Publish(push_pb2.PublishRequest(topic=topic, message=json.dumps(message),
                                                         message_structure="json", attributes=attributes or {}),
                                 timeout=10)
        done = wait_done(push, published.message_id)
        assert done.delivered == 3, done
        apns = [json.loads(b) for h, b in lookalike.requests[apns_since:] if h[":path"].endswith(ios_token)]
        return apns, messages_for(fcm_lookalike, android_tokens, fcm_since)

    # Legacy GCM shape: data values stringified, notification, time_to_live, collapse_key, priority.
    apns, fcm = publish({
        "default": "fallback",
        "APNS": json.dumps({"aps": {"alert": "for iOS"}}),
        "GCM": json.dumps({"notification": {"title": "T", "body": "for Android"}, "data": {"n": 5, "s": "x"},
                           "time_to_live": 120, "collapse_key": "c1", "priority": "high"}),
    })
    assert apns == [{"aps": {"alert": "for iOS"}}]
    assert len(fcm) == 2
    assert fcm[0]["notification"] == {"title": "T", "body": "for Android"}
    assert fcm[0]["data"] == {"n": "5", "s": "x"}
    assert fcm[0]["android"]["ttl"] == "120s"
    assert fcm[0]["android"]["collapse_key"] == "c1"
    assert fcm[0]["android"]["priority"] == "HIGH"

    # fcmV1Message shape, and the FCM TTL attribute winning over the payload's own.
    apns, fcm = publish({
        "default": "fallback",
        "GCM": json.dumps({"fcmV1Message": {"message": {"data": {"k": "v"}, "android": {"ttl": "3600s"}}}}),
    }, attributes={"AWS.SNS.MOBILE.FCM.TTL": "60"})
    assert apns == [{"aps": {"alert": "fallback"}}]
    assert sorted(m["token"] for m in fcm) == sorted(android_tokens)
    assert fcm[0]["data"] == {"k": "v"}
    assert 55 <= int(fcm[0]["android"]["ttl"][:-1]) <= 60

    # default only: an Android data message with key "default".
    apns, fcm = publish({"default": "just text"})
    assert fcm[0] == {"token": fcm[0]["token"], "data": {"default": "just text"}}


@pytest.mark.parametrize("mock_flags,http_version", [([], "2"), (["--http1"], "1.1")], ids=["http2", "http1.1"])
def test_pushgate_mock_fcm_with_faults(tmp_path, mock_flags, http_version):
    """The product pair: `pushgate mock-fcm` writes a service account, the gateway uses it, and 503s
    with Retry-After are retried until delivered, while dead tokens are rejected at once. The same
    results over HTTP/2 and over HTTP/1.1 (`mock-fcm --http1`, the app's `http_version` "1.1")."""
    mock = MockProcess("mock-fcm", str(tmp_path / "mock"), ["--unavailable-every", "5", "--retry-after", "1",
                                                            "--unregistered-prefix", "dead-"] + mock_flags)
    gateway = None
    try:
        gateway = Server({"apps": [mock.fcm_app("android", http_version=http_version)]}, str(tmp_path))
        channel = grpc.insecure_channel(gateway.address)
        push = push_pb2_grpc.PushStub(channel)
        # Every 5th send is answered 503: 4 of the first 20, and at most one of their retries, so
        # every token is delivered within the 3 attempts.
        tokens = [fcm_token(n) for n in range(20)] + ["dead-%d" % n for n in range(3)]
        started = time.time()
        response = push.Send(push_pb2.SendRequest(notifications=[
            push_pb2.Notification(app="android", tokens=tokens, alert=push_pb2.Alert(title="t", body="b"))]),
            timeout=30)
        statuses = [r.status for r in response.results]
        assert statuses == [push_pb2.STATUS_DELIVERED] * 20 + [push_pb2.STATUS_REJECTED] * 3, response
        assert {r.reason for r in response.results[20:]} == {"UNREGISTERED"}
        assert any(r.attempts == 2 for r in response.results[:20]), "some met a 503 first"
        assert time.time() - started >= 1, "the retries waited for Retry-After"
        channel.close()
    finally:
        if gateway:
            gateway.stop()
        stats = mock.stop()
    assert stats["by_status"].get("503", 0) >= 1 and stats["token_requests"] == 1, stats
    assert sorted(stats["delivered_per_token"].values()) == [1] * 20, "each token delivered exactly once"


def test_a_fan_out_cancelled_while_requests_wait_out_a_30_s_retry_after_settles_within_seconds(tmp_path):
    """Half of a Publish's requests are answered 503 with `Retry-After: 30` by `pushgate mock-fcm`;
    the message is cancelled while they wait. They end `cancelled` within about a second of the
    cancel (the provider connection looks through its waiting requests every second), so the
    message settles then, not when the 30 s are over; none of them is sent again."""
    mock = MockProcess("mock-fcm", str(tmp_path / "mock"),
                       ["--unavailable-every", "2", "--retry-after", "30", "--stats-interval", "1"])
    gateway = None
    try:
        gateway = Server({"apps": [mock.fcm_app("android")]}, str(tmp_path))
        channel = grpc.insecure_channel(gateway.address)
        push, registry = push_pb2_grpc.PushStub(channel), registry_pb2_grpc.RegistryStub(channel)
        registry.CreateTopic(registry_pb2.CreateTopicRequest(name="backoff"), timeout=10)
        for n in range(20):
            endpoint = registry.CreateEndpoint(
                registry_pb2.CreateEndpointRequest(app="android", token=fcm_token(n)), timeout=10)
            registry.Subscribe(registry_pb2.SubscribeRequest(topic="backoff", endpoint_id=endpoint.id), timeout=10)
        reply = push.Publish(push_pb2.PublishRequest(topic="backoff", message="waits out a backoff"), timeout=10)
        get = push_pb2.GetMessageRequest(message_id=reply.message_id)
        # A page's counts land when all of it has ended, so the message shows nothing until then:
        # the mock's stats file (written every second) says when all 20 first attempts were answered.
        deadline = time.time() + 30
        while True:
            try:
                stats = mock.stats()
            except (OSError, ValueError):
                stats = {}
            answered = stats.get("by_status", {}).get("503", 0) + sum(stats.get("delivered_per_token", {}).values())
            if answered >= 20 or time.time() > deadline:
                break
            time.sleep(0.2)
        assert answered == 20, stats
        before = push.GetMessage(get, timeout=10)
        assert before.state == push_pb2.MESSAGE_STATE_FANNING_OUT and before.delivered == 0, before
        cancelled = push.CancelMessage(push_pb2.CancelMessageRequest(message_id=reply.message_id), timeout=10)
        t_cancel = time.time()
        assert cancelled.state == push_pb2.MESSAGE_STATE_CANCELLED, cancelled
        while True:
            message = push.GetMessage(get, timeout=10)
            settled = message.total == 20 and message.delivered + message.failed + message.cancelled == 20
            if settled or time.time() > t_cancel + 25:
                break
            time.sleep(0.05)
        settled_after = time.time() - t_cancel
        assert (message.total, message.delivered, message.cancelled, message.failed) == (20, 10, 10, 0), message
        assert settled_after < 8, "settled %.1f s after the cancel: the 30 s backoff was waited out" % settled_after
        channel.close()
    finally:
        if gateway:
            gateway.stop()
        stats = mock.stop()
    assert stats["by_status"].get("503", 0) == 10, stats
    assert sorted(stats["delivered_per_token"].values()) == [1] * 10, "the 10 answered 503 were not sent again"
