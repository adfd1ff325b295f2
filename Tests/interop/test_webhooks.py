"""Signed webhooks with a durable outbox (docs/webhooks.md), checked against an independent HTTPS
receiver written here: Python's `http.server` behind `ssl` (ALPN `http/1.1`), on a self-signed
certificate made with the openssl command line and given to the gateway as the webhook's `ca_file`.
The receiver records every POST (headers, raw body, what it answered) and verifies every
`Pushgate-Signature` the way the doc's Python sample does (HMAC-SHA256, lowercase hex, of
`t` + "." + the raw body, compared in constant time, `t` within 300 s); it can be told to answer a
status (503) until a given time, or be stopped and started again on the same port.

Verified here:
- A topic Publish to live and dead tokens (the APNs look-alike answers 410 Unregistered for the dead
  ones) sends exactly one KIND_ENDPOINT_DISABLED per dead endpoint (its endpointId, token, app,
  messageId, reason) and exactly one KIND_MESSAGE_FINISHED with the message's final state and counts
  as GetMessage answers them (int64 as JSON strings, zero fields left out, parseable by protobuf's
  own JSON parser), and nothing of the kinds not asked for. Every signature verifies; a second
  webhook whose secret file holds another secret (with whitespace around it) is sent requests that
  all fail verification with the first secret and all pass with its own.
- A receiver answering 503 for 60 s: the batch is sent again with backoff (more than one attempt,
  not a flood), with the same Pushgate-Delivery id and events, re-signed; once it answers 200 every
  event arrives, one batch at a time, and an event is only ever repeated inside a batch of the same id.
- kill -9 while events are pending (the receiver answering 503, or not listening at all), restart on
  the same SQLite store: every event arrives; a batch seen before the kill keeps its id.
- Order: events about one endpoint and one message arrive in the order they happened (an endpoint
  disabled, re-enabled and disabled again by successive Publishes, each message's finish after its
  endpoint's disabling), across batches.
- Config errors (an http:// url, no secret_file, a secret_file that does not exist or is too short,
  an unknown event, a bad name) refuse to start, naming the key.

Nothing here reads Pushgate's sources: the contract is docs/webhooks.md and proto/."""
import collections
import hashlib
import hmac
import http.server
import json
import os
import re
import secrets
import signal
import socket
import socketserver
import ssl
import subprocess
import threading
import time
import urllib.request

import grpc
import pytest
from google.protobuf import json_format

from conftest import Server, app_config, start_apns_lookalike, wait_done, wait_metrics_port
from mock_process import pushgate_binary
from pushgate.v1 import push_pb2, push_pb2_grpc, registry_pb2, registry_pb2_grpc

APP, BUNDLE = "hooks", "com.example.hooks"
DISABLED, FINISHED = "KIND_ENDPOINT_DISABLED", "KIND_MESSAGE_FINISHED"
SIGNATURE_RE = re.compile(r"^t=(\d+),v1=([0-9a-f]{64})$")


# --- the receiver -------------------------------------------------------------------------------

def verify(secret, header, body, tolerance=300):
    """docs/webhooks.md's Python verifier, made total: a malformed header is False, not an exception."""
    try:
        fields = dict(part.split("=", 1) for part in header.split(","))
        expected = hmac.new(secret, fields["t"].encode() + b"." + body, hashlib.sha256).hexdigest()
        return hmac.compare_digest(expected, fields.get("v1", "")) and abs(time.time() - int(fields["t"])) <= tolerance
    except (AttributeError, KeyError, TypeError, ValueError):
        return False


