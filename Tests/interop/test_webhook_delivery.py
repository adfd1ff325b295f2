"""Webhook delivery (docs/webhooks.md), the parts test_webhooks.py leaves out: HTTP/2 receivers, 429
with Retry-After, refusals (4xx, a redirect), `max_pending`, the `apps` filter, sampled successes,
Send events, and several instances on one PostgreSQL database.

Written from docs/webhooks.md, docs/configuration.md, docs/operations.md (metrics) and
proto/pushgate/v1/push.proto alone. The HTTP/1.1 receiver is test_webhooks.py's (imported, not
copied), given a script of answers; the HTTP/2 receiver is written here on the `h2` library over
Python's `ssl` (ALPN `h2`), on the h2_lookalike.py server skeleton. Both verify every
`Pushgate-Signature` with the doc's Python verifier and record every request.

Verified here:
- An HTTP/2 (ALPN h2) receiver gets every batch, signed, one batch at a time, a 503 retried with
  the same id over HTTP/2.
- 429 with `Retry-After` (seconds, or an HTTP date): the batch is not sent again before the time
  asked, then comes with the same Pushgate-Delivery id and events; events written meanwhile wait
  for it; `batches_retried_total` counts it.
- A 400, a 410 or a 302 (not followed): that batch is dropped, never sent again, the following
  events still arrive, `pushgate_webhook_events_dropped_total{reason="refused"}` counts its events,
  and no KIND_EVENTS_DROPPED is sent for it.
- `max_pending` with the receiver answering 503 (the first event alone in a batch already sent,
  nine more written after it): once it answers 200, a KIND_EVENTS_DROPPED with `dropped` > 0, the
  newest events only (the oldest missing; the batch already sent may be kept whole, the doc's "a
  batch sent again keeps its id and its events"), the newest one always, and the count of events
  missing both in the KIND_EVENTS_DROPPED events and in
  `pushgate_webhook_events_dropped_total{reason="max_pending"}`: once right after the first trim
  (max_pending 3), once after a 16 s outage that sees several trims (max_pending 2).
- `apps`: nothing about another app's endpoints or Sends, nor the finish of a Publish to another
  app's endpoint; a topic Publish's finish whatever `apps` says. `delivered_sample_every: 2`: about
  half of the successes of a Send and of a Publish.
- A Send's dead token reaches an `events: ["rejected"]` webhook as KIND_REJECTED with the provider's
  reason, status and unregistered time, and no messageId or endpointId.
- Two instances on one PostgreSQL database (skipped without PUSHGATE_TEST_PG_URL): one batch at a
  time whichever instance sends, every batch answered 2xx once, no event under two ids; SIGTERM the
  sending instance after the receiver answered 503: the other sends the pending batch, with its id
  and events, within 2 s (+ the batch's backoff). Which instance sent a request is read from
  /proc (the owner of the connection's local port)."""
import asyncio
import collections
import email.utils
import math
import os
import signal
import ssl
import threading
import time

import grpc
import h2.config
import h2.connection
import h2.events
import h2.exceptions
import pytest

from conftest import PG_URL, Server, app_config, database, start_instances, wait_done, wait_metrics_port  # noqa: F401
from h2_lookalike import H2Lookalike
from pushgate.v1 import push_pb2, push_pb2_grpc, registry_pb2, registry_pb2_grpc
from test_webhooks import (APP, DISABLED, FINISHED, Receiver, Request, apns, arrived,  # noqa: F401
                           assert_repeats_only_within_a_batch, assert_well_formed, expected_keys, gateway_config,
                           hook, key_of, log_tail, make_receiver_certificate, make_topic, metric, publish, token,
                           verify, wait_for, write_secret)

REJECTED, DELIVERED, EVENTS_DROPPED = "KIND_REJECTED", "KIND_DELIVERED", "KIND_EVENTS_DROPPED"
OTHER_APP, OTHER_BUNDLE = "other", "com.example.other"


# --- receivers ----------------------------------------------------------------------------------

class Scripted:
    """What a receiver answers: `respond(request, earlier requests)` -> (status, [(header, value)]) or
    None for the default (test_webhooks' `answer(status, until)`, else 200). Records, per request,
    the client address and (with `identify`) which process sent it."""

    def _setup_script(self, respond, hold, identify):
        self.respond, self.hold, self.identify = respond, hold, identify

    def _record(self, method, path, headers, body, client):
        signature_ok = verify(self.secret, headers.get("pushgate-signature", ""), body)
        sender = self.identify(client) if self.identify else None
        with self.lock:
            request = Request(method, path, headers, body, 0, signature_ok)
            request.client, request.sender, request.end = client, sender, None
            answer = self.respond(request, list(self.requests)) if self.respond and method == "POST" else None
            if answer is None:
                now = time.time()
                status = self.fail_status if self.fail_status is not None and now < self.fail_until else 200
                answer = (status, [])
            if method != "POST":
                answer = (405, [])
            request.status = answer[0]
            self.requests.append(request)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        return request, answer[0], list(answer[1])

    def _answered(self, request):
        with self.lock:
            self.in_flight -= 1
            request.end = time.time()


