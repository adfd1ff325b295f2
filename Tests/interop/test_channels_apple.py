"""Pushgate's Channels service held to Apple's documented channel management API and broadcast
endpoint (iOS 18 Live Activity broadcasts), through the gateway's gRPC API with stock grpcio, against
apple_channels_lookalike.py: a look-alike written from Apple's pages alone (its rules and their
sources: apple_channels_lookalike.md), not from Pushgate's code, mock or earlier look-alike.

What the gateway promises on top of Apple (docs/api.md, "Broadcast channels"): ListChannels from
its registry with no call to Apple; NOT_FOUND, and the record removed, when Apple no longer knows a
recorded channel; `expiration` 0 only on a No Message Stored channel (INVALID_ARGUMENT naming
`notification.expiration`, nothing sent)."""
import json
import os
import shutil
import subprocess
import time
import uuid

import grpc
import pytest

from apple_channels_lookalike import AppleLookalike
from conftest import Server
from pushgate.v1 import channels_pb2, channels_pb2_grpc, push_pb2

BUNDLE = "com.example.scores"          # lowercase: see apple_channels_lookalike.md (TopicMismatch)
APP = "scores"
NO_STORAGE = channels_pb2.MESSAGE_STORAGE_POLICY_NO_STORAGE
MOST_RECENT = channels_pb2.MESSAGE_STORAGE_POLICY_MOST_RECENT
REQUIRED_BROADCAST_HEADERS = ("authorization", "apns-channel-id", "apns-expiration", "apns-priority", "apns-push-type")


@pytest.fixture(scope="module")
def apple(tmp_path_factory):
    server = AppleLookalike(str(tmp_path_factory.mktemp("apple")), bundles={BUNDLE}).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def gateway(tmp_path_factory, apple):
    s = Server({"apps": [apple.app_config(APP, BUNDLE)]}, str(tmp_path_factory.mktemp("pushgate")))
    yield s
    s.stop()


@pytest.fixture(scope="module")
def channels(gateway):
    ch = grpc.insecure_channel(gateway.address)
    yield channels_pb2_grpc.ChannelsStub(ch)
    ch.close()


class Watch:
    """What Apple saw during one test: every request after `mark`, none refused except for the
    reasons the test expects, and no breach of a rule Apple gives no error for."""

    def __init__(self, apple):
        self.apple, self.state = apple, apple.state
        self.mark = self.state.mark()
        self.violations = len(self.state.violations)
        self.expected = set()

    def expect(self, *reasons):
        self.expected.update(reasons)

    def requests(self, host=None, method=None):
        return self.state.since(self.mark, host=host, method=method)

    def check(self):
        unexpected = [(r["method"], r["path"], r["status"], r["reason"]) for r in self.requests()
                      if r["reason"] is not None and r["reason"] not in self.expected]
        assert not unexpected, "Apple's look-alike refused requests: %s" % unexpected
        assert self.state.violations[self.violations:] == []


@pytest.fixture
def watch(apple):
    """Each test ends with `watch.check()` (a check in the fixture's teardown would add an ERROR to
    every test that already failed)."""
    return Watch(apple)


def create(channels, policy, **extra):
    return channels.CreateChannel(channels_pb2.CreateChannelRequest(app=APP, message_storage_policy=policy, **extra),
                                  timeout=10)


def broadcast(channels, channel_id, event="update", content_state=None, **notification):
    live = push_pb2.LiveActivity(event=event, content_state_json=json.dumps(content_state or {"home": 1, "away": 0},
                                                                            separators=(",", ":")))
    return channels.Broadcast(channels_pb2.BroadcastRequest(
        channel_id=channel_id, notification=push_pb2.Notification(app=APP, live_activity=live, **notification)),
        timeout=10)


def listed(channels):
    return {c.channel_id for c in channels.ListChannels(channels_pb2.ListChannelsRequest(app=APP, page_size=1000),
                                                        timeout=10).channels}


