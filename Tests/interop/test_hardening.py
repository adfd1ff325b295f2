"""Hostile clients against the front door (issue: hardening), each as it was found, with a raw HTTP/2
client (Python h2) where a stock gRPC client cannot misbehave enough:

- a client without a key is answered at HEADERS time and none of its body is kept;
- partial request messages are bounded by the request budget (RESOURCE_EXHAUSTED past it);
- a client that does not read its answers is closed, and the work it asked for is still done;
- an error message that echoes a huge input is answered, capped, and so are the log lines.

Memory figures come from the gateway's /proc/PID/status (VmRSS, VmHWM)."""
import hashlib
import re
import socket
import urllib.request
import struct
import time

import grpc
import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings
import pytest

from conftest import Server, rss_kib, wait_metrics_port
from mock_process import MockProcess
from pushgate.v1 import push_pb2, push_pb2_grpc

KEY = "pgk_hardening-test-key"
MiB = 1 << 20


def token(n):
    return ("%064x" % (0xAB00000 + n))[-64:]


def send_request(app, count, first=0):
    return push_pb2.SendRequest(notifications=[push_pb2.Notification(
        app=app, tokens=[token(first + i) for i in range(count)], alert=push_pb2.Alert(title="t", body="b"))])


def framed(message_bytes):
    return b"\x00" + struct.pack(">I", len(message_bytes)) + message_bytes


class RawClient:
    """An HTTP/2 client that does exactly what it is told: no automatic WINDOW_UPDATE for what it
    receives (it reads nothing unless `acknowledge`), streams opened and fed by hand."""

    def __init__(self, port, initial_window=None, acknowledge=True):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        self.conn.initiate_connection()
        if initial_window is not None:
            self.conn.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: initial_window})
        self.acknowledge = acknowledge
        self.responses = {}       # stream id -> {"headers": [...], "trailers": [...], "data": bytes, "reset": code}
        self.terminated = None    # the GOAWAY's error code, or "eof"
        self.last_stream_id = None  # the GOAWAY's last stream id
        self.send_failed = False
        self.flush()

    def flush(self):
        data = self.conn.data_to_send()
        if data:
            self.sock.sendall(data)

    def open(self, path, metadata=()):
        stream_id = self.conn.get_next_available_stream_id()
        headers = [(":method", "POST"), (":scheme", "http"), (":path", path), (":authority", "localhost"),
                   ("content-type", "application/grpc"), ("te", "trailers")] + list(metadata)
        self.conn.send_headers(stream_id, headers)
        self.responses[stream_id] = {"headers": [], "trailers": [], "data": b"", "reset": None}
        self.flush()
        return stream_id

    def send_message(self, stream_id, data):
        """A whole request and END_STREAM, as flow control lets it go. A socket that takes nothing
        more (the server stopped reading, or closed) ends the sending: `send_failed`."""
        self.feed({stream_id: data}, 10)
        if self.terminated is not None:
            # The server ended the connection while the request was going out (h2 refuses to
            # end a stream on a closed connection): the caller sees why in `terminated`.
            return
        self.conn.end_stream(stream_id)
        try:
            self.flush()
        except OSError:
            self.send_failed = True

    def pump(self, seconds):
        """Reads and handles frames for up to `seconds` (returns early once the connection ended)."""
        deadline = time.time() + seconds
        while self.terminated is None:
            left = deadline - time.time()
            if left <= 0:
                return
            left = max(left, 0.0005)
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                return
            except OSError:
                self.terminated = self.terminated or "eof"
                return
            if not data:
                self.terminated = self.terminated or "eof"
                return
            self.handle(self.conn.receive_data(data))
            try:
                self.flush()
            except OSError:
                self.terminated = self.terminated or "eof"

    def handle(self, events):
        for event in events:
            if isinstance(event, h2.events.ResponseReceived):
                self.responses[event.stream_id]["headers"] = event.headers
            elif isinstance(event, h2.events.TrailersReceived):
                self.responses[event.stream_id]["trailers"] = event.headers
            elif isinstance(event, h2.events.DataReceived):
                self.responses[event.stream_id]["data"] += event.data
                if self.acknowledge:
                    self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.StreamReset):
                self.responses[event.stream_id]["reset"] = event.error_code
            elif isinstance(event, h2.events.ConnectionTerminated):
                self.terminated = event.error_code
                self.last_stream_id = event.last_stream_id

    def status(self, stream_id):
        """grpc-status (int) and grpc-message of a finished call, or None while it runs."""
        response = self.responses[stream_id]
        fields = dict(response["trailers"] or [])
        if "grpc-status" not in fields:
            fields = dict(response["headers"])  # Trailers-Only
        if "grpc-status" not in fields:
            return None
        return int(fields["grpc-status"]), fields.get("grpc-message", "")

    def feed(self, remaining, seconds):
        """Sends what `remaining` (stream id -> bytes) holds as fast as flow control lets it, until
        all is sent, every stream is closed, or `seconds` pass. Streams the server closed are dropped."""
        deadline = time.time() + seconds
        while remaining and time.time() < deadline and self.terminated is None:
            progressed = False
            for stream_id in list(remaining):
                if self.responses[stream_id]["reset"] is not None or self.status(stream_id) is not None:
                    del remaining[stream_id]  # answered or reset: a client stops sending
                    continue
                data = remaining[stream_id]
                try:
                    window = min(self.conn.local_flow_control_window(stream_id), self.conn.max_outbound_frame_size)
                except (h2.exceptions.StreamClosedError, h2.exceptions.ProtocolError, KeyError):
                    del remaining[stream_id]
                    continue
                if window <= 0:
                    continue
                try:
                    self.conn.send_data(stream_id, data[:window])
                except (h2.exceptions.StreamClosedError, h2.exceptions.ProtocolError):
                    del remaining[stream_id]
                    continue
                remaining[stream_id] = data[window:]
                if not remaining[stream_id]:
                    del remaining[stream_id]
                progressed = True
            try:
                self.flush()
            except OSError:
                self.terminated = self.terminated or "eof"
            self.pump(0.001 if progressed else 0.05)

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


