"""The front door: a stock grpcio client against `pushgate serve`."""
import socket
import struct
import subprocess

import grpc
import pytest

from grpc.health.v1 import health_pb2, health_pb2_grpc
from pushgate.v1 import push_pb2, push_pb2_grpc, registry_pb2, registry_pb2_grpc

TOKEN = "ab" * 32


def notification(**fields):
    fields.setdefault("tokens", [TOKEN])
    fields.setdefault("alert", push_pb2.Alert(title="Hi", body="Hello"))
    return push_pb2.Notification(**fields)


def code_and_details(call, *args, **kwargs):
    with pytest.raises(grpc.RpcError) as info:
        call(*args, timeout=10, **kwargs)
    return info.value.code(), info.value.details()


def assert_serving(server):
    with grpc.insecure_channel(server.address) as ch:
        reply = health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=10)
        assert reply.status == health_pb2.HealthCheckResponse.SERVING


# --- Health ---

def test_health_check_is_serving(channel):
    stub = health_pb2_grpc.HealthStub(channel)
    for service in ["", "pushgate.v1.Push", "pushgate.v1.Registry"]:
        reply = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=10)
        assert reply.status == health_pb2.HealthCheckResponse.SERVING, service


def test_health_check_unknown_service_is_not_found(channel):
    code, details = code_and_details(health_pb2_grpc.HealthStub(channel).Check,
                                     health_pb2.HealthCheckRequest(service="no.Such"))
    assert code == grpc.StatusCode.NOT_FOUND
    assert "no.Such" in details


def test_health_watch_sends_the_current_status_and_stays_open(channel):
    stub = health_pb2_grpc.HealthStub(channel)
    stream = stub.Watch(health_pb2.HealthCheckRequest(service=""), timeout=10)
    assert next(stream).status == health_pb2.HealthCheckResponse.SERVING
    stream.cancel()
    unknown = stub.Watch(health_pb2.HealthCheckRequest(service="no.Such"), timeout=10)
    assert next(unknown).status == health_pb2.HealthCheckResponse.SERVICE_UNKNOWN
    unknown.cancel()


def test_watch_ends_with_deadline_exceeded_at_the_grpc_timeout(channel):
    stream = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest(), timeout=0.5)
    assert next(stream).status == health_pb2.HealthCheckResponse.SERVING
    with pytest.raises(grpc.RpcError) as info:
        next(stream)
    assert info.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED


# --- Send validation ---

def test_invalid_token_is_invalid_argument_naming_the_field(channel):
    request = push_pb2.SendRequest(notifications=[
        notification(),
        notification(tokens=[TOKEN, TOKEN, "not-a-token"]),
    ])
    code, details = code_and_details(push_pb2_grpc.PushStub(channel).Send, request)
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert details == "notifications[1].tokens[2]: APNs device token must be 64-200 hex digits"


@pytest.mark.parametrize("fields, place", [
    ({"priority": 7}, "notifications[0].priority"),
    ({"collapse_id": "x" * 65}, "notifications[0].collapse_id"),
    ({"data_json": "{not json"}, "notifications[0].data_json"),
    ({"interruption_level": "loud"}, "notifications[0].interruption_level"),
    ({"tokens": []}, "notifications[0].tokens"),
    ({"push_type": 99}, "notifications[0].push_type"),
    ({"alert": push_pb2.Alert(body="x" * 5000)}, "notifications[0]"),
])
def test_each_bad_field_is_named(channel, fields, place):
    code, details = code_and_details(push_pb2_grpc.PushStub(channel).Send,
                                     push_pb2.SendRequest(notifications=[notification(**fields)]))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert details.startswith(place + ":"), details


def test_empty_send_is_invalid_argument(channel):
    code, details = code_and_details(push_pb2_grpc.PushStub(channel).Send, push_pb2.SendRequest())
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert details.startswith("notifications:")


def test_unknown_app_is_not_found(channel):
    code, details = code_and_details(push_pb2_grpc.PushStub(channel).Send,
                                     push_pb2.SendRequest(notifications=[notification(app="nope")]))
    assert code == grpc.StatusCode.NOT_FOUND
    assert details.startswith("notifications[0].app:") and "nope" in details


def test_send_stream_validates_each_request(channel):
    stub = push_pb2_grpc.PushStub(channel)
    requests = iter([push_pb2.SendRequest(notifications=[notification(tokens=["zz"])])])
    responses = stub.SendStream(requests, timeout=10)
    with pytest.raises(grpc.RpcError) as info:
        list(responses)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert info.value.details().startswith("notifications[0].tokens[0]:")


# --- gRPC protocol ---

