"""The Connect protocol on the gRPC port: an independent Connect client (connectrpc from PyPI, with
its google.protobuf codecs over the grpcio-tools messages) and curl over HTTP/1.1 and h2c, against
the real gateway; JSON and binary, errors as Connect's JSON with their HTTP statuses, the timeout
header, enveloped server streaming, gzip both ways, API keys, and gRPC beside it on the same port."""
import gzip
import hashlib
import json
import os
import socket
import struct
import subprocess

import grpc
import pytest
from connectrpc.client import ConnectClientSync
from connectrpc.code import Code
from connectrpc.compat import google_protobuf_binary_codec, google_protobuf_json_codec
from connectrpc.errors import ConnectError
from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType

from conftest import Server, app_config
from pushgate.v1 import push_pb2, push_pb2_grpc, registry_pb2

TOKEN = "ab" * 32
KEY = "pgk_connect-" + "k" * 32
ADMIN = "pgk_connectadmin-" + "a" * 32


def method(service, name, request, response, stream=StreamType.UNARY):
    return MethodInfo(name=name, service_name="pushgate.v1." + service, input=request, output=response,
                      idempotency_level=IdempotencyLevel.UNKNOWN, stream_type=stream)


SEND = method("Push", "Send", push_pb2.SendRequest, push_pb2.SendResponse)
PUBLISH = method("Push", "Publish", push_pb2.PublishRequest, push_pb2.PublishResponse)
CREATE_ENDPOINT = method("Registry", "CreateEndpoint", registry_pb2.CreateEndpointRequest, registry_pb2.Endpoint)
CREATE_TOPIC = method("Registry", "CreateTopic", registry_pb2.CreateTopicRequest, registry_pb2.Topic)
WATCH = method("Push", "WatchEvents", push_pb2.WatchEventsRequest, push_pb2.DeliveryEvent, StreamType.SERVER_STREAM)


@pytest.fixture(scope="module")
def gateway(tmp_path_factory, lookalike):
    config = {"apps": [app_config("demo", "com.example.demo", lookalike)], "max_message_bytes": 65536,
              "api_keys": [{"name": "sender", "key_sha256": hashlib.sha256(KEY.encode()).hexdigest(), "apps": ["*"]},
                           {"name": "ops", "key_sha256": hashlib.sha256(ADMIN.encode()).hexdigest(), "apps": ["*"],
                            "admin": True}]}
    s = Server(config, str(tmp_path_factory.mktemp("connect")))
    yield s
    s.stop()
    assert s.proc.returncode == 0, "".join(s.log)


def client(gateway, codec, **kwargs):
    return ConnectClientSync("http://" + gateway.address, codec=codec, **kwargs)


def auth(key=KEY):
    return {"authorization": "Bearer " + key}


def send_request(*tokens):
    return push_pb2.SendRequest(notifications=[
        push_pb2.Notification(app="demo", tokens=list(tokens) or [TOKEN], alert=push_pb2.Alert(title="Hi", body="c"))])


CODECS = [pytest.param(google_protobuf_json_codec(), id="json"), pytest.param(google_protobuf_binary_codec(), id="proto")]


@pytest.mark.parametrize("codec", CODECS)
def test_connect_client_calls_send_publish_and_registry(gateway, codec):
    with client(gateway, codec) as c:
        sent = c.execute_unary(request=send_request(), method=SEND, headers=auth())
        assert [r.status for r in sent.results] == [push_pb2.STATUS_DELIVERED]
        topic = "connect-" + codec.name()
        created = c.execute_unary(request=registry_pb2.CreateTopicRequest(name=topic), method=CREATE_TOPIC,
                                  headers=auth(ADMIN))
        assert created.name == topic
        endpoint = c.execute_unary(request=registry_pb2.CreateEndpointRequest(app="demo", token=TOKEN),
                                   method=CREATE_ENDPOINT, headers=auth(ADMIN))
        assert endpoint.id and endpoint.token == TOKEN
        published = c.execute_unary(request=push_pb2.PublishRequest(topic=topic, message="hello"), method=PUBLISH,
                                    headers=auth(ADMIN))
        assert published.message_id