@pytest.fixture(scope="module")
def mock(tmp_path_factory):
    m = MockProcess("mock-apns", str(tmp_path_factory.mktemp("hardening-apns")))
    yield m
    if m.proc.poll() is None:
        m.stop()


def start_gateway(tmp_path_factory, mock, name, **settings):
    config = {"apps": [mock.apns_app("hard")], "metrics_listen": "127.0.0.1:0"}
    config.update(settings)
    server = Server(config, str(tmp_path_factory.mktemp(name)))
    server.metrics_port = wait_metrics_port(server)
    return server


def wait_log(server, predicate, timeout=10):
    """Whether a line of the server's log satisfies `predicate` within `timeout` (the log is read by a
    thread of its own, so a line can come a moment after what it reports)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if any(predicate(line) for line in list(server.log)):
            return True
        time.sleep(0.05)
    return False


def metric(server, name, **labels):
    """The sum of the samples of `name` whose labels include `labels` (Prometheus text, read plainly)."""
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % server.metrics_port, timeout=10) as response:
        text = response.read().decode()
    total = 0.0
    for line in text.splitlines():
        m = re.match(r"^(\w+)(?:\{(.*)\})? (\S+)$", line)
        if not m or m.group(1) != name:
            continue
        have = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2) or ""))
        if all(have.get(k) == v for k, v in labels.items()):
            total += float(m.group(3))
    return total


def lookalike_apns_app(tmp_path, name, provider, cert, **extra):
    """An apns app (token auth with a fresh P-256 key) delivering to a Python h2 look-alike."""
    import subprocess
    p8 = tmp_path / "AuthKey_KEY1234567.p8"
    subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", str(p8)],
                   check=True, capture_output=True)
    app = {"name": name, "platform": "apns", "bundle_id": "com.example." + name, "team_id": "TEAM123456",
           "key_id": "KEY1234567", "key_file": str(p8), "url": "https://127.0.0.1:%d" % provider.port, "ca_file": cert}
    app.update(extra)
    return app


# --- 1. Authorization before buffering -------------------------------------------------------

@pytest.fixture(scope="module")
def keyed(tmp_path_factory, mock):
    s = start_gateway(tmp_path_factory, mock, "hardening-keyed", api_keys=[
        {"name": "sender", "key_sha256": hashlib.sha256(KEY.encode()).hexdigest(), "apps": ["*"]}])
    yield s
    s.stop()


def test_a_call_without_a_key_is_refused_at_headers_time(keyed):
    """Before: the key was checked once the whole message had arrived, so these calls were not
    answered until their bodies came (and held the bodies meanwhile)."""
    client = RawClient(keyed.port)
    streams = [client.open("/pushgate.v1.Push/Send") for _ in range(64)]
    deadline = time.time() + 10
    while time.time() < deadline and any(client.status(s) is None for s in streams):
        client.pump(0.2)
    statuses = [client.status(s) for s in streams]
    assert all(s is not None and s[0] == 16 for s in statuses), statuses  # UNAUTHENTICATED, no body sent
    assert "authorization: missing" in statuses[0][1]
    client.close()


def test_unauthenticated_partial_bodies_do_not_inflate_memory(keyed):
    """The attack as found: 64 streams each sending 3.9 MB of a declared 4 MB message without a key
    (RSS went 24 MB -> 1.0 GB with 256 of them). Now none of it is kept: the calls are answered and
    reset at HEADERS, and what still arrives is dropped as it comes."""
    before = rss_kib(keyed)
    client = RawClient(keyed.port)
    body = b"\x00" + struct.pack(">I", 4_000_000) + b"\x00" * 3_900_000
    remaining = {client.open("/pushgate.v1.Push/Send"): body for _ in range(64)}
    client.feed(remaining, 20)
    client.pump(1)
    grown = rss_kib(keyed) - before
    print("\nunauthenticated partial bodies: RSS %d -> %d KiB (VmHWM %d KiB)" % (before, before + grown, rss_kib(keyed, "VmHWM")))
    assert all(client.status(s) and client.status(s)[0] == 16 for s in client.responses), client.responses
    client.close()
    # 64 x 3.9 MB = 250 MB offered; a few MiB of growth are the loop's read buffers and allocator.
    assert grown < 32 * 1024, "RSS grew by %d KiB" % grown


# --- Request budget ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def budgeted(tmp_path_factory, mock):
    s = start_gateway(tmp_path_factory, mock, "hardening-budget", max_message_bytes=4 * MiB,
                      max_buffered_request_bytes_per_connection=16 * MiB, request_timeout_seconds=8)
    yield s
    s.stop()


def test_partial_messages_are_bounded_by_the_connection_budget(budgeted):
    """16 streams each declare 4,000,000 bytes and send 3,900,000: four fit the 16 MiB budget and
    wait for the rest of their message; the others get RESOURCE_EXHAUSTED at their length prefix.
    The four end at request_timeout (8 s), and the budget is free again."""
    before = rss_kib(budgeted)
    client = RawClient(budgeted.port)
    body = b"\x00" + struct.pack(">I", 4_000_000) + b"\x00" * 3_900_000
    remaining = {client.open("/pushgate.v1.Push/Send"): body for _ in range(16)}
    started = time.time()
    client.feed(remaining, 30)
    client.pump(0.5)
    assert time.time() - started < 8, "feeding took until request_timeout"
    held = rss_kib(budgeted) - before
    print("\npartial messages within a 16 MiB budget: RSS %d -> %d KiB" % (before, before + held))
    statuses = {s: client.status(s) for s in client.responses}
    refused = [s for s, st in statuses.items() if st and st[0] == 8]
    waiting = [s for s, st in statuses.items() if st is None]
    assert len(refused) == 12 and len(waiting) == 4, statuses
    assert "on this connection already hold 16000020 of its 16777216-byte request budget" in statuses[refused[0]][1], \
        statuses[refused[0]]
    # Four reservations of 4,000,005 bytes: 16 MB held, plus the allocator's slack.
    assert held < 40 * 1024, "RSS grew by %d KiB" % held
    deadline = time.time() + 10
    while time.time() < deadline and any(client.status(s) is None for s in waiting):
        client.pump(0.2)
    assert all(client.status(s)[0] == 4 for s in waiting), [client.status(s) for s in waiting]
    client.close()
    with grpc.insecure_channel(budgeted.address) as channel:
        reply = push_pb2_grpc.PushStub(channel).Send(send_request("hard", 3), timeout=10)
        assert [r.status for r in reply.results] == [push_pb2.STATUS_DELIVERED] * 3
    assert wait_log(budgeted, lambda line: "request budget exceeded" in line), "".join(budgeted.log[-20:])
    assert metric(budgeted, "pushgate_grpc_protections_total", event="request_budget_exceeded") == 12


def test_a_streaming_client_faster_than_its_handler_is_slowed_not_refused(budgeted):
    """SendStream reads 16 requests ahead; a client pushing 200 requests at once is held back by
    the stream's flow-control window (nothing piles up), and every one is answered."""
    with grpc.insecure_channel(budgeted.address) as channel:
        replies = list(push_pb2_grpc.PushStub(channel).SendStream(
            iter([send_request("hard", 50, first=1000 + 50 * i) for i in range(200)]), timeout=60))
    assert len(replies) == 200
    assert all(r.status == push_pb2.STATUS_DELIVERED for reply in replies for r in reply.results)


