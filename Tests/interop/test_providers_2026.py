"""The providers' 2026 features (issue 43), held to what the providers document
(Tests/interop/providers_2026.md has every fact with its source), through stock grpcio stubs against
`pushgate serve`, delivering to independent look-alikes that share no code with Pushgate:

- FCM HTTP v1 `Message.fid`: a token written `fid:<FID>` reaches the FCM look-alike as the message's
  `fid` (no prefix, no `token`), beside ordinary tokens in the same Send; an unregistered FID (404
  NOT_FOUND / UNREGISTERED, as FCM answers) is REJECTED and, after a Publish, disables its endpoint.
- Declarative Web Push: the Web Push look-alike (webpush_lookalike.py) decrypts each message with
  http_ece and the subscriber's key; `webpush.declarative` gives exactly the `{"web_push": 8030, …}`
  JSON of the Push API draft and current WebKit, anything else the old shape; bad values are
  INVALID_ARGUMENT naming the field.
- APNs WidgetKit and control pushes (`widgets`, `controls`: push type, `.push-type.*` topic,
  `{"aps":{"content-changed":true}}`, priorities as sent), no alert with them, and
  `filter_criteria` as `aps.filter-criteria`."""
import base64
import json
import os
import subprocess
import types

import grpc
import pytest

from conftest import Server, app_config, fcm_app_config, wait_done
from mock_process import pushgate_binary
from pushgate.v1 import push_pb2, push_pb2_grpc, registry_pb2, registry_pb2_grpc

BUNDLE = "com.example.widgets"


def new_fid():
    """A Firebase Installation ID as the Firebase SDKs make one: 22 URL-safe base64 characters of
    random bits whose first four are 0111 (so it starts with c, d, e or f)."""
    raw = bytearray(os.urandom(17))
    raw[0] = 0b01110000 | (raw[0] & 0x0F)
    return base64.urlsafe_b64encode(bytes(raw)).decode()[:22]


DEAD_FID = new_fid()


def fcm_token():
    return "fcm-2026-%s:APA91b%s" % (os.urandom(4).hex(), "y" * 120)


def apns_token():
    return os.urandom(32).hex()


def browser(subscription):
    return json.dumps(subscription)


@pytest.fixture(scope="module")
def web(tmp_path_factory):
    from h2_lookalike import make_certificate
    from webpush_lookalike import LookalikeWebPush

    directory = str(tmp_path_factory.mktemp("webpush-lookalike"))
    cert, key = make_certificate(directory)
    server = LookalikeWebPush(cert, key).start()
    server.ca_file = cert
    yield server
    server.stop()


@pytest.fixture(scope="module")
def world(tmp_path_factory, lookalike, web):
    """One gateway with an fcm app (its own FCM look-alike, DEAD_FID unregistered), an apns app
    (the session's APNs look-alike) and a webpush app (the Web Push look-alike)."""
    from fcm_lookalike import LookalikeFCM, write_service_account
    from h2_lookalike import make_certificate

    directory = str(tmp_path_factory.mktemp("providers-2026"))
    cert, key = make_certificate(directory)
    path, account = write_service_account(directory)
    fcm = LookalikeFCM(cert, key, account, unregistered={DEAD_FID}).start()
    fcm.ca_file, fcm.service_account_file = cert, path
    vapid = os.path.join(directory, "vapid.pem")
    subprocess.run([pushgate_binary(), "vapid-key", "--out", vapid], check=True, capture_output=True)
    config = {"apps": [
        fcm_app_config("android", fcm),
        app_config("ios", BUNDLE, lookalike),
        {"name": "web", "platform": "webpush", "vapid_key_file": vapid, "vapid_subject": "mailto:ops@example.com",
         "ca_file": web.ca_file, "allowed_hosts": ["localhost:%d" % web.port],
         # The look-alike listens on loopback, which a webpush app refuses unless told.
         "allow_private_addresses": True},
    ]}
    gateway = Server(config, directory)
    channel = grpc.insecure_channel(gateway.address)
    yield types.SimpleNamespace(gateway=gateway, fcm=fcm, apns=lookalike, web=web,
                                push=push_pb2_grpc.PushStub(channel),
                                registry=registry_pb2_grpc.RegistryStub(channel))
    channel.close()
    gateway.stop()
    fcm.stop()
    assert gateway.proc.returncode == 0, "pushgate exited with %s:\n%s" % (gateway.proc.returncode,
                                                                           "".join(gateway.log))


