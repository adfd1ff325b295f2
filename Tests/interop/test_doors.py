"""The door x attack matrix: every way into the API port ("door") against every hostile client that
applies to it, with raw sockets (HTTP/1.1 by hand, HTTP/2 with Python h2, TLS with `ssl`).

Doors (``DOORS``; a new door joins by adding one line there):

- gRPC over h2c, gRPC over TLS (ALPN h2), Connect over h2c and over HTTP/1.1 (JSON bodies),
  gorush's ``POST /api/push`` over HTTP/1.1 and over h2c, the SNS API's ``POST /`` (AWS Query,
  signed with botocore's SigV4 signer) over HTTP/1.1 and over h2c, the operator console's static
  files (``GET /console/...``, no key, no body) over HTTP/1.1, h2c and TLS.

Attacks (one test function each, parameterized over the doors; skipped only where it cannot apply):
early close, half-close, non-reading clients, floods, oversized and inflating bodies, slowloris,
keyless long-lived streams, HTTP/1.1 framing (trailer leaks, smuggling), gorush answer amplification.

Each test asserts the correct behaviour, and ends by checking that the gateway is alive, answers a
health check and serves the door's valid request. The gateways are module-scoped, one per
configuration (cleartext and TLS, the same short limits: see ``Gateways.config``); one that died is
started again for the next test (the death is the failure of the test that saw it), and one a test
left unwell (no health answer, or 64 MiB more RSS than at its start) is replaced, so one crash does
not hide the rest of the matrix. The slow-timing attacks (slowloris, keyless streams) run for all
doors at once in a module fixture, and each door's test asserts its own outcome, to keep the file
fast. Providers: two `pushgate mock-apns` processes, "fast" (answers at once; the tokens of BAD get
400 BadDeviceToken) and "slow" (answers after SLOW_MS).

Memory figures come from the gateway's /proc/PID/status, open connections from /proc/PID/fd."""
import gzip
import hashlib
import json
import os
import select
import socket
import ssl
import struct
import subprocess
import threading
import time
import urllib.parse

import grpc
import h2.config
import h2.connection
import h2.events
import h2.exceptions
import pytest

from conftest import Server, rss_kib
from mock_process import MockProcess
from pushgate.v1 import push_pb2

KEY = "pgk_doors-" + "d" * 40
WRONG_KEY = "pgk_doors-" + "w" * 40
KiB = 1 << 10
MiB = 1 << 20

# The limits of every gateway of this file (short ones, so the timing attacks end quickly).
MAX_MESSAGE = 256 * KiB          # a ~115 KB gorush request fits; "oversized" is past it
WRITE_TIMEOUT = 3
IDLE_TIMEOUT = 2
REQUEST_TIMEOUT = 3
MAX_UNSENT = 1 * MiB
# HTTP1ServerSession.maxUnanswered: pipelined HTTP/1.1 requests read and not yet answered before the
# gateway stops reading from the client (the source's documented default; docs/api.md says only
# that pipelined requests are answered in order).
MAX_PIPELINED = 32
SLOW_KEY_ID = "SLOW123456"
# The SNS doors' credential (an admin) and one the gateway does not know.
SNS_KEY_ID = "AKPGDOORS0000000000D"
SNS_SECRET = "doors-sns-secret-" + "s" * 23
SNS_WRONG_KEY_ID = "AKPGDOORS000000WRONG"
SLOW_MS = 1000                   # the slow app's provider answers each request after this long

GOOD = ["%064x" % (0x600D000 + i) for i in range(2000)]
BAD = ["%064x" % (0xBAD0000 + i) for i in range(1000)]   # answered 400 BadDeviceToken by the mock


# --- Gateways ---------------------------------------------------------------------------------

def open_fds(server):
    try:
        return len(os.listdir("/proc/%d/fd" % server.proc.pid))
    except OSError:
        return -1


class Gateways:
    """The gateways of this file by name ("plain", "tls": the same configuration, TLS or not), started
    on first use and started again when one has died or was retired."""

    def __init__(self, tmp_path_factory, fast, slow):
        self.tmp = tmp_path_factory
        self.fast, self.slow = fast, slow
        self.servers = {}
        d = str(tmp_path_factory.mktemp("doors-tls-cert"))
        self.cert, self.key = os.path.join(d, "server.pem"), os.path.join(d, "server.key")
        self.sns_secret = os.path.join(d, "sns.secret")
        with open(self.sns_secret, "w") as fh:
            fh.write(SNS_SECRET + "\n")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                        "-keyout", self.key, "-out", self.cert, "-days", "2", "-subj", "/CN=localhost",
                        "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"], check=True, capture_output=True)

    def config(self, name):
        config = {"apps": [self.fast.apns_app("fast"), self.slow.apns_app("slow", key_id=SLOW_KEY_ID)],
                  "api_keys": [{"name": "doors", "key_sha256": hashlib.sha256(KEY.encode()).hexdigest(),
                                "apps": ["*"]}],
                  "max_message_bytes": MAX_MESSAGE, "write_timeout_seconds": WRITE_TIMEOUT,
                  "idle_timeout_seconds": IDLE_TIMEOUT, "request_timeout_seconds": REQUEST_TIMEOUT,
                  "max_unsent_response_bytes": MAX_UNSENT,
                  "sns": {"credentials": [{"access_key_id": SNS_KEY_ID, "secret_access_key_file": self.sns_secret,
                                           "apps": ["*"], "admin": True}]}}
        if name == "tls":
            config.update(tls_cert_file=self.cert, tls_key_file=self.key)
        return config

    def get(self, name):
        server = self.servers.get(name)
        if server is not None and not server.alive():
            server = None  # the test that saw it die failed for it
        if server is None:
            server = Server(self.config(name), str(self.tmp.mktemp("doors-" + name)))
            server.ca_file = self.cert
            server.tls = name == "tls"
            server.start_rss = rss_kib(server)
            self.servers[name] = server
        return server

    def retire(self, name):
        """Stops a gateway an attack left unwell (not answering, or holding memory), so that the next
        test starts from a fresh one."""
        server = self.servers.pop(name, None)
        if server is not None and server.alive():
            server.proc.kill()
            server.proc.wait(10)

    def stop(self):
        for server in self.servers.values():
            if server.alive():
                server.stop()


@pytest.fixture(scope="module")
def mocks(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("doors-mocks"))
    bad = os.path.join(d, "bad-tokens")
    with open(bad, "w") as fh:
        fh.write("\n".join(BAD) + "\n")
    fast = MockProcess("mock-apns", os.path.join(d, "fast"), ["--bad-tokens", bad])
    # Its own key id: one key id is one key at Apple, and the gateway caches provider tokens by it.
    slow = MockProcess("mock-apns", os.path.join(d, "slow"), ["--delay-ms", str(SLOW_MS), "--key-id", SLOW_KEY_ID])
    yield fast, slow
    for m in (fast, slow):
        if m.proc.poll() is None:
            m.stop()


@pytest.fixture(scope="module")
def gateways(tmp_path_factory, mocks):
    g = Gateways(tmp_path_factory, *mocks)
    yield g
    g.stop()


@pytest.fixture
def server(gateways, door):
    """The door's gateway for one test; replaced afterwards if the test left it unwell."""
    s = gateways.get(door.gateway)
    yield s
    if s.alive() and (not health_check(s, timeout=3) or rss_kib(s) > s.start_rss + 64 * 1024):
        gateways.retire(door.gateway)


def health_check(server, timeout=5):
    """A stock grpcio Health/Check on a fresh channel: True when SERVING."""
    from grpc.health.v1 import health_pb2, health_pb2_grpc
    if server.tls:
        credentials = grpc.ssl_channel_credentials(root_certificates=open(server.ca_file, "rb").read())
        channel = grpc.secure_channel(server.address, credentials)
    else:
        channel = grpc.insecure_channel(server.address)
    try:
        reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=timeout)
        return reply.status == health_pb2.HealthCheckResponse.SERVING
    except grpc.RpcError:
        return False
    finally:
        channel.close()