def test_unknown_method_and_service_are_unimplemented(channel):
    for path, words in [("/pushgate.v1.Push/Nope", "Nope"), ("/no.Such/Method", "no.Such")]:
        call = channel.unary_unary(path, request_serializer=lambda b: b, response_deserializer=lambda b: b)
        code, details = code_and_details(call, b"")
        assert code == grpc.StatusCode.UNIMPLEMENTED
        assert words in details


def test_oversized_message_is_resource_exhausted(server, channel):
    big = push_pb2.SendRequest(notifications=[notification(data_json='{"x":"%s"}' % ("y" * (17 << 20)))])
    code, details = code_and_details(push_pb2_grpc.PushStub(channel).Send, big)
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "16777216" in details
    assert_serving(server)


def test_garbage_protobuf_is_invalid_argument(channel):
    call = channel.unary_unary("/pushgate.v1.Push/Send", request_serializer=lambda b: b,
                               response_deserializer=lambda b: b)
    code, details = code_and_details(call, b"\xff\xff\xff\xff")
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert "pushgate.v1.SendRequest" in details


def test_an_unsupported_compression_is_unimplemented(channel):
    """gzip is taken (test_compression.py); deflate is not, and the answer says what is."""
    code, details = code_and_details(push_pb2_grpc.PushStub(channel).Send,
                                     push_pb2.SendRequest(notifications=[notification()]),
                                     compression=grpc.Compression.Deflate)
    assert code == grpc.StatusCode.UNIMPLEMENTED
    assert "supported: gzip, identity" in details


def test_every_rpc_is_callable_by_name(channel):
    """Each declared RPC answers a real gRPC status (never UNKNOWN or a transport error)."""
    allowed = {grpc.StatusCode.OK, grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND}
    for module, service in [(push_pb2, "Push"), (registry_pb2, "Registry")]:
        descriptor = module.DESCRIPTOR.services_by_name[service]
        for method in descriptor.methods:
            if method.client_streaming or method.server_streaming:
                continue
            from google.protobuf import message_factory
            request_class = message_factory.GetMessageClass(method.input_type)
            call = channel.unary_unary("/pushgate.v1.%s/%s" % (service, method.name),
                                       request_serializer=lambda m: m.SerializeToString(),
                                       response_deserializer=lambda b: b)
            try:
                call(request_class(), timeout=10)
                code = grpc.StatusCode.OK
            except grpc.RpcError as error:
                code = error.code()
            assert code in allowed, (method.name, code)


def test_list_applications_from_config(channel):
    stub = registry_pb2_grpc.RegistryStub(channel)
    reply = stub.ListApplications(registry_pb2.ListApplicationsRequest(), timeout=10)
    assert [a.name for a in reply.applications] == ["demo", "voipapp", "sandboxapp"]
    assert reply.applications[2].platform == registry_pb2.PLATFORM_APNS_SANDBOX
    assert reply.applications[0].bundle_id == "com.example.demo"
    first = stub.ListApplications(registry_pb2.ListApplicationsRequest(page_size=1), timeout=10)
    assert [a.name for a in first.applications] == ["demo"] and first.next_page_token
    second = stub.ListApplications(registry_pb2.ListApplicationsRequest(page_size=1, page_token=first.next_page_token),
                                   timeout=10)
    assert [a.name for a in second.applications] == ["voipapp"] and second.next_page_token


# --- Hostile clients: the server keeps serving others ---

def raw_connection(server):
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
    return sock


def test_garbage_bytes_do_not_hurt_other_clients(server):
    sock = raw_connection(server)
    sock.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n" + bytes(range(256)) * 40)
    try:
        sock.recv(4096)  # a GOAWAY, or a close
    except OSError:
        pass
    sock.close()
    assert_serving(server)


def test_bad_frames_after_a_valid_preface_do_not_hurt_other_clients(server):
    sock = raw_connection(server)
    preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
    # A HEADERS frame on stream 1 whose length runs past what is sent, then garbage.
    sock.sendall(preface + struct.pack(">I", 0x4000)[1:] + b"\x01\x04\x00\x00\x00\x01" + b"\x88" * 10)
    sock.sendall(b"\xff" * 100)
    sock.close()
    assert_serving(server)


def test_client_that_vanishes_mid_call_does_not_hurt_other_clients(server):
    import threading
    ch = grpc.insecure_channel(server.address)
    stream = health_pb2_grpc.HealthStub(ch).Watch(health_pb2.HealthCheckRequest())
    assert next(stream).status == health_pb2.HealthCheckResponse.SERVING
    ch.close()
    assert_serving(server)