def only(records, what):
    assert len(records) == 1, "%s: expected one request at Apple, got %s" % (
        what, [(r["host"], r["method"], r["path"], r["status"]) for r in records])
    return records[0]


def assert_status(call, code, *fragments):
    with pytest.raises(grpc.RpcError) as info:
        call()
    assert info.value.code() == code, "%s: %s" % (info.value.code(), info.value.details())
    for fragment in fragments:
        assert fragment in (info.value.details() or ""), info.value.details()
    return info.value


# -- creating, reading, listing, deleting ------------------------------------------------------

@pytest.mark.parametrize("policy,wire", [(NO_STORAGE, 0), (MOST_RECENT, 1)])
def test_create_channel_sends_apples_create_request_and_answers_apples_id(channels, apple, watch, policy, wire):
    request_id = str(uuid.uuid4())
    before = time.time()
    channel = create(channels, policy, request_id=request_id)
    sent = only(watch.requests(), "CreateChannel")
    assert (sent["host"], sent["method"], sent["path"]) == ("manage", "POST", "/1/apps/%s/channels" % BUNDLE)
    assert sent["status"] == 201
    # The body table: both fields Required; 0 No Message Stored, 1 Most Recent; push-type LiveActivity.
    assert json.loads(sent["body"]) == {"message-storage-policy": wire, "push-type": "LiveActivity"}
    assert sent["headers"]["authorization"].startswith("bearer ")
    assert sent["headers"].get("apns-request-id") == request_id
    # The channel is the one Apple made, named by its apns-channel-id response header.
    assert channel.channel_id == sent["response_headers"]["apns-channel-id"]
    assert apple.state.policy(BUNDLE, channel.channel_id) == wire
    assert (channel.app, channel.message_storage_policy) == (APP, policy)
    assert before * 1000 - 5000 <= channel.created_at <= time.time() * 1000 + 5000
    assert channel.channel_id in listed(channels)
    watch.check()


def test_get_channel_reads_it_at_apple(channels, apple, watch):
    made = create(channels, MOST_RECENT)
    mark = apple.state.mark()
    got = channels.GetChannel(channels_pb2.GetChannelRequest(app=APP, channel_id=made.channel_id), timeout=10)
    read = only(apple.state.since(mark), "GetChannel")
    assert (read["host"], read["method"], read["path"]) == ("manage", "GET", "/1/apps/%s/channels" % BUNDLE)
    assert read["headers"].get("apns-channel-id") == made.channel_id
    assert read["status"] == 200
    assert (got.app, got.channel_id, got.message_storage_policy) == (APP, made.channel_id, MOST_RECENT)
    watch.check()


def test_list_channels_is_the_registry_and_asks_apple_nothing(channels, apple, watch):
    made = {create(channels, NO_STORAGE).channel_id, create(channels, MOST_RECENT).channel_id}
    mark = apple.state.mark()
    assert made <= listed(channels)
    assert apple.state.since(mark) == []
    watch.check()


def test_delete_channel_deletes_it_at_apple_and_in_the_registry(channels, apple, watch):
    made = create(channels, NO_STORAGE)
    mark = apple.state.mark()
    channels.DeleteChannel(channels_pb2.DeleteChannelRequest(app=APP, channel_id=made.channel_id), timeout=10)
    deleted = only(apple.state.since(mark), "DeleteChannel")
    assert (deleted["host"], deleted["method"], deleted["path"]) == ("manage", "DELETE", "/1/apps/%s/channels" % BUNDLE)
    assert deleted["headers"].get("apns-channel-id") == made.channel_id
    assert deleted["status"] == 204
    assert not apple.state.knows(BUNDLE, made.channel_id)
    assert made.channel_id not in listed(channels)
    # Not recorded any more: NOT_FOUND before anything is sent (docs/api.md).
    mark = apple.state.mark()
    assert_status(lambda: broadcast(channels, made.channel_id), grpc.StatusCode.NOT_FOUND)
    assert apple.state.since(mark) == []
    watch.check()


