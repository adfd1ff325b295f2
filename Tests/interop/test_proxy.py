"""Provider connections through an HTTP CONNECT proxy (issue 17): APNs (HTTP/2 in the tunnel) and
ADM with its token endpoint (HTTP/1.1 in the tunnel) deliver; the proxy sees only CONNECT to the
provider's host; a proxy wanting credentials gets them, and they never reach the log."""
import os

import grpc

from connect_proxy import ConnectProxy
from conftest import Server, adm_app_config
from mock_process import MockProcess
from pushgate.v1 import push_pb2, push_pb2_grpc


def send(server, app, tokens, **fields):
    with grpc.insecure_channel(server.address) as channel:
        n = push_pb2.Notification(app=app, tokens=tokens, **fields)
        return push_pb2_grpc.PushStub(channel).Send(push_pb2.SendRequest(notifications=[n]), timeout=60).results


def test_apns_and_adm_deliver_through_a_connect_proxy(tmp_path, adm_lookalike):
    proxy = ConnectProxy(credentials="gw:pr0xy-s3cret").start()
    mock = MockProcess("mock-apns", str(tmp_path / "apns"))
    url = "http://gw:pr0xy-s3cret@127.0.0.1:%d" % proxy.port
    apps = [mock.apns_app("ios", proxy=url), adm_app_config("fire", adm_lookalike, proxy=url)]
    server = Server({"apps": apps}, str(tmp_path))
    try:
        apns = send(server, "ios", ["%064x" % n for n in range(50)], alert=push_pb2.Alert(title="t", body="b"))
        assert [r.status for r in apns] == [push_pb2.STATUS_DELIVERED] * 50, apns[0]
        tokens_before = adm_lookalike.token_requests
        adm = send(server, "fire", ["adm-ok-proxy-%d" % n for n in range(20)], data_json='{"k": "v"}')
        assert [r.status for r in adm] == [push_pb2.STATUS_DELIVERED] * 20, adm[0]
        targets = {line for line, _ in proxy.requests}
        assert targets == {"CONNECT 127.0.0.1:%d HTTP/1.1" % mock.port,
                           "CONNECT 127.0.0.1:%d HTTP/1.1" % adm_lookalike.port}, targets
        assert proxy.tunnels == len(proxy.requests), "every CONNECT was authorized"
        assert adm_lookalike.token_requests - tokens_before <= 1
        log = "".join(server.log)
        assert "pr0xy-s3cret" not in log
    finally:
        server.stop()
        mock.stop()
        proxy.stop()


def test_a_proxy_that_wants_credentials_fails_the_sends_with_its_answer(tmp_path):
    proxy = ConnectProxy(credentials="gw:right").start()
    mock = MockProcess("mock-apns", str(tmp_path / "apns"))
    server = Server({"apps": [mock.apns_app("ios", proxy="http://127.0.0.1:%d" % proxy.port,
                                            connect_timeout_seconds=2)]}, str(tmp_path))
    try:
        results = send(server, "ios", ["%064x" % 7], alert=push_pb2.Alert(title="t", body="b"))
        assert results[0].status == push_pb2.STATUS_FAILED
        assert "407" in results[0].reason and "ProviderUnreachable" in results[0].reason, results[0].reason
    finally:
        server.stop()
        mock.stop()
        proxy.stop()


def test_https_proxy_from_the_environment_and_no_proxy(tmp_path):
    proxy = ConnectProxy().start()
    mock = MockProcess("mock-apns", str(tmp_path / "apns"))
    env = dict(os.environ, HTTPS_PROXY="http://127.0.0.1:%d" % proxy.port)
    env.pop("NO_PROXY", None)
    env.pop("no_proxy", None)
    (tmp_path / "via").mkdir()
    (tmp_path / "direct").mkdir()
    try:
        server = Server({"apps": [mock.apns_app("ios")]}, str(tmp_path / "via"), env=env)
        try:
            assert send(server, "ios", ["%064x" % 1], alert=push_pb2.Alert(title="t", body="b"))[0].status == \
                push_pb2.STATUS_DELIVERED
        finally:
            server.stop()
        assert proxy.tunnels == 1
        env["NO_PROXY"] = "127.0.0.1"
        server = Server({"apps": [mock.apns_app("ios")]}, str(tmp_path / "direct"), env=env)
        try:
            assert send(server, "ios", ["%064x" % 2], alert=push_pb2.Alert(title="t", body="b"))[0].status == \
                push_pb2.STATUS_DELIVERED
        finally:
            server.stop()
        assert proxy.tunnels == 1, "NO_PROXY bypassed the proxy"
    finally:
        mock.stop()
        proxy.stop()
