"""Huawei Push Kit (HMS, issue 43) end to end: stock grpcio stubs against `pushgate serve` with hms apps,
delivering to the independent Huawei look-alike (hms_lookalike.py), which was written from Huawei's
documentation alone (its sources, and what could not be verified, are in hms_lookalike.md):

- api "v3" (HarmonyOS NEXT): `POST /v3/{projectId}/messages:send` with `push-type` and a JWT the
  gateway signs (PS256) with the service account Huawei's console downloads; the look-alike verifies
  it on every request.
- api "v2" (the OAuth 2.0 API): an access token from `/oauth2/v3/token` (client credentials: the app
  id and its secret), then `POST /v1/{appId}/messages:send` with `Authorization: Bearer`.

One request per device token; each token DELIVERED, REJECTED (an invalid token, answered 80300007),
or FAILED only once the retries of 429/503/5xx are spent."""
import base64
import hashlib
import json
import os
import re
import subprocess
import time

import grpc
import pytest

from conftest import Server, wait_done
from hms_lookalike import CATEGORIES, JWT_AUDIENCE, start_hms_lookalike
from mock_process import pushgate_binary
from pushgate.v1 import push_pb2, push_pb2_grpc, registry_pb2, registry_pb2_grpc

DELIVERED, REJECTED, FAILED = push_pb2.STATUS_DELIVERED, push_pb2.STATUS_REJECTED, push_pb2.STATUS_FAILED
APPS = {"v3": "harmony", "v2": "huawei"}


def hms_v3_app(name, hms, **extra):
    """An hms app on the v3 API (service-account JWT) delivering to the look-alike `hms`."""
    app = {"name": name, "platform": "hms", "api": "v3", "service_account_file": hms.service_account_file,
           "url": hms.base_url, "ca_file": hms.ca_file}
    app.update(extra)
    return app


def hms_v2_app(name, hms, **extra):
    """An hms app on the OAuth 2.0 API (app id + client secret) delivering to the look-alike `hms`."""
    app = {"name": name, "platform": "hms", "api": "v2", "app_id": hms.app_id,
           "client_secret_file": hms.client_secret_file, "url": hms.base_url, "token_url": hms.token_url,
           "ca_file": hms.ca_file}
    app.update(extra)
    return app


def device_token(api, label):
    """A push token shaped like Huawei's (HarmonyOS `MAMzLgE4G98BAAAA…`, HMS Core `ANPpqLe8aTPl9tsB2Iu_…`),
    unique per call."""
    seed = hashlib.sha256(("%s %s %d %d" % (api, label, os.getpid(), time.time_ns())).encode()).digest()
    tail = base64.urlsafe_b64encode(seed * 3).decode().rstrip("=")
    if api == "v3":
        return "MAMzLgE4G98BAAAA" + tail.replace("-", "").replace("_", "")[:80]
    return "ANPpqLe8aTPl9tsB2Iu_" + tail[:110]


def send(push, app, tokens, **fields):
    n = push_pb2.Notification(app=app, tokens=tokens, **fields)
    return push.Send(push_pb2.SendRequest(notifications=[n]), timeout=45).results


def describe(results):
    return [(r.token[:20], push_pb2.Status.Name(r.status), r.http_status, r.reason, r.attempts) for r in results]


def summary(records):
    return [(r["api"], r["path"], r["status"], r["code"], r["msg"], r["auth"].get("why")) for r in records]


def alert_of_v1(message):
    """Title and body of a v1 message: in `message.android.notification` or `message.notification`."""
    for holder in ((message.get("android") or {}).get("notification"), message.get("notification")):
        if isinstance(holder, dict) and holder.get("title"):
            return holder.get("title"), holder.get("body")
    return None, None


@pytest.fixture(scope="module")
def hms(tmp_path_factory):
    server = start_hms_lookalike(str(tmp_path_factory.mktemp("hms-lookalike")))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def gateway(tmp_path_factory, hms):
    config = {"apps": [hms_v3_app(APPS["v3"], hms), hms_v2_app(APPS["v2"], hms)]}
    s = Server(config, str(tmp_path_factory.mktemp("pushgate-hms")))
    yield s
    s.stop()
    assert s.proc.returncode == 0, "pushgate exited with %s:\n%s" % (s.proc.returncode, "".join(s.log))


