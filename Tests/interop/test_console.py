"""The operator's console (issue 44, docs/console.md) in a real browser: headless Chromium driven by
Selenium (Tests/interop/browser.py) against the real gateway serving `/console/`, with a
`pushgate mock-apns` behind two apps ("shop" and "news") that answers 400 BadDeviceToken for the
tokens of BAD and 200 for any other.

Checked, by the element ids docs/console.md keeps stable:
- `/console/` answers with the documented security headers (CSP `script-src 'self'`, `connect-src
  'self'`, no `unsafe-inline`; `X-Frame-Options: DENY`, …), takes GET only (POST 405, a body 413);
  `"console": false` makes it a 404.
- An admin key signs in; the overview lists both apps, and while `pushgate bench --target` (to
  "shop") and grpcio (to "news") send about 2,000 notifications a second (at least 300 asserted) for
  8 s, the results-per-second chart moves
  (`data-last-delivered` > 0, `data-points` growing).
- "Send a test" to one good and one bad token shows each result: delivered with HTTP 200 and the
  apns-id (the mock counts that token delivered), rejected with HTTP 400 and `BadDeviceToken`.
- A Publish to a topic (endpoints, topic and subscriptions made with grpcio, some tokens bad) is in the
  message list, and its page reaches COMPLETED with GetMessage's counts and lists the rejected
  recipients from the delivery log.
- Endpoints: found by token, disabled with its button (GetEndpoint agrees), the topic's subscriber
  count; a user id and custom data `<script>…</script>` are shown as those characters, and never run.
- Live events: a rejected Send shows up as an `li.event[data-kind=rejected]`.
- The admin's browser logs no error and requests nothing but the gateway's own origin (and `data:`).
- A key limited to "news" sees only that app, no enable/disable buttons, and `permission_denied` on
  the message list; a wrong key is told `unauthenticated` at sign-in.

Screenshots of each page go to $PUSHGATE_CONSOLE_SCREENSHOTS when set (docs/console), else to the
test's temporary directory."""
import hashlib
import json
import os
import subprocess
import threading
import time
import urllib.error
import urllib.request

import grpc
import pytest
try:
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import Select
except ImportError:  # Selenium comes with the browser (scripts/requirements.txt); the env fixture skips without it
    TimeoutException = Select = None

from browser import Browser, skip_without_browser
from conftest import Server
from mock_process import MockProcess
from pushgate.v1 import push_pb2, push_pb2_grpc, registry_pb2, registry_pb2_grpc

ADMIN_KEY = "pgk_console-admin-" + "a" * 32
NEWS_KEY = "pgk_console-news-" + "n" * 32
WRONG_KEY = "pgk_console-wrong-" + "w" * 32

BAD = ["%064x" % (0xBAD0000 + i) for i in range(100)]     # 400 BadDeviceToken at the mock
LOAD_GOOD = ["%064x" % (0x10AD0000 + i) for i in range(200)]
LOAD_BAD = BAD[90:100]
SEND_GOOD, SEND_BAD = "%064x" % 0x5E4D600D, BAD[0]
TOPIC = "breaking-news"
# The topic's subscribers: (app, token, user id).
TOPIC_ENDPOINTS = ([("shop", "%064x" % (0x70B1C000 + i), "reader-7" if i == 0 else "") for i in range(5)]
                   + [("shop", BAD[10], "reader-7"), ("shop", BAD[11], "")]
                   + [("news", "%064x" % (0x7E575000 + i), "") for i in range(3)]
                   + [("news", BAD[12], "")])
EVENTS_BAD = BAD[20]
XSS = "<script>window.__pwned=1</script>"
XSS_DATA = '<img src="data:," onerror="window.__pwned=2">' + XSS

LOAD_SECONDS = 8
SENDS_PER_SECOND = 20        # per load thread, of 50 tokens each


def sha256(key):
    return hashlib.sha256(key.encode()).hexdigest()


def config(mock, **extra):
    c = {"apps": [mock.apns_app("shop"), mock.apns_app("news")],
         "api_keys": [{"name": "ops", "key_sha256": sha256(ADMIN_KEY), "apps": ["*"], "admin": True},
                      {"name": "newsroom", "key_sha256": sha256(NEWS_KEY), "apps": ["news"]}]}
    c.update(extra)
    return c


