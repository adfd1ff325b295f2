"""ADM delivery end to end: stock grpcio stubs against `pushgate serve` with an adm app, delivering
to the independent ADM look-alike (Login-with-Amazon token endpoint and the send API), and in one
topic to the APNs, FCM and ADM look-alikes together."""
import json
import os
import time

import grpc
import pytest

from conftest import Server, adm_app_config, app_config, fcm_app_config, wait_done
from mock_process import MockProcess
from pushgate.v1 import push_pb2, push_pb2_grpc, registry_pb2, registry_pb2_grpc


@pytest.fixture(scope="module")
def gateway(tmp_path_factory, lookalike, fcm_lookalike, adm_lookalike):
    config = {"apps": [adm_app_config("fire", adm_lookalike, connections=4), fcm_app_config("android", fcm_lookalike),
                       app_config("ios", "com.example.ios", lookalike)]}
    s = Server(config, str(tmp_path_factory.mktemp("pushgate-adm")))
    yield s
    s.stop()
    assert s.proc.returncode == 0, "pushgate exited with %s:\n%s" % (s.proc.returncode, "".join(s.log))


@pytest.fixture
def stubs(gateway):
    channel = grpc.insecure_channel(gateway.address)
    yield push_pb2_grpc.PushStub(channel), registry_pb2_grpc.RegistryStub(channel)
    channel.close()


def adm_id(n, kind="ok"):
    return "adm-%s-amzn1.adm-registration.v3.Y29tLmV4YW1wbGU%06d" % (kind, n)




def send(push, tokens, **fields):
    n = push_pb2.Notification(app="fire", tokens=tokens, **fields)
    return push.Send(push_pb2.SendRequest(notifications=[n]), timeout=30).results


def test_send_reuses_one_access_token_over_kept_alive_http1_connections(stubs, adm_lookalike):
    """Amazon speaks HTTP/1.1 only: the gateway's ALPN offer (h2, http/1.1) gets http/1.1, and 500
    registration ids go over the app's 4 keep-alive connections, one request in flight on each."""
    push, _ = stubs
    requests, connections = adm_lookalike.token_requests, adm_lookalike.connections
    since = len(adm_lookalike.messages)
    ids = [adm_id(n) for n in range(500)]
    results = send(push, ids, data_json=json.dumps({"order": "42"}), collapse_id="sync",
                   expiration=int(time.time()) + 600)
    assert [r.status for r in results] == [push_pb2.STATUS_DELIVERED] * 500
    assert all(r.id for r in results), "the x-amzn-RequestId is the result's id"
    assert all(r.canonical_token == "" for r in results)
    results = send(push, ids[:10], data_json=json.dumps({"again": "1"}))
    assert [r.status for r in results] == [push_pb2.STATUS_DELIVERED] * 10
    fetched = adm_lookalike.token_requests - requests
    assert fetched <= 1, "one access token for both Sends"
    # The token request has a connection of its own; the sends have the app's 4.
    assert adm_lookalike.connections - connections - fetched <= 4, "4 kept-alive connections carry every send"
    received = [m for t, m in adm_lookalike.messages[since:]]
    assert len(received) == 510
    first = received[0]
    assert first["data"]["order"] == "42"
    assert first["consolidationKey"] == "sync"
    assert 590 <= first["expiresAfter"] <= 600
    assert 1 < adm_lookalike.max_open_streams <= 4, "one request in flight per connection"
    assert adm_lookalike.max_requests_per_connection >= 50, "connections are kept alive"
    assert adm_lookalike.versions == {"HTTP/1.1"}
    assert set(adm_lookalike.alpn) == {"http/1.1"}


def test_max_rate_exceeded_is_retried_after_retry_after(stubs, adm_lookalike):
    push, _ = stubs
    started = time.time()
    results = send(push, [adm_id(n, "slow") for n in range(5)], data_json='{"k": "v"}')
    assert [r.status for r in results] == [push_pb2.STATUS_DELIVERED] * 5
    assert all(r.attempts == 2 for r in results)
    assert time.time() - started >= 1


