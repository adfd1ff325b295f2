"""Publish to a user (issue 41): `user_id` on registry endpoints and as a third Publish target beside
`topic` and `endpoint_id`, checked against the independent APNs and FCM look-alikes.

Verified here:
- A Publish to `u1` reaches exactly u1's *enabled* endpoints in an APNs app and an FCM app (not its
  disabled one, not u2's, not endpoints without a user), each with its platform's payload (`APNS` and
  `GCM` of one json message_structure), and `GetMessage` counts it and names the user.
- A key whose `apps` cover only the APNs app reaches only u1's APNs endpoint.
- A user without endpoints is NOT_FOUND; more than one target, or none, is INVALID_ARGUMENT; a
  257-byte `user_id` is INVALID_ARGUMENT naming `user_id` (256 bytes are fine: bytes, not characters).
- `ListEndpoints(user_id=…)` filters (with and without `app`, across pages); `UpdateEndpoint` sets
  and clears `user_id` (and leaves it alone when not set); creating the same (app, token) again with
  another `user_id` moves the endpoint to that user.
- A user fan-out is durable: kill -9 mid-fan-out, restart on the same store, and every endpoint gets
  the message, with exact counts."""
import collections
import hashlib
import json
import os
import signal
import time
import uuid

import grpc
import pytest

from conftest import Server, app_config, fcm_app_config
from pushgate.v1 import push_pb2, push_pb2_grpc, registry_pb2, registry_pb2_grpc

ADMIN = "pgk_users-admin-" + "a" * 32
IOS_ONLY = "pgk_users-ios-" + "i" * 32
BUNDLE = "com.example.users"
TERMINAL = (push_pb2.MESSAGE_STATE_COMPLETED, push_pb2.MESSAGE_STATE_EXPIRED, push_pb2.MESSAGE_STATE_CANCELLED)


def apns_token(n):
    return "%064x" % (0x05E50000 + n)


def fcm_token(n):
    return "user-fcm-%06d:APA91b%s" % (n, "u" * 100)


class _Key(grpc.UnaryUnaryClientInterceptor):
    """Adds `authorization: Bearer <key>` to every unary call (the module's gateway has api_keys)."""

    def __init__(self, key):
        self.metadata = [("authorization", "Bearer " + key)]

    def intercept_unary_unary(self, continuation, details, request):
        return continuation(details._replace(metadata=list(details.metadata or ()) + self.metadata), request)


@pytest.fixture(scope="module")
def gateway(tmp_path_factory, lookalike, fcm_lookalike):
    config = {"apps": [app_config("ios", BUNDLE, lookalike), fcm_app_config("android", fcm_lookalike)],
              "api_keys": [{"name": "ops", "key_sha256": hashlib.sha256(ADMIN.encode()).hexdigest(), "apps": ["*"],
                            "admin": True},
                           {"name": "ios-sender", "key_sha256": hashlib.sha256(IOS_ONLY.encode()).hexdigest(),
                            "apps": ["ios"]}]}
    s = Server(config, str(tmp_path_factory.mktemp("publish-users")))
    yield s
    s.stop()
    assert s.proc.returncode == 0, "pushgate exited with %s:\n%s" % (s.proc.returncode, "".join(s.log))


def stubs_for(gateway, key):
    channel = grpc.intercept_channel(grpc.insecure_channel(gateway.address), _Key(key))
    return push_pb2_grpc.PushStub(channel), registry_pb2_grpc.RegistryStub(channel)


@pytest.fixture(scope="module")
def admin(gateway):
    return stubs_for(gateway, ADMIN)


@pytest.fixture(scope="module")
def users(admin):
    """u1: an APNs endpoint A, a disabled APNs endpoint B, FCM endpoints C and D; u2: APNs E and FCM F;
    no user: APNs G and FCM H. Answers {letter: Endpoint}."""
    _, registry = admin
    layout = {"A": ("ios", apns_token(1), "u1"), "B": ("ios", apns_token(2), "u1"),
              "C": ("android", fcm_token(1), "u1"), "D": ("android", fcm_token(2), "u1"),
              "E": ("ios", apns_token(3), "u2"), "F": ("android", fcm_token(3), "u2"),
              "G": ("ios", apns_token(4), ""), "H": ("android", fcm_token(4), "")}
    endpoints = {}
    for letter, (app, token, user) in layout.items():
        endpoints[letter] = registry.CreateEndpoint(
            registry_pb2.CreateEndpointRequest(app=app, token=token, user_id=user), timeout=10)
    endpoints["B"] = registry.UpdateEndpoint(registry_pb2.UpdateEndpointRequest(id=endpoints["B"].id, enabled=False),
                                             timeout=10)
    return endpoints


def error(call, request):
    with pytest.raises(grpc.RpcError) as info:
        call(request, timeout=10)
    return info.value.code(), info.value.details()


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


