"""Live Activity broadcast channels end to end: grpcio calls the Channels service of the real
`pushgate` binary, which creates, reads and deletes channels at a channel-management look-alike and
broadcasts through the APNs look-alike (both Python `ssl` + `h2`, sharing no code with Pushgate), and
the look-alikes' records are checked for hosts, paths, headers and payloads."""
import json
import os
from concurrent.futures import ThreadPoolExecutor

import grpc
import pytest

from conftest import Server, app_config

BUNDLE = "com.example.live"
ACTIVITY_TOKEN = "ab" * 32


@pytest.fixture(scope="module")
def channel_api(lookalike):
    from apns_channels_lookalike import LookalikeChannelAPI

    directory = os.path.dirname(lookalike.ca_file)
    api = LookalikeChannelAPI(lookalike.ca_file, os.path.join(directory, "lookalike.key"), lookalike.channels).start()
    yield api
    api.stop()


@pytest.fixture(scope="module", autouse=True)
def expected_refusals(lookalike):
    """The shared APNs look-alike's list of refused requests is checked empty by other modules: the
    refusals this module provokes (a broadcast to a channel APNs forgot) are checked and taken out."""
    start = len(lookalike.invalid)
    yield
    provoked = lookalike.invalid[start:]
    assert [problem for problem, _ in provoked] == [(400, "ChannelNotRegistered")], provoked
    del lookalike.invalid[start:]


@pytest.fixture(scope="module")
def gateway(tmp_path_factory, lookalike, channel_api):
    config = {"apps": [app_config("live", BUNDLE, lookalike, channels_url="https://127.0.0.1:%d" % channel_api.port),
                       app_config("other", "com.example.other", lookalike,
                                  channels_url="https://127.0.0.1:%d" % channel_api.port)]}
    s = Server(config, str(tmp_path_factory.mktemp("pushgate-channels")))
    yield s
    s.stop()
    assert s.proc.returncode == 0, "".join(s.log)


@pytest.fixture
def stubs(gateway):
    from pushgate.v1 import channels_pb2_grpc, push_pb2_grpc

    ch = grpc.insecure_channel(gateway.address)
    yield channels_pb2_grpc.ChannelsStub(ch), push_pb2_grpc.PushStub(ch)
    ch.close()


def update(n):
    from pushgate.v1 import push_pb2

    return push_pb2.Notification(app="live", alert=push_pb2.Alert(title="Score", body="%d-0" % n),
                                 live_activity=push_pb2.LiveActivity(
                                     event="update", content_state_json=json.dumps({"home": n, "away": 0}),
                                     timestamp=1_800_000_000 + n))