def test_an_expired_access_token_is_renewed_once(stubs, adm_lookalike):
    push, _ = stubs
    assert send(push, [adm_id(1)], data_json='{"k": "v"}')[0].status == push_pb2.STATUS_DELIVERED
    before = adm_lookalike.token_requests
    adm_lookalike.revoke_tokens()
    time.sleep(0.1)
    results = send(push, [adm_id(n) for n in range(400, 440)], data_json='{"k": "v"}')
    assert [r.status for r in results] == [push_pb2.STATUS_DELIVERED] * 40
    assert adm_lookalike.token_requests == before + 1


def test_bad_adm_input_names_the_field(stubs):
    push, _ = stubs
    for fields, where in [({"tokens": ["has/slash"], "data_json": '{"k": "v"}'}, "notifications[0].tokens[0]"),
                          ({"tokens": [adm_id(1)], "data_json": '{"k": 1}'}, "notifications[0].data_json")]:
        with pytest.raises(grpc.RpcError) as info:
            push.Send(push_pb2.SendRequest(notifications=[push_pb2.Notification(app="fire", **fields)]), timeout=10)
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert where in info.value.details(), info.value.details()


def test_canonical_ids_are_reported_and_update_the_endpoint(stubs, adm_lookalike):
    push, registry = stubs
    results = send(push, [adm_id(7, "old")], data_json='{"k": "v"}')
    assert results[0].status == push_pb2.STATUS_DELIVERED
    assert results[0].canonical_token == adm_id(7, "new")
    endpoint = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="fire", token=adm_id(8, "old")),
                                       timeout=10)
    done = wait_done(push, push.Publish(push_pb2.PublishRequest(endpoint_id=endpoint.id, message="hi"),
                                        timeout=10).message_id)
    assert done.delivered == 1
    after = registry.GetEndpoint(registry_pb2.GetEndpointRequest(id=endpoint.id), timeout=10)
    assert after.token == adm_id(8, "new") and after.enabled


@pytest.mark.parametrize("kind,reason", [("dead", "Unregistered"), ("bad", "InvalidRegistrationId")])
def test_a_dead_registration_id_disables_the_endpoint(stubs, kind, reason):
    """A Publish to an endpoint whose id ADM refuses as Unregistered (410) or InvalidRegistrationId
    (400) is REJECTED and the endpoint disabled with that reason."""
    push, registry = stubs
    endpoint = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="fire", token=adm_id(9, kind)),
                                       timeout=10)
    done = wait_done(push, push.Publish(push_pb2.PublishRequest(endpoint_id=endpoint.id, message="hi"),
                                        timeout=10).message_id)
    assert done.rejected == 1
    after = registry.GetEndpoint(registry_pb2.GetEndpointRequest(id=endpoint.id), timeout=10)
    assert not after.enabled and after.disabled_reason == reason


def test_a_three_platform_topic_delivers_each_its_payload(stubs, lookalike, fcm_lookalike, adm_lookalike):
    push, registry = stubs
    topic = "three-%d" % time.time_ns()
    registry.CreateTopic(registry_pb2.CreateTopicRequest(name=topic), timeout=10)
    ios, android, fire = "%064x" % time.time_ns(), "fcm-three-%d:APA91b" % time.time_ns(), adm_id(time.time_ns() % 10**6)
    for app, token in (("ios", ios), ("android", android), ("fire", fire)):
        endpoint = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app=app, token=token), timeout=10)
        registry.Subscribe(registry_pb2.SubscribeRequest(topic=topic, endpoint_id=endpoint.id), timeout=10)
    since = (len(lookalike.requests), len(fcm_lookalike.messages), len(adm_lookalike.messages))

    def publish(message, attributes=None):
        published = push.Publish(push_pb2.PublishRequest(topic=topic, message=json.dumps(message),
                                                         message_structure="json", attributes=attributes or {}),
                                 timeout=10)
        done = wait_done(push, published.message_id)
        assert done.delivered == 3, done

    publish({"default": "fallback", "APNS": json.dumps({"aps": {"alert": "for iOS"}}),
             "GCM": json.dumps({"fcmV1Message": {"message": {"data": {"to": "android"}}}}),
             "ADM": json.dumps({"data": {"to": "fire"}, "consolidationKey": "c", "expiresAfter": 3600})},
            attributes={"AWS.SNS.MOBILE.ADM.TTL": "60"})
    apns = [json.loads(b) for h, b in lookalike.requests[since[0]:] if h[":path"].endswith(ios)]
    fcm = [m for t, m in fcm_lookalike.messages[since[1]:] if t == android]
    adm = [m for t, m in adm_lookalike.messages[since[2]:] if t == fire]
    assert apns == [{"aps": {"alert": "for iOS"}}]
    assert fcm[0]["data"] == {"to": "android"}
    assert adm[0]["data"] == {"to": "fire"} and adm[0]["consolidationKey"] == "c"
    assert 55 <= adm[0]["expiresAfter"] <= 60, "AWS.SNS.MOBILE.ADM.TTL wins over expiresAfter"

    since = len(adm_lookalike.messages)
    publish({"default": "just text"})
    adm = [m for t, m in adm_lookalike.messages[since:] if t == fire]
    assert adm == [{"data": {"default": "just text"}}]