def send(world, *notifications, timeout=30):
    return list(world.push.Send(push_pb2.SendRequest(notifications=list(notifications)), timeout=timeout).results)


def refused(world, notification):
    with pytest.raises(grpc.RpcError) as info:
        send(world, notification, timeout=10)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT, info.value
    return info.value.details()


# --- FCM: Message.fid -----------------------------------------------------------------------------

def test_fid_tokens_are_sent_as_the_messages_fid_beside_ordinary_tokens(world):
    fids = [new_fid(), new_fid()]
    tokens = [fcm_token(), "fid:" + fids[0], "fid:" + fids[1]]
    since = len(world.fcm.messages)
    results = send(world, push_pb2.Notification(app="android", tokens=tokens,
                                                alert=push_pb2.Alert(title="Hi", body="there"),
                                                data_json='{"order": "42"}'))
    assert [r.status for r in results] == [push_pb2.STATUS_DELIVERED] * 3, results
    assert [r.token for r in results] == tokens, "results name the token as it was given"
    assert all(r.id.startswith("projects/lookalike-project/messages/") for r in results)
    received = dict(world.fcm.messages[since:])
    assert set(received) == {tokens[0]} | set(fids), "one message per target, the FID without its prefix"
    ordinary = received[tokens[0]]
    assert ordinary["token"] == tokens[0] and "fid" not in ordinary
    for fid in fids:
        message = received[fid]
        assert message["fid"] == fid
        assert not {"token", "topic", "condition"} & set(message), "exactly one target: fid"
        assert message["notification"] == {"title": "Hi", "body": "there"}
        assert message["data"] == {"order": "42"}


def test_an_unregistered_fid_is_rejected(world):
    live = new_fid()
    results = send(world, push_pb2.Notification(app="android", tokens=["fid:" + DEAD_FID, "fid:" + live],
                                                alert=push_pb2.Alert(body="x")))
    dead, ok = results
    assert ok.status == push_pb2.STATUS_DELIVERED, ok
    assert dead.status == push_pb2.STATUS_REJECTED, dead
    assert dead.http_status == 404 and dead.reason == "UNREGISTERED", dead
    assert dead.token == "fid:" + DEAD_FID


def test_an_unregistered_fid_endpoint_is_disabled_after_a_publish(world):
    dead = world.registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="android", token="fid:" + DEAD_FID),
                                         timeout=10)
    assert dead.token == "fid:" + DEAD_FID, "FCM tokens (FIDs too) are stored as they are"
    live_fid = new_fid()
    live = world.registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="android", token="fid:" + live_fid),
                                         timeout=10)
    since = len(world.fcm.messages)
    for endpoint, delivered in ((dead, 0), (live, 1)):
        published = world.push.Publish(push_pb2.PublishRequest(endpoint_id=endpoint.id, message="hello"), timeout=10)
        done = wait_done(world.push, published.message_id)
        assert (done.delivered, done.rejected) == (delivered, 1 - delivered), done
    after = world.registry.GetEndpoint(registry_pb2.GetEndpointRequest(id=dead.id), timeout=10)
    assert not after.enabled and after.disabled_reason == "UNREGISTERED", after
    still = world.registry.GetEndpoint(registry_pb2.GetEndpointRequest(id=live.id), timeout=10)
    assert still.enabled, still
    assert [m.get("fid") for _, m in world.fcm.messages[since:]] == [live_fid]


def test_an_empty_fid_is_invalid_argument(world):
    # FCM wants a non-empty fid (firebase-admin: "the non-empty Firebase Installation ID").
    details = refused(world, push_pb2.Notification(app="android", tokens=["fid:"], alert=push_pb2.Alert(body="x")))
    assert "notifications[0].tokens[0]" in details, details


# --- Declarative Web Push -------------------------------------------------------------------------