def make_receiver_certificate(directory):
    """A self-signed certificate for 127.0.0.1 (and localhost), made with the openssl command line."""
    os.makedirs(directory, exist_ok=True)
    cert, key = os.path.join(directory, "receiver.pem"), os.path.join(directory, "receiver.key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                   check=True, capture_output=True)
    return cert, key


class Request:
    """One POST as received: arrival time, lowercased headers, raw body, the status answered, whether
    the signature verified with the receiver's secret, and the parsed events (None if unparseable)."""

    def __init__(self, method, path, headers, body, status, signature_ok):
        self.time = time.time()
        self.method, self.path, self.headers, self.body = method, path, headers, body
        self.status, self.signature_ok = status, signature_ok
        self.delivery = headers.get("pushgate-delivery", "")
        self.signature = headers.get("pushgate-signature", "")
        try:
            self.json = json.loads(body)
            self.events = self.json["events"]
        except (ValueError, KeyError, TypeError):
            self.json, self.events = None, None

    def __repr__(self):
        return "<%s %s %d delivery=%s sig_ok=%s %d bytes>" % (self.method, self.path, self.status, self.delivery,
                                                             self.signature_ok, len(self.body))


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 120  # an idle kept-alive connection's thread ends eventually

    def log_message(self, *args):
        pass

    def _read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def do_POST(self):
        self.server.owner._serve(self, self._read_body())

    def do_GET(self):
        self.server.owner._serve(self, b"")

    do_PUT = do_GET


class _TLSServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address, owner):
        self.owner = owner
        super().__init__(address, _Handler)

    def finish_request(self, request, client_address):
        # The TLS handshake on the connection's own thread, not the accepting one.
        try:
            tls = self.owner.context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as error:
            self.owner.handshake_errors.append(repr(error))
            return
        with self.owner.lock:
            self.owner.connections.add(tls)
            self.owner.alpn.append(tls.selected_alpn_protocol())
        try:
            _Handler(tls, client_address, self)
        except (ssl.SSLError, OSError):
            pass
        finally:
            with self.owner.lock:
                self.owner.connections.discard(tls)
            try:
                tls.close()
            except OSError:
                pass