# -- broadcasting ------------------------------------------------------------------------------

def sent_broadcast(apple, mark, channel_id):
    sent = only(apple.state.since(mark), "Broadcast")
    assert (sent["host"], sent["method"], sent["path"]) == ("push", "POST", "/4/broadcasts/apps/%s" % BUNDLE)
    missing = [h for h in REQUIRED_BROADCAST_HEADERS if h not in sent["headers"]]
    assert not missing, "broadcast without Apple's required headers %s: %s" % (missing, sent["headers"])
    assert sent["headers"]["apns-channel-id"] == channel_id
    assert sent["headers"]["apns-push-type"].lower() == "liveactivity"
    assert sent["headers"]["authorization"].startswith("bearer ")
    return sent


def assert_delivered(result, sent, channel_id):
    assert sent["status"] == 200, (sent["status"], sent["reason"])
    assert result.status == push_pb2.STATUS_DELIVERED, result
    assert (result.token, result.http_status) == (channel_id, 200)
    # Apple answers apns-request-id and apns-unique-id (no apns-id); an id, when reported, is one of them.
    known = {sent["response_headers"].get("apns-request-id"), sent["response_headers"].get("apns-unique-id"),
             sent["headers"].get("apns-id"), sent["headers"].get("apns-request-id"), ""}
    assert result.id in known, (result.id, known)


def test_broadcast_on_a_no_storage_channel_with_the_default_expiration(channels, apple, watch):
    made = create(channels, NO_STORAGE)
    mark = apple.state.mark()
    result = broadcast(channels, made.channel_id, content_state={"home": 1, "away": 0}).result
    sent = sent_broadcast(apple, mark, made.channel_id)
    # "Providing a nonzero expiration for a channel created with the No Message Stored storage
    # policy results in message rejection": the header is required, and 0.
    assert sent["headers"]["apns-expiration"] == "0"
    assert sent["headers"]["apns-priority"] == "10"            # proto: default 10
    aps = json.loads(sent["body"])["aps"]
    assert (aps["event"], aps["content-state"]) == ("update", {"home": 1, "away": 0})
    assert_delivered(result, sent, made.channel_id)
    watch.check()


def test_broadcast_on_a_most_recent_channel_with_a_set_expiration(channels, apple, watch):
    made = create(channels, MOST_RECENT)
    expiration = int(time.time()) + 3600                        # within the 8 hours Most Recent keeps
    mark = apple.state.mark()
    result = broadcast(channels, made.channel_id, event="end", content_state={"home": 2, "away": 1},
                       expiration=expiration, priority=5).result
    sent = sent_broadcast(apple, mark, made.channel_id)
    assert sent["headers"]["apns-expiration"] == str(expiration)
    assert sent["headers"]["apns-priority"] == "5"
    assert json.loads(sent["body"])["aps"]["event"] == "end"
    assert_delivered(result, sent, made.channel_id)
    watch.check()


def test_broadcast_on_a_most_recent_channel_with_the_default_expiration(channels, apple, watch):
    made = create(channels, MOST_RECENT)
    mark = apple.state.mark()
    result = broadcast(channels, made.channel_id, priority=1).result
    sent = sent_broadcast(apple, mark, made.channel_id)
    # Required on every broadcast, whatever the channel: a UNIX epoch in seconds (0 included).
    assert sent["headers"]["apns-expiration"].isdigit()
    assert sent["headers"]["apns-priority"] == "1"
    assert_delivered(result, sent, made.channel_id)
    watch.check()


def test_a_set_expiration_on_a_no_storage_channel_is_refused_before_sending(channels, apple, watch):
    made = create(channels, NO_STORAGE)
    mark = apple.state.mark()
    assert_status(lambda: broadcast(channels, made.channel_id, expiration=int(time.time()) + 3600),
                  grpc.StatusCode.INVALID_ARGUMENT, "notification.expiration")
    assert apple.state.since(mark) == []
    assert made.channel_id in listed(channels)
    watch.check()