def test_pushgate_mock_adm_canonical_ids_dead_ids_and_rate_limits(tmp_path):
    """The product pair: `pushgate mock-adm` writes the client secret, the gateway's adm app uses it;
    through the registry a canonical id replaces the endpoint's, a dead id disables its endpoint, and
    429 MaxRateExceeded is retried after Retry-After."""
    mock = MockProcess("mock-adm", str(tmp_path / "mock"), [
        "--canonical-prefix", "old-", "--unregistered-prefix", "dead-", "--rate-limit-every", "5",
        "--retry-after", "1"])
    gateway = None
    try:
        gateway = Server({"apps": [mock.adm_app("fire")]}, str(tmp_path))
        channel = grpc.insecure_channel(gateway.address)
        push, registry = push_pb2_grpc.PushStub(channel), registry_pb2_grpc.RegistryStub(channel)
        started = time.time()
        results = send(push, ["ok-%d" % n for n in range(20)], data_json='{"k": "v"}')
        assert [r.status for r in results] == [push_pb2.STATUS_DELIVERED] * 20
        assert any(r.attempts == 2 for r in results) and time.time() - started >= 1

        old = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="fire", token="old-device1"), timeout=10)
        dead = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="fire", token="dead-device2"), timeout=10)
        for endpoint in (old, dead):
            wait_done(push, push.Publish(push_pb2.PublishRequest(endpoint_id=endpoint.id, message="hi"),
                                         timeout=10).message_id)
        assert registry.GetEndpoint(registry_pb2.GetEndpointRequest(id=old.id), timeout=10).token == \
            "device1-canonical"
        after = registry.GetEndpoint(registry_pb2.GetEndpointRequest(id=dead.id), timeout=10)
        assert not after.enabled and after.disabled_reason == "Unregistered"
        channel.close()
    finally:
        if gateway:
            gateway.stop()
        stats = mock.stop()
    assert stats["by_status"].get("429", 0) >= 1 and stats["token_requests"] == 1, stats
    assert stats["canonical_ids"] == 1 and stats["delivered"] == 21, stats


def http1_gateway(tmp_path, **lookalike_options):
    """A gateway with one adm app against a look-alike of its own (for per-test server behaviour)."""
    from adm_lookalike import LookalikeADM
    from h2_lookalike import make_certificate

    cert, key = make_certificate(str(tmp_path))
    secret = "secret-" + os.urandom(8).hex()
    adm = LookalikeADM(cert, key, "amzn1.application-oa2-client.own", secret, **lookalike_options).start()
    adm.ca_file, adm.client_secret_file = cert, str(tmp_path / "client-secret")
    with open(adm.client_secret_file, "w") as fh:
        fh.write(secret)
    server = Server({"apps": [adm_app_config("fire", adm, connections=2)]}, str(tmp_path))
    return adm, server


def test_an_http1_server_closing_kept_alive_connections_between_requests_loses_nothing(tmp_path):
    """The server closes every connection after 7 answers without saying so (no Connection:
    close): a request sent as it closes got no byte of an answer and goes again on a new
    connection without an attempt counted; none is delivered twice."""
    adm, server = http1_gateway(tmp_path, close_after=7)
    try:
        with grpc.insecure_channel(server.address) as channel:
            push = push_pb2_grpc.PushStub(channel)
            ids = [adm_id(n, "closing") for n in range(200)]
            results = send(push, ids, data_json='{"k": "v"}')
        assert [r.status for r in results] == [push_pb2.STATUS_DELIVERED] * 200, [
            (r.status, r.reason) for r in results if r.status != push_pb2.STATUS_DELIVERED][:3]
        assert all(r.attempts == 1 for r in results), sorted({r.attempts for r in results})
        delivered = [t for t, _ in adm.messages]
        assert sorted(delivered) == sorted(ids), "each delivered exactly once"
        assert adm.connections >= 200 // 7, adm.connections
        assert adm.max_requests_per_connection == 7
    finally:
        server.stop()
        adm.stop()


