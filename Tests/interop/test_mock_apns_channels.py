"""`pushgate mock-apns --channels-listen`: the mock's channel management API and broadcasts, driven
by curl (libcurl's HTTP/2 over nghttp2, an independent client) and then by the gateway, with the
mock's stats file counting what it served."""
import json
import os
import re
import subprocess
import time

import grpc
import jwt
import pytest

from conftest import Server
from mock_process import MockProcess

BUNDLE = "com.example.live"


@pytest.fixture(scope="module")
def mock(tmp_path_factory):
    m = MockProcess("mock-apns", str(tmp_path_factory.mktemp("mock-apns-channels")),
                    flags=["--channels-listen", "127.0.0.1:0"])
    port = [re.search(r"channel management API listening on 127\.0\.0\.1:(\d+)", line) for line in m.log]
    m.channels_port = int(next(match for match in port if match).group(1))
    yield m
    m.stop()


def bearer(mock):
    with open(mock.p8) as fh:
        token = jwt.encode({"iss": "TEAM123456", "iat": int(time.time())}, fh.read(), algorithm="ES256",
                           headers={"kid": "KEY1234567"})
    return "authorization: bearer " + token


def curl(mock, port, method, path, *headers, body=None):
    """(status, response headers by lower-case name, body) of one HTTP/2 request."""
    args = ["curl", "-s", "--http2", "--cacert", mock.ca_file, "-X", method, "-D", "-", "-H", bearer(mock)]
    for header in headers:
        args += ["-H", header]
    if body is not None:
        args += ["-H", "content-type: application/json", "--data-binary", body]
    out = subprocess.run(args + ["https://127.0.0.1:%d%s" % (port, path)], capture_output=True, text=True,
                         timeout=30, check=True).stdout
    # text mode reads curl's CRLF as LF
    head, _, payload = out.partition("\n\n")
    lines = head.split("\n")
    assert lines[0].startswith("HTTP/2 "), lines[0]
    fields = dict((name.lower(), value.strip()) for name, _, value in (line.partition(":") for line in lines[1:]))
    return int(lines[0].split()[1]), fields, payload


def test_curl_manages_channels_and_broadcasts(mock):
    channels = "/1/apps/%s/channels" % BUNDLE
    status, headers, body = curl(mock, mock.channels_port, "POST", channels, "apns-request-id: 0309f412-aa57-46a8-9ac6-b5aeca8c4594",
                                 body='{"message-storage-policy":0,"push-type":"LiveActivity"}')
    assert status == 201 and body == "", body
    assert headers["apns-request-id"] == "0309f412-aa57-46a8-9ac6-b5aeca8c4594"
    cid = headers["apns-channel-id"]
    status, _, body = curl(mock, mock.channels_port, "GET", channels, "apns-channel-id: " + cid)
    assert status == 200 and json.loads(body) == {"message-storage-policy": 0, "push-type": "LiveActivity"}
    status, _, body = curl(mock, mock.channels_port, "GET", "/1/apps/%s/all-channels" % BUNDLE)
    assert status == 200 and json.loads(body) == {"channels": [cid]}
    status, _, body = curl(mock, mock.channels_port, "GET", channels, "apns-channel-id: not base64!")
    assert (status, json.loads(body)) == (400, {"reason": "BadChannelId"})

    broadcast = "/4/broadcasts/apps/" + BUNDLE
    payload = '{"aps":{"event":"update","content-state":{"a":1},"timestamp":1}}'
    live = ["apns-push-type: liveactivity", "apns-priority: 10", "apns-channel-id: " + cid]   # Apple requires both
    status, _, body = curl(mock, mock.port, "POST", broadcast, *live, body=payload)
    assert (status, json.loads(body)) == (400, {"reason": "BadExpirationDate"}), "a broadcast needs apns-expiration"
    status, headers, _ = curl(mock, mock.port, "POST", broadcast, *live, "apns-expiration: 0", body=payload)
    assert status == 200 and re.match(r"^[0-9a-f-]{36}$", headers["apns-id"])
    status, _, body = curl(mock, mock.port, "POST", broadcast, "apns-push-type: liveactivity", body=payload)
    assert (status, json.loads(body)) == (400, {"reason": "MissingChannelId"})

    status, _, body = curl(mock, mock.channels_port, "DELETE", channels, "apns-channel-id: " + cid)
    assert status == 204 and body == ""
    # A channel APNs does not have is 400 ChannelNotRegistered (Apple's 404 is only BadPath).
    status, _, body = curl(mock, mock.channels_port, "DELETE", channels, "apns-channel-id: " + cid)
    assert (status, json.loads(body)) == (400, {"reason": "ChannelNotRegistered"})
    status, _, body = curl(mock, mock.port, "POST", broadcast, *live, "apns-expiration: 0", body=payload)
    assert (status, json.loads(body)) == (400, {"reason": "ChannelNotRegistered"})
    status, _, body = curl(mock, mock.channels_port, "PUT", channels)
    assert (status, json.loads(body)) == (405, {"reason": "MethodNotAllowed"})


def test_the_gateway_against_mock_apns_and_its_stats(mock, tmp_path):
    from pushgate.v1 import channels_pb2, channels_pb2_grpc, push_pb2

    app = mock.apns_app("live", channels_url="https://127.0.0.1:%d" % mock.channels_port)
    app["bundle_id"] = BUNDLE
    server = Server({"apps": [app]}, str(tmp_path))
    try:
        with grpc.insecure_channel(server.address) as ch:
            channels = channels_pb2_grpc.ChannelsStub(ch)
            cid = channels.CreateChannel(channels_pb2.CreateChannelRequest(app="live"), timeout=10).channel_id
            for n in range(10):
                result = channels.Broadcast(channels_pb2.BroadcastRequest(channel_id=cid, notification=push_pb2.Notification(
                    app="live", live_activity=push_pb2.LiveActivity(event="update", content_state_json='{"n":%d}' % n))),
                    timeout=10).result
                assert result.status == push_pb2.STATUS_DELIVERED and len(result.id) == 36
            channels.GetChannel(channels_pb2.GetChannelRequest(app="live", channel_id=cid), timeout=10)
            channels.DeleteChannel(channels_pb2.DeleteChannelRequest(app="live", channel_id=cid), timeout=10)
    finally:
        server.stop()
    stats = mock.stop()
    assert stats["broadcasts"] == 11, stats   # 10 here, 1 by curl
    assert stats["channels"] == 0
    requests = stats["channel_requests"]
    assert requests["create 201"] == 2 and requests["read 200"] == 2 and requests["delete 204"] == 2, requests
    assert requests["list 200"] == 1 and requests["read 400"] == 1 and requests["delete 400"] == 1, requests
    assert stats["delivered_per_token"][cid] == 10