def died(server):
    """Why a gateway exited: its exit status and the log lines that say so (a Swift runtime error,
    the crash report's first lines), not the whole backtrace."""
    log = server.full_log()
    said = [line for line in log if "Fatal error" in line or "💣" in line or "level=error" in line
            or "Program crashed" in line]
    return "gateway died (exit %s): %s" % (server.proc.returncode, "".join(said[:5]) or "".join(log[-10:]))


def assert_alive(server):
    assert server.alive(), died(server)


def assert_well(server, door):
    """The gateway is alive, answers a health check, and serves the door's valid request."""
    assert_alive(server)
    assert health_check(server), "no health answer:\n" + "".join(server.log[-10:])
    reply = door.roundtrip(server, door.send(GOOD[:1]))
    assert door.outcome(reply) == "ok", (reply, "".join(server.log[-10:]))


# --- Raw clients --------------------------------------------------------------------------------

def linger_zero(sock):
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def half_close(sock):
    # SSLSocket.shutdown drops the TLS state; the plain socket's shutdown keeps reading possible.
    socket.socket.shutdown(sock, socket.SHUT_WR)


class Reply:
    """An answer: HTTP status, headers (lowercase names; gRPC trailers merged in), body; `closed`:
    the connection ended (EOF or reset) while or after it was read; `reset`: the h2 stream's reset code."""

    def __init__(self, status=None, headers=None, body=b"", closed=False, reset=None, complete=False):
        self.status, self.headers, self.body = status, headers or {}, body
        self.closed, self.reset, self.complete = closed, reset, complete

    def json(self):
        return json.loads(self.body)

    def __repr__(self):
        return "Reply(status=%r, headers=%r, body=%r, closed=%r, reset=%r, complete=%r)" % (
            self.status, {k: v[:200] for k, v in self.headers.items()}, self.body[:300], self.closed, self.reset,
            self.complete)


class H1Reader:
    """Reads HTTP/1.1 responses off a socket (Content-Length, chunked with trailers, or until close)."""

    def __init__(self, sock):
        self.sock, self.buffer, self.eof = sock, b"", False

    def _fill(self, deadline):
        if self.eof:
            return False
        left = deadline - time.time()
        if left <= 0:
            return False
        self.sock.settimeout(left)
        try:
            data = self.sock.recv(65536)
        except (socket.timeout, ssl.SSLWantReadError):
            return False
        except OSError:
            self.eof = True
            return False
        if not data:
            self.eof = True
            return False
        self.buffer += data
        return True

    def _line(self, deadline):
        while b"\r\n" not in self.buffer:
            if not self._fill(deadline):
                return None
        line, _, self.buffer = self.buffer.partition(b"\r\n")
        return line

    def response(self, timeout=10, max_body=32 * MiB):
        """The next whole response, or None (with whatever came in `partial`) at EOF or timeout."""
        deadline = time.time() + timeout
        self.partial = None
        while b"\r\n\r\n" not in self.buffer:
            if not self._fill(deadline):
                return None
        head, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        reply = Reply(status, headers)
        self.partial = reply
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body = b""
            while True:
                size_line = self._line(deadline)
                if size_line is None:
                    reply.body, reply.closed = body, self.eof
                    return None
                size = int(size_line.split(b";")[0], 16)
                if size == 0:
                    while True:  # trailers
                        line = self._line(deadline)
                        if line is None:
                            return None
                        if line == b"":
                            break
                        name, _, value = line.decode("latin-1").partition(":")
                        headers[name.strip().lower()] = value.strip()
                    break
                while len(self.buffer) < size + 2:
                    if not self._fill(deadline):
                        reply.body, reply.closed = body + self.buffer, self.eof
                        return None
                body += self.buffer[:size]
                self.buffer = self.buffer[size + 2:]
                if len(body) > max_body:
                    reply.body = body
                    return reply
            reply.body = body
        elif "content-length" in headers:
            length = int(headers["content-length"])
            while len(self.buffer) < min(length, max_body):
                if not self._fill(deadline):
                    reply.body, reply.closed = self.buffer, self.eof
                    return None
            reply.body, self.buffer = self.buffer[:length], self.buffer[length:]
        else:
            while self._fill(deadline):
                pass
            reply.body, self.buffer = self.buffer, b""
        reply.complete = True
        if headers.get("connection", "").lower() == "close":
            reply.closed = True
        return reply

    def closed_within(self, seconds, max_bytes=64 * MiB):
        """Whether the connection ends (EOF or reset) within `seconds`, reading what comes meanwhile."""
        deadline = time.time() + seconds
        while time.time() < deadline and len(self.buffer) < max_bytes and not self.eof:
            self._fill(deadline)
        return self.eof


class H2Client:
    """An HTTP/2 client over a connected socket that does what it is told (after Tests' RawClient
    in test_hardening.py): streams opened and fed by hand, frames read only in `pump`."""

    def __init__(self, sock, acknowledge=True):
        self.sock = sock
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        self.conn.initiate_connection()
        self.acknowledge = acknowledge
        self.streams = {}   # stream id -> {"headers", "trailers", "data", "reset", "ended"}
        self.settings_received = False
        self.terminated = None    # the GOAWAY's error code, or "eof"
        self.eof = False          # the connection itself ended
        self.last_stream_id = None
        self.flush()

    def _ended(self):
        self.eof = True
        self.terminated = self.terminated if self.terminated is not None else "eof"

    def flush(self):
        data = self.conn.data_to_send()
        if data:
            try:
                self.sock.sendall(data)
            except OSError:
                self._ended()

    def open(self, path, headers, end_stream=False):
        stream_id = self.conn.get_next_available_stream_id()
        self.conn.send_headers(stream_id, [(":method", request_method(path)), (":scheme", "https" if isinstance(self.sock, ssl.SSLSocket)
                                                                  else "http"),
                                           (":path", path), (":authority", "localhost")] + list(headers),
                               end_stream=end_stream)
        self.streams[stream_id] = {"headers": [], "trailers": [], "data": b"", "reset": None, "ended": False}
        self.flush()
        return stream_id

    def send_body(self, stream_id, body, end_stream=True, seconds=10):
        """Sends `body` as flow control lets it go (reading the server's frames meanwhile), then
        END_STREAM unless told not to. Returns the bytes sent."""
        sent = 0
        deadline = time.time() + seconds
        while sent < len(body) and time.time() < deadline and self.terminated is None:
            if self.streams[stream_id]["reset"] is not None or self.streams[stream_id]["ended"]:
                return sent
            try:
                window = min(self.conn.local_flow_control_window(stream_id), self.conn.max_outbound_frame_size)
            except (h2.exceptions.StreamClosedError, h2.exceptions.ProtocolError, KeyError):
                return sent
            if window <= 0:
                self.flush()
                self.pump(0.05)
                continue
            chunk = body[sent:sent + window]
            try:
                self.conn.send_data(stream_id, chunk)
            except (h2.exceptions.StreamClosedError, h2.exceptions.ProtocolError):
                return sent
            sent += len(chunk)
            self.flush()
            self.pump(0)
        if end_stream and sent == len(body):
            self.end(stream_id)
        return sent

    def end(self, stream_id, trailers=None):
        try:
            if trailers:
                self.conn.send_headers(stream_id, list(trailers), end_stream=True)
            else:
                self.conn.end_stream(stream_id)
        except (h2.exceptions.StreamClosedError, h2.exceptions.ProtocolError):
            return
        self.flush()

    def pump(self, seconds):
        """Reads and handles frames for up to `seconds` (after a GOAWAY too, until the connection ends)."""
        deadline = time.time() + seconds
        while not self.eof:
            left = max(deadline - time.time(), 0.0005)
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(65536)
            except (socket.timeout, ssl.SSLWantReadError):
                return
            except OSError:
                self._ended()
                return
            if not data:
                self._ended()
                return
            try:
                events = self.conn.receive_data(data)
            except h2.exceptions.ProtocolError:
                self._ended()
                return
            self.handle(events)
            self.flush()
            if time.time() >= deadline:
                return

    def handle(self, events):
        for event in events:
            stream = self.streams.get(getattr(event, "stream_id", None))
            if isinstance(event, h2.events.ResponseReceived):
                stream["headers"] = event.headers
            elif isinstance(event, h2.events.TrailersReceived):
                stream["trailers"] = event.headers
            elif isinstance(event, h2.events.DataReceived):
                if stream is not None:
                    stream["data"] += event.data
                if self.acknowledge:
                    self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.RemoteSettingsChanged):
                self.settings_received = True
            elif isinstance(event, h2.events.StreamEnded):
                stream["ended"] = True
            elif isinstance(event, h2.events.StreamReset):
                if stream is not None:
                    stream["reset"] = event.error_code
            elif isinstance(event, h2.events.ConnectionTerminated):
                self.terminated = event.error_code
                self.last_stream_id = event.last_stream_id

    def handshake(self, seconds=2):
        """Reads until the server's SETTINGS came (and a moment more for its WINDOW_UPDATE)."""
        deadline = time.time() + seconds
        while not self.settings_received and not self.eof and time.time() < deadline:
            self.pump(0.01)
        self.pump(0.01)

    def done(self, stream_id):
        s = self.streams[stream_id]
        return s["ended"] or s["reset"] is not None

    def wait(self, stream_ids, seconds):
        deadline = time.time() + seconds
        while time.time() < deadline and self.terminated is None and not all(self.done(s) for s in stream_ids):
            self.pump(min(0.1, max(deadline - time.time(), 0.001)))

    def reply(self, stream_id):
        s = self.streams[stream_id]
        headers = {k: v for k, v in s["headers"]}
        headers.update({k: v for k, v in s["trailers"]})
        status = int(headers[":status"]) if ":status" in headers else None
        return Reply(status, headers, s["data"], closed=self.terminated is not None, reset=s["reset"],
                     complete=s["ended"])

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