def test_create_broadcast_list_delete_then_not_found(stubs, lookalike, channel_api):
    from pushgate.v1 import channels_pb2, push_pb2

    channels, _ = stubs
    created = channels.CreateChannel(channels_pb2.CreateChannelRequest(
        app="live", message_storage_policy=channels_pb2.MESSAGE_STORAGE_POLICY_MOST_RECENT,
        request_id="0309F412-AA57-46A8-9AC6-B5AECA8C4594"), timeout=10)
    cid = created.channel_id
    assert cid in lookalike.channels[BUNDLE] and created.app == "live"
    assert created.message_storage_policy == channels_pb2.MESSAGE_STORAGE_POLICY_MOST_RECENT
    headers, body = channel_api.requests[-1]
    assert headers[":method"] == "POST" and headers[":path"] == "/1/apps/%s/channels" % BUNDLE
    assert headers[":authority"] == "127.0.0.1:%d" % channel_api.port and headers[":scheme"] == "https"
    assert headers["apns-request-id"] == "0309f412-aa57-46a8-9ac6-b5aeca8c4594"
    assert json.loads(body) == {"message-storage-policy": 1, "push-type": "LiveActivity"}
    assert "apns-channel-id" not in headers and headers["authorization"].startswith("bearer ")

    before = len(lookalike.requests)
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda n: channels.Broadcast(
            channels_pb2.BroadcastRequest(channel_id=cid, notification=update(n)), timeout=30), range(100)))
    assert [a.result.status for a in answers] == [push_pb2.STATUS_DELIVERED] * 100
    assert all(a.result.token == cid and a.result.http_status == 200 for a in answers)
    sent = lookalike.requests[before:]
    assert len(sent) == 100
    states = set()
    for headers, body in sent:
        assert headers[":method"] == "POST" and headers[":path"] == "/4/broadcasts/apps/%s" % BUNDLE
        assert headers[":authority"] == "127.0.0.1:%d" % lookalike.port
        assert headers["apns-channel-id"] == cid and headers["apns-push-type"] == "liveactivity"
        # Apple requires apns-expiration on every broadcast: 0 when none is given.
        assert headers["apns-priority"] == "10" and "apns-topic" not in headers and headers["apns-expiration"] == "0"
        aps = json.loads(body)["aps"]
        assert aps["event"] == "update" and aps["alert"]["title"] == "Score"
        states.add(aps["content-state"]["home"])
    assert states == set(range(100))

    requests_before_list = len(channel_api.requests)
    listed = channels.ListChannels(channels_pb2.ListChannelsRequest(app="live"), timeout=10)
    assert [c.channel_id for c in listed.channels] == [cid]
    assert len(channel_api.requests) == requests_before_list, "ListChannels must not call APNs"

    got = channels.GetChannel(channels_pb2.GetChannelRequest(app="live", channel_id=cid), timeout=10)
    assert got.channel_id == cid
    headers, _ = channel_api.requests[-1]
    assert headers[":method"] == "GET" and headers["apns-channel-id"] == cid

    channels.DeleteChannel(channels_pb2.DeleteChannelRequest(app="live", channel_id=cid), timeout=10)
    headers, _ = channel_api.requests[-1]
    assert headers[":method"] == "DELETE" and headers[":path"] == "/1/apps/%s/channels" % BUNDLE
    assert headers["apns-channel-id"] == cid and cid not in lookalike.channels[BUNDLE]
    assert channels.ListChannels(channels_pb2.ListChannelsRequest(app="live"), timeout=10).channels == []

    before = len(lookalike.requests)
    with pytest.raises(grpc.RpcError) as refused:
        channels.Broadcast(channels_pb2.BroadcastRequest(channel_id=cid, notification=update(0)), timeout=10)
    assert refused.value.code() == grpc.StatusCode.NOT_FOUND
    assert refused.value.details() == 'channel_id: app live has no channel "%s"' % cid
    assert len(lookalike.requests) == before, "nothing may be sent to a deleted channel"
    with pytest.raises(grpc.RpcError) as refused:
        channels.DeleteChannel(channels_pb2.DeleteChannelRequest(app="live", channel_id=cid), timeout=10)
    assert refused.value.code() == grpc.StatusCode.NOT_FOUND


def test_no_storage_channel_takes_expiration_zero_only(stubs, lookalike):
    from pushgate.v1 import channels_pb2, push_pb2

    channels, _ = stubs
    cid = channels.CreateChannel(channels_pb2.CreateChannelRequest(
        app="live", message_storage_policy=channels_pb2.MESSAGE_STORAGE_POLICY_NO_STORAGE), timeout=10).channel_id
    assert lookalike.channels[BUNDLE][cid] == 0
    n = update(1)
    n.expiration = 1_900_000_000
    with pytest.raises(grpc.RpcError) as refused:
        channels.Broadcast(channels_pb2.BroadcastRequest(channel_id=cid, notification=n), timeout=10)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert refused.value.details().startswith("notification.expiration: must be 0")
    n.expiration = 0
    n.priority = 5
    answer = channels.Broadcast(channels_pb2.BroadcastRequest(channel_id=cid, notification=n), timeout=10)
    assert answer.result.status == push_pb2.STATUS_DELIVERED
    headers, _ = lookalike.requests[-1]
    assert headers["apns-expiration"] == "0" and headers["apns-priority"] == "5"
    channels.DeleteChannel(channels_pb2.DeleteChannelRequest(app="live", channel_id=cid), timeout=10)


