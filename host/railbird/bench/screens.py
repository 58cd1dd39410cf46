"""`make bench`, the five screens (issue 22): a pocketed ball's latency from the node to the
moment each screen a venue has shows it as provisional, beside the broker's own publish ->
subscribe latency in the same run.

The same rig as railbird.bench.inplay (a private mosquitto, `railbird run` as a subprocess,
the simulated node firmware on a 14.1 table), plus the screens themselves:

- the referee's phone (the referee page at 390 x 844, signed in), the TV table page, the
  venue board and the streaming overlay (1920 x 1080), each in a real headless Chromium: a
  MutationObserver counts the page's provisional balls, and the time of the animation frame
  after a change is when the ball is on screen;
- the LED scoreboard: the scoreboard firmware (firmware/scoreboard, under CPython) on the
  board end of a real pty that `[[outputs.serial]]` writes to; its simulated MAX7219 rows are
  read every millisecond for the `DOWN n` announcement.

One browser screen at a time (`DROPS` drops each, in shots of `GROUP`): four Chromium beside
the host on a small machine would measure the machine. The LED board is on in every pass,
as it is in a venue. From the node's publish of the batch holding the drop (its MQTT
client's `publish`, as in inplay) to the screen, on one clock: Chromium's
`performance.timeOrigin + performance.now()` and Python's `time.time()` are both the
system's wall clock.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import threading
import time
import tty
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from railbird.bench.chromium import PHONE, TV
from railbird.bench.inplay import (
    _probe,
    _wait_stats,
    broker_latency,
    percentiles,
    start_host,
    stop_host,
)
from rbproto.codec import POCKETS

VENUE, TABLE, NODE, NODE_PW = "bench", "t1", "t1-pockets", "node-pw"
PIN = "480913"
GROUP = 8  # balls per shot
GAP_S = 0.12  # between the drops of a shot
QUIET_MS = 300  # the shot closes this long after its last ball
DROPS = 80  # per screen
SETTLE_S = 30.0  # the longest a page may take to open its stream or show the last drop
TARGET_P99_MS = 150.0

CONFIG = """
venue = "{venue}"
stats_period_s = 0
referee_token = "{pin}"
[broker]
host = "127.0.0.1"
port = {port}
password = "host-secret"
client_id = "railbird-host-bench-screens"
[shots]
quiet_ms = {quiet}
[tables.{table}]
game = "14.1"
players = ["Ann", "Bob"]
target = 999
nodes = ["{node}"]
[outputs.web]
host = "127.0.0.1"
port = 0
[[outputs.serial]]
table = "{table}"
port = "{serial}"
"""


@dataclass(frozen=True)
class Screen:
    name: str
    path: str  # under the web server
    balls: str  # CSS: one element per provisional ball
    size: tuple[int, int]
    referee: bool = False


BROWSER_SCREENS = (
    Screen("phone", f"/v/{VENUE}/t/{TABLE}/referee", "#inplay .drop", PHONE, referee=True),
    Screen("table page", f"/v/{VENUE}/t/{TABLE}/", "#inplay .ip-ball", TV),
    Screen("venue board", f"/v/{VENUE}/", ".chip.inplay .ip-ball", TV),
    Screen("overlay", f"/v/{VENUE}/t/{TABLE}/overlay", "#inplay .ip-ball", TV),
)
LED = "LED board"

# Installed before the page's own scripts run: every change of the provisional ball count,
# with the time of the frame that paints it.
OBSERVER = """
window.__rbShown = [];
const sel = %s; let last = -1;
const look = () => {
  const n = document.querySelectorAll(sel).length;
  if (n === last) return;
  last = n;
  const now = () => performance.timeOrigin + performance.now();
  requestAnimationFrame(() => window.__rbShown.push([now(), n]));
};
new MutationObserver(look).observe(document, {subtree: true, childList: true, characterData: true});
// the page's event stream open (every page opens one): from then on every drop reaches it
window.__rbOpen = false;
const ES = window.EventSource;
window.EventSource = class extends ES {
  constructor(...a) {
    super(...a);
    this.addEventListener("open", () => { window.__rbOpen = true; });
  }
};
"""


def shown_times(published: list[float], changes: list[tuple[float, int]]) -> list[float]:
    """When each drop was first on screen. `published`: the drops in order, GROUP to a shot;
    `changes`: (time, provisional balls shown) whenever the count changed. Ball k of a shot
    is on screen at the first change after its publication that shows k + 1 balls or more
    (a count that skips, two balls in one update, serves both)."""
    out = []
    for j, t_pub in enumerate(published):
        k = j % GROUP
        t = next((t for t, n in changes if t >= t_pub and n >= k + 1), None)
        if t is None:
            break
        out.append(t)
    return out


class _LedBoard:
    """The scoreboard firmware on the board end of a pty; `changes` as in shown_times."""

    DOWN = re.compile(r"D[O0]WN\s*(\d+)")  # read back from segments: O and 0 are one glyph

    def __init__(self) -> None:
        from railbird.sim.table import firmware_path

        sb = str(Path(firmware_path()) / "scoreboard")
        if sb not in sys.path:
            sys.path.insert(0, sb)
        from simboard import SimBoard  # type: ignore[import-not-found]  # firmware/, on sys.path at run time

        master, slave = os.openpty()
        tty.setraw(slave)
        self.path = os.ttyname(slave)
        os.close(slave)
        self.master = master
        self.board = SimBoard(master).start()
        self.changes: list[tuple[float, int]] = []
        self._stop = threading.Event()
        threading.Thread(target=self._watch, daemon=True, name="bench-led").start()

    def _watch(self) -> None:
        last = -1
        while not self._stop.is_set():
            m = self.DOWN.search(" ".join(self.board.text()))
            n = int(m.group(1)) if m else 0
            if n != last:
                last = n
                self.changes.append((time.time(), n))
            time.sleep(0.001)

    def close(self) -> None:
        self._stop.set()
        self.board.stop()
        os.close(self.master)


def _session(web: str) -> str:
    req = urllib.request.Request(
        f"{web}/api/session/{VENUE}",
        data=json.dumps({"pin": PIN}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=10) as r:
        cookie = r.headers.get("Set-Cookie", "")
    return cookie.split(";", 1)[0].split("=", 1)[1]


def _referee(web: str, token: str, body: dict) -> None:
    req = urllib.request.Request(
        f"{web}/api/v/{VENUE}/{TABLE}/referee",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Cookie": f"railbird_session={token}"},
    )
    with urllib.request.urlopen(req, timeout=10) as r:
        assert json.loads(r.read())["ok"], body


def _browser(profile: Path, screen: Screen, web: str, token: str):
    from railbird.bench import chromium

    drv = chromium.launch(profile, screen.size)
    w, h = screen.size
    drv.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": w, "height": h, "deviceScaleFactor": 1, "mobile": w < 600},
    )
    drv.execute_cdp_cmd(
        "Page.addScriptToEvaluateOnNewDocument", {"source": OBSERVER % json.dumps(screen.balls)}
    )
    if screen.referee:
        drv.get(web + "/static/style.css")  # the origin, for its cookie
        drv.add_cookie({"name": "railbird_session", "value": token, "path": "/"})
    drv.get(web + screen.path)
    return drv


def _until(cond, timeout: float) -> bool:
    """Poll cond() until it holds or `timeout` s passed; whether it held."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _measure(drv, sn, led, drops: int) -> tuple[list[float], list[tuple[float, int]]]:
    """Play `drops` once the page's stream is open -> (publication times, the page's
    changes); the LED board's are in led.changes. Waits until both screens showed every
    drop, or SETTLE_S: a slow machine is not a miss, a screen that never shows one is."""
    _until(lambda: drv.execute_script("return window.__rbOpen"), SETTLE_S)
    published: list[float] = []
    _probe(sn, published, clock=time.time)
    led.changes.clear()
    _play(sn, drops)

    def page() -> list[tuple[float, int]]:
        return [(t / 1000, n) for t, n in drv.execute_script("return window.__rbShown")]

    def all_shown() -> bool:
        return all(
            len(shown_times(published, changes)) == len(published)
            for changes in (page(), list(led.changes))
        )

    _until(all_shown, SETTLE_S)
    return published, page()


