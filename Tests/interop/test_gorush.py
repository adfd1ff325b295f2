"""gorush's `POST /api/push` on the API port: gorush's own README request examples for iOS and
Android (tokens replaced by real-shaped ones), sent with curl over HTTP/1.1 and HTTP/2 (h2c prior
knowledge), delivered to the independent APNs and FCM look-alikes; answers in gorush's sync-mode
shape; refusals in gorush's error shape, naming the key."""
import json
import subprocess
import time

import pytest

from conftest import Server, app_config, fcm_app_config

IOS = ["%02x" % n * 32 for n in (0x11, 0x12)]
ANDROID = ["fcm-gorush-%d:APA91b%s" % (n, "y" * 120) for n in (1, 2)]
UNREGISTERED = "dd" * 32


@pytest.fixture(scope="module")
def gateway(tmp_path_factory, lookalike, fcm_lookalike):
    config = {"apps": [app_config("ios", "com.example.app", lookalike),
                       app_config("ios-sandbox", "com.example.app", lookalike, sandbox=True),
                       fcm_app_config("android", fcm_lookalike)]}
    s = Server(config, str(tmp_path_factory.mktemp("pushgate-gorush")))
    yield s
    s.stop()
    assert s.proc.returncode == 0, "pushgate exited with %s:\n%s" % (s.proc.returncode, "".join(s.log))


def post(gateway, body, http="1.1", path="/api/push", headers=()):
    """curl's answer to a JSON POST: (status, parsed body)."""
    version = ["--http1.1"] if http == "1.1" else ["--http2-prior-knowledge"]
    args = ["curl", "-sS", "--max-time", "30", *version, "-o", "-", "-w", "\n%{http_code} %{http_version}",
            "-H", "content-type: application/json", "--data-binary", "@-"]
    for header in headers:
        args += ["-H", header]
    out = subprocess.run(args + ["http://%s%s" % (gateway.address, path)], input=json.dumps(body).encode(),
                         capture_output=True, check=True, timeout=60).stdout.decode()
    text, _, tail = out.rpartition("\n")
    status, version = tail.split()
    assert version == ("1.1" if http == "1.1" else "2"), version
    return int(status), json.loads(text)


def since(lookalike):
    return len(lookalike.requests)


def apns_payloads(lookalike, start):
    return [(h, json.loads(b)) for h, b in lookalike.requests[start:]]


# gorush README, "iOS Example": each notification, with its tokens.
IOS_EXAMPLES = [
    {"tokens": IOS, "platform": 1, "message": "Hello World iOS!"},
    {"tokens": IOS, "platform": 1, "badge": 5,
     "alert": {"title": "Game Request", "body": "Bob wants to play poker", "action-loc-key": "PLAY"}},
    {"tokens": IOS, "platform": 1, "message": "You got your emails.", "badge": 9,
     "sound": {"critical": 1, "name": "default", "volume": 1.0}},
    {"tokens": IOS, "platform": 1, "message": "Hello World iOS!", "data": {"key1": "welcome", "key2": 2}},
]


@pytest.mark.parametrize("http", ["1.1", "2"])
def test_gorush_ios_examples_deliver(gateway, lookalike, http):
    for example in IOS_EXAMPLES:
        start = since(lookalike)
        status, answer = post(gateway, {"notifications": [example]}, http)
        assert (status, answer) == (200, {"counts": 2, "logs": [], "success": "ok"}), example
        got = apns_payloads(lookalike, start)
        assert sorted(h[":path"] for h, _ in got) == ["/3/device/" + t for t in IOS]
        for headers, payload in got:
            assert headers["apns-topic"] == "com.example.app"
            aps = payload["aps"]
            if "message" in example:
                assert aps["alert"]["body"] == example["message"]
            if "badge" in example:
                assert aps["badge"] == example["badge"]
            if "alert" in example:
                assert aps["alert"] == {"title": "Game Request", "body": "Bob wants to play poker",
                                        "action-loc-key": "PLAY"}
            if "sound" in example:
                assert aps["sound"] == {"critical": 1, "name": "default", "volume": 1.0}
            if "data" in example:
                assert (payload["key1"], payload["key2"]) == ("welcome", 2)