class ScriptedReceiver(Scripted, Receiver):
    """test_webhooks' HTTPS receiver (HTTP/1.1 over TLS), answering by script; `hold` seconds before
    each answer make overlapping requests visible in `max_in_flight`."""

    def __init__(self, directory, secret, path="/hooks/pushgate", respond=None, hold=0.0, identify=None):
        Receiver.__init__(self, directory, secret, path)
        self._setup_script(respond, hold, identify)

    def _serve(self, handler, body):
        headers = {k.lower(): v for k, v in handler.headers.items()}
        request, status, extra = self._record(handler.command, handler.path, headers, body, handler.client_address)
        try:
            if self.hold:
                time.sleep(self.hold)
            payload = b"" if 200 <= status < 300 else b'{"error": "status %d"}' % status
            handler.send_response(status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(payload)))
            for name, value in extra:
                handler.send_header(name, value)
            handler.end_headers()
            handler.wfile.write(payload)
            handler.wfile.flush()
        finally:
            self._answered(request)


class H2Receiver(Scripted, H2Lookalike):
    """The webhook receiver over HTTP/2: TLS with ALPN `h2` (h2_lookalike's server skeleton), hyper-h2
    for the framing. Same recording, script and inspection methods as the HTTP/1.1 receiver."""

    name = "HTTP/2 webhook receiver"
    snapshot, accepted, accepted_events, settle, url = (Receiver.snapshot, Receiver.accepted,
                                                        Receiver.accepted_events, Receiver.settle, Receiver.url)

    def __init__(self, directory, secret, path="/hooks/pushgate", respond=None, hold=0.0, identify=None):
        cert, key = make_receiver_certificate(directory)
        H2Lookalike.__init__(self, cert, key, max_streams=100)
        self.secret, self.path = secret, path
        self.lock = threading.Lock()
        self.requests, self.handshake_errors, self.protocol_errors, self.alpn = [], [], [], []
        self.in_flight = self.max_in_flight = 0
        self.fail_status, self.fail_until = None, 0.0
        self._setup_script(respond, hold, identify)

    def answer(self, status, until=None):
        Receiver.answer(self, status, until)

    async def _serve(self, reader, writer):
        tls = writer.get_extra_info("ssl_object")
        with self.lock:
            self.alpn.append(tls.selected_alpn_protocol() if tls else None)
        client = writer.get_extra_info("peername")
        conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=False,
                                                                           header_encoding="utf-8"))
        conn.initiate_connection()
        writer.write(conn.data_to_send())
        streams, tasks = {}, set()

        def respond(stream_id, request, status, extra):
            payload = b"" if 200 <= status < 300 else b'{"error": "status %d"}' % status
            try:
                conn.send_headers(stream_id, [(":status", str(status)), ("content-type", "application/json"),
                                              ("content-length", str(len(payload)))] + extra,
                                  end_stream=not payload)
                if payload:
                    conn.send_data(stream_id, payload, end_stream=True)
                writer.write(conn.data_to_send())
            except (h2.exceptions.ProtocolError, h2.exceptions.StreamClosedError, ConnectionError):
                pass
            finally:
                self._answered(request)

        async def respond_later(*args):
            await asyncio.sleep(self.hold)
            respond(*args)

        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                for event in conn.receive_data(data):
                    if isinstance(event, h2.events.RequestReceived):
                        streams[event.stream_id] = (dict(event.headers), bytearray())
                    elif isinstance(event, h2.events.DataReceived):
                        streams[event.stream_id][1].extend(event.data)
                        conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                    elif isinstance(event, h2.events.StreamEnded):
                        headers, body = streams.pop(event.stream_id)
                        request, status, extra = self._record(headers.get(":method"), headers.get(":path"),
                                                              headers, bytes(body), client)
                        request.h2_headers = headers
                        if self.hold:
                            task = asyncio.ensure_future(respond_later(event.stream_id, request, status, extra))
                            tasks.add(task)
                            task.add_done_callback(tasks.discard)
                        else:
                            respond(event.stream_id, request, status, extra)
                    elif isinstance(event, h2.events.StreamReset):
                        streams.pop(event.stream_id, None)
                writer.write(conn.data_to_send())
                await writer.drain()
        except h2.exceptions.ProtocolError as error:
            self.protocol_errors.append(repr(error))
        except (ConnectionError, ssl.SSLError):
            pass
        finally:
            writer.close()


# --- helpers ---------------------------------------------------------------------------------------

def config_with(apns, webhooks, other_app=False, **extra):
    config = gateway_config(apns, webhooks, metrics_listen="127.0.0.1:0", **extra)
    if other_app:
        config["apps"].append(app_config(OTHER_APP, OTHER_BUNDLE, apns))
    return config


def send(channel, app, tokens):
    return push_pb2_grpc.PushStub(channel).Send(push_pb2.SendRequest(notifications=[push_pb2.Notification(
        app=app, tokens=list(tokens), alert=push_pb2.Alert(body="hello"))]), timeout=30)


def dead_token(apns, tag, n):
    t = token(tag, n, True)
    apns.unregistered.add(t)
    return t


def tokens_of(events, kind=None):
    return [e.get("token") for e in events if kind is None or e.get("kind") == kind]