# --- Doors --------------------------------------------------------------------------------------

def framed(message_bytes, compressed=False):
    return (b"\x01" if compressed else b"\x00") + struct.pack(">I", len(message_bytes)) + message_bytes


def envelope(payload, flags=0):
    return struct.pack(">BI", flags, len(payload)) + payload


def request_method(path):
    """The console's files are GETs; every other door's requests are POSTs."""
    return "GET" if path.startswith("/console") else "POST"


class Request:
    """One request of a door: path, header fields (lowercase names; no framing ones) and body."""

    def __init__(self, path, headers, body):
        self.path, self.headers, self.body = path, list(headers), body
        self.method = request_method(path)


class Door:
    """A way into the API port. `kind`: "grpc", "connect", "gorush" or "sns"; `http2`: HTTP/2 (h2c, or h2
    by ALPN over TLS) rather than HTTP/1.1; `gateway`: which of `Gateways` serves it."""

    def __init__(self, name, kind, http2, tls=False):
        self.name, self.kind, self.http2, self.tls = name, kind, http2, tls
        self.gateway = "tls" if tls else "plain"

    def __repr__(self):
        return self.name

    # Requests -----------------------------------------------------------------------------------

    def auth(self, key):
        return [("authorization", "Bearer " + key)] if key else []

    @property
    def keyed_route(self):
        """A plain route whose every request needs a key (refused at its head without one)."""
        return self.kind in ("gorush", "sns")

    def sns(self, parameters, key=KEY, extra_headers=()):
        """An SNS Query request signed by botocore's SigV4 signer (KEY: the door's credential;
        WRONG_KEY: an access key the gateway does not know; None: unsigned)."""
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials
        body = urllib.parse.urlencode(dict(parameters, Version="2010-03-31")).encode()
        headers = [("content-type", "application/x-www-form-urlencoded; charset=utf-8")] + list(extra_headers)
        if key:
            signed = AWSRequest(method="POST", url="http://localhost/", data=body, headers=dict(headers))
            access_key = SNS_KEY_ID if key == KEY else SNS_WRONG_KEY_ID
            SigV4Auth(Credentials(access_key, SNS_SECRET), "sns", "us-east-1").add_auth(signed)
            headers += [(k.lower(), v) for k, v in signed.headers.items() if k.lower() in ("authorization", "x-amz-date")]
        return Request("/", headers, body)

    def send(self, tokens, app="fast", key=KEY, notif_id=None):
        """The door's valid request: a Send of `tokens` to `app` (gorush: the same as /api/push; SNS:
        CreatePlatformEndpoint of the first token with `app`, idempotent; the console: its largest
        script, whatever the tokens and key)."""
        if self.kind == "console":
            return Request("/console/overview.js", [], b"")
        if self.kind == "sns":
            return self.sns({"Action": "CreatePlatformEndpoint", "Token": tokens[0],
                             "PlatformApplicationArn": "arn:aws:sns:us-east-1:000000000000:app/APNS/" + app}, key)
        if self.kind == "grpc":
            message = push_pb2.SendRequest(notifications=[push_pb2.Notification(
                app=app, tokens=tokens, alert=push_pb2.Alert(title="t", body="b"))]).SerializeToString()
            return Request("/pushgate.v1.Push/Send", [("content-type", "application/grpc"), ("te", "trailers")]
                           + self.auth(key), framed(message))
        if self.kind == "connect":
            body = {"notifications": [{"app": app, "tokens": tokens, "alert": {"title": "t", "body": "b"}}]}
            return Request("/pushgate.v1.Push/Send", [("content-type", "application/json")] + self.auth(key),
                           json.dumps(body).encode())
        notification = {"tokens": tokens, "platform": 1, "message": "m", "app": app}
        if notif_id is not None:
            notification["notif_id"] = notif_id
        return Request("/api/push", [("content-type", "application/json")] + self.auth(key),
                       json.dumps({"notifications": [notification]}).encode())

    def health(self):
        """A keyless Health/Check on the door's protocol (the gorush doors have no keyless route of
        their own: Connect's, on the same transport)."""
        if self.kind == "grpc":
            return Request("/grpc.health.v1.Health/Check", [("content-type", "application/grpc"), ("te", "trailers")],
                           framed(b""))
        return Request("/grpc.health.v1.Health/Check", [("content-type", "application/json")], b"{}")

    def tiny(self):
        """The cheapest request a flooder sends: a keyless Health/Check; gorush: a keyless /api/push
        (refused at its head); the console: its page."""
        if self.kind == "console":
            return Request("/console/", [], b"")
        if self.kind == "gorush":
            return Request("/api/push", [("content-type", "application/json")], b"{}")
        if self.kind == "sns":
            return self.sns({"Action": "ListTopics"}, key=None)
        return self.health()

    def watch(self):
        """A keyless Health/Watch (server streaming), or None where the door has no streaming call."""
        if self.kind == "grpc":
            return Request("/grpc.health.v1.Health/Watch", [("content-type", "application/grpc"), ("te", "trailers")],
                           framed(b""))
        if self.kind == "connect":
            return Request("/grpc.health.v1.Health/Watch", [("content-type", "application/connect+json")],
                           envelope(b"{}"))
        return None

    def compressed(self, inflated):
        """A request whose body is gzip that inflates to `inflated` bytes (past the limit); the
        console: a GET carrying it (its routes take no body at all)."""
        if self.kind == "console":
            return Request("/console/", [("content-encoding", "gzip")], gzip.compress(b"\x00" * inflated, 9))
        if self.kind == "grpc":
            bomb = gzip.compress(b"\x00" * inflated, 9)
            return Request("/pushgate.v1.Push/Send", [("content-type", "application/grpc"), ("te", "trailers"),
                                                      ("grpc-encoding", "gzip")] + self.auth(KEY),
                           framed(bomb, compressed=True))
        if self.kind == "sns":
            bomb = gzip.compress(b"Action=ListTopics&Version=2010-03-31&" + b"x" * inflated, 9)
            return Request("/", self.sns({"Action": "ListTopics"}).headers + [("content-encoding", "gzip")], bomb)
        bomb = gzip.compress(b"{" + b" " * (inflated - 2) + b"}", 9)
        path = "/api/push" if self.kind == "gorush" else "/pushgate.v1.Push/Send"
        return Request(path, [("content-type", "application/json"), ("content-encoding", "gzip")] + self.auth(KEY),
                       bomb)

    # Outcomes -------------------------------------------------------------------------------------

    def outcome(self, reply):
        """"ok", "unauthenticated", "resource_exhausted", "bad_request", "none" (no answer) or "other: …"."""
        if reply is None or (reply.status is None and not reply.headers):
            return "none"
        if self.kind == "grpc":
            if "grpc-status" not in reply.headers:
                return "other: no grpc-status (%r)" % reply
            return {0: "ok", 16: "unauthenticated", 8: "resource_exhausted", 3: "bad_request"}.get(
                int(reply.headers["grpc-status"]), "other: grpc-status %s %s" % (
                    reply.headers["grpc-status"], reply.headers.get("grpc-message", "")))
        if reply.status == 200 and reply.complete:
            return "ok"
        try:
            error = json.loads(reply.body)
        except ValueError:
            error = None
        if self.kind == "sns":  # SNS's <ErrorResponse><Error><Code>
            import xml.etree.ElementTree as ElementTree
            try:
                code = ElementTree.fromstring(reply.body).find("{*}Error/{*}Code").text
            except (ElementTree.ParseError, AttributeError):
                code = None
            if reply.status == 403 and code in ("MissingAuthenticationToken", "InvalidClientTokenId",
                                                 "SignatureDoesNotMatch"):
                return "unauthenticated"
            if (reply.status == 413 and code == "RequestEntityTooLarge") or (reply.status == 429 and code == "Throttled"):
                return "resource_exhausted"
        elif self.kind == "console":  # the server's plain-text refusals
            if reply.status in (413, 429):
                return "resource_exhausted"
        elif self.kind == "connect":
            if reply.status == 401 and error and error.get("code") == "unauthenticated":
                return "unauthenticated"
            if (reply.status == 429 and error and error.get("code") == "resource_exhausted") or reply.status == 413:
                return "resource_exhausted"
        else:  # gorush's error shape: {"code": <the HTTP status>, "message": …}
            shaped = isinstance(error, dict) and error.get("code") == reply.status and "message" in error
            if reply.status == 401 and shaped:
                return "unauthenticated"
            if reply.status in (413, 429) and shaped:
                return "resource_exhausted"
        if reply.status == 400:
            return "bad_request"
        return "other: %r" % reply

    # Transport ------------------------------------------------------------------------------------

    def sock(self, server, timeout=10, rcvbuf=None):
        raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        raw.settimeout(timeout)
        raw.connect(("127.0.0.1", server.port))
        if not self.tls:
            return raw
        context = ssl.create_default_context(cafile=server.ca_file)
        context.set_alpn_protocols(["h2"] if self.http2 else ["http/1.1"])
        wrapped = context.wrap_socket(raw, server_hostname="localhost")
        assert wrapped.selected_alpn_protocol() == ("h2" if self.http2 else "http/1.1")
        return wrapped

    def h1(self, request, extra=(), chunked=False, trailers=(), content_length=None):
        """The request's bytes on HTTP/1.1: `Content-Length` (or `content_length` declared instead), or
        chunked (one chunk) with `trailers`."""
        lines = ["%s %s HTTP/1.1" % (request.method, request.path), "Host: localhost"]
        lines += ["%s: %s" % (k, v) for k, v in request.headers] + list(extra)
        if chunked:
            lines.append("Transfer-Encoding: chunked")
            body = (b"%x\r\n" % len(request.body) + request.body + b"\r\n" if request.body else b"") + b"0\r\n"
            body += b"".join(b"%s: %s\r\n" % (k.encode(), v.encode()) for k, v in trailers) + b"\r\n"
        else:
            lines.append("Content-Length: %d" % (len(request.body) if content_length is None else content_length))
            body = request.body
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body

    def roundtrip(self, server, request, timeout=15):
        """`request` on a fresh connection: its Reply (None when nothing came)."""
        sock = self.sock(server, timeout)
        try:
            if not self.http2:
                sock.sendall(self.h1(request))
                reader = H1Reader(sock)
                return reader.response(timeout) or reader.partial
            client = H2Client(sock)
            stream_id = client.open(request.path, request.headers)
            client.send_body(stream_id, request.body)
            client.wait([stream_id], timeout)
            return client.reply(stream_id)
        finally:
            sock.close()


