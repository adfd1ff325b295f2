"""Bad input at every door (issue 8, item 6), beyond test_frontdoor.py and test_security.py: strings
that are not UTF-8, absurd numbers, huge header blocks, and slowloris clients. Each gets a clear
error (or, below gRPC, a reset or GOAWAY on its own connection) and the server goes on serving."""
import socket
import time

import grpc
import h2.config
import h2.connection
import h2.events
import pytest

from conftest import Server
from grpc.health.v1 import health_pb2, health_pb2_grpc
from mock_process import MockProcess
from pushgate.v1 import push_pb2, push_pb2_grpc, registry_pb2, registry_pb2_grpc

TOKEN = "ab" * 32


@pytest.fixture(scope="module")
def gateway(tmp_path_factory):
    directory = tmp_path_factory.mktemp("bad-input")
    mock = MockProcess("mock-apns", str(directory / "mock"))
    config = {"apps": [mock.apns_app("demo")], "idle_timeout_seconds": 1, "request_timeout_seconds": 1}
    server = Server(config, str(directory))
    yield server
    server.stop()
    mock.stop()
    assert server.proc.returncode == 0, "".join(server.log[-40:])


@pytest.fixture
def channel(gateway):
    with grpc.insecure_channel(gateway.address) as ch:
        yield ch


def assert_still_serving(gateway):
    """Health SERVING and a Send delivers, over a new connection."""
    assert gateway.alive()
    with grpc.insecure_channel(gateway.address) as ch:
        reply = health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=10)
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
        sent = push_pb2_grpc.PushStub(ch).Send(push_pb2.SendRequest(notifications=[push_pb2.Notification(
            app="demo", tokens=[TOKEN], alert=push_pb2.Alert(body="still here"))]), timeout=10)
        assert sent.results[0].status == push_pb2.STATUS_DELIVERED


# --- Strings that are not UTF-8 (protobuf-c does not check; proto3 requires it) ---------------------

def field(number, payload):
    """A length-delimited protobuf field."""
    length, varint = len(payload), b""
    while True:
        byte, length = length & 0x7F, length >> 7
        varint += bytes([byte | (0x80 if length else 0)])
        if not length:
            return bytes([number << 3 | 2]) + varint + payload


def notification(app=b"demo", token=TOKEN.encode(), title=b"Hi"):
    return field(1, field(1, app) + field(2, token) + field(3, field(1, title)))


@pytest.mark.parametrize("method, body, name", [
    ("/pushgate.v1.Push/Send", notification(title=b"Hi \xff there"), "title"),
    ("/pushgate.v1.Push/Send", notification(title=b"\xc0\xaf"), "title"),          # overlong "/"
    ("/pushgate.v1.Push/Send", notification(title=b"\xed\xa0\x80"), "title"),      # a surrogate
    ("/pushgate.v1.Push/Send", notification(app=b"de\xc3"), "app"),
    ("/pushgate.v1.Push/Send", notification(token=b"ab" * 31 + b"\xfe\xff"), "tokens"),
    ("/pushgate.v1.Push/Publish", field(1, b"t") + field(3, b"caf\xe9"), "message"),
    ("/pushgate.v1.Registry/CreateEndpoint", field(1, b"demo") + field(2, TOKEN.encode()) + field(3, b"\x80"),
     "custom_user_data"),
])
def test_invalid_utf8_is_invalid_argument_naming_the_field(gateway, channel, method, body, name):
    call = channel.unary_unary(method)
    with pytest.raises(grpc.RpcError) as info:
        call(body, timeout=10)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "string field %s is not valid UTF-8" % name in info.value.details(), info.value.details()


def test_valid_utf8_of_every_width_is_delivered(channel):
    reply = push_pb2_grpc.PushStub(channel).Send(push_pb2.SendRequest(notifications=[push_pb2.Notification(
        app="demo", tokens=[TOKEN], alert=push_pb2.Alert(title="Grüße ✓ 👋", body="\u0000 is cut by protobuf-c"))]),
        timeout=10)
    assert reply.results[0].status == push_pb2.STATUS_DELIVERED


# --- Absurd numbers --------------------------------------------------------------------------------