class Receiver:
    """The independent webhook receiver. `secret` (bytes) is what it verifies signatures with."""

    def __init__(self, directory, secret, path="/hooks/pushgate"):
        self.secret, self.path = secret, path
        self.cert, self.key = make_receiver_certificate(directory)
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(self.cert, self.key)
        self.context.set_alpn_protocols(["http/1.1"])
        self.lock = threading.Lock()
        self.requests = []
        self.handshake_errors = []
        self.alpn = []
        self.connections = set()
        self.in_flight = self.max_in_flight = 0
        self.fail_status, self.fail_until = None, 0.0
        self.port = 0
        self._httpd = None

    @property
    def url(self):
        return "https://127.0.0.1:%d%s" % (self.port, self.path)

    def start(self):
        """Listens (again, on the same port once it has one)."""
        self._httpd = _TLSServer(("127.0.0.1", self.port), self)
        self.port = self._httpd.server_address[1]
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self):
        """Stops listening and closes the connections it holds: afterwards connecting is refused."""
        if self._httpd is None:
            return
        self._httpd.shutdown()
        self._httpd.server_close()
        self._httpd = None
        with self.lock:
            held = list(self.connections)
        for conn in held:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def answer(self, status, until=None):
        """Answer `status` until the time.time() `until` (None: until told otherwise), then 200."""
        with self.lock:
            self.fail_status, self.fail_until = status, (float("inf") if until is None else until)

    def _serve(self, handler, body):
        headers = {k.lower(): v for k, v in handler.headers.items()}
        signature_ok = verify(self.secret, headers.get("pushgate-signature", ""), body)
        with self.lock:
            now = time.time()
            status = self.fail_status if self.fail_status is not None and now < self.fail_until else 200
            if handler.command != "POST":
                status = 405
            request = Request(handler.command, handler.path, headers, body, status, signature_ok)
            self.requests.append(request)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            payload = b"" if status == 200 else json.dumps({"error": "status %d" % status}).encode()
            handler.send_response(status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(payload)))
            handler.end_headers()
            handler.wfile.write(payload)
            handler.wfile.flush()
        finally:
            with self.lock:
                self.in_flight -= 1

    # What arrived --------------------------------------------------------------------------------

    def snapshot(self):
        with self.lock:
            return list(self.requests)

    def accepted(self):
        """The batches the receiver accepted (2xx), each once, as a consumer that ignores a
        Pushgate-Delivery id it has already processed would: [(delivery id, events)] in arrival order."""
        seen, batches = set(), []
        for r in self.snapshot():
            if 200 <= r.status < 300 and r.events is not None and r.delivery not in seen:
                seen.add(r.delivery)
                batches.append((r.delivery, r.events))
        return batches

    def accepted_events(self):
        return [event for _, events in self.accepted() for event in events]

    def settle(self, quiet=1.5, timeout=15):
        """Waits until no request has arrived for `quiet` seconds (at most `timeout`): lets
        duplicates or stray events that would break an "exactly one" show up before it is checked."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            requests = self.snapshot()
            last = requests[-1].time if requests else 0
            if time.time() - last >= quiet:
                return
            time.sleep(0.1)


# --- checks shared by the tests -------------------------------------------------------------------

def wait_for(condition, timeout, what, diagnostics=lambda: ""):
    deadline = time.time() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.time() > deadline:
            raise AssertionError("timed out after %.0f s waiting for %s\n%s" % (timeout, what, diagnostics()))
        time.sleep(0.05)


def key_of(event):
    """(kind, messageId, endpointId); a message's finish is about the message, whatever endpoint it
    may name (a Publish to one endpoint_id)."""
    endpoint = "" if event.get("kind") == FINISHED else event.get("endpointId", "")
    return (event.get("kind"), event.get("messageId", ""), endpoint)


def canonical(event):
    return json.dumps(event, sort_keys=True)


def assert_well_formed(receiver, secret=None, batch_size=None):
    """Every request: a POST to the webhook's path, JSON, a delivery id, a signature of the documented
    form that verifies with the receiver's secret (`secret`: also re-checked with that one), at most
    `batch_size` events, each the proto3 JSON form of pushgate.v1.DeliveryEvent with no field at
    its default value."""
    requests = receiver.snapshot()
    assert requests, "the receiver got no request"
    assert not receiver.handshake_errors, receiver.handshake_errors
    for r in requests:
        assert r.method == "POST" and r.path == receiver.path, r
        assert r.headers.get("content-type", "").split(";")[0].strip().lower() == "application/json", r.headers
        assert r.delivery, "no Pushgate-Delivery header: %s" % r.headers
        assert SIGNATURE_RE.match(r.signature), "Pushgate-Signature not t=<unix seconds>,v1=<lowercase hex>: %r" % \
            r.signature
        assert r.signature_ok, "signature does not verify: %r on %r" % (r.signature, r.body[:200])
        if secret is not None:
            assert verify(secret, r.signature, r.body)
        assert r.events is not None and isinstance(r.events, list) and r.events, "body: %r" % r.body[:300]
        if batch_size is not None:
            assert len(r.events) <= batch_size, "%d events in a batch of at most %d" % (len(r.events), batch_size)
        for event in r.events:
            json_format.ParseDict(event, push_pb2.DeliveryEvent())  # raises on an unknown field or bad value
            assert_no_defaults(event, "event")
            assert isinstance(event.get("time"), str) and event["time"].isdigit(), \
                "time must be int64 ms as a JSON string: %r" % event
            assert abs(int(event["time"]) / 1000 - time.time()) < 3600, event


def assert_no_defaults(value, path):
    """proto3 JSON: fields at their default value (0, "", false, an UNSPECIFIED enum) are left out."""
    if isinstance(value, dict):
        for k, v in value.items():
            assert v not in (0, "0", "", False, None, [], {}) and not (isinstance(v, str) and v.endswith("_UNSPECIFIED")), \
                "%s.%s is at its default value %r and should be left out" % (path, k, v)
            assert_no_defaults(v, path + "." + k)


def assert_repeats_only_within_a_batch(requests):
    """A batch sent again keeps its id and its events; an event is never sent in two batches with
    different ids, nor twice in one batch."""
    batches = {}
    for r in requests:
        if r.events is None:
            continue
        if r.delivery in batches:
            assert r.events == batches[r.delivery], \
                "batch %s sent again with other events:\n%s\n%s" % (r.delivery, batches[r.delivery], r.events)
        else:
            batches[r.delivery] = r.events
    owner = {}
    for delivery, events in batches.items():
        counts = collections.Counter(canonical(e) for e in events)
        assert max(counts.values()) == 1, "an event twice in batch %s: %s" % (delivery, counts.most_common(1))
        for event in events:
            first = owner.setdefault(canonical(event), delivery)
            assert first == delivery, "event %s sent in batch %s and again in batch %s" % (event, first, delivery)


def metrics(port):
    """The Prometheus text of the gateway's /metrics as {(name, frozenset(labels)): value}."""
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as response:
        text = response.read().decode()
    values = {}
    for line in text.splitlines():
        m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)", line)
        if m and not line.startswith("#"):
            labels = frozenset(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
            values[(m.group(1), labels)] = float(m.group(3))
    return values


def metric(port, name, **labels):
    return metrics(port).get((name, frozenset(labels.items())))


# --- the gateway ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def apns(tmp_path_factory):
    """This module's own APNs look-alike; tests add their dead tokens to `apns.unregistered` (410)."""
    server = start_apns_lookalike(str(tmp_path_factory.mktemp("webhooks-apns")), unregistered=set())
    yield server
    server.stop()


def write_secret(path, text):
    with open(path, "w") as fh:
        fh.write(text)
    return str(path)


def hook(name, receiver, secret_file, events=("endpoint_disabled", "message_finished"), **extra):
    entry = {"name": name, "url": receiver.url, "secret_file": secret_file, "events": list(events),
             "ca_file": receiver.cert}
    entry.update(extra)
    return entry


def gateway_config(apns, webhooks, **extra):
    config = {"apps": [app_config(APP, BUNDLE, apns)], "webhooks": webhooks}
    config.update(extra)
    return config


def token(tag, n, dead):
    return "%08x%08x%048x" % (tag, 0xDEAD if dead else 0x11FE, n)


def make_topic(channel, apns, name, tag, live, dead):
    """A topic with `live` endpoints APNs accepts and `dead` ones it answers 410 Unregistered;
    answers (live endpoints, dead endpoints)."""
    registry = registry_pb2_grpc.RegistryStub(channel)
    registry.CreateTopic(registry_pb2.CreateTopicRequest(name=name), timeout=10)
    made = {False: [], True: []}
    for is_dead, count in ((False, live), (True, dead)):
        for n in range(count):
            t = token(tag, n, is_dead)
            if is_dead:
                apns.unregistered.add(t)
            endpoint = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app=APP, token=t), timeout=10)
            registry.Subscribe(registry_pb2.SubscribeRequest(topic=name, endpoint_id=endpoint.id), timeout=10)
            made[is_dead].append(endpoint)
    return made[False], made[True]


