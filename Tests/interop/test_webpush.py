"""Web Push end to end: stock grpcio stubs against `pushgate serve` with a webpush app, delivering to
two `pushgate mock-webpush` processes (two push-service origins). Independently of both: every
message the gateway sent is decrypted again with http_ece (PyPI) from the mock's recorded body and
the subscription's private key, and every VAPID JWT is verified with `cryptography` against the
public half of the gateway's key file."""
import base64
import json
import os
import random
import subprocess
import time

import grpc
import http_ece
import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from conftest import Server, wait_done
from mock_process import MockProcess, pushgate_binary
from pushgate.v1 import push_pb2, push_pb2_grpc, registry_pb2, registry_pb2_grpc


def b64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def browser(subscription):
    """What the browser's PushSubscription.toJSON() gives: the mock's subscription less its private key."""
    return json.dumps({k: v for k, v in subscription.items() if k != "private_key"})


class World:
    """Two push services the app may send to, one it may not, and the gateway."""

    def __init__(self, directory):
        # One certificate for the three services (each mock's own would share one subject name,
        # and a trust store finds a CA by its name).
        self.ca = os.path.join(directory, "push-services.pem")
        key = os.path.join(directory, "push-services.key")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                        "-keyout", key, "-out", self.ca, "-days", "2", "-subj", "/CN=localhost",
                        "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"], check=True, capture_output=True)
        identity = ["--cert", self.ca, "--key", key]
        flags = identity + ["--gone-prefix", "gone-", "--record", "2000"]
        self.a = MockProcess("mock-webpush", os.path.join(directory, "a"), flags=flags)
        self.b = MockProcess("mock-webpush", os.path.join(directory, "b"), flags=flags)
        self.outside = MockProcess("mock-webpush", os.path.join(directory, "c"), flags=identity)
        for mock in (self.a, self.b, self.outside):
            mock.ca_file = self.ca
        self.vapid_key = os.path.join(directory, "vapid.pem")
        made = subprocess.run([pushgate_binary(), "vapid-key", "--out", self.vapid_key], capture_output=True,
                              text=True, check=True)
        self.application_server_key = made.stdout.split("application server key:")[1].strip()
        config = {"apps": [{"name": "web", "platform": "webpush", "vapid_key_file": self.vapid_key,
                            "vapid_subject": "mailto:ops@example.com", "ca_file": self.ca, "connections": 2,
                            "allowed_hosts": ["localhost:%d" % self.a.port, "localhost:%d" % self.b.port],
                            # The mocks listen on loopback, which a webpush app refuses unless told.
                            "allow_private_addresses": True}]}
        self.gateway = Server(config, directory)
        self.channel = grpc.insecure_channel(self.gateway.address,
                                             options=[("grpc.max_receive_message_length", 64 << 20)])
        self.push = push_pb2_grpc.PushStub(self.channel)
        self.registry = registry_pb2_grpc.RegistryStub(self.channel)

    def origin(self, mock):
        return "https://localhost:%d" % mock.port

    def stop(self):
        self.channel.close()
        self.gateway.stop()
        assert self.gateway.proc.returncode == 0, "".join(self.gateway.log)
        return self.a.stop(), self.b.stop(), self.outside.stop()


@pytest.fixture
def world(tmp_path):
    w = World(str(tmp_path))
    yield w
    for process in (w.a, w.b, w.outside):
        if process.proc.poll() is None:
            process.proc.kill()
    if w.gateway.proc.poll() is None:
        w.gateway.stop()


def verify_vapid(jwt, public_key, audience):
    header, claims, signature = jwt.split(".")
    assert json.loads(b64url(header)) == {"typ": "JWT", "alg": "ES256"}
    body = json.loads(b64url(claims))
    raw = b64url(signature)
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    public_key.verify(der, (header + "." + claims).encode(), ec.ECDSA(hashes.SHA256()))
    assert body["aud"] == audience and body["sub"] == "mailto:ops@example.com"
    assert time.time() < body["exp"] <= time.time() + 24 * 3600
    return body