class Env:
    pass


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    reason = skip_without_browser()
    if reason:
        pytest.skip(reason)
    e = Env()
    d = str(tmp_path_factory.mktemp("console"))
    bad = os.path.join(d, "bad-tokens")
    with open(bad, "w") as fh:
        fh.write("\n".join(BAD) + "\n")
    # --stats-interval: the 200s per token are in its stats file within a second or two.
    e.mock = MockProcess("mock-apns", os.path.join(d, "mock"), ["--bad-tokens", bad, "--stats-interval", "1"])
    e.server = None
    e.browsers = []
    e.endpoints = e.message_id = None
    try:
        e.server = Server(config(e.mock), d)
        e.origin = "http://127.0.0.1:%d" % e.server.port
        e.url = e.origin + "/console/"
        e.channel = grpc.insecure_channel(e.server.address)
        e.push = push_pb2_grpc.PushStub(e.channel)
        e.registry = registry_pb2_grpc.RegistryStub(e.channel)
        e.admin = [("authorization", "Bearer " + ADMIN_KEY)]
        e.shots = os.environ.get("PUSHGATE_CONSOLE_SCREENSHOTS") or str(tmp_path_factory.mktemp("console-shots"))
        os.makedirs(e.shots, exist_ok=True)
        e.tmp = tmp_path_factory
        e.browser = open_browser(e)
        yield e
    finally:
        for b in e.browsers:
            b.quit()
        if e.server is not None:
            if hasattr(e, "channel"):
                e.channel.close()
            e.server.stop()
        e.mock.stop()


def open_browser(e):
    """A new headless Chromium whose page (the viewport) is 1280×900."""
    b = Browser().start()
    e.browsers.append(b)
    size = b.driver.get_window_size()
    inner = b.driver.execute_script("return [innerWidth, innerHeight]")
    b.driver.set_window_size(1280 + size["width"] - inner[0], 900 + size["height"] - inner[1])
    b.wait_until(lambda: b.driver.execute_script("return [innerWidth, innerHeight]") == [1280, 900], timeout=5,
                 message="the viewport did not become 1280x900")
    return b


# --- helpers ------------------------------------------------------------------------------------

def js(b, script, *args):
    return b.driver.execute_script(script, *args)


def attr(b, css, name):
    """An attribute of the first element matching css (None when there is none)."""
    return js(b, "const e = document.querySelector(arguments[0]); return e ? e.getAttribute(arguments[1]) : null;",
              css, name)


def text(b, css):
    return js(b, "const e = document.querySelector(arguments[0]); return e ? e.textContent : null;", css)


def count(b, css):
    return js(b, "return document.querySelectorAll(arguments[0]).length;", css)


def sign_in(b, e, key, expect_name):
    b.get(e.url)
    field = b.wait_for("#api-key")
    field.clear()
    field.send_keys(key)
    b.wait_for("#login-button").click()
    if expect_name is not None:
        b.wait_for("#whoami", text=expect_name)
        b.wait_for("#nav a[data-page=overview]")


def admin_browser(e):
    """The module's browser, signed in with the admin key (each test may run alone)."""
    b = e.browser
    if text(b, "#whoami") != "ops (admin)":
        sign_in(b, e, ADMIN_KEY, "ops")
    return b


def open_page(b, name):
    """Clicks a tab of the navigation, and waits for its page."""
    b.wait_for("#nav a[data-page=%s]" % name).click()
    b.wait_for("#page-%s" % name)