# --- 2. A client that does not read -----------------------------------------------------------

@pytest.fixture(scope="module")
def guarded(tmp_path_factory, mock):
    s = start_gateway(tmp_path_factory, mock, "hardening-unread", max_unsent_response_bytes=256 * 1024,
                      write_timeout_seconds=2)
    yield s
    s.stop()


def test_a_client_that_reads_nothing_is_closed_once_its_unsent_answers_pass_the_limit(guarded, mock):
    """A zero-window client sends 40 Sends of 500 tokens (about 60 KB of results each): past 256 KiB
    of unsent answers it gets GOAWAY (ENHANCE_YOUR_CALM) and is closed; the Sends are delivered all
    the same (before: the answers sat in memory for as long as the client kept the connection).
    The GOAWAY's last stream id is the last Send whose request the gateway took whole: exactly those
    are delivered, and the ones above it, cut off mid-request, are not (a client may resend them)."""
    delivered = metric(guarded, "pushgate_notifications_total", status="delivered")
    client = RawClient(guarded.port, initial_window=0, acknowledge=False)
    opened = []
    for i in range(40):
        stream_id = client.open("/pushgate.v1.Push/Send")
        opened.append(stream_id)
        client.send_message(stream_id, framed(send_request("hard", 500, first=100_000 + 500 * i).SerializeToString()))
        if client.terminated is not None or client.send_failed:
            break  # the GOAWAY came while sending: no more streams can be opened
    cut = None
    if client.terminated is None:
        # One more Send, cut off mid-request: never taken, so never among the GOAWAY's streams.
        cut = client.open("/pushgate.v1.Push/Send")
        client.conn.send_data(cut, framed(send_request("hard", 500, first=90_000).SerializeToString())[:1000])
        client.flush()
    client.pump(15)
    assert client.terminated == 11, client.terminated  # GOAWAY ENHANCE_YOUR_CALM
    assert cut is None or client.last_stream_id < cut, (client.last_stream_id, cut)
    client.close()
    assert wait_log(guarded, lambda line: "client closed: it does not read its responses" in line
                    and "max_unsent_response_bytes" in line), "".join(guarded.log[-20:])
    assert metric(guarded, "pushgate_grpc_protections_total", event="unread_client_closed") >= 1
    taken = [s for s in opened if s <= client.last_stream_id]
    assert len(taken) >= 5, (client.last_stream_id, opened)  # 256 KiB is past the fifth answer
    # The work goes on without the client: every token of every Send taken is delivered.
    expected = delivered + 500 * len(taken)
    deadline = time.time() + 30
    while time.time() < deadline and metric(guarded, "pushgate_notifications_total", status="delivered") < expected:
        time.sleep(0.2)
    time.sleep(0.5)  # and nothing beyond them
    assert metric(guarded, "pushgate_notifications_total", status="delivered") == expected, (len(taken), opened)