DOORS = [
    Door("grpc-h2c", "grpc", http2=True),
    Door("grpc-tls", "grpc", http2=True, tls=True),
    Door("connect-h2c", "connect", http2=True),
    Door("connect-h1", "connect", http2=False),
    Door("gorush-h1", "gorush", http2=False),
    Door("gorush-h2c", "gorush", http2=True),
    Door("sns-h1", "sns", http2=False),
    Door("sns-h2c", "sns", http2=True),
    Door("console-h1", "console", http2=False),
    Door("console-h2c", "console", http2=True),
    Door("console-tls", "console", http2=True, tls=True),
]
H1_DOORS = [d for d in DOORS if not d.http2]

by_door = pytest.mark.parametrize("door", DOORS, ids=[d.name for d in DOORS])


# --- The door itself ----------------------------------------------------------------------------

@by_door
def test_a_valid_request_is_served(server, door):
    """The baseline: the door's valid keyed Send is delivered."""
    reply = door.roundtrip(server, door.send(GOOD[:2]))
    assert door.outcome(reply) == "ok", reply
    assert_well(server, door)


@by_door
def test_a_keyless_request_is_refused_at_its_head(server, door):
    """Without a key the door's Send is refused from its head: answered (401 / UNAUTHENTICATED)
    within 2 s though its declared 128 KiB body (within the limit) never comes."""
    if door.kind == "console":
        pytest.skip("the console's files need no key (its API calls go through the Connect door)")
    request = door.send(GOOD[:1], key=None)
    declared = 128 * KiB
    sock = door.sock(server)
    started = time.time()
    try:
        if door.http2:
            client = H2Client(sock)
            stream_id = client.open(request.path, request.headers + (
                [] if door.kind == "grpc" else [("content-length", str(declared))]))
            if door.kind == "grpc":  # a length prefix declaring 128 KiB, and no more of the message
                client.conn.send_data(stream_id, b"\x00" + struct.pack(">I", declared))
                client.flush()
            client.wait([stream_id], 2)
            reply = client.reply(stream_id)
        else:
            sock.sendall(door.h1(request, content_length=declared)[:-len(request.body)])
            reader = H1Reader(sock)
            reply = reader.response(2) or reader.partial
    finally:
        sock.close()
    took = time.time() - started
    assert door.outcome(reply) == "unauthenticated", "%r after %.1f s" % (reply, took)
    assert_well(server, door)


# --- Early close --------------------------------------------------------------------------------

@by_door
def test_early_close_30_times_leaves_the_gateway_serving(server, door):
    """30 clients each send a valid request to the slow app and close (half of them with a reset)
    before its answer; the answers then come back to no one. (/api/push today: the gateway dies,
    "Fatal error: Attempted to read an unowned reference".)"""
    for i in range(30):
        request = door.send([GOOD[100 + i]], app="slow")
        sock = door.sock(server)
        if door.http2:
            client = H2Client(sock)
            stream_id = client.open(request.path, request.headers)
            client.send_body(stream_id, request.body)
            client.pump(0.02)
        else:
            sock.sendall(door.h1(request))
            time.sleep(0.02)
        if i % 2:
            linger_zero(sock)
        sock.close()
    time.sleep(SLOW_MS / 1000 + 0.5)  # the slow answers come back to closed connections
    assert_well(server, door)