def shot(b, e, name):
    js(b, "window.scrollTo(0, 0)")
    path = b.screenshot(os.path.join(e.shots, name))
    with open(path, "rb") as fh:
        png = fh.read()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10000, (path, len(png))
    assert (int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")) == (1280, 900)
    return path


def same_origin_only(b, e):
    strangers = [u for u in b.requested_urls() if not (u.startswith(e.origin + "/") or u.startswith("data:"))]
    assert strangers == [], strangers


def send(e, app, tokens, metadata=None):
    return e.push.Send(push_pb2.SendRequest(notifications=[push_pb2.Notification(
        app=app, tokens=tokens, alert=push_pb2.Alert(title="console test", body="hello"))]),
        metadata=metadata or e.admin, timeout=30).results


def http_get(url):
    request = urllib.request.Request(url)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


# --- tests --------------------------------------------------------------------------------------

def test_console_headers_and_switch(env, tmp_path):
    # urllib speaks HTTP/1.1.
    for path in ("", "app.js", "console.css"):
        status, headers, body = http_get(env.url + path)
        assert status == 200, (path, status, body[:200])
        csp = headers["Content-Security-Policy"]
        assert csp and "connect-src 'self'" in csp and "script-src 'self'" in csp, (path, csp)
        assert "unsafe-inline" not in csp and "unsafe-eval" not in csp, (path, csp)
        assert "frame-ancestors 'none'" in csp, (path, csp)
        assert headers["X-Frame-Options"] == "DENY", (path, dict(headers))
        assert headers["X-Content-Type-Options"] == "nosniff", (path, dict(headers))
        assert headers["Referrer-Policy"] == "no-referrer", (path, dict(headers))
    status, headers, body = http_get(env.url)
    assert headers["Content-Type"].startswith("text/html") and b'id="page"' in body
    status, headers, _ = http_get(env.url + "app.js")
    assert "javascript" in headers["Content-Type"], headers["Content-Type"]

    # GET only, and no body: a body is refused (413) before it is read.
    request = urllib.request.Request(env.url, data=b"{}", method="POST")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 405, refused.value.code
    request = urllib.request.Request(env.url, data=b"xx", method="GET")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 413, refused.value.code

    off = Server(config(env.mock, console=False), str(tmp_path))
    try:
        for path in ("/console/", "/console/app.js"):
            status, _, body = http_get("http://%s%s" % (off.address, path))
            assert status == 404, (path, status, body[:200])
    finally:
        off.stop()


def test_overview_lists_apps_and_charts_the_load(env):
    b = env.browser
    sign_in(b, env, ADMIN_KEY, "ops")
    assert text(b, "#whoami") == "ops (admin)" and attr(b, "#whoami", "data-admin") == "true"
    b.wait_for("#apps-table tr[data-app=shop]")
    b.wait_for("#apps-table tr[data-app=news]")
    assert text(b, "#apps-table tr[data-app=shop] .platform") == "apns"
    assert text(b, "#apps-table tr[data-app=news] .platform") == "apns"

    # Load for LOAD_SECONDS: `pushgate bench --target` against the gateway's first app ("shop"), Sends
    # of 50 tokens at SENDS_PER_SECOND with the admin key (PUSHGATE_API_KEY), and grpcio Sends of
    # 50 tokens, a few of them bad, to "news" at the same pace: about 2,000 notifications a second.
    results = {"delivered": 0, "rejected": 0, "other": 0, "errors": []}
    lock = threading.Lock()
    stop_at = time.monotonic() + LOAD_SECONDS

    def load(app, offset):
        i = offset
        next_at = time.monotonic()
        while time.monotonic() < stop_at:
            next_at += 1.0 / SENDS_PER_SECOND
            time.sleep(max(0.0, next_at - time.monotonic()))
            tokens = [LOAD_GOOD[(i + k) % len(LOAD_GOOD)] for k in range(48)] + LOAD_BAD[i % 10:i % 10 + 2]
            i += 48
            try:
                reply = send(env, app, tokens)
            except grpc.RpcError as error:
                with lock:
                    results["errors"].append(error)
                return
            with lock:
                for r in reply:
                    key = {push_pb2.STATUS_DELIVERED: "delivered", push_pb2.STATUS_REJECTED: "rejected"}.get(
                        r.status, "other")
                    results[key] += 1

    started = time.monotonic()
    bench = subprocess.Popen(
        [env.server.binary, "bench", "--target", env.server.address, "--tokens-per-send", "50", "--rate",
         str(SENDS_PER_SECOND), "--concurrency", "4", "--duration", str(LOAD_SECONDS), "--warmup", "0", "--json",
         "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, PUSHGATE_API_KEY=ADMIN_KEY))
    threads = [threading.Thread(target=load, args=("news", 100), daemon=True)]
    for t in threads:
        t.start()
    try:
        # The chart moves while the load runs: a delivered rate above zero, and more points each refresh.
        b.wait_until(lambda: float(attr(b, "#throughput-chart", "data-last-delivered") or 0) > 0, timeout=LOAD_SECONDS,
                     message="the chart's data-last-delivered stayed 0 under load")
        points = int(attr(b, "#throughput-chart", "data-points"))
        b.wait_until(lambda: int(attr(b, "#throughput-chart", "data-points")) >= points + 2, timeout=LOAD_SECONDS,
                     message="data-points did not grow")
    finally:
        for t in threads:
            t.join(LOAD_SECONDS + 30)
        out, err = bench.communicate(timeout=LOAD_SECONDS + 30)
    elapsed = time.monotonic() - started
    assert bench.returncode == 0, err
    benched = json.loads(out)
    assert benched["delivered"] > 0 and benched["results"] == benched["delivered"], benched
    results["delivered"] += benched["delivered"]
    assert results["errors"] == [] and results["other"] == 0, results
    rate = (results["delivered"] + results["rejected"]) / elapsed
    print("load: %d delivered, %d rejected in %.1f s: %.0f/s" % (results["delivered"], results["rejected"], elapsed, rate))
    assert rate >= 300, "only %.0f notifications/s (%r)" % (rate, results)
    assert results["rejected"] > 0

    # The rates are drawn as lines; the counts in the table add up to what the load was answered
    # (the table may trail by one refresh).
    assert count(b, "#throughput-chart path.series-delivered") == 1
    b.wait_until(lambda: sum(int(text(b, "#apps-table tr[data-app=%s] .delivered" % a).replace(",", ""))
                             for a in ("shop", "news")) >= results["delivered"], timeout=5,
                 message="the apps table's delivered counts did not reach the load's")
    assert text(b, "#apps-table tr[data-app=shop] .connections").endswith("of 1")
    b.wait_for("#top-reasons", text="BadDeviceToken")
    # One more refresh after the load: the line comes down, and the picture shows the whole run.
    points = int(attr(b, "#throughput-chart", "data-points"))
    b.wait_until(lambda: int(attr(b, "#throughput-chart", "data-points")) > points, timeout=5)
    assert text(b, "#overview-error") == ""
    shot(b, env, "overview.png")
    assert b.console_errors() == []
    same_origin_only(b, env)


def test_send_a_test_shows_each_result(env):
    b = admin_browser(env)
    open_page(b, "send")
    Select(b.wait_for("#send-app")).select_by_value("shop")
    tokens = b.wait_for("#send-tokens")
    tokens.clear()
    tokens.send_keys(SEND_GOOD + "\n" + SEND_BAD)
    b.wait_for("#send-button").click()
    b.wait_until(lambda: count(b, "#send-results tr.result") == 2, timeout=10,
                 message="no two results in #send-results")
    rows = js(b, """return [...document.querySelectorAll('#send-results tr.result')].map((r) => ({
        status: r.dataset.status, token: r.querySelector('.token').textContent,
        shown: r.querySelector('.status').textContent, http: r.querySelector('.http').textContent,
        reason: r.querySelector('.reason').textContent, id: r.querySelector('.provider-id').textContent,
        attempts: r.querySelector('.attempts').textContent}));""")
    by_token = {r["token"]: r for r in rows}
    good, bad = by_token[SEND_GOOD], by_token[SEND_BAD]
    assert (good["status"], good["shown"], good["http"], good["reason"]) == ("delivered", "delivered", "200", ""), good
    assert len(good["id"]) == 36 and good["id"].count("-") == 4, good      # the apns-id, a UUID
    assert good["attempts"] == "1", good
    assert (bad["status"], bad["shown"], bad["http"], bad["reason"]) == ("rejected", "rejected", "400",
                                                                          "BadDeviceToken"), bad
    assert bad["id"] == "", bad
    assert text(b, "#send-error") == ""

    # The mock got the delivered one (its stats file is rewritten every second).
    def mock_delivered():
        try:
            return env.mock.stats().get("delivered_per_token", {}).get(SEND_GOOD)
        except (OSError, ValueError):
            return None
    assert b.wait_until(mock_delivered, timeout=5, message="the mock did not count the test push") == 1
    shot(b, env, "send.png")
    assert b.console_errors() == []
    same_origin_only(b, env)


def topic_endpoints(env):
    """The topic, its endpoints and their subscriptions, made once with grpcio; {token: endpoint}."""
    if env.endpoints is None:
        env.registry.CreateTopic(registry_pb2.CreateTopicRequest(name=TOPIC), metadata=env.admin, timeout=10)
        endpoints = {}
        for app, token, user in TOPIC_ENDPOINTS:
            endpoint = env.registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(
                app=app, token=token, user_id=user), metadata=env.admin, timeout=10)
            env.registry.Subscribe(registry_pb2.SubscribeRequest(topic=TOPIC, endpoint_id=endpoint.id),
                                   metadata=env.admin, timeout=10)
            endpoints[token] = endpoint
        env.endpoints = endpoints
    return env.endpoints


def published(env):
    """The id of the one Publish to the topic (made on first use)."""
    if env.message_id is None:
        topic_endpoints(env)
        env.message_id = env.push.Publish(push_pb2.PublishRequest(topic=TOPIC, message="Breaking: the console works"),
                                          metadata=env.admin, timeout=10).message_id
    return env.message_id


def completed(env, message_id, timeout=20):
    deadline = time.monotonic() + timeout
    while True:
        message = env.push.GetMessage(push_pb2.GetMessageRequest(message_id=message_id), metadata=env.admin, timeout=10)
        if message.state == push_pb2.MESSAGE_STATE_COMPLETED or time.monotonic() > deadline:
            return message
        time.sleep(0.1)


def test_message_page_follows_a_publish(env):
    b = admin_browser(env)
    message_id = published(env)

    open_page(b, "messages")
    b.wait_for('#messages-table tr[data-message="%s"]' % message_id, timeout=10)
    assert text(b, "#messages-error") == ""

    b.get(env.url + "#/messages/" + message_id)
    b.wait_until(lambda: attr(b, "#message-detail", "data-state") == "MESSAGE_STATE_COMPLETED", timeout=20,
                 message="the message page did not reach MESSAGE_STATE_COMPLETED")
    message = env.push.GetMessage(push_pb2.GetMessageRequest(message_id=message_id), metadata=env.admin, timeout=10)
    assert message.state == push_pb2.MESSAGE_STATE_COMPLETED
    bad = [t for _, t, _ in TOPIC_ENDPOINTS if t in BAD]
    assert (message.total, message.delivered, message.rejected) == (len(TOPIC_ENDPOINTS), len(TOPIC_ENDPOINTS) - len(bad),
                                                                    len(bad)), message
    # The page keeps refreshing until it has seen the final state twice: the counts are the final ones.
    b.wait_until(lambda: text(b, "#message-total") == str(message.total), timeout=5)
    assert text(b, "#message-state") == "completed"
    assert text(b, "#message-delivered") == str(message.delivered)
    assert text(b, "#message-rejected") == str(message.rejected)
    assert text(b, "#message-failed") == str(message.failed) == "0"

    b.wait_until(lambda: count(b, "#message-deliveries tbody tr") == len(bad), timeout=5,
                 message="the rejected recipients are not all in #message-deliveries")
    listed = js(b, """return [...document.querySelectorAll('#message-deliveries tbody tr')].map((r) => [
        r.dataset.endpoint, r.querySelector('.token').textContent, r.querySelector('.reason').textContent,
        r.querySelector('[class^=status-]').textContent]);""")
    assert sorted(listed) == sorted([env.endpoints[t].id, t, "BadDeviceToken", "rejected"] for t in bad), listed
    assert text(b, "#message-error") == ""
    shot(b, env, "message.png")
    assert b.console_errors() == []
    same_origin_only(b, env)


def test_endpoints_find_toggle_and_topics(env):
    b = admin_browser(env)
    topic_endpoints(env)
    assert completed(env, published(env)).state == push_pb2.MESSAGE_STATE_COMPLETED   # it disabled the bad ones
    open_page(b, "endpoints")
    token = TOPIC_ENDPOINTS[0][1]                      # shop, reader-7, delivered by the Publish
    endpoint = env.endpoints[token]

    def find(kind, value, app=None):
        Select(b.wait_for("#endpoint-search-kind")).select_by_value(kind)
        if app:
            Select(b.wait_for("#endpoint-search-app")).select_by_value(app)
        field = b.wait_for("#endpoint-search")
        field.clear()
        field.send_keys(value)
        b.wait_for("#endpoint-find-button").click()

    find("token", token, "shop")
    row = '#endpoints-table tr[data-endpoint="%s"]' % endpoint.id
    b.wait_for(row)
    assert count(b, "#endpoints-table tbody tr") == 1
    assert attr(b, row, "data-enabled") == "true" and text(b, row + " .enabled") == "yes"
    assert text(b, row + " .token") == token
    b.wait_for(row + " button.toggle-enabled").click()
    b.wait_until(lambda: attr(b, row, "data-enabled") == "false", timeout=5, message="the row did not say disabled")
    assert text(b, row + " .enabled") == "no"
    assert text(b, "#endpoints-error") == ""
    got = env.registry.GetEndpoint(registry_pb2.GetEndpointRequest(id=endpoint.id), metadata=env.admin, timeout=10)
    assert got.enabled is False

    # Topics with their subscriber counts (loaded when the page opened, after the topic was made).
    topic = b.wait_for('#topics-table tr[data-topic="%s"]' % TOPIC)
    assert topic.find_element("css selector", ".subscribers").text == str(len(TOPIC_ENDPOINTS))

    # A user's endpoints: the one just disabled, and one the Publish disabled for BadDeviceToken; its
    # detail lists its subscription and its rejected delivery.
    find("user", "reader-7")
    bad = env.endpoints[BAD[10]]
    bad_row = '#endpoints-table tr[data-endpoint="%s"]' % bad.id
    b.wait_for(bad_row)
    b.wait_until(lambda: count(b, "#endpoints-table tbody tr") == 2, timeout=5)
    assert attr(b, bad_row, "data-enabled") == "false" and text(b, bad_row + " .reason") == "BadDeviceToken"
    assert attr(b, row, "data-enabled") == "false"
    b.wait_for(bad_row + " .token").click()
    b.wait_for('#endpoint-detail[data-endpoint="%s"]' % bad.id)
    b.wait_for("#endpoint-subscriptions", text=TOPIC)
    b.wait_for("#endpoint-deliveries", text="BadDeviceToken")
    assert env.message_id in text(b, "#endpoint-deliveries")
    shot(b, env, "endpoints.png")
    assert b.console_errors() == []
    same_origin_only(b, env)


def test_values_are_shown_as_text(env):
    b = admin_browser(env)
    # No token syntax admits '<' (APNs: hex; FCM and ADM: [A-Za-z0-9…]), so the markup rides in the
    # user id and the custom data, which any client may set.
    created = env.registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(
        app="news", token="%064x" % 0x5C819700, user_id=XSS, custom_user_data=XSS_DATA), metadata=env.admin, timeout=10)
    open_page(b, "endpoints")
    Select(b.wait_for("#endpoint-search-kind")).select_by_value("user")
    field = b.wait_for("#endpoint-search")
    field.clear()
    field.send_keys(XSS)
    b.wait_for("#endpoint-find-button").click()
    row = '#endpoints-table tr[data-endpoint="%s"]' % created.id
    b.wait_for(row)
    cell = b.wait_for(row + " .user")
    assert cell.text == XSS
    assert cell.find_elements("css selector", "*") == []
    b.wait_for(row + " .token").click()
    detail = b.wait_for('#endpoint-detail[data-endpoint="%s"]' % created.id)
    assert XSS_DATA in detail.text
    assert detail.find_elements("css selector", "script, img") == []
    assert js(b, "return window.__pwned") is None
    assert js(b, "return document.querySelectorAll('#page script, #page img').length") == 0
    assert b.console_errors() == []
    same_origin_only(b, env)


def test_live_events_show_a_rejection(env):
    b = admin_browser(env)
    open_page(b, "events")
    b.wait_for("#events-start").click()
    b.wait_for("#events-status", text="Watching")
    # The watch is registered once the stream's call has started on the server: send until it shows.
    deadline = time.monotonic() + 10
    while True:
        send(env, "news", [EVENTS_BAD, "%064x" % 0xE7E47001])
        try:
            b.wait_for('#events-list li.event[data-kind=rejected][data-app=news]', timeout=1)
            break
        except TimeoutException:
            if time.monotonic() > deadline:
                raise
    item = b.wait_for('#events-list li.event[data-kind=rejected][data-app=news]')
    assert EVENTS_BAD in item.text and "BadDeviceToken" in item.text and "HTTP 400" in item.text
    # Successes are sampled one in 1 (the form's default): the delivered one is listed too.
    b.wait_for('#events-list li.event[data-kind=delivered][data-app=news]', timeout=5)
    # A few more for the picture: another app, another rejection.
    send(env, "shop", ["%064x" % 0xE7E47002, BAD[21], "%064x" % 0xE7E47003])
    b.wait_for('#events-list li.event[data-kind=rejected][data-app=shop]', timeout=5)
    assert text(b, "#events-error") == ""
    shot(b, env, "events.png")
    b.wait_for("#events-stop").click()
    b.wait_for("#events-status", text="Stopped")
    assert text(b, "#events-error") == ""
    assert b.console_errors() == []
    assert env.origin + "/pushgate.v1.Push/WatchEvents" in b.requested_urls()
    same_origin_only(b, env)


def test_admin_browser_stays_on_the_gateway(env):
    # Everything the admin's browser did in this module (each test above checks its own part too).
    b = admin_browser(env)
    assert b.console_errors() == []
    urls = b.requested_urls()
    assert env.url in urls and env.origin + "/console/app.js" in urls, urls
    assert env.origin + "/pushgate.v1.Push/GetStats" in urls, urls
    same_origin_only(b, env)


def test_a_limited_key_sees_its_app_only(env):
    topic_endpoints(env)
    b = open_browser(env)
    sign_in(b, env, NEWS_KEY, "newsroom")
    assert text(b, "#whoami") == "newsroom" and attr(b, "#whoami", "data-admin") == "false"
    b.wait_for("#apps-table tr[data-app=news]")
    assert count(b, "#apps-table tr[data-app]") == 1 and count(b, "#apps-table tr[data-app=shop]") == 0

    open_page(b, "endpoints")
    apps = [o.get_attribute("value") for o in Select(b.wait_for("#endpoint-search-app")).options]
    assert apps == ["news"], apps
    token = TOPIC_ENDPOINTS[7][1]
    b.wait_for("#endpoint-search").send_keys(token)
    b.wait_for("#endpoint-find-button").click()
    row = '#endpoints-table tr[data-endpoint="%s"]' % env.endpoints[token].id
    b.wait_for(row)
    assert count(b, "button.toggle-enabled") == 0

    open_page(b, "messages")
    b.wait_for("#messages-error", text="permission_denied")
    assert count(b, "#messages-table") == 0

    # The one error the browser logs is the API's refusal, which the page shows.
    list_messages = env.origin + "/pushgate.v1.Push/ListMessages"
    errors = b.console_errors(ignore=lambda entry: list_messages in entry["message"] and "403" in entry["message"])
    assert errors == []
    same_origin_only(b, env)

    # A wrong key after signing out.
    b.wait_for("#logout").click()
    b.wait_for("#login-form")
    assert js(b, "return sessionStorage.length") == 0
    b.wait_for("#api-key").send_keys(WRONG_KEY)
    b.wait_for("#login-button").click()
    b.wait_for("#login-error", text="unauthenticated")
    b.wait_for("#login-form")
    assert attr(b, "#nav", "hidden") is not None
    get_stats = env.origin + "/pushgate.v1.Push/GetStats"
    errors = b.console_errors(ignore=lambda entry: (list_messages in entry["message"] and "403" in entry["message"])
                              or (get_stats in entry["message"] and "401" in entry["message"]))
    assert errors == []
    same_origin_only(b, env)
    assert js(b, "return sessionStorage.length") == 0