def content_state_for(channels, apple, channel_id, size):
    """A content state whose broadcast body is `size` bytes: the gateway's body around a small
    content state, measured at the look-alike, tells how much to add."""
    mark = apple.state.mark()
    probe = {"s": ""}
    broadcast(channels, channel_id, content_state=probe)
    body = only(apple.state.since(mark, host="push"), "probe broadcast")["body"]
    return {"s": "x" * (size - len(body))}


def test_a_broadcast_of_about_5000_bytes_is_delivered(channels, apple, watch):
    made = create(channels, NO_STORAGE)
    state = content_state_for(channels, apple, made.channel_id, 5000)
    mark = apple.state.mark()
    result = broadcast(channels, made.channel_id, content_state=state).result
    sent = sent_broadcast(apple, mark, made.channel_id)
    # Apple: "the payload is limited to a maximum size of 5 KB (5,120 bytes)", not a token push's 4 KB.
    assert 4096 < len(sent["body"]) <= 5120, len(sent["body"])
    assert_delivered(result, sent, made.channel_id)
    watch.check()


def test_a_broadcast_over_5120_bytes_is_refused_or_answered_as_apple_does(channels, apple, watch):
    made = create(channels, NO_STORAGE)
    state = content_state_for(channels, apple, made.channel_id, 5200)
    watch.expect("PayloadTooLarge")
    mark = apple.state.mark()
    try:
        result = broadcast(channels, made.channel_id, content_state=state).result
    except grpc.RpcError as error:
        # Refused before sending: INVALID_ARGUMENT naming the field, and nothing reached Apple.
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, (error.code(), error.details())
        assert "notification" in error.details(), error.details()
        assert apple.state.since(mark) == []
    else:
        # Or sent, and Apple's answer reported: 413 PayloadTooLarge, a refusal for good.
        sent = sent_broadcast(apple, mark, made.channel_id)
        assert len(sent["body"]) > 5120
        assert (sent["status"], sent["reason"]) == (413, "PayloadTooLarge")
        assert result.status == push_pb2.STATUS_REJECTED, result
        assert (result.http_status, result.reason) == (413, "PayloadTooLarge")
    assert made.channel_id in listed(channels)                 # a refusal is not a gone channel
    watch.check()


# -- a channel Apple no longer knows -------------------------------------------------------------

def forgotten_channel(channels, apple, policy=NO_STORAGE):
    made = create(channels, policy)
    apple.state.forget(BUNDLE, made.channel_id)                # deleted behind the gateway's back
    return made.channel_id


def assert_gone(channels, apple, channel_id):
    """NOT_FOUND and the record removed (docs/api.md): not listed, and NOT_FOUND from the registry
    without asking Apple again."""
    assert channel_id not in listed(channels)
    mark = apple.state.mark()
    assert_status(lambda: channels.GetChannel(channels_pb2.GetChannelRequest(app=APP, channel_id=channel_id),
                                              timeout=10), grpc.StatusCode.NOT_FOUND)
    assert apple.state.since(mark) == []


def test_broadcast_on_a_channel_apple_forgot_is_not_found_and_the_record_goes(channels, apple, watch):
    channel_id = forgotten_channel(channels, apple)
    watch.expect("ChannelNotRegistered")
    mark = apple.state.mark()
    assert_status(lambda: broadcast(channels, channel_id), grpc.StatusCode.NOT_FOUND)
    sent = sent_broadcast(apple, mark, channel_id)
    # Apple's table: 400 ChannelNotRegistered, "The apns-channel-id header used in the request doesn't exist."
    assert (sent["status"], sent["reason"]) == (400, "ChannelNotRegistered")
    assert_gone(channels, apple, channel_id)
    watch.check()