def publish(channel, **fields):
    return push_pb2_grpc.PushStub(channel).Publish(push_pb2.PublishRequest(message="hello", **fields),
                                                   timeout=10).message_id


def expected_keys(message_id, dead_endpoints):
    return {(DISABLED, message_id, e.id) for e in dead_endpoints} | {(FINISHED, message_id, "")}


def arrived(receiver, keys):
    have = {key_of(e) for e in receiver.accepted_events()}
    return keys <= have


def log_tail(server, n=40):
    return "".join(server.log[-n:])


# --- 2. dead tokens and a finished message, signed ----------------------------------------------

def test_dead_endpoints_and_the_finished_message_arrive_once_signed(tmp_path, apns):
    good_secret, other_secret = secrets.token_hex(24), secrets.token_hex(24)
    good = Receiver(str(tmp_path / "good"), good_secret.encode(), path="/hooks/crm").start()
    # Verifies with the good secret, but the gateway signs what it sends there with `other_secret`.
    wrong = Receiver(str(tmp_path / "wrong"), good_secret.encode(), path="/hooks/other").start()
    good_file = write_secret(tmp_path / "crm.secret", good_secret + "\n")
    other_file = write_secret(tmp_path / "other.secret", "  " + other_secret + " \n")
    config = gateway_config(apns, [hook("crm", good, good_file), hook("other", wrong, other_file)])
    server = Server(config, str(tmp_path))
    try:
        with grpc.insecure_channel(server.address) as channel:
            live, dead = make_topic(channel, apns, "wh-signed", 0x2001, live=3, dead=4)
            message_id = publish(channel, topic="wh-signed")
            done = wait_done(push_pb2_grpc.PushStub(channel), message_id)
            keys = expected_keys(message_id, dead)
            wait_for(lambda: arrived(good, keys), 60, "the dead endpoints and the finished message at the receiver",
                     lambda: "%s\n%s" % (good.snapshot(), log_tail(server)))
            wait_for(lambda: (FINISHED, message_id, "") in {key_of(e) for e in wrong.accepted_events()}, 60,
                     "the finished message at the other webhook's receiver", lambda: str(wrong.snapshot()))
            good.settle()
            wrong.settle()
    finally:
        server.stop()
        good.stop()
        wrong.stop()
    assert server.proc.returncode == 0, log_tail(server)

    assert_well_formed(good, batch_size=100)
    assert_repeats_only_within_a_batch(good.snapshot())
    events = good.accepted_events()
    assert {e["kind"] for e in events} <= {DISABLED, FINISHED}, \
        "kinds not asked for: %s" % sorted({e["kind"] for e in events})

    disabled = [e for e in events if e["kind"] == DISABLED]
    assert collections.Counter(e.get("endpointId") for e in disabled) == collections.Counter(e.id for e in dead), \
        "want exactly one KIND_ENDPOINT_DISABLED per dead endpoint:\n%s" % disabled
    by_id = {e.id: e for e in dead}
    for event in disabled:
        endpoint = by_id[event["endpointId"]]
        assert event.get("reason") == "Unregistered", event
        assert event.get("messageId") == message_id, event
        assert event.get("app") == APP and event.get("token") == endpoint.token, event
    live_ids = {e.id for e in live}
    assert not [e for e in events if e.get("endpointId") in live_ids], "events about live endpoints were sent"

    finished = [e for e in events if e["kind"] == FINISHED]
    assert len(finished) == 1, "want exactly one KIND_MESSAGE_FINISHED:\n%s" % finished
    event = finished[0]
    assert event.get("messageId") == message_id and "endpointId" not in event, event
    message = event.get("message")
    assert isinstance(message, dict), event
    assert message.get("messageId") == message_id and message.get("state") == "MESSAGE_STATE_COMPLETED", message
    assert (message.get("total"), message.get("delivered"), message.get("rejected")) == ("7", "3", "4"), \
        "counts are int64, JSON strings: %s" % message
    for zero in ("failed", "skipped", "cancelled", "waitingForProvider", "deliverAt", "maxPerSecond"):
        assert zero not in message, "%s is 0 and should be left out: %s" % (zero, message)
    assert message.get("topic") == "wh-signed", message
    # "message holds its final state and counts as GetMessage would answer"
    assert message == json_format.MessageToDict(done), (message, json_format.MessageToDict(done))

    # The other webhook: its secret file's secret (whitespace around it is not part of it) signs
    # everything sent there, so a receiver holding a different secret refuses every request.
    got = wrong.snapshot()
    assert got, "the other webhook's receiver got no request"
    assert not [r for r in got if r.signature_ok], "a request verified with the wrong secret"
    assert not [r for r in got if verify(good_secret.encode(), r.signature, r.body)]
    assert all(verify(other_secret.encode(), r.signature, r.body) for r in got), \
        "the other webhook's requests are not signed with the secret of its own secret_file (trimmed)"
    assert not [r for r in good.snapshot() if verify(other_secret.encode(), r.signature, r.body)]