@pytest.fixture
def stubs(gateway):
    channel = grpc.insecure_channel(gateway.address)
    yield push_pb2_grpc.PushStub(channel), registry_pb2_grpc.RegistryStub(channel)
    channel.close()


def own_gateway(tmp_path, apps_of):
    """A look-alike and a gateway of this test's own (for counts no other test may disturb)."""
    directory = tmp_path / "hms"
    directory.mkdir()
    hms = start_hms_lookalike(str(directory))
    try:
        server = Server({"apps": apps_of(hms)}, str(tmp_path))
    except BaseException:
        hms.stop()
        raise
    return hms, server


def test_v3_sends_carry_a_jwt_huawei_verifies_push_type_0_and_the_alert(stubs, hms):
    """Per Huawei's "Generating a JWT Based on a Service Account": header kid/typ/alg PS256, claims iss =
    sub_account, the fixed aud, iat and exp an hour apart, signed with the service account's key (the
    look-alike checks the PSS signature); the scenario body carries title and body in
    payload.notification, a documented category and a clickAction, and the data (data_json) as
    clickAction.data, the only place an alert message carries data for the app."""
    push, _ = stubs
    tokens = [device_token("v3", "alert%d" % n) for n in range(5)]
    data = {"order": "42", "kind": "receipt"}
    results = send(push, APPS["v3"], tokens, alert=push_pb2.Alert(title="Order 42", body="is on its way"),
                   data_json=json.dumps(data))
    assert [r.status for r in results] == [DELIVERED] * 5, describe(results)
    assert [r.token for r in results] == tokens
    assert all(r.http_status == 200 and r.attempts == 1 for r in results), describe(results)
    account = hms.account
    for token in tokens:
        records = hms.records_for(token)
        assert len(records) == 1, "one request per token, sent once: %s" % summary(records)
        record = records[0]
        assert record["api"] == "v3" and record["path"] == "/v3/%s/messages:send" % account["project_id"], \
            summary(records)
        assert record["code"] == "80000000", summary(records)
        auth = record["auth"]
        assert auth["ok"], auth.get("why")
        assert auth["header"] == {"kid": account["key_id"], "typ": "JWT", "alg": "PS256"}
        claims = auth["claims"]
        assert claims["iss"] == account["sub_account"] and claims["aud"] == JWT_AUDIENCE, claims
        assert 0 < claims["exp"] - claims["iat"] <= 3600, claims
        assert claims["iat"] <= time.time() + 60, claims
        assert record["headers"]["push-type"] == "0"
        assert record["headers"]["content-type"].lower().startswith("application/json")
        body = record["body"]
        assert body["target"] == {"token": [token]}
        notification = body["payload"]["notification"]
        assert notification["title"] == "Order 42" and notification["body"] == "is on its way"
        assert notification["category"] in CATEGORIES - {"PLAY_VOICE"}, notification
        assert notification["clickAction"]["actionType"] in (0, 1), notification
        assert notification["clickAction"].get("data") == data, notification
        assert record["unknown"] == [], "members Huawei's reference does not have: %s" % record["unknown"]
        assert body.get("pushOptions", {}).get("testMessage", False) is False, "test messages are capped at 1000 a day"


def test_v3_signs_one_jwt_and_reuses_it(stubs, hms):
    """Huawei: "You are advised to set the JWT validity period to 3600 seconds, within which a JWT can
    be reused" (not one RSA-4096 signature per request)."""
    push, _ = stubs
    tokens = [device_token("v3", "reuse%d" % n) for n in range(30)]
    results = send(push, APPS["v3"], tokens, alert=push_pb2.Alert(title="t", body="b"))
    assert [r.status for r in results] == [DELIVERED] * 30, describe(results)
    jwts = {hms.records_for(t)[0]["auth"]["jwt"] for t in tokens}
    assert len(jwts) <= 2, "%d JWTs for 30 requests" % len(jwts)