def test_gorush_production_and_development_pick_the_environment(gateway, lookalike):
    # gorush's "different environment" example: two notifications, one answer counting all four tokens.
    start = since(lookalike)
    status, answer = post(gateway, {"notifications": [
        {"tokens": IOS, "platform": 1, "production": True, "message": "Hello World iOS Production!"},
        {"tokens": IOS, "platform": 1, "development": True, "message": "Hello World iOS Sandbox!"}]})
    assert (status, answer) == (200, {"counts": 4, "logs": [], "success": "ok"})
    bodies = sorted(p["aps"]["alert"]["body"] for _, p in apns_payloads(lookalike, start))
    assert bodies == ["Hello World iOS Production!"] * 2 + ["Hello World iOS Sandbox!"] * 2


def test_gorush_live_activity_push_to_start(gateway, lookalike):
    start = since(lookalike)
    status, answer = post(gateway, {"notifications": [{
        "tokens": [IOS[0]], "platform": 1, "push_type": "liveactivity",
        "topic": "com.example.app.push-type.liveactivity", "event": "start", "timestamp": 1685952000,
        "content-state": {"homeScore": 0, "awayScore": 0, "minute": 1, "period": "1H"},
        "attributes-type": "FootballMatchAttributes",
        "attributes": {"homeTeam": "Team 1", "awayTeam": "Team 2", "league": "Premier League"},
        "alert": {"title": "Team 1 vs Team 2", "body": "Kick-off! The match has started."}}]})
    assert (status, answer) == (200, {"counts": 1, "logs": [], "success": "ok"})
    [(headers, payload)] = apns_payloads(lookalike, start)
    assert headers["apns-push-type"] == "liveactivity"
    assert headers["apns-topic"] == "com.example.app.push-type.liveactivity"
    aps = payload["aps"]
    assert (aps["event"], aps["timestamp"], aps["attributes-type"]) == ("start", 1685952000, "FootballMatchAttributes")
    assert aps["content-state"] == {"homeScore": 0, "awayScore": 0, "minute": 1, "period": "1H"}
    assert aps["attributes"]["league"] == "Premier League"


# gorush README, "Android Example".
ANDROID_EXAMPLES = [
    {"tokens": ANDROID, "platform": 2, "message": "Hello World Android!", "title": "You got message"},
    {"tokens": ANDROID, "platform": 2, "message": "Hello World Android!", "title": "You got message",
     "fcm_options": {"analytics_label": "example"}},
    {"tokens": ANDROID, "platform": 2, "message": "Hello World Android!", "title": "You got message",
     "notification": {"icon": "myicon", "color": "#112244"}},
    {"tokens": ANDROID, "platform": 2, "message": "Hello World Android!", "title": "You got message",
     "data": {"Nick": "Mario", "body": "great match!", "Room": "PortugalVSDenmark"}},
]


@pytest.mark.parametrize("http", ["1.1", "2"])
def test_gorush_android_examples_deliver(gateway, fcm_lookalike, http):
    for example in ANDROID_EXAMPLES:
        start = len(fcm_lookalike.messages)
        status, answer = post(gateway, {"notifications": [example]}, http)
        assert (status, answer) == (200, {"counts": 2, "logs": [], "success": "ok"}), example
        got = fcm_lookalike.messages[start:]
        assert sorted(t for t, _ in got) == sorted(ANDROID)
        for _, message in got:
            assert message["notification"] == {"title": "You got message", "body": "Hello World Android!"}
            if "fcm_options" in example:
                assert message["fcm_options"] == {"analytics_label": "example"}
            if "notification" in example:
                assert message["android"]["notification"] == {"icon": "myicon", "color": "#112244"}
            if "data" in example:
                assert message["data"] == example["data"]


def test_gorush_android_topic_message(gateway, fcm_lookalike):
    start = len(fcm_lookalike.messages)
    status, answer = post(gateway, {"notifications": [
        {"topic": "highScores", "platform": 2, "message": "This is a Firebase Cloud Messaging Topic Message"}]})
    assert (status, answer) == (200, {"counts": 1, "logs": [], "success": "ok"})
    [(_, message)] = fcm_lookalike.messages[start:]
    assert message["topic"] == "highScores" and "token" not in message
    assert message["notification"]["body"] == "This is a Firebase Cloud Messaging Topic Message"