# --- 3. a receiver that answers 503 for a minute ------------------------------------------------

def test_a_receiver_answering_503_for_a_minute_gets_every_event_after_retries(tmp_path, apns):
    secret = secrets.token_hex(20)
    receiver = Receiver(str(tmp_path / "receiver"), secret.encode()).start()
    failing_for = 60
    config = gateway_config(apns, [hook("slow", receiver, write_secret(tmp_path / "slow.secret", secret + "\n"),
                                        batch_size=2)],
                            metrics_listen="127.0.0.1:0")
    server = Server(config, str(tmp_path))
    try:
        metrics_port = wait_metrics_port(server)
        start = time.time()
        fail_until = start + failing_for
        receiver.answer(503, until=fail_until)
        with grpc.insecure_channel(server.address) as channel:
            push = push_pb2_grpc.PushStub(channel)
            _, dead_a = make_topic(channel, apns, "wh-retry-a", 0x3001, live=2, dead=3)
            _, dead_b = make_topic(channel, apns, "wh-retry-b", 0x3002, live=1, dead=2)
            first = publish(channel, topic="wh-retry-a")
            wait_done(push, first)
            second = publish(channel, topic="wh-retry-b")
            wait_done(push, second)
        keys = expected_keys(first, dead_a) | expected_keys(second, dead_b)
        # Backoff tops out at 30 s: the first retry after the minute is at most ~30 s late.
        wait_for(lambda: arrived(receiver, keys), fail_until - time.time() + 50,
                 "every event after the receiver recovered",
                 lambda: "%s\n%s" % (receiver.snapshot(), log_tail(server)))
        receiver.settle()
        # The metrics are checked last, so that the delivery itself is judged first.
        try:
            wait_for(lambda: metric(metrics_port, "pushgate_webhook_events_pending", webhook="slow") == 0, 10,
                     "pushgate_webhook_events_pending 0")
            pending_drained = True
        except AssertionError:
            pending_drained = False
        pending = metric(metrics_port, "pushgate_webhook_events_pending", webhook="slow")
        retried = metric(metrics_port, "pushgate_webhook_batches_retried_total", webhook="slow")
        sent = metric(metrics_port, "pushgate_webhook_events_sent_total", webhook="slow")
    finally:
        server.stop()
        receiver.stop()
    assert server.proc.returncode == 0, log_tail(server)

    requests = receiver.snapshot()
    assert_well_formed(receiver, batch_size=2)
    refused = [r for r in requests if r.status == 503]
    assert len(refused) >= 2, "the batch was not sent again while the receiver answered 503: %s" % requests
    # Backoff from 1 s doubling to 30 s: a handful of attempts in a minute, never a tight loop.
    assert len(refused) <= 15, "%d attempts in %d s: no backoff?" % (len(refused), failing_for)
    gaps = [b.time - a.time for a, b in zip(refused, refused[1:])]
    assert min(gaps) >= 0.5, "retries %.2f s apart: %s" % (min(gaps), gaps)
    assert max(gaps) <= 40, "a retry came %.0f s after the previous one (backoff caps at 30 s)" % max(gaps)
    # One batch at a time, sent again as it was: one id, the same events, signed anew each attempt.
    assert len({r.delivery for r in refused}) == 1, "the refused batch changed id: %s" % refused
    assert all(r.events == refused[0].events for r in refused)
    stamps = [int(SIGNATURE_RE.match(r.signature).group(1)) for r in refused]
    assert stamps == sorted(stamps) and stamps[-1] > stamps[0], "t is not when each attempt was signed: %s" % stamps
    accepted = [r for r in requests if r.status == 200]
    assert accepted and accepted[0].delivery == refused[0].delivery and accepted[0].events == refused[0].events, \
        "the first batch accepted is not the batch that was refused"
    assert receiver.max_in_flight == 1, "batches sent concurrently (%d at once)" % receiver.max_in_flight
    assert_repeats_only_within_a_batch(requests)

    events = receiver.accepted_events()
    counts = collections.Counter(key_of(e) for e in events)
    assert set(counts) == keys, "missing %s, unexpected %s" % (keys - set(counts), set(counts) - keys)
    assert max(counts.values()) == 1, "an event accepted twice in different batches: %s" % counts.most_common(3)

    assert pending_drained, "pushgate_webhook_events_pending{webhook=\"slow\"} = %r after every event arrived" % pending
    assert retried is not None and retried >= 1, "pushgate_webhook_batches_retried_total{webhook=\"slow\"} = %r" % retried
    assert sent is not None and sent >= len(keys), "pushgate_webhook_events_sent_total{webhook=\"slow\"} = %r" % sent


