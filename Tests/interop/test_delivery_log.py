"""The delivery log and `Push.ListDeliveries` (docs/webhooks.md, "The delivery log"), checked against
the real gateway on loopback with the independent APNs look-alike (Python ssl + h2), which answers
410 Unregistered for the tokens a test marks dead, and an app whose provider URL is a port that
refuses connections (a socket bound and never listening), with `fanout.max_hold_seconds: 0` so its
recipients are FAILED at once rather than held.

Verified here (the contract is docs/webhooks.md, docs/api.md, docs/configuration.md and proto/ only):
- A topic Publish to live, dead (410) and unreachable recipients: `ListDeliveries(message_id)` lists
  exactly the rejected ones (endpoint id, token, app, STATUS_REJECTED, "Unregistered", 410,
  attempts >= 1, time inside the test's window) and the failed ones (STATUS_FAILED,
  "ProviderUnreachable…", no HTTP status), newest first, and no delivered one (the default
  success_sample_percent is 0). The rows are there as soon as GetMessage says COMPLETED (they are
  written in the fan-out's own transaction).
- One endpoint published to in several messages (directly, via a topic, directly again; re-enabled
  between them): `ListDeliveries(endpoint_id)` is its history across messages, newest first.
- Paging: page_size 2 gives every row exactly once, in the order of the whole listing, and an empty
  next_page_token on the last page; page_size 0 answers 100 rows and 5000 answers 1000 (over 1001
  logged rows); a negative page_size, a garbage page_token and ListMessages' page_token are
  INVALID_ARGUMENT.
- The `status` filter keeps only that outcome.
- `delivery_log.success_sample_percent: 100` lists the delivered recipients too, with the provider's
  id (the apns-id); Sends are not logged; `delivery_log.enabled: false` lists nothing.
- API keys: an admin key lists everything; a key limited to an app lists a message it could have
  published (a Publish to an endpoint of its app, a user publish that reached only its app) and the
  history of an endpoint of its app, and gets PERMISSION_DENIED for a topic's message, another app's
  message or endpoint, a user publish that reached another app, and a listing with neither
  message_id nor endpoint_id; an unknown message_id is NOT_FOUND; no key is UNAUTHENTICATED.
- The same RPC over Connect with curl (HTTP/1.1, JSON): lowerCamelCase field names, enums by name,
  int64 `time` as a string, errors as Connect's JSON with their HTTP status.

Nothing here reads Pushgate's sources."""
import hashlib
import json
import re
import secrets
import socket
import subprocess
import time

import grpc
import pytest

from conftest import Server, app_config, start_apns_lookalike
from pushgate.v1 import push_pb2, push_pb2_grpc, registry_pb2, registry_pb2_grpc

ADMIN = "pgk_dlog-admin-" + "a" * 32
LIVE_KEY = "pgk_dlog-live-" + "l" * 32      # apps ["live"]
OTHER_KEY = "pgk_dlog-other-" + "o" * 32    # apps ["other"]
REJECTED, FAILED, DELIVERED = push_pb2.STATUS_REJECTED, push_pb2.STATUS_FAILED, push_pb2.STATUS_DELIVERED
TERMINAL = (push_pb2.MESSAGE_STATE_COMPLETED, push_pb2.MESSAGE_STATE_EXPIRED, push_pb2.MESSAGE_STATE_CANCELLED)
UUID_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def now_ms():
    return int(time.time() * 1000)


def new_token():
    return secrets.token_hex(32)  # 64 lowercase hex digits: a well-formed APNs token


def key_entry(name, key, apps, admin=False):
    return {"name": name, "key_sha256": hashlib.sha256(key.encode()).hexdigest(), "apps": apps, "admin": admin}


KEYS = [key_entry("ops", ADMIN, ["*"], admin=True), key_entry("live-sender", LIVE_KEY, ["live"]),
        key_entry("other-sender", OTHER_KEY, ["other"])]


