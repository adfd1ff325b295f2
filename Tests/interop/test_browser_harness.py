"""The headless-browser harness (Tests/interop/browser.py, issue 44) against a real page: Python's
http.server on loopback serves a page whose external script logs console.error('boom') and then
shows an element; the harness must see the error, the script's request, a PNG and the element."""
import functools
import http.server
import threading

import pytest

from browser import Browser, skip_without_browser

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>harness</title>
<link rel="icon" href="data:,">
<script src="/app.js"></script></head>
<body><h1>harness page</h1><div id="late" hidden></div></body></html>
"""

# Runs before <body> exists: the element appears only once the page has loaded, so wait_for waits.
SCRIPT = """console.error('boom');
window.addEventListener('load', function () {
  setTimeout(function () {
    var late = document.getElementById('late');
    late.textContent = 'ready';
    late.hidden = false;
  }, 200);
});
"""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def site(tmp_path):
    (tmp_path / "index.html").write_text(PAGE)
    (tmp_path / "app.js").write_text(SCRIPT)
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(tmp_path)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield "http://127.0.0.1:%d" % server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def browser():
    reason = skip_without_browser()
    if reason:
        pytest.skip(reason)
    with Browser() as b:
        yield b


def test_harness_sees_console_network_screenshot_and_elements(site, browser, tmp_path):
    browser.get(site + "/index.html")

    late = browser.wait_for("#late", timeout=5, text="ready")
    assert late.tag_name == "div"

    errors = browser.console_errors()
    assert len(errors) == 1 and '"boom"' in errors[0]["message"], errors
    assert site + "/app.js" in errors[0]["message"], errors  # the script and position it came from
    assert browser.console_errors(ignore=lambda entry: "boom" in entry["message"]) == []
    # chromedriver hands each entry out once; the harness keeps them for the next read.
    assert browser.console_errors() == errors

    urls = browser.requested_urls()
    assert urls[0] == site + "/index.html" and site + "/app.js" in urls, urls
    assert browser.wait_until(lambda: len(browser.requested_urls()) >= 2, timeout=1)

    shot = browser.screenshot(str(tmp_path / "page.png"))
    with open(shot, "rb") as f:
        png = f.read()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 1000
    # The window's viewport: 1280 wide; headless Chromium keeps ~140 px of its 900 for browser chrome.
    size = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert size == tuple(browser.driver.execute_script("return [innerWidth, innerHeight]")), size
    assert size[0] == 1280, size