def _play(sn, drops: int) -> None:
    for g in range(0, drops, GROUP):
        for k in range(min(GROUP, drops - g)):
            sn.drop(POCKETS[(g + k) % 6], dur_us=30_000)
            time.sleep(GAP_S)
        time.sleep(QUIET_MS / 1000 + 0.3)  # the shot closes


def bench_screens(drops: int = DROPS, workdir: str | None = None) -> dict:
    """{screen: percentiles of the latency in seconds, or None} plus `missed` per screen and
    the broker's own latency."""
    from railbird.broker import PrivateBroker
    from railbird.sim.table import firmware_path

    firmware_path()
    from rbnode.simnode import SimNode  # type: ignore[import-not-found]  # firmware/ at run time

    lat: dict[str, list[float]] = {s.name: [] for s in BROWSER_SCREENS}
    lat[LED] = []
    missed = dict.fromkeys(lat, 0)
    with tempfile.TemporaryDirectory(prefix="railbird-bench-screens-", dir=workdir) as tmp:
        wd = Path(tmp)
        broker = PrivateBroker(wd / "broker", users={NODE: NODE_PW}).start()
        host = sn = led = None
        try:
            led = _LedBoard()
            conf = wd / "host.toml"
            conf.write_text(
                CONFIG.format(
                    venue=VENUE,
                    port=broker.port,
                    quiet=QUIET_MS,
                    table=TABLE,
                    node=NODE,
                    pin=PIN,
                    serial=led.path,
                )
            )
            host, stats, web = start_host(wd)
            token = _session(web)
            _referee(web, token, {"input": {"type": "lag", "winner": "Ann"}})
            sn = SimNode("127.0.0.1", broker.port, VENUE, TABLE, NODE, NODE_PW, wd / "node")
            sn.start()
            sn.wait_connected()
            _wait_stats(stats, lambda s: s["sync_samples"] >= 3, 30, host)
            for screen in BROWSER_SCREENS:
                drv = _browser(wd / f"chrome-{len(lat[LED])}", screen, web, token)
                try:
                    published, changes = _measure(drv, sn, led, drops)
                finally:
                    drv.quit()
                for name, ch in ((screen.name, changes), (LED, list(led.changes))):
                    shown = shown_times(published, ch)
                    lat[name] += [w - p for p, w in zip(published, shown, strict=False)]
                    missed[name] += len(published) - len(shown)
                del sn.node.mqtt.publish  # the class's own again, for the next probe
            base = broker_latency(broker.port)
        finally:
            for closer in (sn and sn.stop, led and led.close):
                if closer:
                    closer()
            if host is not None:
                stop_host(host)
            broker.stop()
    return {
        "screens": {k: (percentiles(v) if v else None) for k, v in lat.items()},
        "missed": missed,
        "broker": base,
    }