def test_memory_goes_back_down_after_an_unread_client_is_closed(tmp_path, mock):
    """The issue's "RSS back down": a zero-window client sends 40 Sends of 8,000 tokens and is
    closed past 4 MiB of unread answers; its work is done without it, and once no call runs the
    heap the burst left free goes back to the system (before, RSS stayed at the burst's peak)."""
    server = Server({"apps": [mock.apns_app("hard")], "max_unsent_response_bytes": 4 * MiB,
                     "log_level": "debug"}, str(tmp_path))
    try:
        before = rss_kib(server)
        client = RawClient(server.port, initial_window=0, acknowledge=False)
        for i in range(40):
            stream_id = client.open("/pushgate.v1.Push/Send")
            client.send_message(stream_id, framed(send_request("hard", 8000, first=400_000 + 8000 * i).SerializeToString()))
            if client.terminated is not None or client.send_failed:
                break
        client.pump(30)
        # ENHANCE_YOUR_CALM, or (on a slow machine: the client was still writing when the
        # connection's linger ran out) the close itself; either way the gateway says why.
        assert client.terminated in (11, "eof"), client.terminated
        assert wait_log(server, lambda line: "client closed: it does not read its responses" in line), \
            "".join(server.log[-10:])
        client.close()
        # The detached work goes on for a while; trims come every 10 s while no call runs.
        deadline = time.time() + 60
        while time.time() < deadline:
            peak, after = rss_kib(server, "VmHWM"), rss_kib(server)
            if after < before + (peak - before) // 2:
                break
            time.sleep(1)
        print("\nunread burst: RSS %d KiB before, peak %d KiB, %d KiB after" % (before, peak, after))
        assert after < before + (peak - before) // 2, (before, peak, after)
        # The trimmer runs every 10 s and only when RSS is 32 MiB or more above what it last saw
        # settle: RSS can come down first (the allocator returns whole segments itself), and then
        # the next trim may come up to 10 s later, or, within 32 MiB of the start, not be needed.
        trimmed = wait_log(server, lambda line: "returned free heap to the system" in line, timeout=25)
        assert trimmed or rss_kib(server) < before + 32 * 1024, "".join(server.log[-10:])
    finally:
        server.stop()