class _Key(grpc.UnaryUnaryClientInterceptor):
    """Adds `authorization: Bearer <key>` to every unary call."""

    def __init__(self, key):
        self.metadata = [("authorization", "Bearer " + key)]

    def intercept_unary_unary(self, continuation, details, request):
        return continuation(details._replace(metadata=list(details.metadata or ()) + self.metadata), request)


class Client:
    def __init__(self, gateway, key=None):
        self.channel = grpc.insecure_channel(gateway.address)
        channel = self.channel if key is None else grpc.intercept_channel(self.channel, _Key(key))
        self.push = push_pb2_grpc.PushStub(channel)
        self.registry = registry_pb2_grpc.RegistryStub(channel)

    def list(self, **fields):
        return self.push.ListDeliveries(push_pb2.ListDeliveriesRequest(**fields), timeout=10)

    def list_all(self, page_size=1000, **fields):
        """Every row of a listing, paging with `page_size`; answers (rows, pages)."""
        rows, pages, token = [], [], ""
        for _ in range(10000):
            page = self.list(page_size=page_size, page_token=token, **fields)
            pages.append(page)
            rows += list(page.deliveries)
            token = page.next_page_token
            if not token:
                return rows, pages
        raise AssertionError("no last page after 10000 pages")

    def error(self, **fields):
        with pytest.raises(grpc.RpcError) as info:
            self.list(**fields)
        return info.value.code(), info.value.details()

    def close(self):
        self.channel.close()


# --- gateways ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def apns(tmp_path_factory):
    """This module's own APNs look-alike; tests add their dead tokens to `apns.unregistered` (410)."""
    server = start_apns_lookalike(str(tmp_path_factory.mktemp("dlog-apns")), unregistered=set())
    yield server
    server.stop()