def test_send_to_1000_subscriptions_on_two_push_services(world):
    """1,000 results in order; one VAPID JWT per origin; 410 subscriptions REJECTED; every body
    decrypts with http_ece and the subscriber's key; every JWT verifies with the app's public key."""
    subscriptions = (world.a.subscriptions(480, prefix="ok-a-") + world.a.subscriptions(20, prefix="gone-a-")
                     + world.b.subscriptions(490, prefix="ok-b-") + world.b.subscriptions(10, prefix="gone-b-"))
    random.Random(7).shuffle(subscriptions)
    tokens = [browser(s) for s in subscriptions]
    notification = push_pb2.Notification(
        app="web", tokens=tokens, alert=push_pb2.Alert(title="Order 42", body="is on its way"),
        data_json='{"url": "/orders/42"}', collapse_id="order-42", expiration=int(time.time()) + 3600,
        urgency="high")
    results = world.push.Send(push_pb2.SendRequest(notifications=[notification]), timeout=60).results
    assert [r.token for r in results] == tokens
    for subscription, result in zip(subscriptions, results):
        gone = "/gone-" in subscription["endpoint"]
        if gone:
            assert result.status == push_pb2.STATUS_REJECTED and result.http_status == 410, result
        else:
            assert result.status == push_pb2.STATUS_DELIVERED and result.http_status == 201, result
            assert result.id.startswith(subscription["endpoint"].split("/wpush/")[0] + "/m/"), result.id
    assert sum(r.status == push_pb2.STATUS_DELIVERED for r in results) == 970

    stats_a, stats_b, outside = world.stop()
    public_key = serialization.load_pem_private_key(open(world.vapid_key, "rb").read(), None).public_key()
    assert base64.urlsafe_b64encode(public_key.public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)).rstrip(b"=").decode() \
        == world.application_server_key
    by_id = {s["endpoint"].rsplit("/", 1)[1]: s for s in subscriptions}
    expected = {"title": "Order 42", "body": "is on its way", "data": {"url": "/orders/42"}}
    for mock, stats, delivered in ((world.a, stats_a, 480), (world.b, stats_b, 490)):
        assert stats["delivered"] == delivered and stats["decrypted"] == delivered, stats
        assert stats["by_status"].get("410") == 500 - delivered
        assert stats["vapid_tokens_by_audience"] == {world.origin(mock): 1}, "one VAPID JWT per origin"
        assert len(stats["messages"]) == delivered
        for message in stats["messages"]:
            assert 3590 <= message["ttl"] <= 3600, "TTL: the seconds left of the expiration"
            assert message["urgency"] == "high" and message["topic"] == "order-42"
            verify_vapid(message["vapid"]["jwt"], public_key, world.origin(mock))
            subscription = by_id[message["subscription"]]
            private_key = ec.derive_private_key(int.from_bytes(b64url(subscription["private_key"]), "big"),
                                                ec.SECP256R1())
            plaintext = http_ece.decrypt(base64.b64decode(message["body_base64"]), private_key=private_key,
                                         auth_secret=b64url(subscription["keys"]["auth"]), version="aes128gcm")
            assert json.loads(plaintext) == expected
            assert message["plaintext"] == plaintext.decode()
    assert outside["connections_opened"] == 0