def nghttp_call(server, path, body, extra_headers=()):
    """One gRPC call by nghttp2's own client; returns its verbose output."""
    import tempfile
    with tempfile.NamedTemporaryFile(delete=False) as fh:
        fh.write(body)
    args = ["nghttp", "-v", "-n", "-t", "10", "-d", fh.name,
            "-H", ":method: POST", "-H", "content-type: application/grpc", "-H", "te: trailers"]
    for header in extra_headers:
        args += ["-H", header]
    out = subprocess.run(args + ["http://%s%s" % (server.address, path)], capture_output=True, text=True,
                         timeout=30)
    return out.stdout + out.stderr


def test_truncated_message_gets_a_status_and_the_server_goes_on(server):
    body = b"\x00" + struct.pack(">I", 100) + b"\x0a\x02"  # announces 100 bytes, sends 2
    out = nghttp_call(server, "/pushgate.v1.Push/Send", body)
    assert "grpc-status: 3" in out, out
    assert "truncated" in out
    assert_serving(server)


def test_bogus_length_prefix_is_resource_exhausted(server):
    body = b"\x00\xff\xff\xff\xff" + b"\x00" * 32
    out = nghttp_call(server, "/pushgate.v1.Push/Send", body)
    assert "grpc-status: 8" in out, out
    assert_serving(server)


def test_invalid_grpc_timeout_is_invalid_argument(server):
    out = nghttp_call(server, "/grpc.health.v1.Health/Check", b"\x00\x00\x00\x00\x00",
                      ["grpc-timeout: 123456789S"])
    assert "grpc-status: 3" in out, out


def test_server_side_deadline_ends_a_watch(server):
    out = nghttp_call(server, "/grpc.health.v1.Health/Watch", b"\x00\x00\x00\x00\x00", ["grpc-timeout: 200m"])
    assert "grpc-status: 4" in out, out


def test_non_grpc_content_type_is_415(server):
    import tempfile
    out = subprocess.run(["nghttp", "-v", "-n", "-t", "10", "-H", ":method: POST", "-H", "content-type: text/plain",
                          "http://%s/pushgate.v1.Push/Send" % server.address],
                         capture_output=True, text=True, timeout=30)
    assert ":status: 415" in out.stdout + out.stderr


# --- Push/Send runs without a task per call (an immediate unary method): the same answers as the
# task-based methods for a wrong number of request messages, a deadline and a client that leaves.

def framed(message):
    body = message.SerializeToString()
    return b"\x00" + struct.pack(">I", len(body)) + body


def test_send_with_two_request_messages_is_invalid_argument(server):
    one = framed(push_pb2.SendRequest(notifications=[notification(app="demo")]))
    out = nghttp_call(server, "/pushgate.v1.Push/Send", one + one)
    assert "grpc-status: 3" in out, out
    assert "sent more" in out, out
    assert_serving(server)


def test_send_without_a_request_message_is_invalid_argument(server):
    out = nghttp_call(server, "/pushgate.v1.Push/Send", b"")
    assert "grpc-status: 3" in out, out
    assert "without a request message" in out, out


@pytest.fixture(scope="module")
def slow_gateway(tmp_path_factory):
    """A gateway whose APNs (a mock-apns) waits 3 s before every answer."""
    from conftest import Server
    from mock_process import MockProcess
    directory = tmp_path_factory.mktemp("slow-apns")
    mock = MockProcess("mock-apns", str(directory / "mock"), ["--delay-ms", "3000"])
    server = Server({"apps": [mock.apns_app("slow")]}, str(directory))
    yield server
    server.stop()
    mock.stop()
    assert server.proc.returncode == 0, "".join(server.log[-40:])


def test_send_answers_before_its_deadline_with_the_rest_failed(slow_gateway):
    import time
    with grpc.insecure_channel(slow_gateway.address) as ch:
        started = time.monotonic()
        reply = push_pb2_grpc.PushStub(ch).Send(
            push_pb2.SendRequest(notifications=[notification(app="slow")]), timeout=1.0)
        assert time.monotonic() - started < 1.0
    assert [(r.status, r.reason) for r in reply.results] == [(push_pb2.STATUS_FAILED, "DeadlineExceeded")]


def test_send_cancelled_by_its_client_leaves_the_gateway_serving(slow_gateway):
    with grpc.insecure_channel(slow_gateway.address) as ch:
        push = push_pb2_grpc.PushStub(ch)
        calls = [push.Send.future(push_pb2.SendRequest(notifications=[notification(app="slow")]), timeout=30)
                 for _ in range(20)]
        for call in calls:
            assert call.cancel()
        for call in calls:
            with pytest.raises(grpc.FutureCancelledError):
                call.result()
        # Room for a slow build (sanitizers): answered ~100 ms before this deadline.
        reply = push.Send(push_pb2.SendRequest(notifications=[notification(app="slow")]), timeout=2.0)
        assert reply.results[0].reason == "DeadlineExceeded"
    assert_serving(slow_gateway)
    assert slow_gateway.alive()