# --- 4. kill -9 with events pending -------------------------------------------------------------

@pytest.mark.parametrize("receiver_state", ["answering_503", "not_listening"])
def test_events_pending_at_kill_9_arrive_after_a_restart(tmp_path, apns, receiver_state):
    secret = secrets.token_hex(20)
    receiver = Receiver(str(tmp_path / "receiver"), secret.encode()).start()
    if receiver_state == "not_listening":
        receiver.stop()  # keeps its port: started again there after the restart
    else:
        receiver.answer(503)
    config = gateway_config(apns, [hook("durable", receiver, write_secret(tmp_path / "durable.secret", secret),
                                        batch_size=3)])
    store = str(tmp_path / "webhooks.db")
    first = Server(config, str(tmp_path), store=store)
    tag = 0x4001 if receiver_state == "not_listening" else 0x4002
    try:
        with grpc.insecure_channel(first.address) as channel:
            _, dead = make_topic(channel, apns, "wh-kill", tag, live=2, dead=4)
            message_id = publish(channel, topic="wh-kill")
            wait_done(push_pb2_grpc.PushStub(channel), message_id)
        if receiver_state == "answering_503":
            # Pending and being retried: at least one attempt refused, then a retry.
            wait_for(lambda: len(receiver.snapshot()) >= 2, 30, "a retried batch before the kill",
                     lambda: log_tail(first))
        os.kill(first.proc.pid, signal.SIGKILL)
        first.proc.wait(timeout=10)
    finally:
        if first.alive():
            first.proc.kill()
            first.proc.wait(timeout=10)
    before_kill = receiver.snapshot()
    assert not [r for r in before_kill if r.status == 200]
    keys = expected_keys(message_id, dead)

    second = Server(config, str(tmp_path), store=store)
    try:
        if receiver_state == "not_listening":
            # Down a little longer after the restart, then back on the same port.
            deadline = time.time() + 2
            while time.time() < deadline:
                assert second.alive(), log_tail(second)
                time.sleep(0.1)
            receiver.start()
        else:
            receiver.answer(503, until=time.time() + 3)
        wait_for(lambda: arrived(receiver, keys), 60, "the events pending at the kill, after the restart",
                 lambda: "%s\n%s" % (receiver.snapshot(), log_tail(second)))
        receiver.settle()
    finally:
        second.stop()
        receiver.stop()
    assert second.proc.returncode == 0, log_tail(second)

    assert_well_formed(receiver, batch_size=3)
    requests = receiver.snapshot()
    assert_repeats_only_within_a_batch(requests)
    events = receiver.accepted_events()
    counts = collections.Counter(key_of(e) for e in events)
    assert set(counts) == keys, "missing %s, unexpected %s" % (keys - set(counts), set(counts) - keys)
    assert max(counts.values()) == 1, counts.most_common(3)
    if before_kill:
        # "A batch sent again (after a 5xx, a timeout, a restart) keeps its id and its events."
        accepted_ids = {delivery for delivery, _ in receiver.accepted()}
        assert before_kill[0].delivery in accepted_ids, \
            "the batch refused before the kill (%s) was not sent again with its id after the restart: %s" % (
                before_kill[0].delivery, receiver.accepted())