@pytest.fixture(scope="module")
def closed_port():
    """A loopback port bound by this process and never listened on: connecting to it is refused for as
    long as the module runs (no other process can take it meanwhile)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    yield sock.getsockname()[1]
    sock.close()


def apps(apns, closed_port=None):
    result = [app_config("live", "com.example.live", apns), app_config("other", "com.example.other", apns)]
    if closed_port is not None:
        result.append(app_config("down", "com.example.down", apns, url="https://127.0.0.1:%d" % closed_port,
                                 connect_timeout_seconds=1))
    return result


def start_gateway(directory, config):
    return Server(config, str(directory))


def stop_gateway(gateway):
    gateway.stop()
    assert gateway.proc.returncode == 0, "pushgate exited with %s:\n%s" % (gateway.proc.returncode,
                                                                           "".join(gateway.log))


@pytest.fixture(scope="module")
def gateway(tmp_path_factory, apns, closed_port):
    """Default delivery log (success_sample_percent 0), api_keys, recipients never held."""
    s = start_gateway(tmp_path_factory.mktemp("dlog"), {"apps": apps(apns, closed_port), "api_keys": KEYS,
                                                         "fanout": {"max_hold_seconds": 0}})
    yield s
    stop_gateway(s)


@pytest.fixture(scope="module")
def admin(gateway):
    c = Client(gateway, ADMIN)
    yield c
    c.close()


@pytest.fixture(scope="module")
def sampled(tmp_path_factory, apns):
    """A gateway logging every success too."""
    s = start_gateway(tmp_path_factory.mktemp("dlog-sampled"),
                      {"apps": apps(apns), "api_keys": KEYS, "delivery_log": {"success_sample_percent": 100}})
    yield s
    stop_gateway(s)


# --- helpers -------------------------------------------------------------------------------------

def wait_terminal(push, message_id, timeout=30):
    """Polls GetMessage until the message is COMPLETED, EXPIRED or CANCELLED; answers it."""
    deadline = time.time() + timeout
    while True:
        message = push.GetMessage(push_pb2.GetMessageRequest(message_id=message_id), timeout=10)
        if message.state in TERMINAL:
            return message
        if time.time() > deadline:
            raise AssertionError("message %s not done after %d s: %s" % (message_id, timeout, message))
        time.sleep(0.05)


def endpoint(client, apns, app, dead=False, **fields):
    token = new_token()
    if dead:
        apns.unregistered.add(token)
    return client.registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app=app, token=token, **fields),
                                          timeout=10)


def topic_with(client, apns, name, groups):
    """A topic subscribed by new endpoints: `groups` is [(app, count, dead)]; answers the endpoints of
    each group, in order."""
    client.registry.CreateTopic(registry_pb2.CreateTopicRequest(name=name), timeout=10)
    made = []
    for app, count, dead in groups:
        group = [endpoint(client, apns, app, dead) for _ in range(count)]
        for e in group:
            client.registry.Subscribe(registry_pb2.SubscribeRequest(topic=name, endpoint_id=e.id), timeout=10)
        made.append(group)
    return made


def publish(client, **target):
    """Publishes, waits for the message to finish; answers (message id, final Message)."""
    message_id = client.push.Publish(push_pb2.PublishRequest(message="hello", **target), timeout=10).message_id
    return message_id, wait_terminal(client.push, message_id)


def reenable(client, endpoint_id):
    client.registry.UpdateEndpoint(registry_pb2.UpdateEndpointRequest(id=endpoint_id, enabled=True), timeout=10)


def show(rows):
    return "\n".join("%s %s %s %s %s %r http=%d attempts=%d id=%r t=%d" % (
        r.message_id, r.endpoint_id, r.app, r.token[:8], push_pb2.Status.Name(r.status), r.reason, r.http_status,
        r.attempts, r.id, r.time) for r in rows)


def assert_newest_first(rows):
    times = [r.time for r in rows]
    assert times == sorted(times, reverse=True), "not newest first:\n" + show(rows)


@pytest.fixture(scope="module")
def mixed(admin, apns):
    """A topic Publish to 3 live, 2 dead (410) and 2 unreachable recipients, finished. Answers a dict
    with the message id, the final Message, the endpoint groups and the time window (ms)."""
    live, dead, down = topic_with(admin, apns, "dlog-mixed", [("live", 3, False), ("live", 2, True),
                                                              ("down", 2, False)])
    start = now_ms()
    message_id, message = publish(admin, topic="dlog-mixed")
    end = now_ms()
    return {"id": message_id, "message": message, "live": live, "dead": dead, "down": down, "window": (start, end)}


# --- 1. one message's recipients --------------------------------------------------------------------

def test_a_message_lists_its_rejected_and_failed_recipients_and_no_delivered_one(admin, mixed):
    message = mixed["message"]
    assert message.state == push_pb2.MESSAGE_STATE_COMPLETED, message
    assert (message.total, message.delivered, message.rejected, message.failed) == (7, 3, 2, 2), message
    # No polling: the rows are written in the fan-out's own transaction, so they are there once it is done.
    page = admin.list(message_id=mixed["id"])
    rows = list(page.deliveries)
    assert page.next_page_token == "", page
    start, end = mixed["window"]

    rejected = [r for r in rows if r.status == REJECTED]
    failed = [r for r in rows if r.status == FAILED]
    assert len(rows) == 4 and len(rejected) == 2 and len(failed) == 2, "rows:\n" + show(rows)
    assert {(r.endpoint_id, r.token, r.app) for r in rejected} == {(e.id, e.token, "live") for e in mixed["dead"]}
    assert {(r.endpoint_id, r.token, r.app) for r in failed} == {(e.id, e.token, "down") for e in mixed["down"]}
    live_ids = {e.id for e in mixed["live"]}
    assert not [r for r in rows if r.endpoint_id in live_ids or r.status == DELIVERED], show(rows)
    for r in rows:
        assert r.message_id == mixed["id"], show([r])
        assert start - 1000 <= r.time <= end + 1000, "time %d outside [%d, %d]" % (r.time, start, end)
    for r in rejected:
        assert (r.reason, r.http_status) == ("Unregistered", 410), show([r])
        assert r.attempts >= 1, show([r])
        assert r.id == "" or UUID_RE.match(r.id), show([r])  # the provider's id, when there is one
    for r in failed:
        assert r.reason.startswith("ProviderUnreachable"), show([r])
        assert r.http_status == 0, show([r])  # no HTTP status was received from a refused connection
        assert r.attempts >= 0
    assert_newest_first(rows)


# --- 2. one endpoint's history ----------------------------------------------------------------------

def test_an_endpoint_lists_its_history_across_messages_newest_first(admin, apns):
    target = endpoint(admin, apns, "live", dead=True)
    bystander = endpoint(admin, apns, "live", dead=True)
    admin.registry.CreateTopic(registry_pb2.CreateTopicRequest(name="dlog-history"), timeout=10)
    for e in (target, bystander):
        admin.registry.Subscribe(registry_pb2.SubscribeRequest(topic="dlog-history", endpoint_id=e.id), timeout=10)
    start = now_ms()
    first, m = publish(admin, endpoint_id=target.id)
    assert m.rejected == 1, m
    reenable(admin, target.id)
    second, m = publish(admin, topic="dlog-history")
    assert m.rejected == 2, m
    reenable(admin, target.id)
    third, m = publish(admin, endpoint_id=target.id)
    assert m.rejected == 1, m
    end = now_ms()

    rows = list(admin.list(endpoint_id=target.id).deliveries)
    assert [r.message_id for r in rows] == [third, second, first], "rows:\n" + show(rows)
    for r in rows:
        assert (r.endpoint_id, r.token, r.app, r.status, r.reason, r.http_status) == \
            (target.id, target.token, "live", REJECTED, "Unregistered", 410), show([r])
        assert start - 1000 <= r.time <= end + 1000
    assert_newest_first(rows)
    # The bystander's row of the topic message is its own, not the target's.
    assert [r.message_id for r in admin.list(endpoint_id=bystander.id).deliveries] == [second]


# --- 3. paging ------------------------------------------------------------------------------------

def test_paging_gives_every_row_once_in_order(admin, apns):
    topic_with(admin, apns, "dlog-paging", [("live", 5, True), ("live", 2, False)])
    message_id, m = publish(admin, topic="dlog-paging")
    assert (m.rejected, m.delivered) == (5, 2), m

    whole = admin.list(message_id=message_id, page_size=100)
    assert len(whole.deliveries) == 5 and whole.next_page_token == "", show(whole.deliveries)
    rows, pages = admin.list_all(page_size=2, message_id=message_id)
    assert [len(p.deliveries) for p in pages] == [2, 2, 1], [len(p.deliveries) for p in pages]
    assert all(p.next_page_token for p in pages[:-1]) and pages[-1].next_page_token == ""
    assert [(r.endpoint_id, r.time) for r in rows] == [(r.endpoint_id, r.time) for r in whole.deliveries]
    assert len({r.endpoint_id for r in rows}) == 5

    # Larger than 1000 is clamped, not refused.
    assert len(admin.list(message_id=message_id, page_size=5000).deliveries) == 5
    # Page sizes below zero and page tokens that are not this listing's are refused.
    code, details = admin.error(message_id=message_id, page_size=-1)
    assert code == grpc.StatusCode.INVALID_ARGUMENT, details
    code, details = admin.error(message_id=message_id, page_token="garbage")
    assert code == grpc.StatusCode.INVALID_ARGUMENT, details
    messages = admin.push.ListMessages(push_pb2.ListMessagesRequest(page_size=1), timeout=10)
    assert messages.next_page_token, "need a ListMessages page token"
    code, details = admin.error(message_id=message_id, page_token=messages.next_page_token)
    assert code == grpc.StatusCode.INVALID_ARGUMENT, (messages.next_page_token, details)


def test_page_size_defaults_to_100_and_is_clamped_at_1000(sampled, apns):
    """1001 logged recipients (every success sampled): page_size 0 answers 100 rows, 5000 answers 1000
    and a token for the one left."""
    client = Client(sampled, ADMIN)
    try:
        client.registry.CreateTopic(registry_pb2.CreateTopicRequest(name="dlog-clamp"), timeout=10)
        made = [client.registry.CreateEndpoint.future(registry_pb2.CreateEndpointRequest(app="live", token=new_token()),
                                                      timeout=30) for _ in range(1001)]
        ids = [f.result().id for f in made]
        for f in [client.registry.Subscribe.future(registry_pb2.SubscribeRequest(topic="dlog-clamp", endpoint_id=i),
                                                   timeout=30) for i in ids]:
            f.result()
        message_id, m = publish(client, topic="dlog-clamp")
        assert m.delivered == 1001, m

        default = client.list(message_id=message_id)
        assert len(default.deliveries) == 100 and default.next_page_token
        big = client.list(message_id=message_id, page_size=5000)
        assert len(big.deliveries) == 1000 and big.next_page_token
        rest = client.list(message_id=message_id, page_size=5000, page_token=big.next_page_token)
        assert len(rest.deliveries) == 1 and rest.next_page_token == ""
        assert {r.endpoint_id for r in list(big.deliveries) + list(rest.deliveries)} == set(ids)
        assert [r.endpoint_id for r in default.deliveries] == [r.endpoint_id for r in big.deliveries[:100]]
    finally:
        client.close()


# --- 4. the status filter ---------------------------------------------------------------------------

def test_the_status_filter_keeps_one_outcome(admin, mixed, sampled, apns):
    rejected = list(admin.list(message_id=mixed["id"], status=REJECTED).deliveries)
    assert {r.endpoint_id for r in rejected} == {e.id for e in mixed["dead"]} and \
        all(r.status == REJECTED for r in rejected), show(rejected)
    failed = list(admin.list(message_id=mixed["id"], status=FAILED).deliveries)
    assert {r.endpoint_id for r in failed} == {e.id for e in mixed["down"]} and \
        all(r.status == FAILED for r in failed), show(failed)
    assert list(admin.list(message_id=mixed["id"], status=DELIVERED).deliveries) == []

    # Where successes are logged, DELIVERED and REJECTED split the message's rows.
    client = Client(sampled, ADMIN)
    try:
        live, dead = topic_with(client, apns, "dlog-status", [("live", 3, False), ("live", 2, True)])
        message_id, _ = publish(client, topic="dlog-status")
        delivered = list(client.list(message_id=message_id, status=DELIVERED).deliveries)
        assert {r.endpoint_id for r in delivered} == {e.id for e in live} and \
            all(r.status == DELIVERED for r in delivered), show(delivered)
        rejected = list(client.list(message_id=message_id, status=REJECTED).deliveries)
        assert {r.endpoint_id for r in rejected} == {e.id for e in dead} and \
            all(r.status == REJECTED for r in rejected), show(rejected)
        assert len(client.list(message_id=message_id).deliveries) == 5
    finally:
        client.close()


# --- 5. sampling successes, and turning the log off ----------------------------------------------------

def test_success_sample_percent_100_lists_delivered_recipients_with_the_provider_id(sampled, apns):
    client = Client(sampled, ADMIN)
    try:
        live, dead = topic_with(client, apns, "dlog-sampled", [("live", 3, False), ("live", 1, True)])
        start = now_ms()
        message_id, m = publish(client, topic="dlog-sampled")
        end = now_ms()
        assert (m.delivered, m.rejected) == (3, 1), m
        rows = list(client.list(message_id=message_id).deliveries)
        assert len(rows) == 4, show(rows)
        delivered = [r for r in rows if r.status == DELIVERED]
        assert {(r.endpoint_id, r.token, r.app) for r in delivered} == {(e.id, e.token, "live") for e in live}
        for r in delivered:
            assert UUID_RE.match(r.id), "a delivered row carries the apns-id: %r" % r.id
            assert r.http_status == 200 and r.reason == "" and r.attempts >= 1, show([r])
            assert start - 1000 <= r.time <= end + 1000
        assert len({r.id for r in delivered}) == 3
        assert [(r.endpoint_id, r.reason, r.http_status) for r in rows if r.status == REJECTED] == \
            [(dead[0].id, "Unregistered", 410)]
        assert_newest_first(rows)

        # Sends are not logged, even with every success sampled.
        sent_live, sent_dead = new_token(), new_token()
        apns.unregistered.add(sent_dead)
        results = client.push.Send(push_pb2.SendRequest(notifications=[push_pb2.Notification(
            app="live", tokens=[sent_live, sent_dead], alert=push_pb2.Alert(body="x"))]), timeout=30).results
        assert [r.status for r in results] == [DELIVERED, REJECTED]
        everything, _ = client.list_all()
        assert not [r for r in everything if r.token in (sent_live, sent_dead)], show(everything)
    finally:
        client.close()


def test_a_disabled_delivery_log_lists_nothing(tmp_path, apns):
    gateway = start_gateway(tmp_path, {"apps": apps(apns), "api_keys": KEYS, "delivery_log": {"enabled": False}})
    client = Client(gateway, ADMIN)
    try:
        target = endpoint(client, apns, "live", dead=True)
        topic_with(client, apns, "dlog-off", [("live", 2, False), ("live", 2, True)])
        message_id, m = publish(client, topic="dlog-off")
        assert m.rejected == 2, m
        direct, m = publish(client, endpoint_id=target.id)
        assert m.rejected == 1, m
        assert list(client.list(message_id=message_id).deliveries) == []
        assert list(client.list(endpoint_id=target.id).deliveries) == []
        assert list(client.list().deliveries) == []
    finally:
        client.close()
        stop_gateway(gateway)


# --- 6. who may list what -----------------------------------------------------------------------------

def test_keys_list_only_what_they_could_have_published(gateway, admin, apns, mixed):
    live_key, other_key, no_key = Client(gateway, LIVE_KEY), Client(gateway, OTHER_KEY), Client(gateway)
    try:
        mine = endpoint(admin, apns, "live", dead=True)
        theirs = endpoint(admin, apns, "other", dead=True)
        to_mine, _ = publish(admin, endpoint_id=mine.id)
        to_theirs, _ = publish(admin, endpoint_id=theirs.id)
        # A user with endpoints in both apps: published with the admin key it reaches both (only an
        # admin's listing); published with the live key it reaches only the live one.
        user = "dlog-user-" + secrets.token_hex(4)
        endpoint(admin, apns, "live", dead=True, user_id=user)
        endpoint(admin, apns, "other", dead=True, user_id=user)
        user_both, m = publish(admin, user_id=user)
        assert m.rejected == 2, m
        for e in admin.registry.ListEndpoints(registry_pb2.ListEndpointsRequest(user_id=user), timeout=10).endpoints:
            reenable(admin, e.id)
        user_live, m = publish(live_key, user_id=user)
        assert m.rejected == 1, m

        # An admin key lists everything, and every message and endpoint.
        everything, _ = admin.list_all()
        for message_id in (mixed["id"], to_mine, to_theirs, user_both, user_live):
            assert any(r.message_id == message_id for r in everything), message_id
        assert_newest_first(everything)
        assert [r.message_id for r in admin.list(endpoint_id=theirs.id).deliveries] == [to_theirs]

        # A key limited to "live": its app's endpoint and the messages it could have published.
        assert [r.endpoint_id for r in live_key.list(message_id=to_mine).deliveries] == [mine.id]
        assert [r.message_id for r in live_key.list(endpoint_id=mine.id).deliveries] == [to_mine]
        assert [r.app for r in live_key.list(message_id=user_live).deliveries] == ["live"]
        assert [r.endpoint_id for r in other_key.list(message_id=to_theirs).deliveries] == [theirs.id]
        denied = grpc.StatusCode.PERMISSION_DENIED
        for client, fields in [(live_key, {"message_id": to_theirs}), (live_key, {"endpoint_id": theirs.id}),
                               (live_key, {"message_id": mixed["id"]}),      # a topic's: admin keys only
                               (live_key, {"message_id": user_both}),        # reached "other" too
                               (other_key, {"message_id": to_mine}), (other_key, {"endpoint_id": mine.id}),
                               (live_key, {}), (live_key, {"status": REJECTED}), (other_key, {})]:
            code, details = client.error(**fields)
            assert code == denied, (fields, code, details)

        # Unknown messages; no key at all.
        for client in (admin, live_key):
            code, details = client.error(message_id="no-such-message-" + secrets.token_hex(8))
            assert code == grpc.StatusCode.NOT_FOUND, (code, details)
        code, details = no_key.error(message_id=to_mine)
        assert code == grpc.StatusCode.UNAUTHENTICATED, (code, details)
    finally:
        for c in (live_key, other_key, no_key):
            c.close()


# --- 7. Connect / JSON -----------------------------------------------------------------------------------

def curl(gateway, path, body, key=ADMIN):
    command = ["curl", "-s", "-S", "-i", "--http1.1", "-X", "POST", "-H", "Content-Type: application/json",
               "-H", "Authorization: Bearer " + key, "--data-binary", "@-", "--max-time", "20",
               "http://%s%s" % (gateway.address, path)]
    out = subprocess.run(command, input=body, capture_output=True, timeout=30)
    assert out.returncode == 0, out.stderr
    head, _, payload = out.stdout.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = {line.split(":", 1)[0].lower(): line.split(":", 1)[1].strip() for line in lines[1:]}
    return int(lines[0].split()[1]), headers, payload


def test_list_deliveries_over_connect_json(gateway, mixed):
    body = json.dumps({"messageId": mixed["id"], "status": "STATUS_REJECTED", "pageSize": 1}).encode()
    status, headers, payload = curl(gateway, "/pushgate.v1.Push/ListDeliveries", body)
    assert status == 200 and headers.get("content-type") == "application/json", (status, headers, payload)
    answer = json.loads(payload)
    assert set(answer) == {"deliveries", "nextPageToken"}, answer
    assert len(answer["deliveries"]) == 1 and answer["nextPageToken"], answer
    row = answer["deliveries"][0]
    dead = {e.id: e.token for e in mixed["dead"]}
    assert set(row) >= {"messageId", "endpointId", "app", "token", "status", "reason", "httpStatus", "attempts",
                        "time"}, row
    assert set(row) <= {"messageId", "endpointId", "app", "token", "status", "reason", "httpStatus", "id",
                        "attempts", "time"}, row
    assert (row["messageId"], row["app"], row["status"], row["reason"], row["httpStatus"]) == \
        (mixed["id"], "live", "STATUS_REJECTED", "Unregistered", 410), row
    assert dead.get(row["endpointId"]) == row["token"], row
    assert isinstance(row["time"], str) and row["time"].isdigit(), "int64 as a JSON string: %r" % row
    assert isinstance(row["attempts"], int) and row["attempts"] >= 1, row

    # The next page, with the token as given; then the error shape.
    body = json.dumps({"messageId": mixed["id"], "status": "STATUS_REJECTED", "pageSize": 1,
                       "pageToken": answer["nextPageToken"]}).encode()
    status, _, payload = curl(gateway, "/pushgate.v1.Push/ListDeliveries", body)
    second = json.loads(payload)
    assert status == 200 and len(second["deliveries"]) == 1 and "nextPageToken" not in second, second
    assert {row["endpointId"], second["deliveries"][0]["endpointId"]} == set(dead)
    status, _, payload = curl(gateway, "/pushgate.v1.Push/ListDeliveries",
                              json.dumps({"messageId": mixed["id"], "pageSize": -1}).encode())
    assert status == 400 and json.loads(payload).get("code") == "invalid_argument", (status, payload)
    status, _, payload = curl(gateway, "/pushgate.v1.Push/ListDeliveries", b"{}", key=LIVE_KEY)
    assert status == 403 and json.loads(payload).get("code") == "permission_denied", (status, payload)