def test_the_web_push_lookalike_decrypts_an_independent_senders_message(web):
    """The look-alike itself, against pywebpush (PyPI): so what it decrypts below is Pushgate's doing."""
    import requests
    from py_vapid import Vapid
    from pywebpush import webpush

    vapid = Vapid()
    vapid.generate_keys()
    [subscription] = web.subscriptions(1, prefix="pywebpush-")
    session = requests.Session()
    session.verify = web.ca_file
    session.trust_env = False
    body = json.dumps({"web_push": 8030, "notification": {"title": "t", "navigate": "https://example.com/"}})
    response = webpush(subscription, data=body, vapid_private_key=vapid, vapid_claims={"sub": "mailto:ops@example.com"},
                       ttl=60, requests_session=session)
    assert response.status_code == 201, (response.status_code, web.refused)
    [message] = web.for_subscription(subscription)
    assert message["plaintext"].decode() == body


def declarative(plaintext, notification, app_badge=None):
    """Holds a decrypted message to the Push API's declarative form (providers_2026.md, Web Push):
    `web_push` the integer 8030; `notification` exactly these members (a `silent` or `mutable` that
    is false may also be written out: it is the default); `app_badge`, when given, a top-level
    integer. Safari 18.4-18.x read `app_badge` inside `notification` (WebKit moved it to the top in
    May 2025): a copy there with the same value is tolerated, not required."""
    message = json.loads(plaintext)
    assert type(message.get("web_push")) is int and message["web_push"] == 8030, message
    got = dict(message["notification"])
    nested = got.pop("app_badge", None)
    for flag in ("silent", "mutable"):
        if flag not in notification and got.get(flag) is False:
            del got[flag]
    assert got == notification, message
    rest = {k: v for k, v in message.items() if k not in ("web_push", "notification")}
    if app_badge is None:
        assert rest == {} and nested is None, message
    else:
        assert rest == {"app_badge": app_badge} and type(rest["app_badge"]) is int, message
        assert nested is None or str(nested) == str(app_badge), message


def web_notification(subscription, alert, badge=None, **options):
    """A declarative Web Push notification. The app badge is `WebPushOptions.app_badge` where the
    proto has that field (the brief's contract), else the notification's own `badge` (the proto as
    the implementer wrote it: WebPushOptions field 6 reserved); presence-tracked either way."""
    extra = {}
    if badge is not None:
        if "app_badge" in push_pb2.WebPushOptions.DESCRIPTOR.fields_by_name:
            options["app_badge"] = badge
        else:
            extra["badge"] = badge
    return push_pb2.Notification(app="web", tokens=[browser(subscription)], alert=alert,
                                 webpush=push_pb2.WebPushOptions(declarative=True, **options), **extra)


def test_declarative_messages_decrypt_to_the_8030_json_and_others_to_the_old_shape(world):
    full, minimal, cleared, legacy = world.web.subscriptions(4)
    navigate = "https://shop.example/orders/42"
    notifications = [
        web_notification(full, push_pb2.Alert(title="Order 42", body="is on its way"), badge=3,
                         navigate=navigate, lang="en-US", dir="ltr", silent=True, mutable=True),
        web_notification(minimal, push_pb2.Alert(title="Hi"), navigate="https://shop.example/"),
        # The badge is presence-tracked: 0 is sent (it clears the badge), unset is not.
        web_notification(cleared, push_pb2.Alert(title="All read", body="0 left"), badge=0, navigate=navigate, dir="rtl"),
        push_pb2.Notification(app="web", tokens=[browser(legacy)], alert=push_pb2.Alert(title="Order 42", body="is on its way")),
    ]
    results = send(world, *notifications)
    assert [r.status for r in results] == [push_pb2.STATUS_DELIVERED] * 4, (results, world.web.refused)
    assert all(r.http_status == 201 for r in results)
    received = {}
    for name, subscription in (("full", full), ("minimal", minimal), ("cleared", cleared), ("legacy", legacy)):
        [message] = world.web.for_subscription(subscription)
        assert message["headers"]["content-encoding"] == "aes128gcm"
        received[name] = message["plaintext"]
    declarative(received["full"], {"title": "Order 42", "body": "is on its way", "navigate": navigate,
                                    "lang": "en-US", "dir": "ltr", "silent": True, "mutable": True}, app_badge=3)
    declarative(received["minimal"], {"title": "Hi", "navigate": "https://shop.example/"})
    declarative(received["cleared"], {"title": "All read", "body": "0 left", "navigate": navigate, "dir": "rtl"},
                app_badge=0)
    old = json.loads(received["legacy"])
    assert isinstance(old, dict) and "web_push" not in old and "notification" not in old, old