# --- 5. order ---------------------------------------------------------------------------------------

def test_events_of_one_endpoint_and_one_message_arrive_in_order(tmp_path, apns):
    secret = secrets.token_hex(20)
    receiver = Receiver(str(tmp_path / "receiver"), secret.encode()).start()
    config = gateway_config(apns, [hook("ordered", receiver, write_secret(tmp_path / "ordered.secret", secret),
                                        batch_size=2)])
    server = Server(config, str(tmp_path))
    expected = []
    try:
        with grpc.insecure_channel(server.address) as channel:
            registry = registry_pb2_grpc.RegistryStub(channel)
            push = push_pb2_grpc.PushStub(channel)
            dead_token, live_token = token(0x5001, 0, True), token(0x5001, 1, False)
            apns.unregistered.add(dead_token)
            dead = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app=APP, token=dead_token), timeout=10)
            live = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app=APP, token=live_token), timeout=10)
            for _ in range(4):
                # The same endpoint, enabled again, disabled again by the next Publish to it.
                registry.UpdateEndpoint(registry_pb2.UpdateEndpointRequest(id=dead.id, enabled=True), timeout=10)
                to_dead = publish(channel, endpoint_id=dead.id)
                assert wait_done(push, to_dead).rejected == 1
                expected += [(DISABLED, to_dead, dead.id), (FINISHED, to_dead, "")]
                to_live = publish(channel, endpoint_id=live.id)
                assert wait_done(push, to_live).delivered == 1
                expected.append((FINISHED, to_live, ""))
        wait_for(lambda: arrived(receiver, set(expected)), 60, "every event",
                 lambda: "%s\n%s" % (receiver.snapshot(), log_tail(server)))
        receiver.settle()
    finally:
        server.stop()
        receiver.stop()
    assert server.proc.returncode == 0, log_tail(server)

    assert_well_formed(receiver, batch_size=2)
    assert_repeats_only_within_a_batch(receiver.snapshot())
    assert receiver.max_in_flight == 1, "batches sent concurrently (%d at once)" % receiver.max_in_flight
    events = receiver.accepted_events()
    assert [key_of(e) for e in events] == expected, \
        "events out of the order they happened:\n got  %s\n want %s" % ([key_of(e) for e in events], expected)
    times = [int(e["time"]) for e in events]
    assert times == sorted(times), "event times go backwards: %s" % times
    assert len(receiver.accepted()) >= len(expected) // 2, "fewer batches than batch_size 2 allows"


