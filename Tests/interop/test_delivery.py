"""Delivery: `pushgate serve` sends to an independent APNs look-alike (Python ssl + h2) over real TLS
and HTTP/2, and every token gets a result."""
import json
import subprocess
import time
import os

import grpc
import pytest

from pushgate.v1 import push_pb2, push_pb2_grpc

TOKEN = "ab" * 32
DEAD = "dd" * 32


def send(channel, notifications, timeout=60):
    return push_pb2_grpc.PushStub(channel).Send(push_pb2.SendRequest(notifications=notifications), timeout=timeout)


def test_ten_thousand_tokens_get_ten_thousand_results(channel, lookalike):
    before = len(lookalike.requests)
    # The look-alike is the session's: only what APNs would refuse from here on is this test's.
    refused_before = len(lookalike.invalid)
    tokens = ["%064x" % i for i in range(10_000)]
    reply = send(channel, [push_pb2.Notification(app="demo", tokens=tokens,
                                                 alert=push_pb2.Alert(title="Hi", body="Hello"), badge=3)])
    assert len(reply.results) == 10_000
    assert [r.token for r in reply.results] == tokens, "results come in request order"
    assert all(r.status == push_pb2.STATUS_DELIVERED for r in reply.results), \
        {r.reason for r in reply.results if r.status != push_pb2.STATUS_DELIVERED}
    assert all(r.http_status == 200 and r.attempts == 1 and len(r.id) == 36 for r in reply.results)
    received = lookalike.requests[before:]
    assert len(received) == 10_000
    assert not lookalike.invalid[refused_before:]
    headers, body = received[0]
    assert headers["apns-topic"] == "com.example.demo"
    assert headers["apns-push-type"] == "alert"
    assert headers["apns-priority"] == "10"
    assert headers[":authority"].startswith("127.0.0.1:")
    assert headers["authorization"].startswith("bearer ey")
    assert body == b'{"aps":{"alert":{"title":"Hi","body":"Hello"},"badge":3}}'
    assert len({h["authorization"] for h, _ in received}) == 1, "one provider token for all requests"
    assert lookalike.max_open_streams <= 1000


def test_unregistered_token_is_rejected_with_its_timestamp(channel):
    reply = send(channel, [push_pb2.Notification(app="demo", tokens=[TOKEN, DEAD],
                                                 alert=push_pb2.Alert(body="x"))])
    delivered, dead = reply.results
    assert delivered.status == push_pb2.STATUS_DELIVERED
    assert dead.status == push_pb2.STATUS_REJECTED
    assert dead.http_status == 410 and dead.reason == "Unregistered"
    assert dead.unregistered_at == 1700000000000
    assert dead.notification_index == 0 and dead.token == DEAD


def test_background_and_voip_headers(channel, lookalike):
    before = len(lookalike.requests)
    send(channel, [push_pb2.Notification(app="demo", tokens=[TOKEN], content_available=True),
                   push_pb2.Notification(app="voipapp", tokens=[TOKEN], push_type=push_pb2.PUSH_TYPE_VOIP,
                                         data_json='{"call":"42"}')])
    (background, _), (voip, voip_body) = lookalike.requests[before:before + 2] if \
        lookalike.requests[before][0]["apns-push-type"] == "background" else \
        list(reversed(lookalike.requests[before:before + 2]))
    assert background["apns-push-type"] == "background" and background["apns-priority"] == "5"
    assert voip["apns-topic"] == "com.example.voip.voip" and voip["apns-push-type"] == "voip"
    assert voip_body == b'{"aps":{},"call":"42"}'


def test_live_activity_update_and_push_to_start(channel, lookalike):
    """A typed Live Activity reaches the independent APNs look-alike as Apple documents it: push type
    liveactivity, the .push-type.liveactivity topic, the aps members, the alert with its sound."""
    before = len(lookalike.requests)
    update = push_pb2.Notification(
        app="demo", tokens=[TOKEN], alert=push_pb2.Alert(title="Goal!", body="2-1"), sound="goal.aiff",
        live_activity=push_pb2.LiveActivity(event="update", content_state_json='{"home": 2, "away": 1}',
                                            timestamp=1700000000, stale_date=1700003600, relevance_score=50))
    start = push_pb2.Notification(
        app="demo", tokens=[TOKEN],
        live_activity=push_pb2.LiveActivity(event="start", content_state_json='{"home": 0, "away": 0}',
                                            attributes_type="MatchAttributes",
                                            attributes_json='{"home": "Ajax", "away": "PSV"}', input_push_token=True))
    results = send(channel, [update, start]).results
    assert [r.status for r in results] == [push_pb2.STATUS_DELIVERED] * 2
    received = lookalike.requests[before:before + 2]
    by_event = {json.loads(body)["aps"]["event"]: (headers, json.loads(body)) for headers, body in received}
    headers, body = by_event["update"]
    assert headers["apns-push-type"] == "liveactivity" and headers["apns-topic"] == "com.example.demo.push-type.liveactivity"
    assert body == {"aps": {"timestamp": 1700000000, "event": "update", "content-state": {"home": 2, "away": 1},
                            "stale-date": 1700003600, "relevance-score": 50,
                            "alert": {"title": "Goal!", "body": "2-1", "sound": "goal.aiff"}}}
    _, body = by_event["start"]
    assert body["aps"]["attributes-type"] == "MatchAttributes" and body["aps"]["input-push-token"] == 1
    assert body["aps"]["attributes"] == {"home": "Ajax", "away": "PSV"}
    assert abs(body["aps"]["timestamp"] - time.time()) < 60, "timestamp defaults to now"
    with pytest.raises(grpc.RpcError) as refused:
        send(channel, [push_pb2.Notification(app="demo", tokens=[TOKEN], badge=1,
                                             live_activity=push_pb2.LiveActivity(event="end"))])
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert refused.value.details() == "notifications[0].badge: cannot be set with live_activity"


def test_send_stream_answers_each_request_in_order(channel):
    requests = [push_pb2.SendRequest(notifications=[push_pb2.Notification(
        app="demo", tokens=["%064x" % (1000 + i * 10 + j) for j in range(i + 1)], alert=push_pb2.Alert(body=str(i)))])
        for i in range(20)]
    responses = list(push_pb2_grpc.PushStub(channel).SendStream(iter(requests), timeout=60))
    assert [len(r.results) for r in responses] == [i + 1 for i in range(20)]
    for i, response in enumerate(responses):
        assert all(r.status == push_pb2.STATUS_DELIVERED for r in response.results)
        assert response.results[0].token == "%064x" % (1000 + i * 10)


def test_pushgate_send_prints_each_result(server):
    binary = os.environ.get("PUSHGATE_BIN")
    out = subprocess.run([binary, "send", "--server", server.address, "--app", "demo", "--token", TOKEN,
                          "--token", DEAD, "--title", "Hi", "--body", "there"],
                         capture_output=True, text=True, timeout=60)
    lines = out.stdout.strip().splitlines()
    assert out.returncode == 1, out.stderr
    assert lines[0].startswith("DELIVERED token=" + TOKEN) and "apns-id=" in lines[0]
    assert lines[1].startswith("REJECTED token=" + DEAD) and "reason=Unregistered" in lines[1]