def test_v2_fetches_one_access_token_and_reuses_it(tmp_path):
    """The client-credentials grant (form grant_type, client_id = the app id, client_secret) once; every
    send carries that token verbatim (Huawei's tokens hold "/", which its JSON escapes as "\\/") to
    /v1/{appId}/messages:send, one token per request, with the alert and the data (message.data, a
    JSON string)."""
    hms, server = own_gateway(tmp_path, lambda hms: [hms_v2_app("huawei", hms, connections=2)])
    try:
        data = {"order": "42", "kind": "receipt"}
        first = [device_token("v2", "first%d" % n) for n in range(20)]
        second = [device_token("v2", "second%d" % n) for n in range(10)]
        with grpc.insecure_channel(server.address) as channel:
            push = push_pb2_grpc.PushStub(channel)
            results = list(send(push, "huawei", first, alert=push_pb2.Alert(title="Order 42", body="is on its way"),
                           data_json=json.dumps(data)))
            results += list(send(push, "huawei", second, alert=push_pb2.Alert(title="again", body="later")))
        assert [r.status for r in results] == [DELIVERED] * 30, describe(results)
        assert all(r.http_status == 200 and r.attempts == 1 for r in results), describe(results)
        assert len(hms.token_requests) == 1, "one access token for both Sends: %s" % [
            (t["form"].get("grant_type"), t.get("error")) for t in hms.token_requests]
        fetch = hms.token_requests[0]
        assert fetch["headers"][":method"] == "POST"
        assert fetch["headers"].get("content-type", "").lower().startswith("application/x-www-form-urlencoded")
        secret = open(hms.client_secret_file).read().strip()
        form = fetch["form"]
        assert (form.get("grant_type"), form.get("client_id"), form.get("client_secret")) == (
            "client_credentials", hms.app_id, secret), form
        issued = fetch["issued"]
        assert issued and "/" in issued
        for token in first + second:
            records = hms.records_for(token)
            assert len(records) == 1, summary(records)
            record = records[0]
            assert record["api"] == "v1" and record["path"] == "/v1/%s/messages:send" % hms.app_id, summary(records)
            assert record["headers"]["authorization"] == "Bearer " + issued
            assert record["code"] == "80000000", summary(records)
            assert record["headers"]["content-type"].lower().startswith("application/json")
            assert record["body"].get("validate_only", False) is False, "validate_only true delivers nothing"
            assert record["body"]["message"]["token"] == [token]
            assert record["unknown"] == [], "members Huawei's reference does not have: %s" % record["unknown"]
        message = hms.records_for(first[0])[0]["body"]["message"]
        assert alert_of_v1(message) == ("Order 42", "is on its way"), message
        carried = message.get("data", (message.get("android") or {}).get("data"))
        assert isinstance(carried, str) and json.loads(carried) == data, message
        message = hms.records_for(second[0])[0]["body"]["message"]
        assert alert_of_v1(message) == ("again", "later"), message
    finally:
        server.stop()
        hms.stop()


@pytest.mark.parametrize("status", [401, 200])
def test_v2_renews_an_expired_access_token_once(tmp_path, status):
    """80200003 "Access token expired": Huawei's table puts it under HTTP 401, and it has been seen
    answered with HTTP 200 in the field; either way one new token for all the requests that saw it,
    and each of them sent again."""
    hms, server = own_gateway(tmp_path, lambda hms: [hms_v2_app("huawei", hms, connections=2)])
    try:
        with grpc.insecure_channel(server.address) as channel:
            push = push_pb2_grpc.PushStub(channel)
            first = send(push, "huawei", [device_token("v2", "before")], alert=push_pb2.Alert(title="t", body="b"))
            assert first[0].status == DELIVERED, describe(first)
            assert len(hms.issued_tokens()) == 1
            hms.expire_access_tokens(status=status)
            time.sleep(0.1)
            tokens = [device_token("v2", "after%d" % n) for n in range(10)]
            results = send(push, "huawei", tokens, alert=push_pb2.Alert(title="t", body="b"))
        assert [r.status for r in results] == [DELIVERED] * 10, describe(results)
        assert len(hms.issued_tokens()) == 2, "renewed once: %d token requests" % len(hms.token_requests)
        renewed = hms.issued_tokens()[1]
        for token in tokens:
            accepted = hms.accepted_for(token)
            assert len(accepted) == 1 and accepted[0]["headers"]["authorization"] == "Bearer " + renewed, \
                summary(hms.records_for(token))
    finally:
        server.stop()
        hms.stop()