@pytest.mark.parametrize("codec", CODECS)
def test_a_bad_field_is_invalid_argument_naming_it(gateway, codec):
    with client(gateway, codec) as c:
        with pytest.raises(ConnectError) as info:
            c.execute_unary(request=send_request(TOKEN, "not-hex"), method=SEND, headers=auth())
        assert info.value.code == Code.INVALID_ARGUMENT
        assert "notifications[0].tokens[1]" in info.value.message


def test_connect_errors_for_keys(gateway):
    with client(gateway, google_protobuf_json_codec()) as c:
        with pytest.raises(ConnectError) as info:
            c.execute_unary(request=send_request(), method=SEND)
        assert info.value.code == Code.UNAUTHENTICATED
        with pytest.raises(ConnectError) as info:
            c.execute_unary(request=registry_pb2.CreateTopicRequest(name="x"), method=CREATE_TOPIC, headers=auth())
        assert info.value.code == Code.PERMISSION_DENIED


def test_gzip_both_ways_with_the_connect_client(gateway):
    # The client gzips requests by default and accepts gzip answers; a large answer comes compressed.
    tokens = ["%064x" % i for i in range(40)]
    with client(gateway, google_protobuf_json_codec()) as c:
        sent = c.execute_unary(request=send_request(*tokens), method=SEND, headers=auth())
        assert len(sent.results) == 40


@pytest.mark.parametrize("version", ["--http1.1", "--http2-prior-knowledge"])
def test_large_answers_are_gzipped_for_clients_that_accept_gzip(gateway, version):
    tokens = ["%064x" % i for i in range(40)]
    send = json.dumps({"notifications": [{"app": "demo", "tokens": tokens, "alert": {"title": "Hi"}}]}).encode()
    _, status, headers, body = curl(gateway, "/pushgate.v1.Push/Send", gzip.compress(send), version,
                                    "-H", "Content-Encoding: gzip", "-H", "Accept-Encoding: gzip")
    assert status == 200 and headers["content-encoding"] == "gzip"
    assert len(json.loads(gzip.decompress(body))["results"]) == 40
    _, status, headers, body = curl(gateway, "/pushgate.v1.Push/Send", send, version)
    assert status == 200 and "content-encoding" not in headers and len(json.loads(body)["results"]) == 40


def test_server_streaming_watch_events(gateway):
    with client(gateway, google_protobuf_binary_codec(), timeout_ms=1500) as c:
        events = c.execute_server_stream(request=push_pb2.WatchEventsRequest(apps=["demo"]), method=WATCH,
                                         headers=auth())
        with pytest.raises(ConnectError) as info:
            for _ in events:
                pass
        assert info.value.code == Code.DEADLINE_EXCEEDED


def curl(gateway, path, body, *args, key=KEY, content_type="application/json"):
    command = ["curl", "-s", "-S", "-i", "-X", "POST", "-H", "Content-Type: " + content_type, "--data-binary", "@-",
               "--max-time", "20"] + list(args) + ["http://%s%s" % (gateway.address, path)]
    if key:
        command[1:1] = ["-H", "Authorization: Bearer " + key]
    out = subprocess.run(command, input=body, capture_output=True, timeout=30)
    assert out.returncode == 0, out.stderr
    head, _, payload = out.stdout.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    status = int(lines[0].split()[1])
    headers = {line.split(":", 1)[0].lower(): line.split(":", 1)[1].strip() for line in lines[1:]}
    return lines[0].split()[0], status, headers, payload