def test_gorush_logs_the_tokens_that_failed(gateway):
    status, answer = post(gateway, {"notifications": [
        {"tokens": [IOS[0], UNREGISTERED], "platform": 1, "message": "m1", "notif_id": "n-1"}]}, "2")
    assert status == 200
    assert answer == {"counts": 2, "success": "ok", "logs": [
        {"notif_id": "n-1", "type": "failed-push", "platform": "ios", "token": UNREGISTERED, "message": "m1",
         "error": "Unregistered"}]}


@pytest.mark.parametrize("body,message", [
    ({}, "Missing notifications field."),
    ({"notifications": []}, "Notifications field is empty."),
    ({"notifications": [{"tokens": ["a"], "platform": 3, "message": "m"}]},
     "notifications[0].platform: no hms app is configured for platform 3"),
    ({"notifications": [{"tokens": [IOS[0]], "platform": 1, "priority": "urgent"}]},
     'notifications[0].priority: must be normal or high, not "urgent"'),
    ({"notifications": [{"tokens": ["not-hex"], "platform": 1, "message": "m"}]},
     "notifications[0].tokens[0]: APNs device token must be 64-200 hex digits"),
])
def test_gorush_refusals_name_the_key(gateway, body, message):
    for http in ("1.1", "2"):
        status, answer = post(gateway, body, http)
        assert (status, answer) == (400, {"code": 400, "message": message})


def test_gorush_wrong_method_and_content_type(gateway):
    out = subprocess.run(["curl", "-sS", "-o", "-", "-w", "\n%{http_code}", "http://%s/api/push" % gateway.address],
                         capture_output=True, check=True, timeout=60).stdout.decode()
    assert out.rpartition("\n")[2] == "405"
    args = ["curl", "-sS", "-o", "-", "-w", "\n%{http_code}", "-H", "content-type: text/plain", "--data-binary",
            "{}", "http://%s/api/push" % gateway.address]
    text, _, status = subprocess.run(args, capture_output=True, check=True, timeout=60).stdout.decode().rpartition("\n")
    assert status == "415"
    assert json.loads(text) == {"code": 415, "message": 'content-type: expected application/json, not "text/plain"'}


KEY = "gorush-key-" + "k" * 24
IOS_ONLY = "gorush-ios-" + "i" * 24


@pytest.fixture(scope="module")
def keyed_gateway(tmp_path_factory, lookalike, fcm_lookalike):
    import hashlib

    def key(name, value, apps):
        return {"name": name, "key_sha256": hashlib.sha256(value.encode()).hexdigest(), "apps": apps}

    config = {"apps": [app_config("ios", "com.example.app", lookalike), fcm_app_config("android", fcm_lookalike)],
              "api_keys": [key("sender", KEY, ["*"]), key("ios-only", IOS_ONLY, ["ios"])]}
    s = Server(config, str(tmp_path_factory.mktemp("pushgate-gorush-keys")))
    yield s
    s.stop()
    assert s.proc.returncode == 0, "".join(s.log)


def test_gorush_api_keys_as_for_grpc(keyed_gateway, lookalike):
    body = {"notifications": [{"tokens": [IOS[0]], "platform": 1, "message": "keyed"}]}
    status, answer = post(keyed_gateway, body)
    assert status == 401 and answer["code"] == 401 and answer["message"].startswith("authorization: missing")
    status, answer = post(keyed_gateway, body, "2", headers=["authorization: Bearer wrong-key"])
    assert (status, answer["code"]) == (401, 401)
    assert post(keyed_gateway, body, headers=["authorization: Bearer " + KEY]) == (
        200, {"counts": 1, "logs": [], "success": "ok"})
    android = {"notifications": [{"tokens": [ANDROID[0]], "platform": 2, "message": "m"}]}
    status, answer = post(keyed_gateway, android, headers=["authorization: Bearer " + IOS_ONLY])
    assert (status, answer) == (403, {"code": 403, "message":
                                      'notifications[0].app: key "ios-only" may not send for app "android"'})