def test_a_client_that_reads_nothing_is_closed_after_the_write_timeout(guarded):
    client = RawClient(guarded.port, initial_window=0, acknowledge=False)
    stream_id = client.open("/pushgate.v1.Push/Send")
    client.send_message(stream_id, framed(send_request("hard", 20, first=200_000).SerializeToString()))
    started = time.time()
    client.pump(15)
    waited = time.time() - started
    assert client.terminated == 11, client.terminated
    assert 1.5 <= waited < 10, waited
    client.close()
    assert wait_log(guarded, lambda line: "write_timeout" in line), "".join(guarded.log[-20:])


# --- 3. Long error messages -------------------------------------------------------------------

@pytest.fixture(scope="module")
def plain(tmp_path_factory, mock):
    s = start_gateway(tmp_path_factory, mock, "hardening-plain")
    yield s
    s.stop()


@pytest.mark.parametrize("app", ["a" * 70_000, "\u00ff" * 25_000], ids=["70000-ascii", "25000-latin1"])
def test_an_error_echoing_a_huge_value_is_answered_with_a_capped_message(plain, app):
    """Before: the grpc-message (over 64 KiB once percent-encoded) could not be sent, the call was
    never answered (DEADLINE_EXCEEDED at the client) and its stream stayed open."""
    with grpc.insecure_channel(plain.address) as channel:
        with pytest.raises(grpc.RpcError) as failure:
            push_pb2_grpc.PushStub(channel).Send(
                push_pb2.SendRequest(notifications=[push_pb2.Notification(app=app, tokens=[token(1)])]), timeout=10)
    assert failure.value.code() == grpc.StatusCode.NOT_FOUND, failure.value
    details = failure.value.details()
    assert "unknown app" in details and "…" in details, details
    assert len(details.encode()) <= 2048, len(details.encode())
    assert all(len(line) < 8192 for line in plain.log), max(len(line) for line in plain.log)


# --- 6. Smaller findings ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def short_idle(tmp_path_factory, mock):
    s = start_gateway(tmp_path_factory, mock, "hardening-idle", idle_timeout_seconds=1)
    yield s
    s.stop()


def test_a_keyless_health_watch_does_not_hold_a_connection_past_the_idle_timeout(short_idle):
    """Before: a Health/Watch (which needs no key) kept its connection busy for ever. Keyless calls
    no longer count: the connection gets its idle GOAWAY, and one idle timeout later it is closed."""
    from grpc.health.v1 import health_pb2, health_pb2_grpc
    with grpc.insecure_channel(short_idle.address) as channel:
        stream = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest(), timeout=20)
        assert next(stream).status == health_pb2.HealthCheckResponse.SERVING
        started = time.time()
        with pytest.raises(grpc.RpcError) as ended:
            for _ in stream:
                pass
        assert ended.value.code() == grpc.StatusCode.UNAVAILABLE, ended.value
        assert time.time() - started < 10


def test_the_default_message_limit_holds_a_send_of_max_tokens_per_send(plain):
    """Before: the default max_message_bytes (4 MiB) held about 63,000 APNs tokens, under the default
    max_tokens_per_send (100,000). Now a 100,000-token Send fits (about 6.6 MB) and is delivered."""
    request = send_request("hard", 100_000, first=300_000)
    assert request.ByteSize() > 4 << 20
    options = [("grpc.max_receive_message_length", 64 * MiB), ("grpc.max_send_message_length", 64 * MiB)]
    with grpc.insecure_channel(plain.address, options=options) as channel:
        reply = push_pb2_grpc.PushStub(channel).Send(request, timeout=120)
    print("\n100,000-token Send: request %d bytes, response %d bytes" % (request.ByteSize(), reply.ByteSize()))
    assert len(reply.results) == 100_000
    assert all(r.status == push_pb2.STATUS_DELIVERED for r in reply.results)