@pytest.mark.parametrize("version", ["--http1.1", "--http2-prior-knowledge"])
def test_curl_json_gets_the_same_results_over_both_versions(gateway, version):
    send = json.dumps({"notifications": [{"app": "demo", "tokens": [TOKEN], "alert": {"title": "Hi"}}]}).encode()
    protocol, status, headers, body = curl(gateway, "/pushgate.v1.Push/Send", send, version)
    assert protocol == ("HTTP/1.1" if version == "--http1.1" else "HTTP/2")
    assert status == 200 and headers["content-type"] == "application/json"
    assert json.loads(body)["results"][0]["status"] == "STATUS_DELIVERED"

    bad = json.dumps({"notifications": [{"app": "demo", "tokens": [TOKEN, "zz"]}]}).encode()
    _, status, headers, body = curl(gateway, "/pushgate.v1.Push/Send", bad, version)
    assert status == 400 and headers["content-type"] == "application/json"
    error = json.loads(body)
    assert error["code"] == "invalid_argument" and error["message"].startswith("notifications[0].tokens[1]")

    _, status, _, body = curl(gateway, "/pushgate.v1.Push/Send", b'{"notifications":[{"tokenz":[]}]}', version)
    assert status == 400 and json.loads(body) == {"code": "invalid_argument",
                                                  "message": "notifications[0].tokenz: unknown field"}

    _, status, _, body = curl(gateway, "/pushgate.v1.Registry/CreateEndpoint",
                              json.dumps({"app": "demo", "token": TOKEN}).encode(), version, key=ADMIN)
    assert status == 200 and json.loads(body)["token"] == TOKEN

    _, status, _, body = curl(gateway, "/pushgate.v1.Push/Send", send, version, key=None)
    assert status == 401 and json.loads(body)["code"] == "unauthenticated"

    _, status, _, body = curl(gateway, "/pushgate.v1.Push/Nope", send, version)
    assert status == 404 and json.loads(body)["code"] == "unimplemented"

    _, status, _, body = curl(gateway, "/pushgate.v1.Push/Send", send, version, content_type="text/plain")
    assert status == 415

    _, status, _, body = curl(gateway, "/pushgate.v1.Push/Send", send, version, "-H", "Connect-Timeout-Ms: soon")
    assert status == 400 and "connect-timeout-ms" in json.loads(body)["message"]

    _, status, _, body = curl(gateway, "/pushgate.v1.Push/SendStream", send, version,
                              content_type="application/connect+json")
    assert status == 501 and json.loads(body)["code"] == "unimplemented"


@pytest.mark.parametrize("version", ["--http1.1", "--http2-prior-knowledge"])
def test_a_gzip_bomb_is_resource_exhausted(gateway, version):
    bomb = gzip.compress(b"{" + b" " * (8 << 20) + b"}", 9)
    assert len(bomb) < 65536
    _, status, _, body = curl(gateway, "/pushgate.v1.Push/Send", bomb, version, "-H", "Content-Encoding: gzip")
    assert status == 429 and json.loads(body)["code"] == "resource_exhausted"
    _, status, _, body = curl(gateway, "/pushgate.v1.Push/Send", b"x" * 70000, version)
    assert status == 429 and json.loads(body)["code"] == "resource_exhausted"
    _, status, _, body = curl(gateway, "/pushgate.v1.Push/Send", b"not gzip", version, "-H", "Content-Encoding: gzip")
    assert status == 500 and json.loads(body)["code"] == "internal"
    _, status, _, body = curl(gateway, "/pushgate.v1.Push/Send", b"{}", version, "-H", "Content-Encoding: br")
    assert status == 501 and "gzip" in json.loads(body)["message"]


@pytest.mark.parametrize("version", ["--http1.1", "--http2-prior-knowledge"])
def test_curl_streams_watch_events_in_envelopes(gateway, version):
    request = json.dumps({"apps": ["demo"]}).encode()
    _, status, headers, body = curl(gateway, "/pushgate.v1.Push/WatchEvents",
                                    struct.pack(">BI", 0, len(request)) + request, version,
                                    "-H", "Connect-Timeout-Ms: 300", content_type="application/connect+json")
    assert status == 200 and headers["content-type"] == "application/connect+json"
    flags, length = struct.unpack(">BI", body[:5])
    assert flags == 2 and len(body) == 5 + length
    assert json.loads(body[5:])["error"]["code"] == "deadline_exceeded"


def test_pipelined_http1_requests_are_answered_in_order(gateway):
    bodies = [json.dumps({"name": "pipelined-%d" % i}).encode() for i in range(3)]
    raw = b"".join(b"POST /pushgate.v1.Registry/CreateTopic HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                   b"Authorization: Bearer " + ADMIN.encode() + b"\r\nContent-Length: %d\r\n\r\n" % len(b) + b
                   for b in bodies)
    raw += b"GARBAGE\r\n\r\n"
    with socket.create_connection(("127.0.0.1", gateway.port), timeout=10) as sock:
        sock.sendall(raw)
        received = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
    answers = received.split(b"HTTP/1.1 ")[1:]
    assert [a.split(b" ", 1)[0] for a in answers] == [b"200", b"200", b"200", b"400"]
    for i, answer in enumerate(answers[:3]):
        assert b'"name":"pipelined-%d"' % i in answer
    assert b"bad request" in answers[3] and b"Connection: close" in answers[3]


