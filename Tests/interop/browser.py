"""Headless Chromium for the interop tests (issue 44): Debian's `chromium` and `chromium-driver`
(scripts/install-deps.sh), driven by Selenium 4 from PyPI (scripts/requirements.txt). A helper
module, not a test file:

    from browser import Browser, skip_without_browser

    @pytest.fixture
    def browser():
        reason = skip_without_browser()
        if reason:
            pytest.skip(reason)
        with Browser() as b:
            yield b

    def test_console(browser, console_url):
        browser.get(console_url)
        browser.wait_for("#status", text="ready")
        assert browser.console_errors() == []

The browser's console log and its network log (the performance log's DevTools events) are both
recorded. chromedriver hands each entry out once, so every read is kept here: console_errors()
and requested_urls() see everything since the browser started (or since clear_logs()).

Selenium never looks for a driver or a browser of its own (Selenium Manager would download one):
the Service names /usr/bin/chromedriver, which drives /usr/bin/chromium. chromedriver starts the
browser with --disable-background-networking among its defaults, so a page's own requests are the
only traffic; the switches below add the rest that keep it to loopback and quiet as root."""
import json
import os
import time

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"

ARGUMENTS = (
    "--headless=new",
    "--no-sandbox",              # Chromium refuses to start as root without it (CI runs as root)
    "--disable-dev-shm-usage",   # shared memory in /tmp, whatever /dev/shm's size
    "--disable-gpu",
    "--window-size=1280,900",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-component-update",
    "--disable-extensions",
)


def _ci():
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def missing_browser():
    """The browser's files that are not installed (empty when both are)."""
    return [path for path in (CHROMIUM, CHROMEDRIVER) if not os.access(path, os.X_OK)]


def skip_without_browser():
    """A pytest skip reason when Chromium or chromedriver is missing, else None.

    Under CI (the CI variable set, as CI's `bash .ci/run` has it) this is always None: CI installs
    both through scripts/install-deps.sh, so a missing browser there is a failure, and Browser()
    then raises naming what is missing rather than the test skipping quietly."""
    missing = missing_browser()
    if not missing or _ci():
        return None
    return "headless Chromium is not installed (%s; scripts/install-deps.sh installs chromium and " \
           "chromium-driver)" % ", ".join(missing)


class Browser:
    """One headless Chromium session. A context manager (`with Browser() as b:`), or call start()
    and quit() yourself; `driver` is the selenium WebDriver for anything not wrapped here."""

    def __init__(self, arguments=(), page_load_timeout=30):
        self.extra_arguments = tuple(arguments)
        self.page_load_timeout = page_load_timeout
        self.driver = None
        self._browser_log = []
        self._performance_log = []

    # -- life cycle

    def start(self):
        missing = missing_browser()
        if missing:
            raise FileNotFoundError("headless Chromium is not installed: %s missing (scripts/install-deps.sh "
                                    "installs chromium and chromium-driver)" % ", ".join(missing))
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for argument in ARGUMENTS + self.extra_arguments:
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
        self.driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        self.driver.set_page_load_timeout(self.page_load_timeout)
        return self

    def quit(self):
        driver, self.driver = self.driver, None
        if driver is not None:
            driver.quit()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.quit()
        return False

    # -- navigation and pictures

    def get(self, url):
        self.driver.get(url)

    def screenshot(self, path):
        """Saves a PNG of what the window shows to path and returns path: the viewport, 1280 wide
        and ~757 high (headless Chromium keeps part of the 900 px window for its browser chrome)."""
        png = self.driver.get_screenshot_as_png()
        with open(path, "wb") as f:
            f.write(png)
        return path

    # -- logs

    def _drain(self):
        self._browser_log += self.driver.get_log("browser")
        self._performance_log += self.driver.get_log("performance")

    def clear_logs(self):
        """Forgets every console and network entry so far."""
        self._drain()
        self._browser_log, self._performance_log = [], []

    def console_log(self):
        """Every browser-log entry so far: dicts with level, message, source, timestamp."""
        self._drain()
        return list(self._browser_log)

    def console_errors(self, ignore=None):
        """The SEVERE browser-log entries (console.error, uncaught exceptions, failed loads), each a
        dict whose message names the script and position, e.g. 'http://…/app.js 1:8 "boom"'. All of
        them unless ignore(entry) says to leave one out."""
        return [entry for entry in self.console_log()
                if entry.get("level") == "SEVERE" and not (ignore and ignore(entry))]

    def network_events(self, method=None):
        """The DevTools events of the performance log so far ({"method": …, "params": …}), only those
        of one method (e.g. "Network.responseReceived") when it is given."""
        self._drain()
        events = []
        for entry in self._performance_log:
            event = json.loads(entry["message"])["message"]
            if method is None or event.get("method") == method:
                events.append(event)
        return events

    def requested_urls(self):
        """Every URL the page requested so far, in order, repeats included (Network.requestWillBeSent)."""
        return [event["params"]["request"]["url"] for event in self.network_events("Network.requestWillBeSent")]

    # -- waiting

    def wait_until(self, predicate, timeout=10, interval=0.05, message=None):
        """Calls predicate() until it returns something truthy, and returns that; raises selenium's
        TimeoutException after timeout seconds."""
        from selenium.common.exceptions import TimeoutException

        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if time.monotonic() >= deadline:
                raise TimeoutException(message or "condition not met within %ss" % timeout)
            time.sleep(interval)

    def wait_for(self, css, timeout=10, text=None):
        """The first element matching the CSS selector that is visible (and whose text contains text,
        when given), once there is one; raises selenium's TimeoutException after timeout seconds."""
        from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
        from selenium.webdriver.common.by import By

        def visible():
            for element in self.driver.find_elements(By.CSS_SELECTOR, css):
                try:
                    if element.is_displayed() and (text is None or text in element.text):
                        return element
                except StaleElementReferenceException:
                    continue
            return None

        def shown(element):
            try:
                return (element.is_displayed(), element.text[:80])
            except StaleElementReferenceException:
                return "stale"

        try:
            return self.wait_until(visible, timeout)
        except TimeoutException:
            seen = [shown(e) for e in self.driver.find_elements(By.CSS_SELECTOR, css)]
            raise TimeoutException("no visible %r%s within %ss at %s (matching ones, as (visible, text): %r)"
                                   % (css, " containing %r" % text if text is not None else "", timeout,
                                      self.driver.current_url, seen)) from None