def test_get_channel_apple_forgot_is_not_found_and_the_record_goes(channels, apple, watch):
    channel_id = forgotten_channel(channels, apple, MOST_RECENT)
    watch.expect("ChannelNotRegistered")
    mark = apple.state.mark()
    assert_status(lambda: channels.GetChannel(channels_pb2.GetChannelRequest(app=APP, channel_id=channel_id),
                                              timeout=10), grpc.StatusCode.NOT_FOUND)
    read = only(apple.state.since(mark), "GetChannel")
    assert (read["method"], read["status"], read["reason"]) == ("GET", 400, "ChannelNotRegistered")
    assert_gone(channels, apple, channel_id)
    watch.check()


def test_delete_channel_apple_forgot_is_not_found_and_the_record_goes(channels, apple, watch):
    channel_id = forgotten_channel(channels, apple)
    watch.expect("ChannelNotRegistered")
    mark = apple.state.mark()
    assert_status(lambda: channels.DeleteChannel(channels_pb2.DeleteChannelRequest(app=APP, channel_id=channel_id),
                                                 timeout=10), grpc.StatusCode.NOT_FOUND)
    deleted = only(apple.state.since(mark), "DeleteChannel")
    assert (deleted["method"], deleted["status"], deleted["reason"]) == ("DELETE", 400, "ChannelNotRegistered")
    assert_gone(channels, apple, channel_id)
    watch.check()


def test_delete_channel_apple_forgot_answered_404_badpath_as_observed_live(channels, apple, watch):
    """Not Apple's table but a published sandbox probe (kontourai/station, see the .md): a DELETE of
    a channel Apple no longer has answered 404 BadPath. The gateway's promise holds either way."""
    channel_id = forgotten_channel(channels, apple)
    watch.expect("BadPath")
    apple.state.forgotten_delete_answer = (404, "BadPath")
    try:
        mark = apple.state.mark()
        assert_status(lambda: channels.DeleteChannel(channels_pb2.DeleteChannelRequest(app=APP, channel_id=channel_id),
                                                     timeout=10), grpc.StatusCode.NOT_FOUND)
        deleted = only(apple.state.since(mark), "DeleteChannel")
        assert (deleted["status"], deleted["reason"]) == (404, "BadPath")
    finally:
        apple.state.forgotten_delete_answer = (400, "ChannelNotRegistered")
    assert_gone(channels, apple, channel_id)
    watch.check()


# -- the look-alike itself, driven by Apple's own sample requests (curl) -------------------------

