"""Running it in production: graceful shutdown, stalled and idle clients, the connection limit."""
import os
import socket
import subprocess
import threading
import time

import grpc
import h2.config
import h2.connection
import h2.events
import pytest

from conftest import Server, app_config
from pushgate.v1 import push_pb2, push_pb2_grpc


def raw_h2(server):
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
    conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    return sock, conn


def events_until(sock, conn, want, timeout=10):
    deadline = time.time() + timeout
    seen = []
    while time.time() < deadline:
        sock.settimeout(max(0.05, deadline - time.time()))
        try:
            data = sock.recv(65536)
        except socket.timeout:
            break
        if not data:
            seen.append("closed")
            break
        for event in conn.receive_data(data):
            seen.append(event)
            if isinstance(event, want):
                return event, seen
        sock.sendall(conn.data_to_send())
    return None, seen


@pytest.fixture
def strict_server(tmp_path, lookalike):
    config = {"apps": [app_config("demo", "com.example.demo", lookalike)], "request_timeout_seconds": 1,
              "idle_timeout_seconds": 1, "max_connections": 3}
    s = Server(config, str(tmp_path))
    yield s
    s.stop()


def test_a_stalled_request_is_timed_out(strict_server):
    sock, conn = raw_h2(strict_server)
    conn.send_headers(1, [(":method", "POST"), (":scheme", "http"), (":path", "/pushgate.v1.Push/Send"),
                          (":authority", "x"), ("content-type", "application/grpc"), ("te", "trailers")])
    conn.send_data(1, b"\x00\x00\x00\x00\x10" + b"\x0a")  # announces 16 bytes, sends 1, never ends
    sock.sendall(conn.data_to_send())
    event, seen = events_until(sock, conn, h2.events.TrailersReceived, timeout=5)
    if event is None:
        headers = [e for e in seen if isinstance(e, h2.events.ResponseReceived)]
        assert headers, seen
        fields = dict(headers[0].headers)
    else:
        fields = dict(event.headers)
    assert fields[b"grpc-status"] == b"4", fields
    assert b"request_timeout" in fields[b"grpc-message"]
    sock.close()


def test_an_idle_connection_gets_goaway(strict_server):
    sock, conn = raw_h2(strict_server)
    event, seen = events_until(sock, conn, h2.events.ConnectionTerminated, timeout=5)
    assert event is not None, seen
    assert event.error_code == 0 and event.additional_data == b"max_idle"
    sock.close()


def test_connections_over_the_limit_are_closed(strict_server):
    socks = [raw_h2(strict_server) for _ in range(3)]
    time.sleep(0.2)
    extra, conn = raw_h2(strict_server)
    extra.settimeout(5)
    try:
        data = extra.recv(65536)
    except (ConnectionResetError, socket.timeout) as error:
        data = b""
    assert data == b"", "the fourth connection must be closed at once"
    for sock, _ in socks:
        sock.close()
    extra.close()
    # The limit frees up as connections close.
    time.sleep(0.3)
    with grpc.insecure_channel(strict_server.address) as channel:
        from grpc_health.v1 import health_pb2, health_pb2_grpc
        assert health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10).status == 1


def test_sigterm_during_a_10000_token_send_finishes_it(tmp_path, lookalike):
    server = Server({"apps": [app_config("demo", "com.example.demo", lookalike)]}, str(tmp_path))
    tokens = ["%064x" % (0x5160000 + i) for i in range(10_000)]
    outcome = {}

    def send():
        with grpc.insecure_channel(server.address) as channel:
            try:
                outcome["reply"] = push_pb2_grpc.PushStub(channel).Send(push_pb2.SendRequest(notifications=[
                    push_pb2.Notification(app="demo", tokens=tokens, alert=push_pb2.Alert(body="x"))]), timeout=120)
            except grpc.RpcError as error:
                outcome["error"] = error

    before = len(lookalike.requests)
    thread = threading.Thread(target=send)
    thread.start()
    deadline = time.time() + 30
    while len(lookalike.requests) - before < 500 and time.time() < deadline:
        time.sleep(0.01)
    server.proc.terminate()
    thread.join(timeout=120)
    assert "error" not in outcome, outcome.get("error")
    results = outcome["reply"].results
    assert len(results) == 10_000
    assert all(r.status == push_pb2.STATUS_DELIVERED for r in results)
    assert server.proc.wait(timeout=60) == 0
    assert any("msg=stopped" in line for line in server.full_log())