# --- Half-close ---------------------------------------------------------------------------------

@by_door
def test_half_close_after_the_request(server, door):
    """A client that shuts down its sending side once its request is out (`nc -N`, some proxies):
    HTTP/1.1 must still be answered (a half-close is not an abort); every door leaves the gateway
    serving (the h2 doors' answers are printed, not asserted)."""
    request = door.send(GOOD[200:203])
    sock = door.sock(server)
    try:
        if door.http2:
            client = H2Client(sock)
            stream_id = client.open(request.path, request.headers)
            client.send_body(stream_id, request.body)
            half_close(sock)
            client.wait([stream_id], 5)
            print("\n%s: after a half-close: %r" % (door, client.reply(stream_id)))
        else:
            sock.sendall(door.h1(request))
            half_close(sock)
            reader = H1Reader(sock)
            reply = reader.response(10) or reader.partial
            assert door.outcome(reply) == "ok", reply
    finally:
        sock.close()
    assert_well(server, door)


# --- Clients that do not read -------------------------------------------------------------------

def pipelined_blob(door, budget):
    """HTTP/1.1: keyed Sends then keyless Health/Checks (gorush: tiny refused /api/pushes), pipelined,
    up to `budget` bytes."""
    parts = [door.h1(door.send(GOOD[300 + 50 * i:350 + 50 * i])) for i in range(3)]
    one = door.h1(door.tiny() if door.keyed_route else door.health())
    size = sum(len(p) for p in parts)
    count = max(0, (budget - size) // len(one))
    return b"".join(parts) + one * count


def h2_frame(kind, flags, stream_id, payload):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream_id) + payload


def h2_requests_blob(door, client, budget):
    """Raw frames of keyed Sends then keyless tiny requests on new streams, up to `budget` bytes and
    the connection's send window: header blocks of never-indexed literals (no HPACK state), so the
    client needs to read nothing to go on (MAX_CONCURRENT_STREAMS is not looked at either)."""
    from hpack import Encoder, NeverIndexedHeaderTuple
    encoder = Encoder()
    scheme = "https" if door.tls else "http"
    window = client.conn.outbound_flow_control_window
    stream_id = client.conn.highest_outbound_stream_id + 2 if client.conn.highest_outbound_stream_id else 1
    blob = []
    size = 0
    i = 0
    tiny = door.tiny()
    tiny_block = None
    while size < budget:
        request = door.send(GOOD[300 + 50 * i:350 + 50 * i]) if i < 3 else tiny
        if window < len(request.body):
            break
        if request is not tiny or tiny_block is None:
            block = encoder.encode([NeverIndexedHeaderTuple(k, v) for k, v in
                                    [(":method", request.method), (":scheme", scheme), (":path", request.path),
                                     (":authority", "localhost")] + request.headers])
            if request is tiny:
                tiny_block = block  # the same bytes for every stream: no HPACK state is used
        else:
            block = tiny_block
        if door.keyed_route and i >= 3:  # refused at its head: no body needed
            frames = h2_frame(0x1, 0x5, stream_id, block)
        else:
            frames = h2_frame(0x1, 0x4, stream_id, block) + h2_frame(0x0, 0x1, stream_id, request.body)
            window -= len(request.body)
        blob.append(frames)
        size += len(frames)
        stream_id += 2
        i += 1
    return b"".join(blob)


class Unread:
    """One client that writes requests and reads nothing (a 4 KiB receive buffer). On h2 it reads
    the server's handshake (settings, window) first, then nothing."""

    def __init__(self, door, server, budget):
        self.door = door
        self.sock = door.sock(server, timeout=10, rcvbuf=4096)
        self.sent = 0
        if door.http2:
            client = H2Client(self.sock, acknowledge=False)
            client.handshake()
            self.pending = h2_requests_blob(door, client, budget)
        else:
            self.pending = pipelined_blob(door, budget)
        self.sock.setblocking(False)

    def push(self):
        """Writes what the socket takes now; False once it takes nothing (or all is sent)."""
        if not self.pending:
            return False
        try:
            n = self.sock.send(self.pending[:64 * KiB])
        except (BlockingIOError, ssl.SSLWantWriteError, ssl.SSLWantReadError):
            return False
        except OSError:
            self.pending = b""
            return False
        self.pending = self.pending[n:]
        self.sent += n
        return n > 0