def test_a_window_update_flood_is_closed_and_others_are_served(plain):
    """Before: one connection sending WINDOW_UPDATEs as fast as it could took a full core for as long
    as it went on (nghttp2 limits only the frames it must answer). Now: past 10,000 such frames in a
    second the client gets GOAWAY ENHANCE_YOUR_CALM and is closed."""
    sock = socket.create_connection(("127.0.0.1", plain.port), timeout=10)
    sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00")
    update = b"\x00\x00\x04\x08\x00\x00\x00\x00\x00" + struct.pack(">I", 1)
    received = b""
    try:
        for _ in range(50):
            sock.sendall(update * 4000)
    except OSError:
        pass  # closed by the server mid-flood
    sock.settimeout(5)
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                break
            received += data
    except OSError:
        pass
    sock.close()
    frames, offset = [], 0
    while offset + 9 <= len(received):
        length = int.from_bytes(received[offset:offset + 3], "big")
        frames.append((received[offset + 3], received[offset + 9:offset + 9 + length]))
        offset += 9 + length
    goaways = [payload for kind, payload in frames if kind == 0x7]
    assert goaways and int.from_bytes(goaways[-1][4:8], "big") == 11, (frames[:5], "".join(plain.log[-5:]))  # ENHANCE_YOUR_CALM
    assert metric(plain, "pushgate_grpc_protections_total", event="control_frame_flood") >= 1
    with grpc.insecure_channel(plain.address) as channel:
        assert push_pb2_grpc.PushStub(channel).Send(send_request("hard", 1), timeout=10).results[0].status \
            == push_pb2.STATUS_DELIVERED


def test_a_missing_p8_key_is_reported_as_a_missing_file(tmp_path):
    """Before: "TLS certificate error: cannot open …" with OpenSSL's error queue."""
    import json
    import subprocess
    from mock_process import pushgate_binary
    config = tmp_path / "pushgate.json"
    config.write_text(json.dumps({"apps": [{"name": "a", "team_id": "TEAM123456", "key_id": "KEY1234567",
                                            "key_file": str(tmp_path / "missing.p8"), "bundle_id": "com.a"}]}))
    out = subprocess.run([pushgate_binary(), "serve", "--config", str(config), "--listen", "127.0.0.1:0",
                          "--store", str(tmp_path / "db")], capture_output=True, text=True, timeout=30)
    assert out.returncode != 0
    assert "config.apps[0]: the .p8 key file: cannot open %s: No such file or directory" % (tmp_path / "missing.p8") \
        in out.stderr, out.stderr
    assert "TLS certificate error" not in out.stderr


def test_a_store_deleted_under_the_gateway_is_refused_not_written_into(tmp_path, mock):
    """Before: with the store's directory deleted, Publish kept answering OK into an unlinked file
    (lost at the next start), store failures were logged at info, Health stayed SERVING and the
    client's message carried SQL. Now: UNAVAILABLE with no SQL and no path, an error in the log,
    NOT_SERVING for the store-backed services, and Send still works."""
    import shutil
    from grpc.health.v1 import health_pb2, health_pb2_grpc
    from pushgate.v1 import registry_pb2, registry_pb2_grpc
    directory = tmp_path / "store"
    directory.mkdir()
    server = Server({"apps": [mock.apns_app("hard")]}, str(tmp_path), store=str(directory / "pushgate.db"))
    try:
        with grpc.insecure_channel(server.address) as channel:
            registry = registry_pb2_grpc.RegistryStub(channel)
            registry.CreateTopic(registry_pb2.CreateTopicRequest(name="t"), timeout=10)
            shutil.rmtree(directory)
            with pytest.raises(grpc.RpcError) as failure:
                push_pb2_grpc.PushStub(channel).Publish(push_pb2.PublishRequest(topic="t", message="m"), timeout=10)
            assert failure.value.code() == grpc.StatusCode.UNAVAILABLE, failure.value
            details = failure.value.details()
            assert "details in the gateway's log" in details
            assert "SELECT" not in details.upper() and "pushgate.db" not in details, details
            health = health_pb2_grpc.HealthStub(channel)
            for service, status in [("pushgate.store", health_pb2.HealthCheckResponse.NOT_SERVING),
                                    ("pushgate.v1.Registry", health_pb2.HealthCheckResponse.NOT_SERVING),
                                    ("pushgate.v1.Push", health_pb2.HealthCheckResponse.SERVING)]:
                assert health.Check(health_pb2.HealthCheckRequest(service=service), timeout=10).status == status, service
            assert push_pb2_grpc.PushStub(channel).Send(send_request("hard", 2), timeout=10).results[0].status \
                == push_pb2.STATUS_DELIVERED
        assert wait_log(server, lambda line: "level=error" in line and "the store is failing" in line
                        and "was deleted" in line), "".join(server.log[-10:])
    finally:
        server.stop()