def send(channel, **fields):
    fields.setdefault("tokens", [TOKEN])
    fields.setdefault("alert", push_pb2.Alert(body="x"))
    request = push_pb2.SendRequest(notifications=[push_pb2.Notification(app="demo", **fields)])
    return push_pb2_grpc.PushStub(channel).Send(request, timeout=10)


@pytest.mark.parametrize("fields, words", [
    ({"badge": -1}, "notifications[0].badge: must not be negative"),
    ({"badge": -2**31}, "notifications[0].badge: must not be negative"),
    ({"expiration": -1}, "notifications[0].expiration: must not be negative"),
    ({"expiration": -2**63}, "notifications[0].expiration: must not be negative"),
    ({"priority": 2**31 - 1}, "notifications[0].priority: must be 0, 1, 5 or 10"),
    ({"priority": -2**31}, "notifications[0].priority: must be 0, 1, 5 or 10"),
    ({"push_type": 2**31 - 1}, "notifications[0].push_type: unknown push type"),
    ({"push_type": -1}, "notifications[0].push_type: unknown push type"),
])
def test_absurd_numbers_in_a_send_are_named(channel, fields, words):
    with pytest.raises(grpc.RpcError) as info:
        send(channel, **fields)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert info.value.details().startswith(words), info.value.details()


@pytest.mark.parametrize("fields", [{"badge": 2**31 - 1}, {"expiration": 2**63 - 1}])
def test_huge_but_legal_numbers_are_delivered(channel, fields):
    assert send(channel, **fields).results[0].status == push_pb2.STATUS_DELIVERED


def test_absurd_page_sizes(channel):
    registry = registry_pb2_grpc.RegistryStub(channel)
    with pytest.raises(grpc.RpcError) as info:
        registry.ListEndpoints(registry_pb2.ListEndpointsRequest(page_size=-1), timeout=10)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert info.value.details().startswith("page_size:")
    # Larger than the maximum is capped, not an error (and not an allocation of that size).
    registry.ListEndpoints(registry_pb2.ListEndpointsRequest(page_size=2**31 - 1), timeout=10)


@pytest.mark.parametrize("attributes, place", [
    ({"AWS.SNS.MOBILE.APNS.TTL": "99999999999999999999999"}, 'attributes["AWS.SNS.MOBILE.APNS.TTL"]'),
    ({"AWS.SNS.MOBILE.APNS.TTL": "-5"}, 'attributes["AWS.SNS.MOBILE.APNS.TTL"]'),
    ({"AWS.SNS.MOBILE.APNS.TTL": "1e308"}, 'attributes["AWS.SNS.MOBILE.APNS.TTL"]'),
    ({"AWS.SNS.MOBILE.APNS.PRIORITY": "99999999999"}, 'attributes["AWS.SNS.MOBILE.APNS.PRIORITY"]'),
])
def test_absurd_numbers_in_publish_attributes_are_named(channel, attributes, place):
    registry = registry_pb2_grpc.RegistryStub(channel)
    registry.CreateTopic(registry_pb2.CreateTopicRequest(name="absurd"), timeout=10)
    with pytest.raises(grpc.RpcError) as info:
        push_pb2_grpc.PushStub(channel).Publish(
            push_pb2.PublishRequest(topic="absurd", message="m", attributes=attributes), timeout=10)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert info.value.details().startswith(place + ":"), info.value.details()


@pytest.mark.parametrize("number", ["1e400", "99999999999999999999999999999", "-1e400"])
def test_absurd_numbers_in_filter_policies_are_named(channel, number):
    registry = registry_pb2_grpc.RegistryStub(channel)
    registry.CreateTopic(registry_pb2.CreateTopicRequest(name="absurd"), timeout=10)
    endpoint = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="demo", token="ef" * 32), timeout=10)
    with pytest.raises(grpc.RpcError) as info:
        registry.Subscribe(registry_pb2.SubscribeRequest(
            topic="absurd", endpoint_id=endpoint.id, filter_policy_json='{"n":[{"numeric":[">",%s]}]}' % number),
            timeout=10)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert info.value.details().startswith("filter_policy_json:"), info.value.details()


# --- RFC 7540 priorities, which the server says it ignores (RFC 9218) ------------------------------