def received(lookalike, fcm_lookalike, apns_since, fcm_since, endpoints):
    """What the look-alikes got since the marks for the tokens of `endpoints`: ([(token, headers, body)]
    from APNs, [(token, message)] from FCM)."""
    tokens = {e.token for e in endpoints}
    apns = [(h[":path"][len("/3/device/"):], h, b) for h, b in lookalike.requests[apns_since:]
            if h.get(":path", "")[len("/3/device/"):] in tokens]
    fcm = [(t, m) for t, m in fcm_lookalike.messages[fcm_since:] if t in tokens]
    return apns, fcm


APNS_PAYLOAD = json.dumps({"aps": {"alert": "for iOS"}, "n": 1})
GCM_PAYLOAD = json.dumps({"notification": {"title": "T", "body": "for Android"}, "data": {"k": "v"}})


def publish_to_user(push, user, text):
    message = json.dumps({"default": text, "APNS": APNS_PAYLOAD, "GCM": GCM_PAYLOAD})
    return push.Publish(push_pb2.PublishRequest(user_id=user, message=message, message_structure="json"), timeout=10)


def test_publish_to_a_user_reaches_exactly_its_enabled_endpoints_with_each_platforms_payload(
        admin, users, lookalike, fcm_lookalike):
    push, _ = admin
    everyone = list(users.values())
    # The endpoints answer their user (B kept it through the disabling UpdateEndpoint).
    assert {x: users[x].user_id for x in users} == {"A": "u1", "B": "u1", "C": "u1", "D": "u1", "E": "u2",
                                                    "F": "u2", "G": "", "H": ""}
    assert not users["B"].enabled
    apns_since, fcm_since = len(lookalike.requests), len(fcm_lookalike.messages)
    reply = publish_to_user(push, "u1", "fallback u1")
    done = wait_terminal(push, reply.message_id)
    assert done.state == push_pb2.MESSAGE_STATE_COMPLETED, done
    apns, fcm = received(lookalike, fcm_lookalike, apns_since, fcm_since, everyone)
    # Exactly A over APNs (not the disabled B, not u2's E, not G without a user), with the APNS value
    # verbatim and the app's topic.
    assert [t for t, _, _ in apns] == [users["A"].token]
    (_, headers, body), = apns
    assert body == APNS_PAYLOAD.encode() and headers["apns-topic"] == BUNDLE
    # Exactly C and D over FCM, each once, with GCM's legacy shape mapped onto the v1 message.
    assert sorted(t for t, _ in fcm) == sorted([users["C"].token, users["D"].token])
    for _, message in fcm:
        assert message["notification"] == {"title": "T", "body": "for Android"}, message
        assert message["data"] == {"k": "v"}, message
    assert (done.delivered, done.rejected, done.failed, done.waiting_for_provider) == (3, 0, 0, 0), done
    # Reading: the recipients are the user's enabled endpoints; an implementation may or may not also
    # count the disabled one as considered-and-skipped (a topic fan-out does), so only that is open.
    assert done.total - done.skipped == 3 and done.skipped in (0, 1), done
    assert (done.user_id, done.topic, done.endpoint_id) == ("u1", "", ""), done

    # u2 is another person: exactly E and F.
    apns_since, fcm_since = len(lookalike.requests), len(fcm_lookalike.messages)
    done = wait_terminal(push, publish_to_user(push, "u2", "fallback u2").message_id)
    apns, fcm = received(lookalike, fcm_lookalike, apns_since, fcm_since, everyone)
    assert [t for t, _, _ in apns] == [users["E"].token] and [t for t, _ in fcm] == [users["F"].token]
    assert (done.state, done.total, done.delivered) == (push_pb2.MESSAGE_STATE_COMPLETED, 2, 2), done


def test_a_key_for_the_apns_app_only_reaches_only_the_users_apns_endpoints(gateway, users, lookalike, fcm_lookalike):
    # Reading: Publish to a user_id is a send (like an endpoint_id), not a topic fan-out, so a key
    # without `admin` may do it; it reaches the user's endpoints in the key's `apps` only.
    push, _ = stubs_for(gateway, IOS_ONLY)
    apns_since, fcm_since = len(lookalike.requests), len(fcm_lookalike.messages)
    done = wait_terminal(push, publish_to_user(push, "u1", "ios key").message_id)
    apns, fcm = received(lookalike, fcm_lookalike, apns_since, fcm_since, list(users.values()))
    assert [t for t, _, _ in apns] == [users["A"].token] and fcm == []
    assert done.state == push_pb2.MESSAGE_STATE_COMPLETED and done.delivered == 1, done
    # The FCM endpoints are not recipients of this key's message at all (not sent, not counted as sent).
    assert done.total - done.skipped == 1 and (done.rejected, done.failed) == (0, 0), done