def test_a_send_without_a_deadline_ends_at_send_timeout_when_the_provider_never_answers(tmp_path):
    """Before: a Send without grpc-timeout to a provider that never answers was never answered.
    Now send_timeout_seconds bounds it: FAILED DeadlineExceeded for what was not delivered."""
    stalled = MockProcess("mock-apns", str(tmp_path / "stalled"), ["--delay-ms", "60000"])
    server = Server({"apps": [stalled.apns_app("stalled")], "send_timeout_seconds": 2}, str(tmp_path))
    try:
        with grpc.insecure_channel(server.address) as channel:
            started = time.time()
            reply = push_pb2_grpc.PushStub(channel).Send(send_request("stalled", 3))  # no deadline
            waited = time.time() - started
        assert [(r.status, r.reason) for r in reply.results] == [(push_pb2.STATUS_FAILED, "DeadlineExceeded")] * 3
        assert 1.5 <= waited < 10, waited
    finally:
        server.stop()
        stalled.stop()


def test_a_provider_that_refuses_every_stream_gets_a_bounded_backed_off_number_of_requests(tmp_path):
    """Before: a provider answering REFUSED_STREAM to everything had one token resent 16,750 times in
    9.5 s, without backoff. Now: the first refusal is resent at once, later ones after the retry
    backoff, and after 8 the token is FAILED StreamRefused (an independent look-alike, Python h2)."""
    import h2.errors
    from h2_lookalike import H2Lookalike, make_certificate

    class Refusing(H2Lookalike):
        name = "refusing look-alike"
        requests = 0

        def _answer(self, conn, stream_id, headers, body):
            Refusing.requests += 1
            conn.reset_stream(stream_id, error_code=h2.errors.ErrorCodes.REFUSED_STREAM)

    cert, key = make_certificate(str(tmp_path))
    refusing = Refusing(cert, key).start()
    app = lookalike_apns_app(tmp_path, "refusing", refusing, cert)
    server = Server({"apps": [app], "metrics_listen": "127.0.0.1:0"}, str(tmp_path))
    server.metrics_port = wait_metrics_port(server)
    try:
        with grpc.insecure_channel(server.address) as channel:
            started = time.time()
            reply = push_pb2_grpc.PushStub(channel).Send(send_request("refusing", 1), timeout=60)
            waited = time.time() - started
        result = reply.results[0]
        assert result.status == push_pb2.STATUS_FAILED and result.reason.startswith("StreamRefused"), result
        assert Refusing.requests == 9, Refusing.requests  # the first send and 8 resends
        assert waited > 2, waited  # spaced by the backoff: 0.2, 0.4, 0.8, 1.6, 3.2, 5, 5 s (jitter ½-1)
        assert wait_log(server, lambda line: "refuses streams without processing them" in line)
        assert metric(server, "pushgate_provider_protections_total", app="refusing", event="stream_refused") == 1
        assert metric(server, "pushgate_provider_protections_total", app="refusing",
                      event="refused_streams_spaced_out") == 1
    finally:
        server.stop()
        refusing.stop()


