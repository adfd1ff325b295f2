"""The API the operator's console stands on (issue 44), through stock grpcio and Connect JSON:
`Push.GetStats` (per key, counts equal to what Send answered), `ListApplications` limited to a key's
apps, `ListEndpoints` by token, `ListTopics` with `subscriber_counts`, and the console's files served
(or not, with `"console": false`)."""
import hashlib
import json
import os
import urllib.error
import urllib.request

import grpc
import pytest

from conftest import Server
from mock_process import MockProcess
from pushgate.v1 import push_pb2, push_pb2_grpc, registry_pb2, registry_pb2_grpc

ADMIN = "pgk_console-admin-" + "a" * 32
SHOP = "pgk_console-shop-" + "s" * 32
GOOD = ["%064x" % (0xC0DE000 + i) for i in range(20)]
BAD = ["%064x" % (0xBAD0000 + i) for i in range(5)]


def sha256(text):
    return hashlib.sha256(text.encode()).hexdigest()


def auth(key):
    return [("authorization", "Bearer " + key)]


@pytest.fixture(scope="module")
def gateway(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("console-api"))
    bad = os.path.join(d, "bad-tokens")
    with open(bad, "w") as fh:
        fh.write("\n".join(BAD) + "\n")
    mock = MockProcess("mock-apns", os.path.join(d, "mock"), ["--bad-tokens", bad])
    server = Server({"apps": [mock.apns_app("shop"), mock.apns_app("news", connections=2)],
                     "api_keys": [{"name": "ops", "key_sha256": sha256(ADMIN), "apps": ["*"], "admin": True},
                                  {"name": "shop-sender", "key_sha256": sha256(SHOP), "apps": ["shop"]}]}, d)
    channel = grpc.insecure_channel(server.address)
    yield server, push_pb2_grpc.PushStub(channel), registry_pb2_grpc.RegistryStub(channel)
    channel.close()
    server.stop()
    mock.stop()


def outcomes(app_stats):
    return {(o.status, o.reason): o.count for o in app_stats.outcomes}


def test_get_stats_counts_what_send_answered_and_shows_only_the_keys_apps(gateway):
    server, push, _ = gateway
    before = {a.app: outcomes(a) for a in push.GetStats(push_pb2.GetStatsRequest(), metadata=auth(ADMIN),
                                                        timeout=10).apps}
    reply = push.Send(push_pb2.SendRequest(notifications=[push_pb2.Notification(
        app="shop", tokens=GOOD[:4] + BAD[:2], alert=push_pb2.Alert(title="t", body="b"))]),
        metadata=auth(SHOP), timeout=10)
    assert [r.status for r in reply.results] == [push_pb2.STATUS_DELIVERED] * 4 + [push_pb2.STATUS_REJECTED] * 2
    reason = reply.results[-1].reason
    admin = push.GetStats(push_pb2.GetStatsRequest(), metadata=auth(ADMIN), timeout=10)
    assert admin.key_name == "ops" and admin.admin and list(admin.key_apps) == ["*"]
    assert [a.app for a in admin.apps] == ["shop", "news"]
    shop = admin.apps[0]
    assert shop.platform == "apns" and shop.connections_configured == 1 and shop.connections_open == 1
    assert admin.apps[1].connections_configured == 2
    now = outcomes(shop)
    delivered = (push_pb2.STATUS_DELIVERED, "")
    rejected = (push_pb2.STATUS_REJECTED, reason)
    assert now[delivered] - before["shop"].get(delivered, 0) == 4
    assert now[rejected] - before["shop"].get(rejected, 0) == 2
    assert admin.resident_memory_bytes > 1 << 20 and admin.started_at <= admin.time
    limited = push.GetStats(push_pb2.GetStatsRequest(), metadata=auth(SHOP), timeout=10)
    assert limited.key_name == "shop-sender" and not limited.admin and list(limited.key_apps) == ["shop"]
    assert [a.app for a in limited.apps] == ["shop"]
    with pytest.raises(grpc.RpcError) as refused:
        push.GetStats(push_pb2.GetStatsRequest(), metadata=auth("pgk_wrong-" + "w" * 32), timeout=10)
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED


def test_list_applications_lists_only_a_keys_apps(gateway):
    _, _, registry = gateway
    every = registry.ListApplications(registry_pb2.ListApplicationsRequest(), metadata=auth(ADMIN), timeout=10)
    assert [a.name for a in every.applications] == ["shop", "news"]
    mine = registry.ListApplications(registry_pb2.ListApplicationsRequest(), metadata=auth(SHOP), timeout=10)
    assert [a.name for a in mine.applications] == ["shop"]