@pytest.mark.parametrize("api,status", [("v3", 400), ("v3", 200), ("v2", 200), ("v2", 400)])
def test_an_invalid_token_is_rejected_and_not_retried(stubs, hms, api, status):
    """A single-token request whose token Huawei refuses is answered 80300007 "All the tokens are
    invalid" (v3: msg {"failure":1,"illegalTokens":{…}}). Huawei does not say with which HTTP status;
    200 has been seen in the field and 400 is what its HTTP table calls a parameter error."""
    push, _ = stubs
    good, bad, other = (device_token(api, "%s-%d" % (label, status)) for label in ("good", "bad", "other"))
    hms.add_invalid([bad], status=status)
    results = send(push, APPS[api], [good, bad, other], alert=push_pb2.Alert(title="t", body="b"))
    assert [r.status for r in results] == [DELIVERED, REJECTED, DELIVERED], describe(results)
    rejected = results[1]
    assert rejected.http_status == status, describe(results)
    assert any(s in rejected.reason for s in ("80300007", "All the tokens are invalid", "tokenFormatError")), \
        rejected.reason
    assert rejected.attempts == 1 and len(hms.records_for(bad)) == 1, "a refusal is final: %s" % summary(
        hms.records_for(bad))


@pytest.mark.parametrize("api", ["v3", "v2"])
def test_publish_disables_the_endpoint_of_an_invalid_token(stubs, hms, api):
    push, registry = stubs
    topic = "hms-%s-%d" % (api, time.time_ns())
    registry.CreateTopic(registry_pb2.CreateTopicRequest(name=topic), timeout=10)
    good = [device_token(api, "pub-good%d" % n) for n in range(2)]
    bad = device_token(api, "pub-bad")
    hms.add_invalid([bad])
    endpoints = {}
    for token in good + [bad]:
        endpoint = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app=APPS[api], token=token), timeout=10)
        registry.Subscribe(registry_pb2.SubscribeRequest(topic=topic, endpoint_id=endpoint.id), timeout=10)
        endpoints[token] = endpoint.id
    text = "The sale ends at noon %d" % time.time_ns()
    published = push.Publish(push_pb2.PublishRequest(topic=topic, message=text), timeout=10)
    done = wait_done(push, published.message_id)
    assert (done.delivered, done.rejected, done.failed) == (2, 1, 0), done
    after = registry.GetEndpoint(registry_pb2.GetEndpointRequest(id=endpoints[bad]), timeout=10)
    assert not after.enabled and after.disabled_reason, after
    assert len(hms.records_for(bad)) == 1, summary(hms.records_for(bad))
    for token in good:
        assert registry.GetEndpoint(registry_pb2.GetEndpointRequest(id=endpoints[token]), timeout=10).enabled
        accepted = hms.accepted_for(token)
        assert len(accepted) == 1 and accepted[0]["tokens"] == [token], summary(hms.records_for(token))
        assert text in json.dumps(accepted[0]["body"], ensure_ascii=False), accepted[0]["body"]