def held(r: dict) -> bool:
    """Every drop on every screen, each screen's p99 within the target."""
    return all(
        p is not None and not r["missed"][k] and p["p99"] * 1e3 <= TARGET_P99_MS
        for k, p in r["screens"].items()
    )


def lines(r: dict) -> list[str]:
    def ms(p):
        return f"p50 {p['p50'] * 1e3:.1f} / p99 {p['p99'] * 1e3:.1f} / max {p['max'] * 1e3:.1f} ms"

    out = [
        f"screens     drop published -> provisional ball on each screen (Chromium frame, LED "
        f"rows), target p99 {TARGET_P99_MS:.0f} ms; baseline mosquitto publish -> subscribe "
        f"({r['broker']['n']} messages, QoS 1): {ms(r['broker'])}"
    ]
    for name, p in r["screens"].items():
        if p is None:
            out.append(f"  {name:<12} nothing shown ({r['missed'][name]} drops missed)")
            continue
        ok = not r["missed"][name] and p["p99"] * 1e3 <= TARGET_P99_MS
        out.append(
            f"  {name:<12} {p['n']} drops ({r['missed'][name]} missed): {ms(p)}: "
            f"{'OK' if ok else 'TOO SLOW'}"
        )
    return out


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else DROPS
    print("\n".join(lines(bench_screens(n, os.environ.get("TMPDIR")))))