def test_bad_declarative_notifications_are_invalid_argument_and_send_nothing(world):
    [subscription] = world.web.subscriptions(1, prefix="bad-")
    before = (len(world.web.messages), len(world.web.refused))

    def notification(alert=push_pb2.Alert(title="t", body="b"), **options):
        return web_notification(subscription, alert, **options)

    for bad, field in [
        (notification(), "notifications[0].webpush.navigate"),
        (notification(navigate="http://shop.example/orders/42"), "notifications[0].webpush.navigate"),
        (notification(navigate="/orders/42"), "notifications[0].webpush.navigate"),
        (notification(navigate="https://shop.example/", dir="up"), "notifications[0].webpush.dir"),
    ]:
        details = refused(world, bad)
        assert field in details, (field, details)
    # The spec's app_badge is an unsigned 64-bit integer: no negative badge.
    details = refused(world, notification(navigate="https://shop.example/", badge=-1))
    assert "badge" in details, details
    # The title is the one member the declarative form cannot do without (besides navigate).
    details = refused(world, notification(alert=push_pb2.Alert(body="no title"), navigate="https://shop.example/"))
    assert "title" in details, details
    assert (len(world.web.messages), len(world.web.refused)) == before, "nothing reached the push service"


# --- APNs: widgets, controls, filter-criteria -----------------------------------------------------

def request_for(lookalike, token):
    found = [(h, b) for h, b in list(lookalike.requests) if h.get(":path") == "/3/device/" + token]
    assert len(found) == 1, "%d requests for %s" % (len(found), token)
    return found[0]


def test_widgets_and_controls_pushes_reach_apns_as_apple_documents(world):
    cases = [  # (push type, priority asked, header name suffix, apns-priority expected)
        (push_pb2.PUSH_TYPE_WIDGETS, 0, "widgets", "10"),
        (push_pb2.PUSH_TYPE_WIDGETS, 5, "widgets", "5"),
        (push_pb2.PUSH_TYPE_CONTROLS, 0, "controls", "10"),
        (push_pb2.PUSH_TYPE_CONTROLS, 1, "controls", "1"),
    ]
    tokens = [apns_token() for _ in cases]
    invalid_before = len(world.apns.invalid)
    results = send(world, *[push_pb2.Notification(app="ios", tokens=[token], push_type=push_type, priority=priority)
                            for token, (push_type, priority, _, _) in zip(tokens, cases)])
    assert [r.status for r in results] == [push_pb2.STATUS_DELIVERED] * len(cases), results
    assert not world.apns.invalid[invalid_before:]
    for token, (_, _, kind, priority) in zip(tokens, cases):
        headers, body = request_for(world.apns, token)
        assert headers["apns-push-type"] == kind
        assert headers["apns-topic"] == "%s.push-type.%s" % (BUNDLE, kind)
        # Apple: priority 10 when the header is absent; 1, 5 and 10 are the values it takes, and it
        # sets no narrower rule for widgets or controls.
        assert headers.get("apns-priority", "10") == priority, (kind, headers)
        payload = json.loads(body)
        assert payload == {"aps": {"content-changed": True}}, payload
        assert payload["aps"]["content-changed"] is True, "JSON true, not 1"


def test_an_alert_with_a_widgets_or_controls_push_type_is_invalid_argument(world):
    for push_type in (push_pb2.PUSH_TYPE_WIDGETS, push_pb2.PUSH_TYPE_CONTROLS):
        token = apns_token()
        details = refused(world, push_pb2.Notification(app="ios", tokens=[token], push_type=push_type,
                                                       alert=push_pb2.Alert(title="t", body="b")))
        assert "notifications[0].alert" in details, details
        assert not [h for h, _ in list(world.apns.requests) if h.get(":path") == "/3/device/" + token]


def test_filter_criteria_arrives_as_aps_filter_criteria(world):
    token = apns_token()
    results = send(world, push_pb2.Notification(app="ios", tokens=[token], alert=push_pb2.Alert(title="Standup", body="in 5"),
                                                filter_criteria="work"))
    assert results[0].status == push_pb2.STATUS_DELIVERED, results
    headers, body = request_for(world.apns, token)
    assert headers["apns-push-type"] == "alert" and headers["apns-topic"] == BUNDLE
    aps = json.loads(body)["aps"]
    assert aps["filter-criteria"] == "work", aps
    assert aps["alert"] == {"title": "Standup", "body": "in 5"}, aps