@pytest.mark.parametrize("api", ["v3", "v2"])
def test_flow_control_and_server_errors_are_retried_then_delivered(stubs, hms, api):
    """Huawei answers flow control with HTTP 503 (and documents 500 and 502); 429 is retried by the
    gateway's contract. A token answered 503 past the retries is FAILED, after the sends it was
    allowed (docs/api.md: 3 in all by default)."""
    push, _ = stubs
    scripts = {"503": [503], "503x2": [503, 503], "500": [500], "502": [502], "429": [429]}
    tokens = {name: device_token(api, "retry-" + name) for name in scripts}
    for name, statuses in scripts.items():
        hms.script(tokens[name], *statuses)
    doomed = device_token(api, "retry-doomed")
    hms.script(doomed, *[503] * 8)
    results = send(push, APPS[api], list(tokens.values()) + [doomed], alert=push_pb2.Alert(title="t", body="b"))
    by_token = {r.token: r for r in results}
    for name, statuses in scripts.items():
        result = by_token[tokens[name]]
        assert result.status == DELIVERED, (name, describe(results))
        assert result.attempts == len(statuses) + 1, (name, describe(results))
        assert len(hms.records_for(tokens[name])) == len(statuses) + 1, summary(hms.records_for(tokens[name]))
        assert len(hms.accepted_for(tokens[name])) == 1
    result = by_token[doomed]
    assert result.status == FAILED and result.http_status == 503, describe(results)
    seen = len(hms.records_for(doomed))
    assert result.attempts == seen and seen >= 2, (seen, describe(results))


@pytest.mark.parametrize("version", ["1.1", "2"])
def test_http_version_is_honoured(tmp_path, hms, version):
    """The look-alike offers h2 and http/1.1 by ALPN (Huawei does not document which it speaks)."""
    server = Server({"apps": [hms_v3_app("harmony", hms, http_version=version)]}, str(tmp_path))
    try:
        tokens = [device_token("v3", "http%s-%d" % (version, n)) for n in range(3)]
        with grpc.insecure_channel(server.address) as channel:
            results = send(push_pb2_grpc.PushStub(channel), "harmony", tokens, alert=push_pb2.Alert(title="t", body="b"))
        assert [r.status for r in results] == [DELIVERED] * 3, describe(results)
        protocols = {hms.records_for(t)[0]["protocol"] for t in tokens}
        assert protocols == {"http/1.1" if version == "1.1" else "h2"}
    finally:
        server.stop()


def without(app, key):
    app = dict(app)
    del app[key]
    return app


def account_without_key_id(hms, tmp_path):
    with open(hms.service_account_file) as fh:
        account = json.load(fh)
    del account["key_id"]
    path = tmp_path / "no-key-id.json"
    path.write_text(json.dumps(account))
    return hms_v3_app("harmony", hms, service_account_file=str(path))


CONFIG_ERRORS = {
    "v3 without service_account_file": (lambda hms, tmp: without(hms_v3_app("harmony", hms), "service_account_file"),
                                        r"service_account_file"),
    "v2 without app_id": (lambda hms, tmp: without(hms_v2_app("huawei", hms), "app_id"), r"\bapp_id\b"),
    "v2 without client_secret_file": (lambda hms, tmp: without(hms_v2_app("huawei", hms), "client_secret_file"),
                                      r"client_secret_file"),
    "api v9": (lambda hms, tmp: dict(hms_v3_app("harmony", hms), api="v9"), r"\bapi\b.*v9|v9.*\bapi\b"),
    "a service account without key_id": (account_without_key_id, r"key_id"),
}


@pytest.mark.parametrize("case", sorted(CONFIG_ERRORS))
def test_a_bad_hms_config_stops_serve_naming_the_field(tmp_path, hms, case):
    make, pattern = CONFIG_ERRORS[case]
    config_path = tmp_path / "pushgate.json"
    config_path.write_text(json.dumps({"apps": [make(hms, tmp_path)]}))
    env = {k: v for k, v in os.environ.items() if k not in ("HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy")}
    proc = subprocess.Popen([pushgate_binary(), "serve", "--config", str(config_path), "--listen", "127.0.0.1:0",
                             "--store", str(tmp_path / "pushgate.db")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        out, err = proc.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail("pushgate serve ran with a bad config (%s):\n%s%s" % (case, out, err))
    assert proc.returncode != 0, "pushgate serve accepted %s:\n%s%s" % (case, out, err)
    assert re.search(pattern, out + err), "the error does not name the field (%s):\n%s%s" % (case, out, err)