def test_a_failed_call_is_logged_with_its_request_id(server, channel):
    with pytest.raises(grpc.RpcError):
        push_pb2_grpc.PushStub(channel).Send(push_pb2.SendRequest(), timeout=10,
                                             metadata=[("x-request-id", "req-4242")])
    deadline = time.time() + 5
    while time.time() < deadline and not any("req-4242" in line for line in server.log):
        time.sleep(0.05)
    line = next(line for line in server.log if "req-4242" in line)
    assert "msg=\"call failed\"" in line and "code=INVALID_ARGUMENT" in line and "method=pushgate.v1.Push/Send" in line


def test_a_flood_past_the_queue_limit_gets_resource_exhausted_with_bounded_memory(tmp_path):
    """A slow provider (the mock delaying 300 ms) and far more tokens in flight than queue_limit:
    the excess is refused at once, nothing hangs, and the gateway's memory stays bounded."""
    import re
    from concurrent.futures import ThreadPoolExecutor

    binary = os.environ.get("PUSHGATE_BIN")
    ca = str(tmp_path / "mock-ca.pem")
    mock = subprocess.Popen([binary, "mock-apns", "--listen", "127.0.0.1:0", "--delay-ms", "300", "--write-ca", ca],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        port = None
        for _ in range(50):
            line = mock.stdout.readline()
            m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
            if m:
                port = int(m.group(1))
            if "wrote the certificate" in line:
                break
        assert port
        p8 = str(tmp_path / "k.p8")
        subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", p8],
                       check=True, capture_output=True)
        config = {"queue_limit": 3000, "apps": [{"name": "slow", "bundle_id": "com.example.slow", "team_id": "T",
                                                 "key_id": "K", "key_file": p8, "url": "https://127.0.0.1:%d" % port,
                                                 "ca_file": ca}]}
        server = Server(config, str(tmp_path))
        try:
            channel = grpc.insecure_channel(server.address)
            stub = push_pb2_grpc.PushStub(channel)

            def one(i):
                tokens = ["%064x" % (0xF100000 + i * 1000 + j) for j in range(1000)]
                started = time.time()
                try:
                    stub.Send(push_pb2.SendRequest(notifications=[push_pb2.Notification(
                        app="slow", tokens=tokens, alert=push_pb2.Alert(body="x"))]), timeout=60)
                    return "ok", time.time() - started
                except grpc.RpcError as error:
                    return error.code(), time.time() - started

            with ThreadPoolExecutor(max_workers=20) as pool:
                outcomes = list(pool.map(one, range(40)))
            codes = [code for code, _ in outcomes]
            exhausted = [t for code, t in outcomes if code == grpc.StatusCode.RESOURCE_EXHAUSTED]
            assert codes.count("ok") >= 3 and exhausted, codes
            assert set(codes) <= {"ok", grpc.StatusCode.RESOURCE_EXHAUSTED}, codes
            assert max(exhausted) < 1.0, "refused at once, not after waiting"
            with open("/proc/%d/status" % server.proc.pid) as fh:
                rss_kib = int(re.search(r"VmHWM:\s+(\d+)", fh.read()).group(1))
            assert rss_kib < 200 * 1024, "peak RSS %d KiB" % rss_kib
            channel.close()
        finally:
            server.stop()
    finally:
        mock.terminate()
        mock.wait(timeout=10)


def test_a_fan_out_completes_when_queue_limit_is_smaller_than_a_page(tmp_path, lookalike):
    from pushgate.v1 import registry_pb2, registry_pb2_grpc
    server = Server({"queue_limit": 10, "apps": [app_config("tiny", "com.example.tiny", lookalike)]}, str(tmp_path))
    try:
        with grpc.insecure_channel(server.address) as channel:
            registry = registry_pb2_grpc.RegistryStub(channel)
            registry.CreateTopic(registry_pb2.CreateTopicRequest(name="tiny"), timeout=10)
            for i in range(25):
                e = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="tiny", token="%064x" % (0x71000 + i)),
                                            timeout=10)
                registry.Subscribe(registry_pb2.SubscribeRequest(topic="tiny", endpoint_id=e.id), timeout=10)
            push = push_pb2_grpc.PushStub(channel)
            reply = push.Publish(push_pb2.PublishRequest(topic="tiny", message="x"), timeout=10)
            deadline = time.time() + 30
            while time.time() < deadline:
                message = push.GetMessage(push_pb2.GetMessageRequest(message_id=reply.message_id), timeout=10)
                if message.state == push_pb2.MESSAGE_STATE_COMPLETED:
                    break
                time.sleep(0.05)
            assert message.state == push_pb2.MESSAGE_STATE_COMPLETED and message.delivered == 25, message
    finally:
        server.stop()