def test_grpc_still_works_on_the_same_port(gateway):
    with grpc.insecure_channel(gateway.address) as channel:
        push = push_pb2_grpc.PushStub(channel)
        response = push.Send(send_request(), timeout=10, metadata=[("authorization", "Bearer " + KEY)])
        assert response.results[0].status == push_pb2.STATUS_DELIVERED


@pytest.fixture(scope="module")
def tls_gateway(tmp_path_factory, lookalike):
    d = str(tmp_path_factory.mktemp("connect-tls"))
    cert, key = os.path.join(d, "server.pem"), os.path.join(d, "server.key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"], check=True, capture_output=True)
    s = Server({"apps": [app_config("demo", "com.example.demo", lookalike)], "tls_cert_file": cert,
                "tls_key_file": key}, d)
    s.ca_file = cert
    yield s
    s.stop()
    assert s.proc.returncode == 0, "".join(s.log)


@pytest.mark.parametrize("version", ["--http1.1", "--http2"])
def test_connect_over_tls_with_alpn(tls_gateway, version):
    send = json.dumps({"notifications": [{"app": "demo", "tokens": [TOKEN], "alert": {"title": "Hi"}}]}).encode()
    out = subprocess.run(["curl", "-s", "-S", "-i", version, "--cacert", tls_gateway.ca_file, "-H",
                          "Content-Type: application/json", "--data-binary", "@-", "--max-time", "20",
                          "https://%s/pushgate.v1.Push/Send" % tls_gateway.address],
                         input=send, capture_output=True, timeout=30)
    assert out.returncode == 0, out.stderr
    head, _, body = out.stdout.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200" if version == "--http1.1" else b"HTTP/2 200"), head
    assert json.loads(body)["results"][0]["status"] == "STATUS_DELIVERED"
    credentials = grpc.ssl_channel_credentials(root_certificates=open(tls_gateway.ca_file, "rb").read())
    with grpc.secure_channel(tls_gateway.address, credentials) as channel:
        response = push_pb2_grpc.PushStub(channel).Send(send_request(), timeout=10)
        assert response.results[0].status == push_pb2.STATUS_DELIVERED


@pytest.fixture(scope="module")
def limited_gateway(tmp_path_factory, lookalike):
    s = Server({"apps": [app_config("demo", "com.example.demo", lookalike)], "request_timeout_seconds": 1,
                "idle_timeout_seconds": 3, "max_connections": 3}, str(tmp_path_factory.mktemp("connect-limits")))
    yield s
    s.stop()
    assert s.proc.returncode == 0, "".join(s.log)


def read_until_closed(sock):
    received = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        received += chunk
    return received


def test_http1_limits_apply(limited_gateway):
    """request_timeout ends a body that stalls, idle_timeout an idle kept-alive connection, and
    max_connections counts HTTP/1.1 connections (the socket timeouts are only a bound on a failure)."""
    address = ("127.0.0.1", limited_gateway.port)
    with socket.create_connection(address, timeout=30) as stalled:
        stalled.sendall(b"POST /pushgate.v1.Push/Send HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                        b"Content-Length: 100\r\n\r\n{\"notif")
        assert read_until_closed(stalled) == b""
    with socket.create_connection(address, timeout=30) as idle:
        idle.sendall(b"POST /grpc.health.v1.Health/Check HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 2\r\n\r\n{}")
        answered = read_until_closed(idle)
        assert answered.startswith(b"HTTP/1.1 200 OK") and b'"status":"SERVING"' in answered
    held = [socket.create_connection(address, timeout=30) for _ in range(3)]
    try:
        for sock in held:
            sock.sendall(b"POST /grpc.health.v1.Health/Check HTTP/1.1\r\nHost: localhost\r\n"
                         b"Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
            assert sock.recv(65536).startswith(b"HTTP/1.1 200 OK")
        with socket.create_connection(address, timeout=30) as extra:
            extra.sendall(b"POST /grpc.health.v1.Health/Check HTTP/1.1\r\nHost: localhost\r\n"
                          b"Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
            assert read_until_closed(extra) == b""
    finally:
        for sock in held:
            sock.close()