@by_door
def test_clients_that_do_not_read_are_bounded_and_closed(server, door):
    """30 clients each write up to 2 MiB (h2: 1 MiB) of pipelined (HTTP/1.1) or concurrent (h2)
    requests, keyed Sends then keyless Health/Checks, and read nothing: the gateway's RSS grows by
    < 256 MB, fresh clients' health checks are answered within 3 s throughout, and each of the 30 is
    closed within write_timeout_seconds + 4 s of the last byte any of them got in."""
    assert health_check(server)
    time.sleep(0.3)
    fds_before, rss_before = open_fds(server), rss_kib(server)
    clients = [Unread(door, server, (1 if door.http2 else 2) * MiB) for _ in range(30)]
    prober = Prober(server)
    prober.start()
    peak = rss_before
    try:
        last_progress = time.time()
        sending_until = time.time() + 3
        while time.time() < sending_until and server.alive():
            progressed = [c.push() for c in clients]
            if any(progressed):
                last_progress = time.time()
            elif time.time() - last_progress > 0.5:
                break
            peak = max(peak, rss_kib(server))
            if not any(progressed):
                time.sleep(0.02)
        sent = sum(c.sent for c in clients)
        deadline = last_progress + WRITE_TIMEOUT + 4
        while time.time() < deadline and server.alive() and open_fds(server) > fds_before + 2:
            peak = max(peak, rss_kib(server))
            time.sleep(0.1)
        waited = time.time() - last_progress
        still_open = open_fds(server) - fds_before
    finally:
        for c in clients:
            linger_zero(c.sock)
            c.sock.close()
        prober.stop = True
        prober.join(10)
    grown = peak - rss_before
    print("\n%s: 30 unread clients sent %d KiB; RSS %d -> peak %d KiB; health probes %d, %d failed, slowest "
          "%.2f s; gateway fds over the start %.1f s after the last byte: %d" % (
              door, sent // 1024, rss_before, peak, prober.count, prober.failures, prober.worst, waited, still_open))
    assert_alive(server)
    problems = []
    if grown >= 256 * 1024:
        problems.append("RSS grew by %d MB" % (grown // 1024))
    if prober.failures or prober.worst >= 3:
        problems.append("health checks meanwhile: %d of %d failed, slowest %.1f s" % (
            prober.failures, prober.count, prober.worst))
    # (a slack of 2: provider connections the keyed Sends may have opened)
    if still_open > 2:
        problems.append("%d of the 30 still open %d s after the last byte" % (still_open, WRITE_TIMEOUT + 4))
    assert not problems, "; ".join(problems)
    assert_well(server, door)


# --- Floods -------------------------------------------------------------------------------------

class Prober(threading.Thread):
    """Health checks from fresh clients every 0.2 s while a flood runs: the slowest answer."""

    def __init__(self, server):
        super().__init__(daemon=True)
        self.server, self.stop, self.worst, self.failures, self.count = server, False, 0.0, 0, 0

    def run(self):
        while not self.stop:
            started = time.time()
            ok = health_check(self.server, timeout=5)
            self.worst = max(self.worst, time.time() - started)
            self.failures += not ok
            self.count += 1
            time.sleep(0.2)


@by_door
def test_a_flood_of_tiny_requests_leaves_the_gateway_responsive(server, door):
    """3,000 (h2) or 20,000 (HTTP/1.1) tiny requests as fast as one connection can send them (pipelined on HTTP/1.1, as many
    streams as the server allows on h2), their answers read: health checks from other clients are
    answered within 3 s throughout, and the flooder is answered or closed, never left hanging."""
    prober = Prober(server)
    prober.start()
    count = 3000 if door.http2 else 20000
    answered = 0
    sock = door.sock(server, timeout=20)
    started = time.time()
    try:
        if door.http2:
            client = H2Client(sock)
            client.pump(0.1)
            request = door.tiny()
            opened = []
            while len(opened) < count and client.terminated is None and time.time() - started < 30:
                try:
                    stream_id = client.open(request.path, request.headers)
                    client.conn.send_data(stream_id, request.body, end_stream=True)
                    opened.append(stream_id)
                except h2.exceptions.TooManyStreamsError:
                    client.flush()
                    client.pump(0.01)
                    continue
                if len(opened) % 50 == 0:
                    client.flush()
                    client.pump(0)
            client.flush()
            client.wait(opened, 30 - (time.time() - started))
            answered = sum(1 for s in opened if client.done(s))
            # Any GOAWAY is a close, NO_ERROR's 0 too (the idle one: a console GET is keyless, so a
            # flood of them does not keep the connection busy). h2 reads nothing after a GOAWAY,
            # so the answers still owed below its last stream id cannot be counted here.
            ended = client.terminated is not None
        else:
            blob = door.h1(door.tiny()) * count
            reader = H1Reader(sock)
            writer = threading.Thread(target=lambda: sock.sendall(blob), daemon=True)
            writer.start()
            while answered < count:
                reply = reader.response(10)
                if reply is None:
                    break
                answered += 1
            writer.join(5)
            ended = reader.eof
    finally:
        sock.close()
        prober.stop = True
        prober.join(10)
    took = time.time() - started
    print("\n%s: flood of %d: %d answered in %.1f s (connection ended: %r); health probes %d, slowest %.2f s" % (
        door, count, answered, took, ended, prober.count, prober.worst))
    assert_alive(server)
    assert answered == count or ended, "flooder neither answered nor closed: %d of %d" % (answered, count)
    assert prober.failures == 0 and prober.worst < 3, (prober.failures, prober.worst)
    assert_well(server, door)


@pytest.mark.parametrize("door", H1_DOORS, ids=[d.name for d in H1_DOORS])
def test_pipelined_requests_begun_at_once_are_bounded(server, door):
    """MAX_PIPELINED + 2 pipelined Sends to the slow app (each answered by its provider after 1 s),
    read as they come: at most MAX_PIPELINED are begun at once, so at most that many answers are
    back 1.5 s in (all of them would be, were they all begun at once), and they are answers to the
    Sends, in order."""
    if door.kind in ("sns", "console"):
        pytest.skip("answered from the store or memory, never after a provider: none is slow to hold the "
                    "pipeline (the bound is HTTP1ServerSession's, the same as the other HTTP/1.1 doors')")
    count = MAX_PIPELINED + 2
    requests = [door.send([GOOD[1000 + i]], app="slow") for i in range(count)]
    sock = door.sock(server, timeout=20)
    reader = H1Reader(sock)
    replies = []
    try:
        started = time.time()
        sock.sendall(b"".join(door.h1(r) for r in requests))
        while len(replies) < count:
            reply = reader.response(started + 1.5 - time.time())
            if reply is None:
                break
            replies.append(reply)
        early = len(replies)
        if not replies:  # the first answer, at least, within a few seconds more
            reply = reader.response(started + 6 - time.time())
            if reply is not None:
                replies.append(reply)
    finally:
        sock.close()  # (the answers still due then go to a closed connection)
    print("\n%s: %d pipelined slow Sends: %d answered 1.5 s in" % (door, count, early))
    assert early <= MAX_PIPELINED, "%d answers within 1.5 s: more than %d begun at once" % (early, MAX_PIPELINED)
    assert replies and all(door.outcome(r) == "ok" for r in replies), "no answer within 6 s" if not replies \
        else replies[-1:]
    assert_well(server, door)


# --- Oversized and inflating bodies -------------------------------------------------------------

@by_door
def test_a_declared_oversized_body_is_refused_before_it_is_sent(server, door):
    """A keyed request declaring 64 MiB (Content-Length, content-length, or the gRPC length prefix;
    the limit is 256 KiB) with only 64 KiB of it sent: refused with the door's error within 5 s."""
    request = door.send(GOOD[:1])
    declared = 64 * MiB
    sock = door.sock(server)
    try:
        if door.http2:
            client = H2Client(sock)
            stream_id = client.open(request.path, request.headers + (
                [] if door.kind == "grpc" else [("content-length", str(declared))]))
            head = b"\x00" + struct.pack(">I", declared) if door.kind == "grpc" else b""
            client.send_body(stream_id, head + b"\x00" * (64 * KiB), end_stream=False, seconds=5)
            client.wait([stream_id], 5)
            reply = client.reply(stream_id)
        else:
            head = door.h1(request, content_length=declared)
            sock.sendall(head[:len(head) - len(request.body)] + b"x" * (64 * KiB))
            reader = H1Reader(sock)
            reply = reader.response(5) or reader.partial
    finally:
        sock.close()
    assert door.outcome(reply) == "resource_exhausted", reply
    assert_well(server, door)


@by_door
def test_an_undeclared_oversized_body_is_refused_when_it_passes_the_limit(server, door):
    """A keyed request whose body just keeps coming (HTTP/1.1 chunked, h2 DATA without
    content-length; gRPC: a 4 MiB message) : refused once it passes the limit, before 2 MiB are sent,
    and the gateway's peak RSS does not take the body."""
    request = door.send(GOOD[:1])
    peak_before = rss_kib(server, "VmHWM")
    total = 2 * MiB
    sock = door.sock(server)
    sent = 0
    reply = None
    try:
        if door.http2:
            client = H2Client(sock)
            stream_id = client.open(request.path, request.headers)
            head = b"\x00" + struct.pack(">I", 4 * MiB) if door.kind == "grpc" else b"{" + b" " * 100
            sent = client.send_body(stream_id, head + b" " * (total - len(head)), end_stream=False, seconds=10)
            client.wait([stream_id], 5)
            reply = client.reply(stream_id)
        else:
            head = door.h1(request, chunked=True).split(b"\r\n\r\n", 1)[0] + b"\r\n\r\n"
            sock.sendall(head)
            reader = H1Reader(sock)
            chunk = b"%x\r\n" % (64 * KiB) + b" " * (64 * KiB) + b"\r\n"
            sock.settimeout(2)
            while sent < total:
                readable, _, _ = select.select([sock], [], [], 0)
                if readable:
                    break  # answered (or closed): stop sending
                try:
                    sock.sendall(chunk)
                except OSError:  # the gateway stopped reading (timeout) or closed
                    break
                sent += 64 * KiB
            reply = reader.response(5) or reader.partial
    finally:
        sock.close()
    grown = rss_kib(server, "VmHWM") - peak_before
    print("\n%s: undeclared body: %d KiB sent before the answer %r; peak RSS +%d KiB" % (
        door, sent // 1024, reply and reply.status, grown))
    assert door.outcome(reply) == "resource_exhausted", reply
    if door.http2:
        # Flow control: the client cannot send past what the gateway's windows let in. HTTP/1.1
        # has none (loopback's socket buffers take the 2 MiB before the answer is read); there the
        # refusal arriving at all, with the body never ended, is what shows it did not wait for it.
        assert sent < total, "all %d bytes were taken without a refusal" % total
    assert_well(server, door)


@by_door
def test_a_compressed_body_inflating_past_the_limit_is_refused(server, door):
    """gzip (grpc-encoding / Content-Encoding) of a 4 MiB body, a few KiB on the wire: refused with
    the door's error, and the gateway's peak RSS does not take the 4 MiB many times over."""
    peak_before = rss_kib(server, "VmHWM")
    request = door.compressed(4 * MiB)
    assert len(request.body) < MAX_MESSAGE
    reply = door.roundtrip(server, request)
    grown = rss_kib(server, "VmHWM") - peak_before
    print("\n%s: gzip bomb (%d bytes): %r; peak RSS +%d KiB" % (door, len(request.body), reply, grown))
    if door.keyed_route:
        # gorush's and SNS's doors need not take gzip at all; what they must not do is take the bomb.
        assert door.outcome(reply) in ("resource_exhausted", "bad_request") or reply.status in (415, 501), reply
        assert reply.status != 200
    else:
        assert door.outcome(reply) == "resource_exhausted", reply
    assert grown < 32 * 1024, grown
    assert_well(server, door)


# --- Slowloris ----------------------------------------------------------------------------------

SLOW_BOUND = max(REQUEST_TIMEOUT, 2 * IDLE_TIMEOUT) + 3   # seconds a dripping client may hold on


def drip(door, server, part):
    """A client sending its request's head (`part` "head") or body ("body") a byte a second: the
    seconds until the gateway ends it (connection closed, or an error answer on h2), or None past
    SLOW_BOUND + 2 s."""
    request = door.send(GOOD[:1])
    sock = door.sock(server, timeout=SLOW_BOUND + 5)
    started = time.time()
    try:
        if door.http2:
            client = H2Client(sock)
            client.pump(0.2)
            if part == "head":
                # Everything of the HEADERS frame but its last byte at once, then a byte a second.
                stream_id = client.conn.get_next_available_stream_id()
                client.conn.send_headers(stream_id, [(":method", request.method), (":scheme", "https" if door.tls else "http"),
                                                     (":path", request.path), (":authority", "localhost")]
                                         + request.headers)
                frame = client.conn.data_to_send()
                sock.sendall(frame[:9])
                rest = frame[9:]
                client.streams[stream_id] = {"headers": [], "trailers": [], "data": b"", "reset": None, "ended": False}
            else:
                stream_id = client.open(request.path, request.headers + (
                    [] if door.kind == "grpc" else [("content-length", str(len(request.body)))]))
                client.flush()
                rest = None
            sent = 0
            while time.time() - started < SLOW_BOUND + 2:
                if part == "head":
                    if sent < len(rest) - 1:
                        try:
                            sock.sendall(rest[sent:sent + 1])
                        except OSError:
                            return time.time() - started
                        sent += 1
                else:
                    if sent < len(request.body) - 1:
                        try:
                            client.conn.send_data(stream_id, request.body[sent:sent + 1])
                            client.flush()
                        except (h2.exceptions.StreamClosedError, h2.exceptions.ProtocolError):
                            return time.time() - started
                        sent += 1
                client.pump(1)
                if client.eof or client.done(stream_id):
                    return time.time() - started
            return None
        data = door.h1(request)
        cut = data.index(b"\r\n\r\n") + 4
        if part == "head":
            first, rest = b"", data[:cut - 1]
        else:
            first, rest = data[:cut], data[cut:-1]
        sock.sendall(first)
        reader = H1Reader(sock)
        sent = 0
        while time.time() - started < SLOW_BOUND + 2:
            if sent < len(rest):
                try:
                    sock.sendall(rest[sent:sent + 1])
                except OSError:
                    return time.time() - started
                sent += 1
            if reader.closed_within(1):
                return time.time() - started
        return None
    finally:
        sock.close()


@pytest.fixture(scope="module")
def slowloris(gateways):
    """Every door's head and body drips, all at once: {(door name, part): seconds or None}."""
    results = {}
    servers = {door.name: gateways.get(door.gateway) for door in DOORS}

    def run(door, part):
        try:
            results[(door.name, part)] = drip(door, servers[door.name], part)
        except Exception as error:  # noqa: BLE001 - reported by the door's test
            results[(door.name, part)] = error

    threads = [threading.Thread(target=run, args=(door, part), daemon=True)
               for door in DOORS for part in ("head", "body")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(SLOW_BOUND + 20)
    return results


@by_door
@pytest.mark.parametrize("part", ["head", "body"])
def test_slowloris_is_closed_by_the_timeouts(gateways, slowloris, door, part):
    """A request's head or body sent a byte a second is ended by request_timeout_seconds (3 s) or
    the idle timeout (2 s, closed one more idle timeout later at the latest)."""
    took = slowloris[(door.name, part)]
    if isinstance(took, Exception):
        raise took
    print("\n%s: %s a byte a second: ended after %s s" % (door, part, took and "%.1f" % took))
    assert took is not None and took <= SLOW_BOUND, "still open after %d s" % (SLOW_BOUND + 2)
    assert_well(gateways.get(door.gateway), door)


# --- Keyless long-lived streams -----------------------------------------------------------------

def watch_lifetime(door, server):
    """A keyless Health/Watch: (first answer seen, seconds until the stream or connection ended, or
    None past 2 idle timeouts + 5 s)."""
    request = door.watch()
    limit = 2 * IDLE_TIMEOUT + 5
    sock = door.sock(server, timeout=limit + 5)
    started = time.time()
    try:
        if door.http2:
            client = H2Client(sock)
            stream_id = client.open(request.path, request.headers)
            client.send_body(stream_id, request.body)
            while time.time() - started < limit:
                client.pump(0.2)
                if client.eof or client.done(stream_id):
                    return bool(client.streams[stream_id]["data"]), time.time() - started
            return bool(client.streams[stream_id]["data"]), None
        sock.sendall(door.h1(request))
        reader = H1Reader(sock)
        while time.time() - started < limit:
            reader._fill(time.time() + 0.2)
            if reader.eof or reader.buffer.endswith(b"0\r\n\r\n"):
                return b"SERVING" in reader.buffer, time.time() - started
        return b"SERVING" in reader.buffer, None
    finally:
        sock.close()


WATCH_DOORS = [d for d in DOORS if d.watch() is not None]


@pytest.fixture(scope="module")
def watches(gateways):
    results = {}
    servers = {door.name: gateways.get(door.gateway) for door in WATCH_DOORS}

    def run(door):
        try:
            results[door.name] = watch_lifetime(door, servers[door.name])
        except Exception as error:  # noqa: BLE001
            results[door.name] = error

    threads = [threading.Thread(target=run, args=(door,), daemon=True) for door in WATCH_DOORS]
    for t in threads:
        t.start()
    for t in threads:
        t.join(2 * IDLE_TIMEOUT + 20)
    return results


@by_door
def test_a_keyless_watch_is_closed_at_the_idle_timeout(gateways, watches, door):
    """A keyless Health/Watch is not a call that keeps its connection busy: the connection gets its
    idle GOAWAY at idle_timeout_seconds (2 s) and is closed one idle timeout later at the latest
    (today Connect's Watch over HTTP/1.1 and h2 is not ended)."""
    if door.watch() is None:
        pytest.skip("%s has no streaming call" % door)
    result = watches[door.name]
    if isinstance(result, Exception):
        raise result
    first, took = result
    print("\n%s: keyless Watch: first answer %s, ended after %s s" % (door, first, took and "%.1f" % took))
    assert first, "the Watch was not answered"
    assert took is not None and took <= 2 * IDLE_TIMEOUT + 2, "the keyless Watch still open after %d s" % (
        2 * IDLE_TIMEOUT + 5)
    assert_well(gateways.get(door.gateway), door)


# --- Trailers and HTTP/1.1 framing ---------------------------------------------------------------

def two_requests(door, server, first, second, first_trailers):
    """`first` (chunked on HTTP/1.1, DATA then a trailer block on h2, with `first_trailers`), then
    `second`, on one connection: their replies."""
    sock = door.sock(server)
    try:
        if door.http2:
            client = H2Client(sock)
            a = client.open(first.path, first.headers)
            client.send_body(a, first.body, end_stream=False)
            client.end(a, trailers=first_trailers)
            client.wait([a], 10)
            b = client.open(second.path, second.headers)
            client.send_body(b, second.body)
            client.wait([b], 10)
            return client.reply(a), client.reply(b)
        sock.sendall(door.h1(first, chunked=True, trailers=first_trailers) + door.h1(second))
        reader = H1Reader(sock)
        one = reader.response(10) or reader.partial
        two = reader.response(10) or reader.partial
        return one, two
    finally:
        sock.close()


@by_door
def test_a_trailer_key_does_not_authorize_the_next_request(server, door):
    """A keyless Health/Check whose trailer is `Authorization: Bearer <valid key>`, then a keyless
    Send on the same connection: the Send is refused unauthenticated (today, on HTTP/1.1, the
    trailer leaks into the next request's headers and authorizes it)."""
    if door.kind == "console":
        pytest.skip("the console's files take no key")
    one, two = two_requests(door, server, door.health(), door.send(GOOD[400:401], key=None),
                            [("authorization", "Bearer " + KEY)])
    assert door.outcome(two) in ("unauthenticated", "none"), (one, two)
    if door.outcome(two) == "none":
        assert not door.http2, "the second stream was not answered: %r" % two
    assert_well(server, door)


@by_door
def test_a_trailer_with_a_wrong_key_does_not_override_the_next_requests_key(server, door):
    """A keyed Send whose trailer is `Authorization: Bearer <wrong key>`, then a keyed Send on the
    same connection: the second is served."""
    if door.kind == "console":
        pytest.skip("the console's files take no key")
    one, two = two_requests(door, server, door.send(GOOD[410:411]), door.send(GOOD[411:412]),
                            [("authorization", "Bearer " + WRONG_KEY)])
    if door.outcome(two) == "none" and not door.http2 and one is not None and one.status >= 400:
        pass  # the first was refused and the connection closed: nothing was overridden
    else:
        assert door.outcome(two) == "ok", (one, two)
    assert_well(server, door)


def h1_exchange(door, server, data, seconds=5):
    """Raw bytes on a fresh connection: the replies until the connection ends or `seconds` pass,
    and whether it ended."""
    sock = door.sock(server)
    try:
        sock.sendall(data)
        reader = H1Reader(sock)
        replies = []
        deadline = time.time() + seconds
        while time.time() < deadline:
            reply = reader.response(max(0.05, deadline - time.time()))
            if reply is None:
                break
            replies.append((time.time(), reply))
        ended = reader.closed_within(max(0.0, deadline - time.time()))
        return replies, ended and time.time()
    finally:
        sock.close()


def h1_only(door):
    if door.http2:
        pytest.skip("HTTP/1.1 message framing: %s is HTTP/2" % door)


@by_door
def test_transfer_encoding_with_a_space_before_the_colon_is_400(server, door):
    """`Transfer-Encoding : chunked` (whitespace between the name and the colon, which RFC 9112
    says must be refused with 400): 400, never read as chunked or as a field named otherwise."""
    h1_only(door)
    data = door.h1(door.send(GOOD[430:431]), chunked=True).replace(b"Transfer-Encoding: chunked",
                                                                   b"Transfer-Encoding : chunked")
    replies, _ = h1_exchange(door, server, data)
    assert [r.status for _, r in replies] == [400], [r for _, r in replies]
    assert_well(server, door)


@by_door
def test_bare_lf_line_endings_are_400(server, door):
    """A head whose lines end in LF alone: 400 (a proxy in front may see the lines otherwise)."""
    h1_only(door)
    data = door.h1(door.send(GOOD[431:432]))
    head, _, body = data.partition(b"\r\n\r\n")
    replies, _ = h1_exchange(door, server, head.replace(b"\r\n", b"\n") + b"\n\n" + body)
    assert [r.status for _, r in replies] == [400], [r for _, r in replies]
    assert_well(server, door)


@by_door
def test_content_length_with_transfer_encoding_does_not_desync(server, door):
    """Content-Length and Transfer-Encoding: chunked together, the chunked body ending early and a
    whole second request behind it within the Content-Length: RFC 9112 lets the server refuse it
    (400) or answer it by its chunked framing and then close; never is the smuggled request answered."""
    h1_only(door)
    smuggled = door.h1(door.send(GOOD[420:421], key=None))
    chunked_body = b"2\r\n{}\r\n0\r\n\r\n"
    request = door.health()
    head = "\r\n".join(["POST %s HTTP/1.1" % request.path, "Host: localhost"]
                       + ["%s: %s" % (k, v) for k, v in request.headers]
                       + ["Content-Length: %d" % (len(chunked_body) + len(smuggled)), "Transfer-Encoding: chunked"])
    replies, ended = h1_exchange(door, server, head.encode() + b"\r\n\r\n" + chunked_body + smuggled, seconds=4)
    statuses = [r.status for _, r in replies]
    assert len(replies) == 1, "the smuggled request was answered: %r" % [r for _, r in replies]
    if statuses != [400]:
        # Answered by its chunked framing: then closed at once (before the 2 s idle timeout could).
        at, reply = replies[0]
        assert reply.closed or (ended and ended - at < 1.5), "answered without closing: %r" % reply
    assert_well(server, door)


@by_door
@pytest.mark.parametrize("case", ["obs-fold", "two-content-lengths"])
def test_ambiguous_heads_are_400(server, door, case):
    """An obs-folded header line, or two Content-Lengths that disagree: 400."""
    h1_only(door)
    request = door.send(GOOD[432:433])
    data = door.h1(request)
    if case == "obs-fold":
        data = data.replace(b"Host: localhost\r\n", b"Host: localhost\r\nX-Folded: a\r\n  b\r\n")
    else:
        length = b"Content-Length: %d\r\n" % len(request.body)
        data = data.replace(length, length + b"Content-Length: %d\r\n" % (len(request.body) + 40))
    replies, _ = h1_exchange(door, server, data)
    assert [r.status for _, r in replies] == [400], [r for _, r in replies]
    assert_well(server, door)


# --- gorush answer amplification -----------------------------------------------------------------

@by_door
def test_gorush_answer_amplification_is_bounded(server, door):
    """A ~115 KB /api/push of 1,000 tokens the provider rejects and a 50 KB notif_id: gorush's
    answer has a log entry per failed token, each echoing notif_id (50 MB if unbounded). The answer
    is under 16 MB, or the request is refused 400."""
    if door.kind != "gorush":
        pytest.skip("only /api/push echoes client-chosen text per failed token")
    request = door.send(BAD, notif_id="n" * 50_000)
    assert 100_000 < len(request.body) < MAX_MESSAGE, len(request.body)
    cap = 16 * MiB
    sock = door.sock(server, timeout=60)
    try:
        if door.http2:
            client = H2Client(sock)
            stream_id = client.open(request.path, request.headers)
            client.send_body(stream_id, request.body)
            deadline = time.time() + 60
            while time.time() < deadline and not client.done(stream_id) and client.terminated is None \
                    and len(client.streams[stream_id]["data"]) <= cap:
                client.pump(0.2)
            reply = client.reply(stream_id)
        else:
            sock.sendall(door.h1(request))
            reader = H1Reader(sock)
            reply = reader.response(60, max_body=cap + 1) or reader.partial
    finally:
        sock.close()
    size = len(reply.body) if reply else 0
    if reply is not None and "content-length" in reply.headers:
        size = max(size, int(reply.headers["content-length"]))
    print("\n%s: amplification: status %s, answer %d bytes" % (door, reply and reply.status, size))
    assert reply is not None and reply.status in (200, 400), reply
    if reply.status == 200:
        assert size < cap, "an answer of %d bytes (to a request of %d)" % (size, len(request.body))
        assert reply.complete, reply
    else:
        assert door.outcome(reply) == "bad_request", reply
    assert_well(server, door)