def test_a_user_without_endpoints_is_not_found(admin, users, lookalike, fcm_lookalike):
    push, _ = admin
    apns_since, fcm_since = len(lookalike.requests), len(fcm_lookalike.messages)
    code, details = error(push.Publish, push_pb2.PublishRequest(user_id="nobody-" + uuid.uuid4().hex, message="x"))
    assert code == grpc.StatusCode.NOT_FOUND, details
    assert len(lookalike.requests) == apns_since and len(fcm_lookalike.messages) == fcm_since


def test_list_endpoints_filters_by_user(admin, users):
    _, registry = admin

    def listed(**fields):
        ids, page_token, pages = [], "", 0
        while True:
            page = registry.ListEndpoints(registry_pb2.ListEndpointsRequest(page_token=page_token, **fields),
                                          timeout=10)
            assert all(e.user_id == fields["user_id"] for e in page.endpoints), page
            ids += [e.id for e in page.endpoints]
            page_token, pages = page.next_page_token, pages + 1
            if not page_token:
                return ids, pages

    u1 = {users[x].id for x in "ABCD"}
    # The filter is a registry listing: the disabled endpoint B is one of u1's endpoints too.
    ids, _ = listed(user_id="u1")
    assert sorted(ids) == sorted(u1)
    ids, pages = listed(user_id="u1", page_size=1)
    assert sorted(ids) == sorted(u1) and pages >= 4, (ids, pages)
    ids, _ = listed(user_id="u1", app="ios")
    assert sorted(ids) == sorted([users["A"].id, users["B"].id])
    ids, _ = listed(user_id="u2", app="android")
    assert ids == [users["F"].id]
    assert listed(user_id="nobody")[0] == []
    # Without the filter every endpoint is listed, with its user.
    everyone = registry.ListEndpoints(registry_pb2.ListEndpointsRequest(page_size=1000), timeout=10).endpoints
    by_id = {e.id: e.user_id for e in everyone}
    assert {by_id[e.id] for e in users.values()} == {"u1", "u2", ""}
    assert by_id[users["G"].id] == "" and by_id[users["E"].id] == "u2"


def test_update_endpoint_sets_and_clears_the_user(admin, lookalike):
    push, registry = admin
    user = "set-" + uuid.uuid4().hex
    token = apns_token(0x100)
    e = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="ios", token=token, custom_user_data="d"),
                                timeout=10)
    assert e.user_id == ""
    updated = registry.UpdateEndpoint(registry_pb2.UpdateEndpointRequest(id=e.id, user_id=user), timeout=10)
    assert updated.user_id == user and updated.custom_user_data == "d"
    assert registry.GetEndpoint(registry_pb2.GetEndpointRequest(id=e.id), timeout=10).user_id == user
    listed = registry.ListEndpoints(registry_pb2.ListEndpointsRequest(user_id=user), timeout=10)
    assert [x.id for x in listed.endpoints] == [e.id]
    # The user now reaches the endpoint.
    since = len(lookalike.requests)
    reply = push.Publish(push_pb2.PublishRequest(user_id=user, message="set"), timeout=10)
    done = wait_terminal(push, reply.message_id)
    assert done.delivered == 1 and [h[":path"] for h, _ in lookalike.requests[since:]
                                    if h[":path"].endswith(token)] == ["/3/device/" + token]
    # An update that does not set user_id leaves it alone (the field is in a oneof: presence counts).
    again = registry.UpdateEndpoint(registry_pb2.UpdateEndpointRequest(id=e.id, custom_user_data="d2"), timeout=10)
    assert again.user_id == user and again.custom_user_data == "d2"
    # Setting "" clears it: no longer listed for the user, and the user has no endpoints left.
    cleared = registry.UpdateEndpoint(registry_pb2.UpdateEndpointRequest(id=e.id, user_id=""), timeout=10)
    assert cleared.user_id == ""
    assert registry.GetEndpoint(registry_pb2.GetEndpointRequest(id=e.id), timeout=10).user_id == ""
    assert not registry.ListEndpoints(registry_pb2.ListEndpointsRequest(user_id=user), timeout=10).endpoints
    code, _ = error(push.Publish, push_pb2.PublishRequest(user_id=user, message="gone"))
    assert code == grpc.StatusCode.NOT_FOUND
    # user_id is not part of the endpoint's identity: the same (app, token, custom data) created again
    # with another user_id is the same endpoint, moved to that user.
    moved = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="ios", token=token, custom_user_data="d2",
                                                                       user_id=user + "-b"), timeout=10)
    assert moved.id == e.id and moved.user_id == user + "-b"
    assert [x.id for x in registry.ListEndpoints(
        registry_pb2.ListEndpointsRequest(user_id=user + "-b"), timeout=10).endpoints] == [e.id]