def test_a_provider_that_allows_no_streams_has_its_connection_given_up(tmp_path):
    """Before: a provider that answers PINGs but advertises MAX_CONCURRENT_STREAMS 0 held its requests
    for ever on one connection, with nothing logged. Now, past stall_timeout_seconds without an
    answer, the connection is given up (logged with why) and replaced; the Send ends at its deadline."""
    from h2_lookalike import H2Lookalike, make_certificate

    class NoStreams(H2Lookalike):
        name = "zero-streams look-alike"

        def _answer(self, conn, stream_id, headers, body):
            raise AssertionError("no stream may be opened")

    cert, key = make_certificate(str(tmp_path))
    provider = NoStreams(cert, key, max_streams=0).start()
    app = lookalike_apns_app(tmp_path, "nostreams", provider, cert, stall_timeout_seconds=2, ping_timeout_seconds=1)
    server = Server({"apps": [app], "metrics_listen": "127.0.0.1:0"}, str(tmp_path))
    server.metrics_port = wait_metrics_port(server)
    try:
        with grpc.insecure_channel(server.address) as channel:
            reply = push_pb2_grpc.PushStub(channel).Send(send_request("nostreams", 1), timeout=8)
        assert [(r.status, r.reason) for r in reply.results] == [(push_pb2.STATUS_FAILED, "DeadlineExceeded")]
        assert wait_log(server, lambda line: "connection given up" in line and "allows 0 streams" in line), \
            "".join(server.log[-10:])
        assert provider.connections >= 2, provider.connections  # replaced, not held
        assert metric(server, "pushgate_provider_protections_total", app="nostreams", event="stalled") >= 1
    finally:
        server.stop()
        provider.stop()


def test_a_huge_http2_error_body_is_reset_not_read_in_full(tmp_path):
    """Before: a provider answering 400 with a 10 MB body had all of it read (and dropped). Now the
    stream is reset once the body passes 16 KiB, and the answer counts with what was kept."""
    import h2.events
    from h2_lookalike import H2Lookalike, make_certificate

    class Huge(H2Lookalike):
        name = "huge-body look-alike"
        resets = 0
        sent = 0

        def _answer(self, conn, stream_id, headers, body):
            conn.send_headers(stream_id, [(":status", "400"), ("content-type", "application/json")])
            # As much as the window allows now; the rest would follow as the client reads.
            room = min(conn.local_flow_control_window(stream_id), 1 << 20)
            chunk = conn.max_outbound_frame_size
            while room > 0:
                n = min(chunk, room)
                conn.send_data(stream_id, b" " * n)
                Huge.sent += n
                room -= n

        def _event(self, conn, event):
            if isinstance(event, h2.events.StreamReset):
                Huge.resets += 1

    cert, key = make_certificate(str(tmp_path))
    provider = Huge(cert, key).start()
    app = lookalike_apns_app(tmp_path, "huge", provider, cert)
    server = Server({"apps": [app]}, str(tmp_path))
    try:
        with grpc.insecure_channel(server.address) as channel:
            reply = push_pb2_grpc.PushStub(channel).Send(send_request("huge", 1), timeout=20)
        result = reply.results[0]
        assert result.status == push_pb2.STATUS_REJECTED and result.http_status == 400, result
        deadline = time.time() + 5
        while Huge.resets == 0 and time.time() < deadline:
            time.sleep(0.05)
        assert Huge.resets == 1, "the client reset the stream instead of reading on"
    finally:
        server.stop()
        provider.stop()


def test_a_million_token_send_is_refused_at_its_length_prefix(tmp_path, mock):
    """The issue's 1,000,000-token request (66 MB; it once peaked at 386 MB before it was rejected):
    past the default `max_message_bytes` (16 MiB) it is RESOURCE_EXHAUSTED from its 5-byte length
    prefix, before its body is buffered or decoded, and the gateway's peak RSS does not move."""
    server = Server({"apps": [mock.apns_app("hard")]}, str(tmp_path))
    try:
        before = rss_kib(server, "VmHWM")
        tokens = ["%064x" % i for i in range(1_000_000)]
        request = push_pb2.SendRequest(notifications=[push_pb2.Notification(
            app="hard", tokens=tokens, alert=push_pb2.Alert(body="x"))])
        options = [("grpc.max_send_message_length", 100 << 20)]
        with grpc.insecure_channel(server.address, options=options) as channel:
            with pytest.raises(grpc.RpcError) as refused:
                push_pb2_grpc.PushStub(channel).Send(request, timeout=60)
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, refused.value
        assert "exceeds the limit of 16777216 bytes" in refused.value.details(), refused.value.details()
        peak = rss_kib(server, "VmHWM")
        print("\n1,000,000-token Send: peak RSS %d KiB before, %d KiB after" % (before, peak))
        assert peak - before < 16 * 1024, (before, peak)
    finally:
        server.stop()