def test_channel_apns_forgot_is_not_found_and_leaves_the_registry(stubs, lookalike, channel_api):
    from pushgate.v1 import channels_pb2

    channels, _ = stubs
    gone = channels.CreateChannel(channels_pb2.CreateChannelRequest(app="live"), timeout=10).channel_id
    kept = channels.CreateChannel(channels_pb2.CreateChannelRequest(app="live"), timeout=10).channel_id
    del lookalike.channels[BUNDLE][gone]
    del lookalike.channels[BUNDLE][kept]
    with pytest.raises(grpc.RpcError) as refused:
        channels.Broadcast(channels_pb2.BroadcastRequest(channel_id=gone, notification=update(2)), timeout=10)
    assert refused.value.code() == grpc.StatusCode.NOT_FOUND
    assert "400 ChannelNotRegistered" in refused.value.details()
    with pytest.raises(grpc.RpcError) as refused:
        channels.GetChannel(channels_pb2.GetChannelRequest(app="live", channel_id=kept), timeout=10)
    assert refused.value.code() == grpc.StatusCode.NOT_FOUND
    listed = [c.channel_id for c in channels.ListChannels(channels_pb2.ListChannelsRequest(app="live"), timeout=10).channels]
    assert gone not in listed and kept not in listed


def test_token_push_broadcast_and_channel_requests_share_the_provider_token(stubs, lookalike, channel_api):
    from pushgate.v1 import channels_pb2, push_pb2

    channels, push = stubs
    cid = channels.CreateChannel(channels_pb2.CreateChannelRequest(app="live"), timeout=10).channel_id
    create_auth = channel_api.requests[-1][0]["authorization"]
    token_push = update(3)
    token_push.tokens.append(ACTIVITY_TOKEN)
    result = push.Send(push_pb2.SendRequest(notifications=[token_push]), timeout=10).results[0]
    assert result.status == push_pb2.STATUS_DELIVERED
    token_headers, _ = lookalike.requests[-1]
    assert token_headers[":path"] == "/3/device/" + ACTIVITY_TOKEN
    assert token_headers["apns-topic"] == BUNDLE + ".push-type.liveactivity"
    channels.Broadcast(channels_pb2.BroadcastRequest(channel_id=cid, notification=update(4)), timeout=10)
    broadcast_headers, _ = lookalike.requests[-1]
    assert broadcast_headers[":path"] == "/4/broadcasts/apps/" + BUNDLE
    assert token_headers["authorization"] == broadcast_headers["authorization"] == create_auth
    channels.DeleteChannel(channels_pb2.DeleteChannelRequest(app="live", channel_id=cid), timeout=10)


@pytest.mark.parametrize("change, field", [
    (lambda r: r.notification.tokens.append(ACTIVITY_TOKEN), "notification.tokens: must be empty"),
    (lambda r: setattr(r.notification, "topic", BUNDLE), "notification.topic: must be empty"),
    (lambda r: r.notification.live_activity.__setattr__("event", "start"), "notification.live_activity.event: must be update or end"),
    (lambda r: r.notification.ClearField("live_activity"), "notification.live_activity: is required"),
    (lambda r: setattr(r, "channel_id", "not base64!"), "channel_id: must be an APNs channel id"),
    (lambda r: setattr(r, "channel_id", ""), "channel_id: required"),
    (lambda r: setattr(r.notification, "app", "nope"), 'notification.app: unknown app "nope"'),
])
def test_broadcast_validation_names_the_field(stubs, change, field):
    from pushgate.v1 import channels_pb2

    channels, _ = stubs
    cid = channels.CreateChannel(channels_pb2.CreateChannelRequest(app="live"), timeout=10).channel_id
    request = channels_pb2.BroadcastRequest(channel_id=cid, notification=update(5))
    change(request)
    with pytest.raises(grpc.RpcError) as refused:
        channels.Broadcast(request, timeout=10)
    assert refused.value.details().startswith(field), refused.value.details()
    assert refused.value.code() in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND)
    channels.DeleteChannel(channels_pb2.DeleteChannelRequest(app="live", channel_id=cid), timeout=10)


def test_channels_are_per_app_and_policy_is_checked(stubs):
    from pushgate.v1 import channels_pb2

    channels, _ = stubs
    cid = channels.CreateChannel(channels_pb2.CreateChannelRequest(app="live"), timeout=10).channel_id
    with pytest.raises(grpc.RpcError) as refused:
        channels.GetChannel(channels_pb2.GetChannelRequest(app="other", channel_id=cid), timeout=10)
    assert refused.value.code() == grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.RpcError) as refused:
        channels.CreateChannel(channels_pb2.CreateChannelRequest(app="live", message_storage_policy=7), timeout=10)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert refused.value.details().startswith("message_storage_policy: must be 0")
    channels.DeleteChannel(channels_pb2.DeleteChannelRequest(app="live", channel_id=cid), timeout=10)