def test_priority_signals_are_ignored_as_the_server_announces(gateway):
    """The server's SETTINGS carry SETTINGS_NO_RFC7540_PRIORITIES = 1 (nghttp2 then schedules
    without RFC 7540's dependency tree); a client that sends priorities anyway (a PRIORITY frame,
    a weight and a dependency in HEADERS, on hyper-h2) still has its calls answered."""
    sock, conn = raw_h2(gateway)
    settings, deadline = None, time.time() + 10
    while settings is None and time.time() < deadline:
        for event in conn.receive_data(sock.recv(65536)):
            if isinstance(event, h2.events.RemoteSettingsChanged):
                settings = {int(code): change.new_value for code, change in event.changed_settings.items()}
        sock.sendall(conn.data_to_send())
    assert settings is not None and settings.get(0x9) == 1, settings
    body = field(1, field(1, b"demo") + field(2, TOKEN.encode()) + field(3, field(1, b"Hi")))
    conn.prioritize(3, weight=200, depends_on=0, exclusive=True)
    for stream_id in (1, 3):
        conn.send_headers(stream_id, GRPC_HEADERS, priority_weight=16 * stream_id, priority_depends_on=0)
        conn.send_data(stream_id, b"\0" + len(body).to_bytes(4, "big") + body, end_stream=True)
    sock.sendall(conn.data_to_send())
    statuses = {}
    while len(statuses) < 2 and time.time() < deadline:
        for event in read_events(sock, conn, seconds=1):
            if isinstance(event, h2.events.TrailersReceived):
                statuses[event.stream_id] = dict(event.headers).get(b"grpc-status")
    sock.close()
    assert statuses == {1: b"0", 3: b"0"}, statuses


# --- Huge header blocks --------------------------------------------------------------------------

def raw_h2(gateway):
    sock = socket.create_connection(("127.0.0.1", gateway.port), timeout=10)
    conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    return sock, conn


def read_events(sock, conn, seconds=10):
    """Events until the connection closes or `seconds` pass (settings chatter left out)."""
    events, deadline = [], time.time() + seconds
    while time.time() < deadline:
        sock.settimeout(max(0.05, deadline - time.time()))
        try:
            data = sock.recv(65536)
        except socket.timeout:
            break
        except ConnectionResetError:
            events.append("reset")
            break
        if not data:
            events.append("closed")
            break
        events += [e for e in conn.receive_data(data) if not isinstance(
            e, (h2.events.RemoteSettingsChanged, h2.events.SettingsAcknowledged, h2.events.WindowUpdated))]
        if any(isinstance(e, h2.events.ConnectionTerminated) for e in events):
            break
        try:
            sock.sendall(conn.data_to_send())
        except OSError:
            break
    return events


GRPC_HEADERS = [(":method", "POST"), (":scheme", "http"), (":path", "/pushgate.v1.Push/Send"), (":authority", "x"),
                ("content-type", "application/grpc"), ("te", "trailers")]


def hpack_int(value, prefix_bits, first=0):
    """An HPACK integer with an N-bit prefix (RFC 7541 5.1)."""
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([first | value])
    out, value = [first | limit], value - limit
    while value >= 128:
        out.append(value % 128 + 128)
        value //= 128
    return bytes(out + [value])


def hpack_literal(name, value):
    """Literal header field without indexing, new name, no Huffman (RFC 7541 6.2.2): cheap to
    build at any size (hyper-h2's Huffman encoder takes tens of seconds for 200 KB)."""
    return (b"\x00" + hpack_int(len(name), 7) + name + hpack_int(len(value), 7) + value)


def header_frames(stream_id, block, end_stream=True):
    """HEADERS then CONTINUATION frames of at most 16 KB carrying `block`."""
    chunks = [block[i:i + 16384] for i in range(0, len(block), 16384)] or [b""]
    frames = b""
    for index, chunk in enumerate(chunks):
        kind = 0x1 if index == 0 else 0x9
        flags = (0x1 if end_stream and index == 0 else 0) | (0x4 if index == len(chunks) - 1 else 0)
        frames += len(chunk).to_bytes(3, "big") + bytes([kind, flags]) + stream_id.to_bytes(4, "big") + chunk
    return frames