def test_subscriptions_outside_allowed_hosts_are_refused_before_any_connection(world):
    [ok] = world.a.subscriptions(1)
    [elsewhere] = world.outside.subscriptions(1)
    [by_ip] = world.a.subscriptions(1, host="127.0.0.1:%d" % world.a.port)
    [foreign] = world.a.subscriptions(1, host="push.example.net")
    cases = [
        (elsewhere, "notifications[0].tokens[1].endpoint: port %d of localhost is not allowed" % world.outside.port),
        (foreign, 'notifications[0].tokens[1].endpoint: "push.example.net" is not an allowed push service'),
        (by_ip, "notifications[0].tokens[1].endpoint: 127.0.0.1:%d is an IP address" % world.a.port),
        (dict(ok, keys=dict(ok["keys"], p256dh="BAAA")), "notifications[0].tokens[1].keys.p256dh: is 3 bytes"),
        (dict(ok, keys=dict(ok["keys"], auth="AAAA")), "notifications[0].tokens[1].keys.auth: is 3 bytes"),
        (dict(ok, endpoint=ok["endpoint"].replace("https:", "http:")),
         "notifications[0].tokens[1].endpoint: must be an https:// URL"),
    ]
    for bad, message in cases:
        with pytest.raises(grpc.RpcError) as refused:
            world.push.Send(push_pb2.SendRequest(notifications=[push_pb2.Notification(
                app="web", tokens=[browser(ok), browser(bad)], alert=push_pb2.Alert(body="x"))]), timeout=10)
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert refused.value.details().startswith(message), refused.value.details()
    with pytest.raises(grpc.RpcError) as refused:
        world.registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="web", token=browser(elsewhere)))
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert refused.value.details().startswith("token.endpoint: port %d of localhost is not allowed" % world.outside.port)
    stats_a, _, outside = world.stop()
    # One connection: this test's own request for a subscription; none from the gateway.
    assert outside["connections_opened"] == 1 and outside["pushes"] == 0, outside
    assert stats_a["pushes"] == 0


def test_publish_to_a_topic_of_web_subscribers_disables_the_gone_ones(world):
    subscriptions = world.a.subscriptions(6, prefix="ok-") + world.b.subscriptions(3, prefix="gone-")
    endpoints = []
    for s in subscriptions:
        endpoint = world.registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="web", token=browser(s)))
        endpoints.append(endpoint)
    # The canonical form: the same subscription spelled differently is the same endpoint.
    respelled = json.dumps({"keys": {"auth": subscriptions[0]["keys"]["auth"] + "==",
                                     "p256dh": subscriptions[0]["keys"]["p256dh"]},
                            "endpoint": subscriptions[0]["endpoint"]}, indent=2)
    again = world.registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="web", token=respelled))
    assert again.id == endpoints[0].id
    assert json.loads(again.token) == {"endpoint": subscriptions[0]["endpoint"],
                                       "keys": {"p256dh": subscriptions[0]["keys"]["p256dh"],
                                                "auth": subscriptions[0]["keys"]["auth"]}}
    world.registry.CreateTopic(registry_pb2.CreateTopicRequest(name="orders"))
    for endpoint in endpoints:
        world.registry.Subscribe(registry_pb2.SubscribeRequest(topic="orders", endpoint_id=endpoint.id))
    message = json.dumps({"default": "fallback", "WEBPUSH": json.dumps({"title": "Sale", "body": "-20%"})})
    published = world.push.Publish(push_pb2.PublishRequest(topic="orders", message=message,
                                                           message_structure="json"))
    done = wait_done(world.push, published.message_id)
    assert done.delivered == 6 and done.failed + done.rejected == 3, done
    listed = world.registry.ListEndpoints(registry_pb2.ListEndpointsRequest(app="web")).endpoints
    state = {e.id: (e.enabled, e.disabled_reason) for e in listed}
    for s, endpoint in zip(subscriptions, endpoints):
        enabled, reason = state[endpoint.id]
        if "/gone-" in s["endpoint"]:
            assert not enabled and reason, (s["endpoint"], reason)
        else:
            assert enabled and reason == ""
    stats_a, stats_b, _ = world.stop()
    assert stats_a["delivered"] == 6 and stats_b["by_status"].get("410") == 3
    assert {m["plaintext"] for m in stats_a["messages"]} == {'{"title": "Sale", "body": "-20%"}'}