def test_a_user_id_over_256_bytes_is_invalid_argument_naming_it(admin, users):
    push, registry = admin
    # 128 two-byte characters are 256 bytes (accepted); one more ASCII byte is 257 (refused): the
    # limit is in bytes, not characters.
    at_limit, over = "é" * 128, "é" * 128 + "a"
    assert len(at_limit.encode()) == 256 and len(over.encode()) == 257
    ok = registry.CreateEndpoint(
        registry_pb2.CreateEndpointRequest(app="ios", token=apns_token(0x200), user_id=at_limit), timeout=10)
    assert ok.user_id == at_limit
    for call, request in [
        (registry.CreateEndpoint, registry_pb2.CreateEndpointRequest(app="ios", token=apns_token(0x201), user_id=over)),
        (registry.UpdateEndpoint, registry_pb2.UpdateEndpointRequest(id=ok.id, user_id=over)),
        (push.Publish, push_pb2.PublishRequest(user_id=over, message="x")),
        (push.Publish, push_pb2.PublishRequest(user_id="x" * 257, message="x")),
    ]:
        code, details = error(call, request)
        assert code == grpc.StatusCode.INVALID_ARGUMENT and "user_id" in details, (request, details)
    assert registry.GetEndpoint(registry_pb2.GetEndpointRequest(id=ok.id), timeout=10).user_id == at_limit


def test_more_than_one_target_or_none_is_invalid_argument(admin, users):
    push, registry = admin
    registry.CreateTopic(registry_pb2.CreateTopicRequest(name="users-targets"), timeout=10)
    registry.Subscribe(registry_pb2.SubscribeRequest(topic="users-targets", endpoint_id=users["G"].id), timeout=10)
    for fields in [{"topic": "users-targets", "user_id": "u1"},
                   {"endpoint_id": users["A"].id, "user_id": "u1"},
                   {"topic": "users-targets", "endpoint_id": users["A"].id},
                   {"topic": "users-targets", "endpoint_id": users["A"].id, "user_id": "u1"},
                   {}]:
        code, details = error(push.Publish, push_pb2.PublishRequest(message="x", **fields))
        # The error names the three targets (user_id among them), whichever combination was wrong.
        assert code == grpc.StatusCode.INVALID_ARGUMENT and "user_id" in details, (fields, details)


def test_a_user_fan_out_survives_kill_9_and_restart(tmp_path, lookalike):
    """1,500 endpoints of one user, published with max_per_second 500 (about 3 s, so the kill lands
    mid-fan-out), kill -9 once a few hundred are sent, restart on the same store: every endpoint gets
    the message, at most twice, and the counts are exact (only committed pages count)."""
    count, user = 1500, "bulk-" + uuid.uuid4().hex[:8]
    config = {"apps": [app_config("ios", BUNDLE, lookalike)]}
    store = str(tmp_path / "users.db")
    tokens = ["%064x" % (0x05E60000 + i) for i in range(count)]
    marker = "durable-user-" + uuid.uuid4().hex
    first = Server(config, str(tmp_path), store=store)
    try:
        with grpc.insecure_channel(first.address) as channel:
            registry = registry_pb2_grpc.RegistryStub(channel)
            [f.result() for f in [registry.CreateEndpoint.future(
                registry_pb2.CreateEndpointRequest(app="ios", token=t, user_id=user), timeout=60) for t in tokens]]
            before = len(lookalike.requests)
            reply = push_pb2_grpc.PushStub(channel).Publish(
                push_pb2.PublishRequest(user_id=user, message=marker, max_per_second=500), timeout=10)

        def sent():
            return [h[":path"][len("/3/device/"):] for h, b in lookalike.requests[before:] if marker.encode() in b]

        deadline = time.time() + 30
        while len(sent()) < 300 and time.time() < deadline:
            time.sleep(0.01)
        os.kill(first.proc.pid, signal.SIGKILL)
        first.proc.wait(timeout=10)
    finally:
        if first.alive():
            first.proc.kill()
    sent_before_kill = len(sent())
    assert 0 < sent_before_kill < count, "the kill must land mid-fan-out (%d sent)" % sent_before_kill

    second = Server(config, str(tmp_path), store=store)
    try:
        with grpc.insecure_channel(second.address) as channel:
            done = wait_terminal(push_pb2_grpc.PushStub(channel), reply.message_id, timeout=60)
    finally:
        second.stop()
    assert done.state == push_pb2.MESSAGE_STATE_COMPLETED, done
    counts = collections.Counter(sent())
    missing = [t for t in tokens if counts[t] == 0]
    assert not missing, "%d endpoints never received the message" % len(missing)
    assert set(counts) == set(tokens) and max(counts.values()) <= 2, counts.most_common(3)
    assert (done.total, done.delivered, done.user_id) == (count, count, user), done