@pytest.mark.parametrize("extra", [
    [(b"x-huge", b"a" * 200_000)],                                   # one 200 KB field
    [(b"x-h%d" % i, b"v" * 100) for i in range(5000)],               # 5000 fields, 500 KB
])
def test_huge_header_blocks_are_refused_on_their_own_connection(gateway, extra):
    sock = socket.create_connection(("127.0.0.1", gateway.port), timeout=10)
    block = b"".join(hpack_literal(n.encode(), v.encode()) for n, v in GRPC_HEADERS)
    block += b"".join(hpack_literal(n, v) for n, v in extra)
    try:
        sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
                     + header_frames(1, block))
    except OSError:
        pass  # refused before it had all of it
    frames = read_frames(sock)
    sock.close()
    kinds = {kind for kind, _ in frames}
    assert kinds & {RST_STREAM, GOAWAY} or ("closed", None) in frames, frames
    assert (HEADERS, 1) not in frames, "a huge header block became a call"
    assert_still_serving(gateway)


HEADERS, RST_STREAM, GOAWAY = 0x1, 0x3, 0x7


def read_frames(sock, seconds=10):
    """(type, stream id) of every frame the server sends until it closes or `seconds` pass."""
    data, frames, deadline = b"", [], time.time() + seconds
    while time.time() < deadline:
        sock.settimeout(max(0.05, deadline - time.time()))
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            break
        except ConnectionResetError:
            frames.append(("closed", None))
            break
        if not chunk:
            frames.append(("closed", None))
            break
        data += chunk
        while len(data) >= 9 and len(data) >= 9 + int.from_bytes(data[:3], "big"):
            length = int.from_bytes(data[:3], "big")
            frames.append((data[3], int.from_bytes(data[5:9], "big") & 0x7FFFFFFF))
            data = data[9 + length:]
        if any(kind == GOAWAY for kind, _ in frames):
            break
    return frames


# --- Slowloris -----------------------------------------------------------------------------------

def test_a_header_block_never_finished_is_closed_after_the_idle_timeout(gateway):
    # HEADERS without END_HEADERS and no CONTINUATION ever: no call begins, so only the idle
    # timeout can end it; the GOAWAY alone would not (nghttp2 waits for the block), so the
    # connection is closed one idle timeout later.
    sock = socket.create_connection(("127.0.0.1", gateway.port), timeout=10)
    sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00")
    sock.sendall(b"\x00\x00\x01\x01\x00\x00\x00\x00\x01" + b"\x82")  # HEADERS, stream 1, flags 0
    sock.settimeout(30)
    received, closed = b"", False
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                closed = True
                break
            received += data
    except ConnectionResetError:
        closed = True
    except socket.timeout:
        pass
    sock.close()
    assert closed, "the connection was still open 30 s later (idle timeout 1 s)"
    assert b"max_idle" in received, "a GOAWAY (max_idle) came first"
    assert_still_serving(gateway)


def test_many_slow_clients_do_not_hold_up_others(gateway):
    # 20 connections dripping the connection preface a byte at a time, and 20 holding an unfinished
    # header block: a normal client is served meanwhile, and every slow one is closed.
    slow = []
    for i in range(40):
        sock = socket.create_connection(("127.0.0.1", gateway.port), timeout=10)
        if i % 2:
            sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
                         + b"\x00\x00\x01\x01\x00\x00\x00\x00\x01\x82")
        else:
            sock.sendall(b"P")
        slow.append(sock)
    assert_still_serving(gateway)
    preface = b"RI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
    open_ones = set(range(0, 40, 2))
    for byte in range(len(preface)):
        for i in list(open_ones):
            try:
                slow[i].sendall(preface[byte:byte + 1])
            except OSError:
                open_ones.discard(i)
        time.sleep(0.25)
    assert not open_ones, "%d preface drippers still open after %.1f s" % (len(open_ones), 0.25 * len(preface))
    for sock in slow[1::2]:
        sock.settimeout(30)
        try:
            while sock.recv(65536):
                pass
        except ConnectionResetError:
            pass
        sock.close()
    for sock in slow[::2]:
        sock.close()
    assert_still_serving(gateway)