def first_request(receiver, timeout, what, server):
    return wait_for(lambda: (receiver.snapshot() or [None])[0], timeout, what,
                    lambda: "%s\n%s" % (receiver.snapshot(), log_tail(server)))


def wait_metric(port, name, condition, timeout, what, diagnostics=lambda: "", **labels):
    """Polls a metric until `condition(value)`; answers the value (None: absent)."""
    seen = [None]

    def check():
        seen[0] = metric(port, name, **labels)
        return condition(seen[0])
    wait_for(check, timeout, what, lambda: "%s%s = %r\n%s" % (name, labels, seen[0], diagnostics()))
    return seen[0]


def socket_owner(port, pids):
    """Which of `pids` holds the TCP socket whose local port is `port` (a client connection seen
    from the server's side), read from /proc; None if none does (any longer)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as fh:
                next(fh)
                for line in fh:
                    fields = line.split()
                    if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[9] != "0":
                        inodes.add("socket:[%s]" % fields[9])
        except OSError:
            pass
    for pid in pids:
        try:
            for fd in os.listdir("/proc/%d/fd" % pid):
                try:
                    if os.readlink("/proc/%d/fd/%s" % (pid, fd)) in inodes:
                        return pid
                except OSError:
                    pass
        except OSError:
            pass
    return None


def first_answer(status, headers=()):
    """A script: the first POST gets `status` (and `headers`), every later one the default."""
    def respond(request, earlier):
        return None if [r for r in earlier if r.method == "POST"] else (status, list(headers))
    return respond


# --- 1. HTTP/2 -------------------------------------------------------------------------------------

def test_an_http2_receiver_gets_every_batch_signed(tmp_path, apns):
    secret = secrets_hex()
    receiver = H2Receiver(str(tmp_path / "receiver"), secret.encode(), respond=first_answer(503), hold=0.2).start()
    config = config_with(apns, [hook("h2hook", receiver, write_secret(tmp_path / "h2.secret", secret + "\n"),
                                     events=("endpoint_disabled", "message_finished", "rejected"), batch_size=2)])
    server = Server(config, str(tmp_path))
    try:
        with grpc.insecure_channel(server.address) as channel:
            _, dead = make_topic(channel, apns, "wh-h2", 0x7101, live=2, dead=5)
            message_id = publish(channel, topic="wh-h2")
            wait_done(push_pb2_grpc.PushStub(channel), message_id)
            refused_token = dead_token(apns, 0x7102, 0)
            send(channel, APP, [refused_token])
        # "rejected": a provider's refusal from a Send or a Publish; the dead endpoints' too.
        keys = expected_keys(message_id, dead) | {(REJECTED, message_id, e.id) for e in dead} | {(REJECTED, "", "")}
        wait_for(lambda: arrived(receiver, keys), 30, "every event at the HTTP/2 receiver",
                 lambda: "%s\nalpn=%s errors=%s\n%s" % (receiver.snapshot(), receiver.alpn, receiver.protocol_errors,
                                                      log_tail(server)))
        receiver.settle()
    finally:
        server.stop()
        receiver.stop()
    assert server.proc.returncode == 0, log_tail(server)

    assert receiver.alpn and set(receiver.alpn) == {"h2"}, "ALPN chosen on the receiver's connections: %s" % \
        receiver.alpn
    assert not receiver.protocol_errors, receiver.protocol_errors
    assert_well_formed(receiver, batch_size=2)
    requests = receiver.snapshot()
    for r in requests:
        assert r.h2_headers.get(":scheme") == "https", r.h2_headers
        assert r.h2_headers.get(":authority", "").endswith(":%d" % receiver.port) or \
            r.h2_headers.get(":authority") == "127.0.0.1", r.h2_headers
    # The 503 to the first request: the same batch again, same id and events, signed anew.
    assert requests[0].status == 503 and len(requests) >= 2
    assert requests[1].delivery == requests[0].delivery and requests[1].events == requests[0].events, requests[:2]
    assert receiver.max_in_flight == 1, "batches sent concurrently over HTTP/2 (%d at once)" % receiver.max_in_flight
    assert_repeats_only_within_a_batch(requests)
    events = receiver.accepted_events()
    counts = collections.Counter(key_of(e) for e in events)
    assert set(counts) == keys and max(counts.values()) == 1, counts
    rejected = [e for e in events if e["kind"] == REJECTED and "messageId" not in e]
    assert [e.get("token") for e in rejected] == [refused_token], rejected


def secrets_hex():
    return os.urandom(20).hex()


# --- 2. 429 with Retry-After ----------------------------------------------------------------------------

@pytest.mark.parametrize("form", ["seconds", "http_date"])
def test_429_with_retry_after_holds_the_batch_that_long(tmp_path, apns, form):
    secret = secrets_hex()
    asked = {}

    def respond(request, earlier):
        if earlier:
            return None
        if form == "seconds":
            asked["until"] = request.time + 5
            return 429, [("Retry-After", "5")]
        until = math.ceil(time.time()) + 5
        asked["until"] = until
        return 429, [("Retry-After", email.utils.formatdate(until, usegmt=True))]

    receiver = ScriptedReceiver(str(tmp_path / "receiver"), secret.encode(), respond=respond).start()
    config = config_with(apns, [hook("later", receiver, write_secret(tmp_path / "later.secret", secret),
                                     events=("rejected",))])
    server = Server(config, str(tmp_path))
    tag = 0x7201 if form == "seconds" else 0x7202
    try:
        metrics_port = wait_metrics_port(server)
        with grpc.insecure_channel(server.address) as channel:
            first_token = dead_token(apns, tag, 0)
            send(channel, APP, [first_token])
            refused = first_request(receiver, 10, "the first batch", server)
            # An event written while the batch waits: it must not overtake the batch.
            second_token = dead_token(apns, tag, 1)
            send(channel, APP, [second_token])
        wait_for(lambda: set(tokens_of(receiver.accepted_events())) >= {first_token, second_token}, 30,
                 "both events after the Retry-After", lambda: "%s\n%s" % (receiver.snapshot(), log_tail(server)))
        receiver.settle()
        retried = wait_metric(metrics_port, "pushgate_webhook_batches_retried_total", lambda v: v and v >= 1, 10,
                              "the 429 counted as a retry", webhook="later")
    finally:
        server.stop()
        receiver.stop()
    assert server.proc.returncode == 0, log_tail(server)

    assert_well_formed(receiver)
    requests = receiver.snapshot()
    assert refused.status == 429 and tokens_of(refused.events) == [first_token], refused.events
    again = requests[1]
    assert again.time >= asked["until"] - 0.3, \
        "the batch came again %.2f s after the 429 (Retry-After asked until %.2f s after it): %s" % (
            again.time - refused.time, asked["until"] - refused.time, requests)
    assert again.time <= asked["until"] + 5, "the retry came %.1f s after the 429" % (again.time - refused.time)
    assert again.delivery == refused.delivery and again.events == refused.events, (refused.events, again.events)
    assert again.status == 200
    assert [r.delivery for r in requests].count(refused.delivery) == 2, requests
    assert_repeats_only_within_a_batch(requests)
    events = receiver.accepted_events()
    assert tokens_of(events) == [first_token, second_token], "events out of order or repeated: %s" % events
    assert retried >= 1


# --- 3. refusals ------------------------------------------------------------------------------------

@pytest.mark.parametrize("status", [400, 410, 302])
def test_a_refused_batch_is_dropped_counted_and_the_next_events_still_arrive(tmp_path, apns, status):
    secret = secrets_hex()
    receiver = ScriptedReceiver(str(tmp_path / "receiver"), secret.encode())
    receiver.start()
    elsewhere = "https://127.0.0.1:%d/hooks/elsewhere" % receiver.port
    receiver.respond = first_answer(status, [("Location", elsewhere)] if status == 302 else [])
    config = config_with(apns, [hook("picky", receiver, write_secret(tmp_path / "picky.secret", secret),
                                     events=("rejected",))])
    server = Server(config, str(tmp_path))
    tag = 0x7300 + status
    try:
        metrics_port = wait_metrics_port(server)
        with grpc.insecure_channel(server.address) as channel:
            dropped_token = dead_token(apns, tag, 0)
            send(channel, APP, [dropped_token])
            refused = first_request(receiver, 10, "the first batch", server)
            later = [dead_token(apns, tag, n) for n in (1, 2)]
            for t in later:
                send(channel, APP, [t])
        wait_for(lambda: set(tokens_of(receiver.accepted_events())) >= set(later), 20,
                 "the events after the refused batch", lambda: "%s\n%s" % (receiver.snapshot(), log_tail(server)))
        receiver.settle(quiet=2)
        dropped = wait_metric(metrics_port, "pushgate_webhook_events_dropped_total",
                              lambda v: v == len(refused.events), 10, "the refused batch's events counted",
                              webhook="picky", reason="refused")
        sent = metric(metrics_port, "pushgate_webhook_events_sent_total", webhook="picky")
        retried = metric(metrics_port, "pushgate_webhook_batches_retried_total", webhook="picky")
    finally:
        server.stop()
        receiver.stop()
    assert server.proc.returncode == 0, log_tail(server)

    assert_well_formed(receiver)  # every request to the webhook's path: the redirect was not followed
    requests = receiver.snapshot()
    assert refused.status == status and dropped_token in tokens_of(refused.events), refused
    assert [r.delivery for r in requests].count(refused.delivery) == 1, \
        "the batch refused with %d was sent again: %s" % (status, requests)
    resent = [r for r in requests[1:] if set(tokens_of(r.events)) & set(tokens_of(refused.events))]
    assert not resent, "events of the refused batch were sent again: %s" % resent
    events = receiver.accepted_events()
    assert tokens_of(events) == later, "want exactly the later events, in order: %s" % events
    assert EVENTS_DROPPED not in {e["kind"] for e in events}, "a refused batch is only counted and logged: %s" % events
    assert dropped == len(refused.events)
    assert sent == len(later), "events_sent_total %r" % sent
    assert not retried, "a refused batch counted as retried: %r" % retried
    after = "".join(line for line in server.log if "picky" in line and str(status) in line)
    assert after, "no log line names the webhook and the %d answer:\n%s" % (status, log_tail(server))


# --- 4. max_pending -------------------------------------------------------------------------------------

def run_over_max_pending(tmp_path, apns, tag, max_pending, n, outage=None):
    """`n` events (one Send each, so written in order) to a webhook with `max_pending` whose receiver
    answers 503: until the gateway has counted events dropped over max_pending (`outage` None), or
    for `outage` seconds; then 200 until a KIND_EVENTS_DROPPED has arrived and the outbox is empty.
    Answers (tokens in the order written, every request, dropped_total{reason="max_pending"})."""
    secret = secrets_hex()
    receiver = ScriptedReceiver(str(tmp_path / "receiver"), secret.encode()).start()
    receiver.answer(503)
    config = config_with(apns, [hook("bounded", receiver, write_secret(tmp_path / "bounded.secret", secret),
                                     events=("rejected",), max_pending=max_pending,
                                     # max_pending may not be below batch_size (the batch being sent counts).
                                     batch_size=max_pending)])
    server = Server(config, str(tmp_path))
    written = [dead_token(apns, tag, i) for i in range(n)]
    try:
        metrics_port = wait_metrics_port(server)
        with grpc.insecure_channel(server.address) as channel:
            # The first event alone in the first batch (refused, sent again: kept whole, as the doc
            # says a batch sent again is); the others written after it, one Send each, in order.
            send(channel, APP, written[:1])
            start = first_request(receiver, 10, "a first (refused) batch", server).time
            for t in written[1:]:
                send(channel, APP, [t])
        # Trimming to max_pending happens on the gateway's own time: wait for it to be counted.
        wait_metric(metrics_port, "pushgate_webhook_events_dropped_total", lambda v: v and v > 0, 20,
                    "events dropped over max_pending", lambda: "%s\n%s" % (receiver.snapshot(), log_tail(server)),
                    webhook="bounded", reason="max_pending")
        if outage is not None:
            # The receiver stays down this long (the scenario, not a wait for a result).
            wait_for(lambda: time.time() >= start + outage or not server.alive(), outage + 1, "the outage")
        receiver.answer(200)
        wait_for(lambda: EVENTS_DROPPED in {e["kind"] for e in receiver.accepted_events()}
                 and metric(metrics_port, "pushgate_webhook_events_pending", webhook="bounded") == 0, 45,
                 "a KIND_EVENTS_DROPPED and an empty outbox once the receiver answers 200",
                 lambda: "%s\n%s" % (receiver.snapshot(), log_tail(server)))
        receiver.settle()
        counted = metric(metrics_port, "pushgate_webhook_events_dropped_total", webhook="bounded",
                         reason="max_pending")
    finally:
        server.stop()
        receiver.stop()
    assert server.proc.returncode == 0, log_tail(server)
    assert_well_formed(receiver)
    return written, receiver.snapshot(), counted


def check_over_max_pending(written, requests, counted, max_pending):
    events = [e for r in requests if 200 <= r.status < 300 for e in r.events]  # no id was 2xx'd twice here
    got = tokens_of(events, REJECTED)
    notices = [e for e in events if e["kind"] == EVENTS_DROPPED]
    reported = sum(int(e.get("dropped", "0")) for e in notices)
    missing = [t for t in written if t not in got]
    exchange = "the exchange (events by the index of the Send that made them, or dropped=N):\n" + "\n".join(
        "  +%.2f s %d %s %s" % (r.time - requests[0].time, r.status, r.delivery,
                                [written.index(e["token"]) if e.get("token") in written
                                 else "dropped=%s" % e.get("dropped") for e in r.events or []]) for r in requests)
    exchange += "\n  pushgate_webhook_events_dropped_total{reason=max_pending} = %r" % counted
    assert notices and all(int(e.get("dropped", "0")) > 0 for e in notices), "%s\n%s" % (notices, exchange)
    assert got and got[-1] == written[-1], \
        "the newest event never arrived (max_pending %d keeps the newest)\n%s" % (max_pending, exchange)
    # The oldest are dropped; the batch already sent (the first event alone) may be kept whole, since
    # "a batch sent again keeps its id and its events": either reading is accepted here.
    first_kept = got[0] == written[0] and tokens_of(requests[0].events) == written[:1]
    rest, candidates = (got[1:], written[1:]) if first_kept else (got, written)
    assert rest == candidates[len(candidates) - len(rest):], \
        "not the newest events, in order (the oldest should be the ones dropped):\n%s" % exchange
    assert len(rest) <= max_pending, "%d events delivered with max_pending %d\n%s" % (len(got), max_pending, exchange)
    assert reported == len(missing), "KIND_EVENTS_DROPPED says %d were dropped, %d events are missing\n%s" % (
        reported, len(missing), exchange)
    assert counted == len(missing), "dropped_total{reason=max_pending} %r, %d events missing\n%s" % (
        counted, len(missing), exchange)
    # "A batch sent again (after a 5xx, a timeout, a restart) keeps its id and its events".
    try:
        assert_repeats_only_within_a_batch(requests)
    except AssertionError as error:
        raise AssertionError("%s\n%s" % (str(error).splitlines()[0], exchange))


def test_max_pending_drops_the_oldest_and_says_so(tmp_path, apns):
    written, requests, counted = run_over_max_pending(tmp_path, apns, 0x7401, max_pending=3, n=10)
    check_over_max_pending(written, requests, counted, max_pending=3)


def test_a_long_outage_over_max_pending_still_keeps_the_newest_events(tmp_path, apns):
    """Down for 16 s, long enough for the outbox to be trimmed several times (every 5 s, also while
    the sender backs off): what is kept is still the newest events, and every event missing is
    reported (takes about 30 s)."""
    written, requests, counted = run_over_max_pending(tmp_path, apns, 0x7402, max_pending=2, n=10, outage=16)
    check_over_max_pending(written, requests, counted, max_pending=2)


# --- 5. apps and sampling ----------------------------------------------------------------------------------

def endpoints(channel, apns, app, tag, live, dead, topic=None):
    registry = registry_pb2_grpc.RegistryStub(channel)
    made = {False: [], True: []}
    for is_dead, count in ((False, live), (True, dead)):
        for n in range(count):
            t = dead_token(apns, tag, n) if is_dead else token(tag, n, False)
            endpoint = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app=app, token=t), timeout=10)
            if topic:
                registry.Subscribe(registry_pb2.SubscribeRequest(topic=topic, endpoint_id=endpoint.id), timeout=10)
            made[is_dead].append(endpoint)
    return made[False], made[True]


def test_apps_keeps_other_apps_events_out(tmp_path, apns):
    secret = secrets_hex()
    receiver = ScriptedReceiver(str(tmp_path / "receiver"), secret.encode()).start()
    config = config_with(apns, [hook("mine", receiver, write_secret(tmp_path / "mine.secret", secret),
                                     events=("endpoint_disabled", "message_finished", "rejected", "failed",
                                             "delivered"), apps=[APP])], other_app=True)
    server = Server(config, str(tmp_path))
    try:
        with grpc.insecure_channel(server.address) as channel:
            push = push_pb2_grpc.PushStub(channel)
            registry_pb2_grpc.RegistryStub(channel).CreateTopic(registry_pb2.CreateTopicRequest(name="mixed"),
                                                                timeout=10)
            mine_live, mine_dead = endpoints(channel, apns, APP, 0x7501, 2, 2, topic="mixed")
            other_live, other_dead = endpoints(channel, apns, OTHER_APP, 0x7502, 2, 2, topic="mixed")
            topic_message = publish(channel, topic="mixed")
            wait_done(push, topic_message)
            # A Publish to another app's endpoint: nothing of it, its finish included.
            other_message = publish(channel, endpoint_id=other_live[0].id)
            wait_done(push, other_message)
            other_dead_token = dead_token(apns, 0x7503, 0)
            send(channel, OTHER_APP, [token(0x7503, 1, False), other_dead_token])
            # Last: this app's Send, whose rejection is written after everything above.
            mine_send = [token(0x7504, 0, False), dead_token(apns, 0x7504, 1)]
            send(channel, APP, mine_send)
        wait_for(lambda: mine_send[1] in tokens_of(receiver.accepted_events(), REJECTED), 20,
                 "this app's Send rejection (written last)", lambda: "%s\n%s" % (receiver.snapshot(), log_tail(server)))
        receiver.settle()
    finally:
        server.stop()
        receiver.stop()
    assert server.proc.returncode == 0, log_tail(server)

    assert_well_formed(receiver)
    assert_repeats_only_within_a_batch(receiver.snapshot())
    events = receiver.accepted_events()
    foreign = [e for e in events if e.get("app") == OTHER_APP
               or e.get("endpointId") in {x.id for x in other_live + other_dead}
               or e.get("messageId") == other_message
               or e.get("token") in {x.token for x in other_live + other_dead} | {other_dead_token}]
    assert not foreign, "events about app %r reached a webhook with apps [%r]:\n%s" % (OTHER_APP, APP, foreign)
    have = collections.Counter((e["kind"], e.get("messageId", ""), e.get("endpointId", ""), e.get("token", ""))
                               for e in events)
    want = collections.Counter(
        [(DISABLED, topic_message, x.id, x.token) for x in mine_dead]
        # "rejected: a provider refused a notification for good (from a Send or a Publish)"
        + [(REJECTED, topic_message, x.id, x.token) for x in mine_dead]
        + [(DELIVERED, topic_message, x.id, x.token) for x in mine_live]
        + [(FINISHED, topic_message, "", "")]  # a topic Publish's finish, whatever `apps` says
        + [(DELIVERED, "", "", mine_send[0]), (REJECTED, "", "", mine_send[1])])
    assert have == want, "unexpected %s, missing %s" % (have - want, want - have)
    assert all(e.get("app") == APP for e in events if e["kind"] != FINISHED), events


def test_delivered_sample_every_2_sends_about_half_of_the_successes(tmp_path, apns):
    secret = secrets_hex()
    sampled = ScriptedReceiver(str(tmp_path / "sampled"), secret.encode(), path="/hooks/sampled").start()
    every = ScriptedReceiver(str(tmp_path / "every"), secret.encode(), path="/hooks/every").start()
    secret_file = write_secret(tmp_path / "hooks.secret", secret)
    config = config_with(apns, [hook("sampled", sampled, secret_file, events=("delivered",), delivered_sample_every=2),
                                hook("every", every, secret_file, events=("delivered",))])
    server = Server(config, str(tmp_path))
    n = 20
    sent_tokens = [token(0x7601, i, False) for i in range(n)]
    try:
        with grpc.insecure_channel(server.address) as channel:
            answer = send(channel, APP, sent_tokens + [dead_token(apns, 0x7601, 99)])
            assert [r.status for r in answer.results].count(push_pb2.STATUS_DELIVERED) == n
            wait_for(lambda: len(every.accepted_events()) >= n, 20, "every success at the unsampled webhook",
                     lambda: "%s\n%s" % (every.snapshot(), log_tail(server)))
            registry_pb2_grpc.RegistryStub(channel).CreateTopic(registry_pb2.CreateTopicRequest(name="sampled"),
                                                                timeout=10)
            live, _ = endpoints(channel, apns, APP, 0x7602, n, 0, topic="sampled")
            message_id = publish(channel, topic="sampled")
            assert wait_done(push_pb2_grpc.PushStub(channel), message_id).delivered == n
            wait_for(lambda: len(every.accepted_events()) >= 2 * n, 20,
                     "every Publish success at the unsampled webhook",
                     lambda: "%s\n%s" % (every.snapshot(), log_tail(server)))
        sampled.settle()
        every.settle()
    finally:
        server.stop()
        sampled.stop()
        every.stop()
    assert server.proc.returncode == 0, log_tail(server)

    for receiver in (sampled, every):
        assert_well_formed(receiver)
        assert_repeats_only_within_a_batch(receiver.snapshot())
    all_events = every.accepted_events()
    assert {e["kind"] for e in all_events} == {DELIVERED} and len(all_events) == 2 * n, all_events
    events = sampled.accepted_events()
    assert {e["kind"] for e in events} == {DELIVERED}, "kinds not asked for: %s" % {e["kind"] for e in events}
    from_send = [e for e in events if "messageId" not in e]
    from_publish = [e for e in events if "messageId" in e]
    assert all("endpointId" not in e for e in from_send), from_send
    live_ids = {x.id for x in live}
    assert all(e.get("messageId") == message_id and e.get("endpointId") in live_ids for e in from_publish), from_publish
    assert len(set(tokens_of(from_send))) == len(from_send) and set(tokens_of(from_send)) <= set(sent_tokens)
    assert len({e["endpointId"] for e in from_publish}) == len(from_publish)
    print("delivered_sample_every 2: %d of a Send's %d successes, %d of a Publish's %d" % (
        len(from_send), n, len(from_publish), n))
    assert n // 2 - 1 <= len(from_send) <= n // 2 + 1, \
        "delivered_sample_every 2: %d of a Send's %d successes sent" % (len(from_send), n)
    assert n // 2 - 1 <= len(from_publish) <= n // 2 + 1, \
        "delivered_sample_every 2: %d of a Publish's %d successes sent" % (len(from_publish), n)


# --- 7. Send events ------------------------------------------------------------------------------------------

def test_a_send_rejection_arrives_as_kind_rejected_without_message_id(tmp_path, apns):
    secret = secrets_hex()
    receiver = ScriptedReceiver(str(tmp_path / "receiver"), secret.encode()).start()
    config = config_with(apns, [hook("sends", receiver, write_secret(tmp_path / "sends.secret", secret),
                                     events=("rejected",))])
    server = Server(config, str(tmp_path))
    try:
        with grpc.insecure_channel(server.address) as channel:
            live, dead = token(0x7701, 0, False), dead_token(apns, 0x7701, 1)
            answer = send(channel, APP, [live, dead])
            answered = time.time()
        wait_for(lambda: receiver.accepted_events(), 10, "the Send's rejection",
                 lambda: "%s\n%s" % (receiver.snapshot(), log_tail(server)))
        receiver.settle()
    finally:
        server.stop()
        receiver.stop()
    assert server.proc.returncode == 0, log_tail(server)

    assert_well_formed(receiver)
    result = {r.token: r for r in answer.results}[dead]
    assert result.status == push_pb2.STATUS_REJECTED and result.http_status == 410, result
    events = receiver.accepted_events()
    assert len(events) == 1, "want one KIND_REJECTED (the live token's success was not asked for): %s" % events
    event = events[0]
    assert event["kind"] == REJECTED, event
    assert "messageId" not in event and "endpointId" not in event, "a Send's event carries neither: %s" % event
    assert (event.get("app"), event.get("token"), event.get("reason"), event.get("httpStatus")) == \
        (APP, dead, "Unregistered", 410), event
    assert event.get("unregisteredAt") == str(result.unregistered_at) == "1700000000000", event
    assert abs(int(event["time"]) / 1000 - answered) < 10, event
    assert receiver.snapshot()[0].time - answered < 5, "the event came %.1f s after the Send's answer" % (
        receiver.snapshot()[0].time - answered)


# --- 6. several instances on PostgreSQL ----------------------------------------------------------------

@pytest.mark.skipif(not PG_URL, reason="PUSHGATE_TEST_PG_URL is not set: no PostgreSQL server for the multi-"
                                       "instance tests (`make interop` starts one with scripts/pg-test-server.sh)")
def test_two_instances_on_postgresql_send_each_batch_once_and_take_over(tmp_path, apns, database):
    secret = secrets_hex()
    pids = []
    receiver = ScriptedReceiver(str(tmp_path / "receiver"), secret.encode(), hold=0.3,
                                identify=lambda client: socket_owner(client[1], pids)).start()
    config = config_with(apns, [hook("shared", receiver, write_secret(tmp_path / "shared.secret", secret),
                                     batch_size=2)])
    a, b = start_instances(tmp_path, database, [config, config])
    pids += [a.proc.pid, b.proc.pid]
    by_pid = {a.proc.pid: a, b.proc.pid: b}
    logs = lambda: "%s\n--- a\n%s\n--- b\n%s" % (receiver.snapshot(), log_tail(a), log_tail(b))  # noqa: E731
    try:
        # 1. Both instances running: every event, each batch answered 2xx once, one batch at a time.
        with grpc.insecure_channel(a.address) as channel:
            _, dead = make_topic(channel, apns, "wh-pg", 0x7801, live=2, dead=5)
            first_message = publish(channel, topic="wh-pg")
            wait_done(push_pb2_grpc.PushStub(channel), first_message)
        first_keys = expected_keys(first_message, dead)
        wait_for(lambda: arrived(receiver, first_keys), 30, "every event of the first Publish", logs)
        receiver.settle(quiet=2)
        phase1 = receiver.snapshot()
        assert receiver.max_in_flight == 1, "two batches in flight at once (%d): %s" % (receiver.max_in_flight,
                                                                                      phase1)
        assert_repeats_only_within_a_batch(phase1)
        ok = collections.Counter(r.delivery for r in phase1 if 200 <= r.status < 300)
        assert set(ok.values()) == {1}, "a batch answered 2xx more than once: %s" % ok
        assert len(phase1) == len(ok), "requests beyond one per batch with nothing refused: %s" % phase1
        counts = collections.Counter(key_of(e) for e in receiver.accepted_events())
        assert set(counts) == first_keys and max(counts.values()) == 1, counts

        # 2. The receiver down; the sending instance stopped (SIGTERM); the other sends the batch.
        receiver.answer(503)
        with grpc.insecure_channel(b.address) as channel:
            _, dead2 = make_topic(channel, apns, "wh-pg-2", 0x7802, live=1, dead=4)
            second_message = publish(channel, topic="wh-pg-2")
            wait_done(push_pb2_grpc.PushStub(channel), second_message)
        second_keys = expected_keys(second_message, dead2)
        pending = wait_for(lambda: [r for r in receiver.snapshot()[len(phase1):] if r.status == 503], 20,
                           "a refused batch of the second Publish", logs)[0]
        wait_for(lambda: pending.end is not None, 5, "the 503 answered")  # stopped after the answer, not in it
        sender = by_pid.get(pending.sender)
        assert sender is not None, "could not tell which instance sent %s (client %s)" % (pending, pending.client)
        survivor = b if sender is a else a
        sender.proc.send_signal(signal.SIGTERM)
        sender.proc.wait(timeout=15)
        stopped = time.time()
        assert sender.proc.returncode == 0, log_tail(sender)
        receiver.answer(200)
        wait_for(lambda: arrived(receiver, second_keys), 50, "the second Publish's events through the other instance",
                 logs)
        receiver.settle(quiet=2)
    finally:
        for s in (a, b):
            s.stop()
        receiver.stop()

    requests = receiver.snapshot()
    assert_well_formed(receiver, batch_size=2)
    assert_repeats_only_within_a_batch(requests)
    assert receiver.max_in_flight == 1, "two batches in flight at once (%d)" % receiver.max_in_flight
    after = [r for r in requests if r.time > stopped]
    assert after, requests
    assert after[0].delivery == pending.delivery and after[0].events == pending.events, \
        "the batch pending at the stop (%s) was not the first sent by the other instance: %s" % (pending, after)
    # "Another instance takes over within 2 seconds when the holder stops" (then the batch's backoff,
    # at most 1 s after one failure).
    assert after[0].time - stopped <= 4, "the other instance sent the batch %.1f s after the stop" % (
        after[0].time - stopped)
    assert all(r.sender in (survivor.proc.pid, None) for r in after), [(r, r.sender) for r in after]
    assert any(r.sender == survivor.proc.pid for r in after), [(r, r.sender) for r in after]
    ok = collections.Counter(r.delivery for r in requests if 200 <= r.status < 300)
    assert set(ok.values()) == {1}, "a batch answered 2xx more than once: %s" % ok
    assert pending.delivery in ok
    counts = collections.Counter(key_of(e) for e in receiver.accepted_events())
    assert set(counts) == first_keys | second_keys and max(counts.values()) == 1, counts
    print("takeover: batch %s refused by pid %d, stopped; pid %d sent it %.1f s after the stop; senders before: %s" % (
        pending.delivery, sender.proc.pid, survivor.proc.pid, after[0].time - stopped,
        collections.Counter(r.sender for r in requests if r.time < stopped)))