def test_list_endpoints_finds_one_by_token_within_its_app(gateway):
    _, _, registry = gateway
    token = GOOD[10]
    shop = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="shop", token=token), metadata=auth(ADMIN),
                                   timeout=10)
    news = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="news", token=token), metadata=auth(ADMIN),
                                   timeout=10)
    registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="shop", token=GOOD[11]), metadata=auth(ADMIN),
                            timeout=10)
    found = registry.ListEndpoints(registry_pb2.ListEndpointsRequest(app="shop", token=token), metadata=auth(SHOP),
                                   timeout=10)
    assert [e.id for e in found.endpoints] == [shop.id] and not found.next_page_token
    # Normalized as CreateEndpoint normalizes an APNs token (upper case hex is the same token).
    upper = registry.ListEndpoints(registry_pb2.ListEndpointsRequest(app="news", token=token.upper()),
                                   metadata=auth(ADMIN), timeout=10)
    assert [e.id for e in upper.endpoints] == [news.id]
    none = registry.ListEndpoints(registry_pb2.ListEndpointsRequest(app="shop", token=GOOD[12]),
                                  metadata=auth(ADMIN), timeout=10)
    assert list(none.endpoints) == []
    for request, code, field in [
        (registry_pb2.ListEndpointsRequest(token=token), grpc.StatusCode.INVALID_ARGUMENT, "token"),
        (registry_pb2.ListEndpointsRequest(app="nope", token=token), grpc.StatusCode.NOT_FOUND, "app"),
        (registry_pb2.ListEndpointsRequest(app="shop", token="xyz"), grpc.StatusCode.INVALID_ARGUMENT, "token"),
    ]:
        with pytest.raises(grpc.RpcError) as refused:
            registry.ListEndpoints(request, metadata=auth(ADMIN), timeout=10)
        assert refused.value.code() == code and refused.value.details().startswith(field), refused.value.details()


def test_list_topics_counts_subscribers_when_asked(gateway):
    _, _, registry = gateway
    for name in ("console-busy", "console-quiet"):
        registry.CreateTopic(registry_pb2.CreateTopicRequest(name=name), metadata=auth(ADMIN), timeout=10)
    for token in GOOD[13:16]:
        endpoint = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="shop", token=token),
                                           metadata=auth(ADMIN), timeout=10)
        registry.Subscribe(registry_pb2.SubscribeRequest(topic="console-busy", endpoint_id=endpoint.id),
                           metadata=auth(ADMIN), timeout=10)
    counted = registry.ListTopics(registry_pb2.ListTopicsRequest(subscriber_counts=True), metadata=auth(SHOP),
                                  timeout=10)
    assert {t.name: t.subscribers for t in counted.topics} == {"console-busy": 3, "console-quiet": 0}
    plain = registry.ListTopics(registry_pb2.ListTopicsRequest(), metadata=auth(SHOP), timeout=10)
    assert {t.name: t.subscribers for t in plain.topics} == {"console-busy": 0, "console-quiet": 0}


def test_get_stats_over_connect_json(gateway):
    server, _, _ = gateway
    request = urllib.request.Request("http://%s/pushgate.v1.Push/GetStats" % server.address, data=b"{}", headers={
        "content-type": "application/json", "authorization": "Bearer " + SHOP})
    with urllib.request.urlopen(request, timeout=10) as response:
        body = json.loads(response.read())
    assert body["keyName"] == "shop-sender" and [a["app"] for a in body["apps"]] == ["shop"]


def test_console_files_are_served_with_their_headers_and_can_be_turned_off(gateway, tmp_path):
    server, _, _ = gateway
    with urllib.request.urlopen("http://%s/console/" % server.address, timeout=10) as response:
        page = response.read().decode()
        headers = response.headers
    assert '<script type="module" src="app.js"></script>' in page
    assert headers["content-type"] == "text/html; charset=utf-8"
    policy = headers["content-security-policy"]
    assert "script-src 'self'" in policy and "connect-src 'self'" in policy and "unsafe-inline" not in policy
    assert headers["x-frame-options"] == "DENY" and headers["x-content-type-options"] == "nosniff"
    for name in ("app.js", "api.js", "console.css"):
        with urllib.request.urlopen("http://%s/console/%s" % (server.address, name), timeout=10) as response:
            with open(os.path.join(os.path.dirname(__file__), "..", "..", "console", name), "rb") as fh:
                assert response.read() == fh.read(), name
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen("http://%s/console/nope.js" % server.address, timeout=10)
    assert missing.value.code == 404
    post = urllib.request.Request("http://%s/console/" % server.address, data=b"x", method="POST")
    with pytest.raises(urllib.error.HTTPError) as wrong:
        urllib.request.urlopen(post, timeout=10)
    assert wrong.value.code == 405
    off = Server({"console": False}, str(tmp_path))
    try:
        with pytest.raises(urllib.error.HTTPError) as gone:
            urllib.request.urlopen("http://%s/console/" % off.address, timeout=10)
        assert gone.value.code == 404
    finally:
        off.stop()


