"""Helpers for the referee-app tests, on top of `harness.browser`: a phone-sized Chromium
(390 by 844 CSS px, a phone's viewport rules), taps that survive the app re-rendering, the
layout checks the app promises (nothing wider than the screen, touch targets of at least
48 px), and HTTP calls with a cookie jar."""

from __future__ import annotations

import http.cookiejar
import json
import time
import urllib.error
import urllib.request

from harness import browser as B

PHONE = B.PHONE
MIN_TAP = 48


def phone_browser(profile_dir):
    drv = B.chrome(profile_dir, PHONE)
    B.viewport(drv, PHONE, mobile=True)
    return drv


def wait_for(drv, fn, what, timeout=30.0):
    """Poll `fn(drv)` (JS-heavy pages re-render: stale elements are retried) until truthy."""
    from selenium.common.exceptions import (
        JavascriptException,
        NoSuchElementException,
        StaleElementReferenceException,
    )

    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            v = fn(drv)
            if v:
                return v
        except (
            NoSuchElementException,
            StaleElementReferenceException,
            JavascriptException,
        ) as e:
            last = e
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what} ({last})")


def text(drv, css) -> str:
    """The first match's text; "" when nothing matches. The pages re-render as the state
    arrives, so an element found may be replaced before its text is read: then it is found
    again (a read has no effect to repeat)."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By

    for _ in range(20):
        els = drv.find_elements(By.CSS_SELECTOR, css)
        try:
            return els[0].text.strip() if els else ""
        except StaleElementReferenceException:
            time.sleep(0.05)
    raise AssertionError(f"{css} kept being replaced while its text was read")


def wait_text(drv, css, want, timeout=30.0):
    """Until the element's text contains `want`."""
    return wait_for(drv, lambda d: want in text(d, css), f"{css} to show {want!r}", timeout)


def tap(drv, css, timeout=30.0):
    """Click the first visible, enabled element matching `css` (retried across re-renders)."""
    from selenium.webdriver.common.by import By

    def click(d):
        for el in d.find_elements(By.CSS_SELECTOR, css):
            if el.is_displayed() and el.is_enabled():
                d.execute_script("arguments[0].scrollIntoView({block: 'center'})", el)
                el.click()
                return True
        return False

    wait_for(drv, click, f"{css} to tap", timeout)


# Every visible button (and link styled as one) at least MIN_TAP px in both directions.
SMALL_TARGETS_JS = """
const min = arguments[0], bad = [];
for (const el of document.querySelectorAll('button, [role=button], input, select')) {
  const r = el.getBoundingClientRect();
  if (!r.width && !r.height) continue;
  if (r.width < min - 0.5 || r.height < min - 0.5) {
    bad.push((el.id || el.dataset.act || el.textContent.trim().slice(0, 20)) + ' ' +
             Math.round(r.width) + 'x' + Math.round(r.height));
  }
}
return bad;
"""


def small_targets(drv) -> list:
    return drv.execute_script(SMALL_TARGETS_JS, MIN_TAP)


def assert_phone_layout(drv, where: str) -> None:
    assert drv.execute_script("return window.innerWidth") == PHONE[0]
    bad = B.overflow(drv)
    assert not bad, f"{where}: wider than the {PHONE[0]} px screen: {bad[:8]}"
    small = small_targets(drv)
    assert not small, f"{where}: touch targets under {MIN_TAP} px: {small[:8]}"


class Http:
    """urllib with a cookie jar: what a browser sends, minus the browser."""

    def __init__(self, base: str):
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def call(self, method, path, body=None, headers=None, ctype="application/json"):
        data = (
            None
            if body is None
            else (body if isinstance(body, bytes) else json.dumps(body).encode())
        )
        h = dict(headers or {})
        if data is not None and ctype:
            h["Content-Type"] = ctype
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=h)
        try:
            with self.opener.open(req, timeout=10) as r:
                return r.status, json.loads(r.read() or b"{}"), r.headers
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"{}"), e.headers