def curl(apple, host, method, path, headers=(), data=None):
    args = ["curl", "-sS", "--http2", "--cacert", apple.ca_file, "-X", method, "-D", "-", "-o", "-",
            "-H", "authorization: bearer %s" % apple.token()]
    for header in headers:
        args += ["-H", header]
    if data is not None:
        args += ["--data-binary", data]
    out = subprocess.run(args + [host.url + path], capture_output=True, text=True, timeout=10, check=True).stdout
    head, _, body = out.partition("\n\n")          # text mode: curl's CRLFs read as \n
    lines = head.split("\n")
    fields = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
    return int(lines[0].split()[1]), fields, body


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_the_lookalike_answers_apples_samples_as_apple_documents(apple):
    request_id = "2288cf3f-70d8-46a6-97d7-dd5d00867127"
    mark, violations = apple.state.mark(), len(apple.state.violations)
    status, fields, body = curl(apple, apple.manage, "POST", "/1/apps/%s/channels" % BUNDLE,
                                ["apns-request-id: %s" % request_id],
                                '{"message-storage-policy": 1, "push-type": "LiveActivity"}')
    assert (status, body, fields["apns-request-id"]) == (201, "", request_id)
    channel = fields["apns-channel-id"]
    status, _, body = curl(apple, apple.manage, "GET", "/1/apps/%s/channels" % BUNDLE, ["apns-channel-id: %s" % channel])
    assert (status, json.loads(body)) == (200, {"message-storage-policy": 1, "push-type": "LiveActivity"})
    status, _, body = curl(apple, apple.manage, "GET", "/1/apps/%s/all-channels" % BUNDLE)
    assert status == 200 and channel in json.loads(body)["channels"]
    update = '{"aps": {"timestamp": 1685952000, "event": "update", "content-state": {"n": 1}}}'
    broadcast_headers = ["apns-push-type: liveactivity", "apns-expiration: 0", "apns-priority: 10",
                         "apns-channel-id: %s" % channel]
    status, fields, body = curl(apple, apple.push, "POST", "/4/broadcasts/apps/%s" % BUNDLE, broadcast_headers, update)
    assert (status, body) == (200, "") and "apns-unique-id" in fields
    for dropped, reason in (("apns-expiration", "BadExpirationDate"), ("apns-priority", "BadPriority"),
                            ("apns-push-type", "MissingPushType"), ("apns-channel-id", "MissingChannelId")):
        status, _, body = curl(apple, apple.push, "POST", "/4/broadcasts/apps/%s" % BUNDLE,
                               [h for h in broadcast_headers if not h.startswith(dropped + ":")], update)
        assert (status, json.loads(body)) == (400, {"reason": reason}), dropped
    big = json.dumps({"aps": {"event": "update", "content-state": {"s": "x" * 5200}}})
    status, _, body = curl(apple, apple.push, "POST", "/4/broadcasts/apps/%s" % BUNDLE, broadcast_headers, big)
    assert (status, json.loads(body)) == (413, {"reason": "PayloadTooLarge"})
    status, _, body = curl(apple, apple.manage, "POST", "/4/broadcasts/apps/%s" % BUNDLE, broadcast_headers, update)
    assert (status, json.loads(body)) == (404, {"reason": "BadPath"})   # the wrong host
    status, _, body = curl(apple, apple.manage, "DELETE", "/1/apps/%s/channels" % BUNDLE, ["apns-channel-id: %s" % channel])
    assert (status, body) == (204, "")
    for method, host, path, extra in (("GET", apple.manage, "/1/apps/%s/channels" % BUNDLE, []),
                                      ("DELETE", apple.manage, "/1/apps/%s/channels" % BUNDLE, []),
                                      ("POST", apple.push, "/4/broadcasts/apps/%s" % BUNDLE, broadcast_headers[:3])):
        status, _, body = curl(apple, host, method, path, extra + ["apns-channel-id: %s" % channel],
                               update if method == "POST" else None)
        assert (status, json.loads(body)) == (400, {"reason": "ChannelNotRegistered"}), (method, path)
    no_storage = curl(apple, apple.manage, "POST", "/1/apps/%s/channels" % BUNDLE, (),
                      '{"message-storage-policy": 0, "push-type": "LiveActivity"}')[1]["apns-channel-id"]
    status, _, body = curl(apple, apple.push, "POST", "/4/broadcasts/apps/%s" % BUNDLE,
                           ["apns-push-type: liveactivity", "apns-expiration: %d" % (time.time() + 60),
                            "apns-priority: 10", "apns-channel-id: %s" % no_storage], update)
    assert (status, json.loads(body)) == (400, {"reason": "BadExpirationDate"})
    status, _, body = curl(apple, apple.manage, "POST", "/1/apps/%s/channels" % BUNDLE, (),
                           '{"message-storage-policy": 1, "push-type": "Alert"}')
    assert (status, json.loads(body)) == (400, {"reason": "InvalidPushType"})
    stale = subprocess.run(["curl", "-sS", "--http2", "--cacert", apple.ca_file, "-o", "-", "-X", "GET",
                            "-H", "authorization: bearer %s" % apple.token(iat=int(time.time()) - 7200),
                            apple.manage.url + "/1/apps/%s/all-channels" % BUNDLE],
                           capture_output=True, text=True, timeout=10, check=True).stdout
    assert json.loads(stale) == {"reason": "ExpiredProviderToken"}
    assert [r["host"] for r in apple.state.since(mark)].count("push") == 8
    assert apple.state.violations[violations:] == []
    apple.state.forget(BUNDLE, no_storage)