def test_a_key_limited_to_some_apps_sees_only_their_endpoints_and_subscriptions(gateway):
    _, _, registry = gateway
    registry.CreateTopic(registry_pb2.CreateTopicRequest(name="console-mixed"), metadata=auth(ADMIN), timeout=10)
    mine = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="shop", token=GOOD[16], user_id="u-mixed"),
                                   metadata=auth(ADMIN), timeout=10)
    theirs = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="news", token=GOOD[17], user_id="u-mixed"),
                                     metadata=auth(ADMIN), timeout=10)
    for endpoint in (mine, theirs):
        registry.Subscribe(registry_pb2.SubscribeRequest(topic="console-mixed", endpoint_id=endpoint.id),
                           metadata=auth(ADMIN), timeout=10)
    by_user = registry.ListEndpoints(registry_pb2.ListEndpointsRequest(user_id="u-mixed"), metadata=auth(SHOP),
                                     timeout=10)
    assert [e.id for e in by_user.endpoints] == [mine.id]
    everything = registry.ListEndpoints(registry_pb2.ListEndpointsRequest(page_size=1000), metadata=auth(SHOP),
                                        timeout=10)
    assert {e.app for e in everything.endpoints} == {"shop"}
    admin = registry.ListEndpoints(registry_pb2.ListEndpointsRequest(user_id="u-mixed"), metadata=auth(ADMIN),
                                   timeout=10)
    assert [e.id for e in admin.endpoints] == [mine.id, theirs.id]
    subscriptions = registry.ListSubscriptions(registry_pb2.ListSubscriptionsRequest(topic="console-mixed"),
                                               metadata=auth(SHOP), timeout=10)
    assert [s.endpoint_id for s in subscriptions.subscriptions] == [mine.id]
    assert registry.GetEndpoint(registry_pb2.GetEndpointRequest(id=mine.id), metadata=auth(SHOP), timeout=10).app == "shop"
    with pytest.raises(grpc.RpcError) as hidden:
        registry.GetEndpoint(registry_pb2.GetEndpointRequest(id=theirs.id), metadata=auth(SHOP), timeout=10)
    assert hidden.value.code() == grpc.StatusCode.NOT_FOUND
    # An app not its own, known or not, is PERMISSION_DENIED before it is looked up.
    for app in ("news", "nope"):
        with pytest.raises(grpc.RpcError) as refused:
            registry.ListEndpoints(registry_pb2.ListEndpointsRequest(app=app, token=GOOD[17]), metadata=auth(SHOP),
                                   timeout=10)
        assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED, app


def test_without_api_keys_only_loopback_host_names_are_served_over_http(tmp_path):
    """DNS rebinding: without api_keys every loopback client is an admin, so a web page whose host
    name resolves to 127.0.0.1 must not reach the API (or the console) through a browser, which sends
    that name as Host. IP literals and localhost are served; gRPC (no browser speaks it) is not checked."""
    import socket

    server = Server(None, str(tmp_path))

    def ask(host, target="/pushgate.v1.Push/GetStats", method="POST", body=b"{}"):
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        try:
            head = "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n" \
                   "Connection: close\r\n\r\n" % (method, target, host, len(body))
            sock.sendall(head.encode() + body)
            data = b""
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
        finally:
            sock.close()
        return int(data.split(b" ", 2)[1]), data

    try:
        for host in ("127.0.0.1:%d" % server.port, "localhost:%d" % server.port, "localhost", "[::1]:1",
                     "app.localhost:8080"):
            assert ask(host)[0] == 200, host
        for host in ("evil.example:%d" % server.port, "rebind.attacker.test", "127.0.0.1.nip.io"):
            status, data = ask(host)
            assert status == 403 and b"permission_denied" in data and b"DNS rebinding" in data, (host, data)
            assert ask(host, "/console/", "GET", b"")[0] == 403, host
        with grpc.insecure_channel(server.address) as channel:
            assert push_pb2_grpc.PushStub(channel).GetStats(push_pb2.GetStatsRequest(), timeout=10).admin
    finally:
        server.stop()
