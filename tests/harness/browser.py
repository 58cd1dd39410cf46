"""Real headless Chromium (Debian chromium + chromium-driver) for the display tests: a driver,
exact phone and TV viewports, waiting for what a page shows, overflow checks, screenshots."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from railbird.bench import chromium
from railbird.bench.chromium import CHROMIUM, DRIVER, PHONE as PHONE, TV as TV  # the tests' sizes


def chrome(profile_dir: Path, size=(1280, 1000)):
    """A Chromium driver (the caller quits it). Fails, not skips, without Chromium: the
    displays are part of the product."""
    import pytest

    if not (shutil.which(CHROMIUM) and shutil.which(DRIVER)):
        pytest.fail("chromium/chromedriver missing: run tools/ensure-chromium.sh (make test does)")
    drv = chromium.launch(profile_dir, size)
    drv.set_page_load_timeout(20)
    return drv


def viewport(drv, size, mobile: bool | None = None) -> None:
    """The page's viewport exactly `size` CSS pixels (a window size would include the
    browser's frame); `mobile` (default: narrower than 600 px) applies the page's
    `<meta name=viewport>` as a phone does."""
    w, h = size
    drv.rb_viewport = {
        "width": w,
        "height": h,
        "deviceScaleFactor": 1,
        "mobile": w < 600 if mobile is None else mobile,
    }
    drv.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", drv.rb_viewport)


def wait_until(pred, timeout=10.0, what="condition", poll=0.05):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = pred()
        except Exception as e:  # noqa: BLE001 - a page mid-render: stale element, not yet there
            last = e
        else:
            if last:
                return last
        time.sleep(poll)
    raise AssertionError(f"timed out after {timeout} s waiting for {what} (last: {last!r})")


def text(drv, css: str) -> str:
    """The visible text of the first element matching `css` ('' when there is none)."""
    return drv.execute_script(
        "const e = document.querySelector(arguments[0]); return e ? e.innerText : '';", css
    ).strip()


def wait_text(drv, css: str, want: str, timeout=10.0) -> None:
    wait_until(lambda: text(drv, css) == want, timeout, f"{css} to show {want!r}")


def wait_contains(drv, css: str, want: str, timeout=10.0) -> str:
    return wait_until(
        lambda: want in text(drv, css) and text(drv, css), timeout, f"{css} to contain {want!r}"
    )


def visible(drv, css: str) -> bool:
    return drv.execute_script(
        "const e = document.querySelector(arguments[0]);"
        "if (!e) return false; const r = e.getBoundingClientRect();"
        "return !e.closest('[hidden]') && r.width > 0 && r.height > 0;",
        css,
    )


_NAME_JS = """
const name = (e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
  (typeof e.className === 'string' && e.className.trim()
    ? '.' + e.className.trim().replace(/ +/g, '.') : '');
"""
# Every rendered element wider than the viewport or sticking out of it sideways.
_OVERFLOW_JS = (
    _NAME_JS
    + """
const W = window.innerWidth, out = [];
if (document.documentElement.scrollWidth > W) out.push('document scrollWidth ' +
    document.documentElement.scrollWidth + ' > ' + W);
for (const e of document.body.querySelectorAll('*')) {
  const r = e.getBoundingClientRect();
  if (r.width === 0 && r.height === 0) continue;
  if (r.left < -0.5 || r.right > W + 0.5) {
    out.push(name(e) + ' [' + Math.round(r.left) + ', ' + Math.round(r.right) + '] of ' + W);
  }
}
return out;
"""
)
# Descendants that stick out of their box sideways (a score running into the next card).
_SPILL_JS = (
    _NAME_JS
    + """
const out = [];
for (const box of document.querySelectorAll(arguments[0])) {
  const b = box.getBoundingClientRect();
  if (b.width === 0) continue;
  for (const e of box.querySelectorAll('*')) {
    const r = e.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (r.left < b.left - 0.5 || r.right > b.right + 0.5) {
      out.push(name(e) + ' [' + Math.round(r.left) + ', ' + Math.round(r.right) + '] out of ' +
               name(box) + ' [' + Math.round(b.left) + ', ' + Math.round(b.right) + ']');
    }
  }
}
return out;
"""
)


# Elements whose content is wider than they are (clipped or running over): a score cut off.
_CLIPPED_JS = (
    _NAME_JS
    + """
return [...document.querySelectorAll(arguments[0])]
  .filter((e) => e.getBoundingClientRect().width > 0 && e.scrollWidth > e.clientWidth + 1)
  .map((e) => name(e) + ' content ' + e.scrollWidth + ' > ' + e.clientWidth);
"""
)


def clipped(drv, css: str) -> list[str]:
    """The elements matching `css` whose content does not fit their width."""
    return drv.execute_script(_CLIPPED_JS, css)


def overflow(drv) -> list[str]:
    """What does not fit the viewport's width: [] when the page fits."""
    return drv.execute_script(_OVERFLOW_JS)


def spill(drv, boxes: str) -> list[str]:
    """What sticks out sideways of the elements matching the CSS selector `boxes`."""
    return drv.execute_script(_SPILL_JS, boxes)


def screenshot(drv, path: Path, scale: float = 1.0) -> Path:
    """The viewport as a PNG; `scale` < 1 renders it with fewer device pixels (the same
    layout: a 1920x1080 TV screen as a 960x540 image for the docs)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    vp = getattr(drv, "rb_viewport", None)
    if scale != 1.0 and vp:
        drv.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", dict(vp, deviceScaleFactor=scale))
        time.sleep(0.3)  # a frame at the new resolution
    try:
        path.write_bytes(drv.get_screenshot_as_png())
    finally:
        if scale != 1.0 and vp:
            drv.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", vp)
    return path