def test_an_http1_answer_cut_off_by_a_close_counts_an_attempt_and_is_retried(tmp_path):
    adm, server = http1_gateway(tmp_path)
    try:
        with grpc.insecure_channel(server.address) as channel:
            push = push_pb2_grpc.PushStub(channel)
            results = send(push, [adm_id(1, "cut"), adm_id(2)], data_json='{"k": "v"}')
        assert [(r.status, r.attempts) for r in results] == [(push_pb2.STATUS_DELIVERED, 2), (push_pb2.STATUS_DELIVERED, 1)]
        assert sorted(t for t, _ in adm.messages) == sorted([adm_id(1, "cut"), adm_id(2)])
    finally:
        server.stop()
        adm.stop()


def test_http_version_2_refuses_an_http1_only_server_clearly(tmp_path, adm_lookalike):
    server = Server({"apps": [adm_app_config("fire", adm_lookalike, http_version="2")]}, str(tmp_path))
    try:
        with grpc.insecure_channel(server.address) as channel:
            results = send(push_pb2_grpc.PushStub(channel), [adm_id(3)], data_json='{"k": "v"}')
        assert results[0].status == push_pb2.STATUS_FAILED
        assert "did not agree to HTTP/2" in results[0].reason, results[0].reason
    finally:
        server.stop()


def test_pushgate_mock_adm_speaks_http1_by_default_and_http2_on_request(tmp_path):
    """curl (an independent client) against `pushgate mock-adm`: HTTP/1.1 with keep-alive by
    default, as Amazon's api.amazon.com; HTTP/2 with --http2."""
    import subprocess

    for flags, version in (([], "1.1"), (["--http2"], "2")):
        mock = MockProcess("mock-adm", str(tmp_path / ("mock" + version)), flags)
        try:
            secret = open(mock.client_secret_file).read().strip()
            base = "https://127.0.0.1:%d" % mock.port
            out = subprocess.run(
                ["curl", "-sS", "--cacert", mock.ca_file, "--http2", "-w", "\n%{http_version} %{num_connects}\n",
                 "-d", "grant_type=client_credentials&scope=messaging:push&client_id=%s&client_secret=%s"
                 % (mock.client_id, secret), base + "/auth/o2/token",
                 "--next", "--cacert", mock.ca_file, "--http2", "-w", "\n%{http_version} %{num_connects}\n",
                 "-d", "{}", base + "/auth/o2/token"],
                capture_output=True, text=True, timeout=30)
            lines = out.stdout.strip().splitlines()
            assert json.loads(lines[0])["token_type"] == "bearer", out.stdout + out.stderr
            assert lines[1] == "%s 1" % version, lines
            assert lines[-1] == "%s 0" % version, "the second request reused the connection: %s" % lines
        finally:
            mock.stop()


def test_a_10_mb_http1_error_body_is_not_read_in_full(tmp_path):
    """Issue 23: an answer body far past any provider's error JSON is cut at 16 KiB; over HTTP/1.1
    the connection is closed (the server's write of the rest fails) and the result still counts."""
    adm, server = http1_gateway(tmp_path)
    try:
        with grpc.insecure_channel(server.address) as channel:
            push = push_pb2_grpc.PushStub(channel)
            results = send(push, [adm_id(1, "huge"), adm_id(2)], data_json='{"k": "v"}')
        assert results[0].status == push_pb2.STATUS_REJECTED and results[0].http_status == 400, results[0]
        assert results[1].status == push_pb2.STATUS_DELIVERED
        deadline = time.time() + 10
        while not adm.huge_cut and time.time() < deadline:
            time.sleep(0.05)
        assert adm.huge_cut, "the look-alike wrote all 10 MB: the gateway read them"
    finally:
        server.stop()
        adm.stop()