# --- 6. config errors -------------------------------------------------------------------------------

def _config_error_cases(tmp_path, apns, receiver_cert):
    good_secret = write_secret(tmp_path / "ok.secret", "0123456789abcdef0123456789abcdef\n")
    short_secret = write_secret(tmp_path / "short.secret", "  short-secret  \n")  # 12 bytes once trimmed

    def webhook(**overrides):
        entry = {"name": "crm", "url": "https://127.0.0.1:9/hooks", "secret_file": good_secret,
                 "events": ["endpoint_disabled", "message_finished"], "ca_file": receiver_cert}
        entry.update(overrides)
        return {k: v for k, v in entry.items() if v is not None}

    return {
        "http_url": ("url", webhook(url="http://127.0.0.1:9/hooks")),
        "no_secret_file": ("secret_file", webhook(secret_file=None)),
        "missing_secret_file": ("secret_file", webhook(secret_file=str(tmp_path / "no-such.secret"))),
        "short_secret": ("secret_file", webhook(secret_file=short_secret)),
        "unknown_event": ("events", webhook(events=["endpoint_disabled", "bounced"])),
        "bad_name": ("name", webhook(name="Not A Name!")),
    }


@pytest.mark.parametrize("case", ["http_url", "no_secret_file", "missing_secret_file", "short_secret",
                                  "unknown_event", "bad_name"])
def test_a_bad_webhook_config_refuses_to_start_naming_the_key(tmp_path, apns, case):
    cert, _ = make_receiver_certificate(str(tmp_path / "cert"))
    key, entry = _config_error_cases(tmp_path, apns, cert)[case]
    config_path = tmp_path / "pushgate.json"
    config_path.write_text(json.dumps(gateway_config(apns, [entry])))
    proc = subprocess.Popen([pushgate_binary(), "serve", "--config", str(config_path), "--listen", "127.0.0.1:0",
                             "--loops", "1", "--store", str(tmp_path / "pushgate.db")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError("pushgate started with a bad webhook (%s):\n%s%s" % (case, out, err))
    assert proc.returncode != 0, "exit 0 with a bad webhook (%s):\n%s%s" % (case, out, err)
    assert "msg=listening" not in out + err, out + err
    assert re.search(r"(?<![A-Za-z_])%s(?![A-Za-z_])" % re.escape(key), err), \
        "stderr does not name %r (%s):\n%s" % (key, case, err)
    assert "webhook" in err, "stderr does not say it is a webhook's key (%s):\n%s" % (case, err)
