"""Installer calibration: learn the wiring, measure the signals, propose and publish a config.

`railbird calibrate --table T` (hardware/calibration.md) talks to one node over MQTT:

1. waits for the node's retained `status` (online) and `birth`, and reads its retained
   `config` (the one to restore if calibration is abandoned);
2. publishes a *probe* config: beam channel i reported as pocket POCKETS[i], rail channel i
   as rail RAILS[i], rail thresholds 0 (every comparator edge is reported with its
   amplitude), and waits until the node's status shows the probe's `config_rev`;
3. quiet period: whatever the rails report now is noise;
4. one step per pocket ("drop a ball into HL"): the channel that reports is that pocket's
   beam, whatever the probe called it; the blocked times (`dur`) are kept;
5. one step per rail ("knock the H rail"): rail events are grouped into knocks by node time;
   the loudest channel of each knock is the rail knocked, its amplitudes are the hits, the
   other channels' amplitudes in the same knock are cross-talk;
6. the cue ball into each pocket in turn: a `cue` event confirms the detector, and the time
   from the pocket's drop to it is that pocket's cue-ball return delay (the median per
   pocket goes into the host's `[tables.<id>] cue_return_ms`, docs/shots.md);
7. with a colour station (birth `caps` `colour`), the cue ball, the solids 1-7 and the 8
   rolled past it in turn: the median of each ball's reads' `rgb` (caps `colour_rgb`) is
   the table's colour for it, the config's `colour` table (hardware/colour.md
   "Calibration");
8. proposals (the pure functions below), then the final config: rev + 1, retained, QoS 1,
   confirmed by the node's status (`config_rev` equal, `config_error` null).

If calibration stops after the probe went out (abort, missing measurement, Ctrl-C), the
previous config is re-published with a higher rev so the node does not keep the probe.

The analysis functions are pure and unit-tested with recorded event streams; the session
class needs only a connected `NodeLink` (paho-mqtt 2.x) and a UI object.
"""

from __future__ import annotations

import collections
import statistics
import sys
import threading
import time
from dataclasses import dataclass, field

from rbproto import codec

POCKETS = codec.POCKETS
RAILS = codec.RAILS

# -- proposals (pure) -----------------------------------------------------------------

DEFAULT_FRACTION = 0.3  # threshold = this fraction of the median knock amplitude ...
NOISE_MARGIN = 1.5  # ... but at least this many times the loudest noise
MIN_THRESHOLD = 16  # ADC counts: below this the ESP32 ADC's own noise fires
MIN_DEBOUNCE_US = 1000
MAX_DEBOUNCE_US = 5000  # must stay well under the ~30 ms between two balls (beam.py)
MIN_JAM_US = 2_000_000


@dataclass
class RailProposal:
    rail: str
    ch: int | None
    threshold: int | None
    hits: list[int] = field(default_factory=list)
    noise: list[int] = field(default_factory=list)
    crosstalk: list[int] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def propose_threshold(hits, noise=(), fraction=DEFAULT_FRACTION, floor=MIN_THRESHOLD):
    """(threshold, warnings) for one rail from knock amplitudes `hits` and quiet-period
    amplitudes `noise` (all 0..4095). The threshold is `fraction` of the median hit, raised
    above the loudest noise by NOISE_MARGIN when noise reaches it, and kept at or below
    the softest hit where the two allow it."""
    hits = sorted(int(a) for a in hits)
    noise = sorted(int(a) for a in noise)
    warnings = []
    if not hits:
        return None, ["no knocks measured"]
    median = statistics.median(hits)
    thr = round(fraction * median)
    if noise:
        loud = noise[-1]
        if loud * NOISE_MARGIN > thr:
            thr = int(loud * NOISE_MARGIN) + 1
        if loud >= hits[0]:
            warnings.append(
                f"noise up to {loud} reaches the softest knock ({hits[0]}): "
                "check the piezo mounting and cable shield"
            )
            thr = loud + 1
        elif thr > hits[0]:
            thr = (loud + hits[0]) // 2 + 1
            warnings.append(f"little margin: noise up to {loud}, softest knock {hits[0]}")
    thr = max(floor, min(4095, thr))
    if thr > hits[0]:
        warnings.append(
            f"threshold {thr} above the softest knock {hits[0]}: soft hits will be missed"
        )
    return thr, warnings


def propose_beam_timing(durations, debounce_us=2000, jam_us=2_000_000):
    """(debounce_us, jam_us, warnings) from the beam-blocked times (µs) of the test drops.
    Debounce: a quarter of the shortest drop, within 1..5 ms (glitches are shorter, and two
    balls 30 ms apart must still be two runs). Jam: 5x the longest drop, at least 2 s."""
    durs = sorted(int(d) for d in durations if d is not None)
    if not durs:
        return debounce_us, jam_us, ["no drop durations measured: debounce and jam unchanged"]
    warnings = []
    deb = max(MIN_DEBOUNCE_US, min(MAX_DEBOUNCE_US, durs[0] // 4))
    if durs[0] < 2 * MIN_DEBOUNCE_US:
        warnings.append(
            f"shortest drop blocked the beam only {durs[0]} µs: check the beam height "
            "(it should cross the ball's centre)"
        )
    jam = max(MIN_JAM_US, 5 * durs[-1])
    return deb, jam, warnings


def group_knocks(rail_events, window_us=20000):
    """Split rail events (dicts with t, rail, amp; one boot) into knocks: an event more
    than `window_us` after the first event of the current knock starts a new one."""
    knocks, cur, start = [], [], None
    for e in sorted(rail_events, key=lambda e: e["t"]):
        if cur and e["t"] - start > window_us:
            knocks.append(cur)
            cur = []
        if not cur:
            start = e["t"]
        cur.append(e)
    if cur:
        knocks.append(cur)
    return knocks


def analyse_rail(knocks, probe_rails, noise_by_ch):
    """-> (ch, hits, crosstalk, warnings) for one rail step. `probe_rails` maps the rail
    names of the probe config to channels."""
    votes = collections.Counter()
    loudest = []
    for k in knocks:
        # a channel's amplitude in this knock: its largest event
        by_ch = {}
        for e in k:
            ch = probe_rails[e["rail"]]
            by_ch[ch] = max(by_ch.get(ch, 0), e["amp"])
        ch = max(by_ch, key=lambda c: by_ch[c])
        votes[ch] += 1
        loudest.append((ch, by_ch))
    if not votes:
        return None, [], [], ["no knock seen"]
    ch, n = votes.most_common(1)[0]
    warnings = []
    if n < len(knocks):
        warnings.append(
            f"{len(knocks) - n} of {len(knocks)} knocks were loudest on another channel"
        )
    hits = [by_ch[ch] for c, by_ch in loudest if c == ch]
    cross = [a for c, by_ch in loudest if c == ch for o, a in by_ch.items() if o != ch]
    return ch, hits, cross, warnings


def cue_return_delays(events, pocket, max_us=20_000_000):
    """The cue-ball return delays (µs) in one cue step: each `cue` event paired with the
    latest earlier drop reported as `pocket` (the probe's name for the pocket's beam) that
    no earlier cue event took; a colour station's `ball` read counts as well (it sits on
    the same return: any ball rolled measures the delay, hardware/colour.md). `events` are
    dicts with t, kind, pocket (one boot)."""
    delays, last_drop = [], None
    for e in sorted(events, key=lambda e: e["t"]):
        if e["kind"] == "drop" and e.get("pocket") == pocket:
            last_drop = e["t"]
        elif e["kind"] in ("cue", "ball") and last_drop is not None:
            if 0 <= e["t"] - last_drop <= max_us:
                delays.append(e["t"] - last_drop)
            last_drop = None
    return delays


CUE_RETURN_SPREAD = 0.2  # returns of one pocket further apart than this share: a warning


def propose_cue_returns(delays_by_pocket):
    """({pocket: ms}, warnings): the median return delay of each measured pocket, to 10 ms.
    A median resists one slow run (the ball stopped in the return, a second ball in front);
    a spread over CUE_RETURN_SPREAD of the median is reported."""
    out, warnings = {}, []
    for pocket in POCKETS:
        ds = sorted(delays_by_pocket.get(pocket) or ())
        if not ds:
            continue
        med = statistics.median(ds)
        out[pocket] = max(10, round(med / 10_000) * 10)
        if len(ds) > 1 and ds[-1] - ds[0] > CUE_RETURN_SPREAD * med:
            warnings.append(
                f"cue ball from {pocket}: returns {', '.join(f'{d / 1e6:.2f}' for d in ds)} s "
                "vary: check the return for a ball that stops on the way"
            )
    return out, warnings


# The balls a table's colours are learned from, in the config table's order (SPEC.md
# config `colour`: white, the colours of balls 1..7, black): each stripe shares its
# solid's colour, so these nine teach all sixteen
COLOUR_BALLS = (
    (0, "the cue ball"),
    (1, "the 1 (yellow)"),
    (2, "the 2 (blue)"),
    (3, "the 3 (red)"),
    (4, "the 4 (purple)"),
    (5, "the 5 (orange)"),
    (6, "the 6 (green)"),
    (7, "the 7 (maroon)"),
    (8, "the 8 (black)"),
)


def learn_colour_table(reads: dict, base: list | None) -> tuple[list | None, list[str]]:
    """The config's `colour.rgb` (27 ints) from the reads of each ball rolled past the
    station: {ball 0..8: [[R, G, B] x 1000, ...]} (the `ball` events' `rgb`), each colour
    the per-channel median of its ball's reads (a pass that caught a number circle or the
    ball's edge is outvoted). A colour without reads keeps `base`'s value (the node's
    current table); with no base it cannot be filled, and no table is proposed (the node
    keeps the nominal colours) -> (table or None, warnings)."""
    out: list[int] = []
    missing = []
    for k, name in COLOUR_BALLS:
        got = reads.get(k) or []
        if got:
            out += [int(statistics.median_low([r[i] for r in got])) for i in range(3)]
        elif base is not None:
            out += base[3 * k : 3 * k + 3]
        else:
            missing.append(name)
    if missing:
        return None, [
            f"colour station: no reads of {', '.join(missing)}: the table's colours are not "
            "learned (the node keeps the nominal colours)"
        ]
    return out, []


def cue_return_line(ms: dict) -> str:
    """The host config line (TOML inline table) for `[tables.<id>]`."""
    return "cue_return_ms = {" + ", ".join(f"{p} = {ms[p]}" for p in POCKETS if p in ms) + "}"


def with_table_line(text: str, table: str, line: str) -> str:
    """The TOML document `text` with `line` (`key = value`) set in its `[tables.<table>]`
    section: an existing line of that key replaced, else the line added after the section's
    last key. Comments and the rest of the file are kept as they are."""
    key = line.split("=", 1)[0].strip()
    lines = text.splitlines()
    header = {f"[tables.{table}]", f'[tables."{table}"]'}
    start = next((i for i, x in enumerate(lines) if x.split("#", 1)[0].strip() in header), None)
    if start is None:
        raise ValueError(f"no [tables.{table}] section: add one with its nodes first")
    end = next(
        (i for i in range(start + 1, len(lines)) if lines[i].lstrip().startswith("[")),
        len(lines),
    )
    for i in range(start + 1, end):
        if lines[i].split("=", 1)[0].strip() == key and "=" in lines[i]:
            lines[i] = line
            break
    else:
        last = max(
            [
                i
                for i in range(start, end)
                if lines[i].strip() and not lines[i].lstrip().startswith("#")
            ]
        )
        lines.insert(last + 1, line)
    return "\n".join(lines) + "\n"


def probe_config(base, rev, n_beams, n_rails, cue_ch, refractory_us=50000):
    """The identity-mapped, zero-threshold config used while measuring."""
    cfg = _carry(base)
    cfg.update(
        {
            "v": 1,
            "rev": rev,
            "pockets": [{"ch": i, "pocket": POCKETS[i]} for i in range(min(n_beams, 6))],
            "rails": [
                {"ch": i, "rail": RAILS[i], "threshold": 0, "refractory_us": refractory_us}
                for i in range(min(n_rails, 6))
            ],
            "cue_ch": cue_ch,
        }
    )
    return codec.validate("config", _keep_strike(cfg, base))


def final_config(
    base, rev, pockets, rails, cue_ch, debounce_us, jam_us, refractory_us=50000, colour=None
):
    """`pockets` {pocket: ch}; `rails` {rail: (ch, threshold)}; `colour` the colour
    station's learned table (27 ints) or None to keep `base`'s; keeps the other settings
    (status period, batching) of `base`."""
    cfg = _carry(base)
    old_refr = {r["rail"]: r.get("refractory_us", refractory_us) for r in base.get("rails", [])}
    cfg.update(
        {
            "v": 1,
            "rev": rev,
            "pockets": [
                {"ch": ch, "pocket": p} for p, ch in sorted(pockets.items(), key=lambda x: x[1])
            ],
            "rails": [
                {
                    "ch": ch,
                    "rail": r,
                    "threshold": thr,
                    "refractory_us": old_refr.get(r, refractory_us),
                }
                for r, (ch, thr) in sorted(rails.items(), key=lambda x: x[1][0])
            ],
            "cue_ch": cue_ch,
            "debounce_us": debounce_us,
            "jam_us": jam_us,
        }
    )
    if colour is not None:
        cfg["colour"] = {"rgb": list(colour)}
    return codec.validate("config", _keep_strike(cfg, base))


def default_config(n_beams=6, n_rails=6, cue_ch=6, threshold=200, refractory_us=50000):
    """The firmware's built-in sensing config (firmware/config.json): identity map."""
    cfg = {
        "v": 1,
        "rev": 0,
        "pockets": [{"ch": i, "pocket": POCKETS[i]} for i in range(min(n_beams, 6))],
        "rails": [
            {"ch": i, "rail": RAILS[i], "threshold": threshold, "refractory_us": refractory_us}
            for i in range(min(n_rails, 6))
        ],
        "cue_ch": cue_ch,
    }
    for k, v in codec.CONFIG_DEFAULTS.items():
        cfg.setdefault(k, v)
    return cfg


def _keep_strike(cfg, base):
    """The strike sensor of `base` (hardware/strike.md) stays configured unless the new
    map gives its channel to a rail (a strike piezo on a rail input while every rail
    channel is probed)."""
    st = base.get("strike")
    if st is not None and all(r["ch"] != st["ch"] for r in cfg["rails"]):
        cfg["strike"] = st
    return cfg


def _carry(base):
    cfg = {}
    # `colour`: the colour station's learned table stays (a recalibration of the wiring
    # does not change the balls)
    keep = ("status_period_s", "batch_max", "batch_linger_ms", "debounce_us", "jam_us", "cue_ch")
    for k in (*keep, "colour"):
        if k in base:
            cfg[k] = base[k]
    return cfg


# -- MQTT link ------------------------------------------------------------------------


class CalibrationError(RuntimeError):
    pass


class NodeLink:
    """One paho-mqtt 2.x client subscribed to one node's status, birth, config and events.
    Messages are decoded with the codec (bad ones are counted and dropped) and kept:
    `status`/`birth`/`config` as the latest, events in arrival order, de-duplicated by
    (boot, seq)."""

    def __init__(
        self,
        host,
        port,
        venue,
        table,
        node,
        user="railbird-host",
        password=None,
        client_id=None,
        keepalive=30,
        tls=False,
        cafile=None,
        signer=None,
    ):
        from railbird.mqttclient import BrokerLogin, new_client  # paho: only when used

        # the venue key (railbird.venuekey.Signer): a board provisioned with it takes only
        # configs it signed; None sends them unsigned
        self.signer = signer
        self.venue, self.table, self.node = venue, table, node
        self.topics = {
            kind: codec.topic(venue, table, kind, node)
            for kind in ("status", "birth", "config", "events")
        }
        self._cond = threading.Condition()
        self.status = self.birth = self.config = None
        self.status_n = 0  # status messages received (to tell old from new)
        self.events = []  # dicts with "boot" added, arrival order
        self._seen = set()
        self.rejected = collections.Counter()
        self._subscribed = threading.Event()
        self._connected = threading.Event()
        self._conn_rc = None
        self._c, self.link = new_client(
            "calibrate",
            BrokerLogin(host, port, user or None, password or None, tls, cafile),
            client_id=client_id or f"railbird-calibrate-{node}-{time.monotonic_ns() % 10**8}",
            mqtt311=True,
            clean_session=True,
            on_connect=self._on_connect,
        )
        self._c.on_subscribe = lambda *a: self._subscribed.set()
        self._c.on_message = self._on_message
        self._host, self._port, self._keepalive = host, port, keepalive

    def connect(self, timeout=10.0):
        try:
            self._c.connect(self._host, self._port, self._keepalive)
        except OSError as e:
            raise CalibrationError(
                f"cannot reach the broker at {self._host}:{self._port}: {e}"
            ) from e
        self._c.loop_start()
        if not self._connected.wait(timeout):
            self.close()
            raise CalibrationError(f"no CONNACK from {self._host}:{self._port} in {timeout:.0f} s")
        if self._conn_rc is not None and self._conn_rc.is_failure:
            self.close()
            raise CalibrationError(
                f"broker refused the connection: {self._conn_rc} (check --user/--password)"
            )
        self._c.subscribe([(t, 1) for t in self.topics.values()])
        if not self._subscribed.wait(timeout):
            raise CalibrationError("no SUBACK from the broker")
        return self

    def close(self):
        try:
            self._c.disconnect()
        finally:
            self._c.loop_stop()

    def _on_connect(self, client, userdata, flags, rc, properties=None):
        self._conn_rc = rc
        self._connected.set()

    def _on_message(self, client, userdata, msg):
        kind = next((k for k, t in self.topics.items() if t == msg.topic), None)
        if kind is None:
            return
        if not msg.payload:  # a cleared retained message
            return
        try:
            m = codec.decode(kind, msg.payload)
        except codec.ProtocolError as e:
            self.rejected[e.code] += 1
            return
        with self._cond:
            if kind == "events":
                for e in m["events"]:
                    key = (m["boot"], e["seq"])
                    if key in self._seen:
                        continue
                    self._seen.add(key)
                    e = dict(e)
                    e["boot"] = m["boot"]
                    e["rx"] = time.monotonic()
                    self.events.append(e)
            else:
                setattr(self, kind, m)
                if kind == "status":
                    self.status_n += 1
            self._cond.notify_all()

    def wait_for(self, pred, timeout):
        """Wait until pred(self) is true (checked under the lock); return its value or None."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                v = pred(self)
                if v:
                    return v
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._cond.wait(min(left, 0.2))

    def mark(self):
        with self._cond:
            return len(self.events)

    def since(self, mark):
        with self._cond:
            return list(self.events[mark:])

    def last_rx(self):
        with self._cond:
            return self.events[-1]["rx"] if self.events else 0.0

    def publish_config(self, cfg, timeout=10.0):
        if self.signer is not None:
            cfg = self.signer.sign_config(self.venue, self.table, self.node, cfg)
        # retained: the copy of the config the node now runs, which a node takes for no
        # command when the broker hands it over again (rbnode.trust refuses any other)
        info = self._c.publish(
            self.topics["config"], codec.encode("config", cfg), qos=1, retain=True
        )
        info.wait_for_publish(timeout)
        if not info.is_published():
            raise CalibrationError("the broker did not acknowledge the config")


# -- user interface --------------------------------------------------------------------


@dataclass
class Step:
    kind: str  # "quiet", "pocket", "rail", "cue"
    target: str | None  # pocket or rail name
    count: int  # drops or knocks asked for
    text: str


# Callables run with each Step as it starts (after the prompt): tests use them to act as
# the installer on a simulated node.
STEP_HOOKS: list = []


class ConsoleUI:
    """Prompts on `out`; answers from `answers` (a list, e.g. the lines of --script),
    else stdin when interactive, else the default."""

    def __init__(self, interactive=True, answers=None, out=sys.stdout, inp=sys.stdin):
        self.interactive = interactive
        self.answers = list(answers) if answers is not None else None
        self.out, self.inp = out, inp

    def say(self, text=""):
        print(text, file=self.out, flush=True)

    def ask(self, question, choices, default):
        """One of `choices` (single letters)."""
        if self.answers is not None:
            a = self.answers.pop(0).strip().lower() if self.answers else default
            self.say(f"{question} [{'/'.join(choices)}] {a}")
        elif not self.interactive:
            a = default
            self.say(f"{question} [{'/'.join(choices)}] {a} (non-interactive)")
        else:
            self.out.write(f"{question} [{'/'.join(choices)}, default {default}] ")
            self.out.flush()
            a = (self.inp.readline() or "").strip().lower() or default
        return a[:1] if a[:1] in choices else default


# -- the calibration session ------------------------------------------------------------


@dataclass
class Result:
    ok: bool
    config: dict | None
    pockets: dict
    rails: list
    cue_seen: bool | None
    debounce_us: int
    jam_us: int
    warnings: list
    message: str
    cue_return_ms: dict = field(default_factory=dict)  # pocket -> median return delay
    colour_rgb: list | None = None  # the colour station's learned table, when learned


class Calibrator:
    def __init__(
        self,
        link: NodeLink,
        ui: ConsoleUI,
        *,
        drops=2,
        knocks=3,
        quiet_s=3.0,
        step_timeout=60.0,
        settle_s=0.4,
        fraction=DEFAULT_FRACTION,
        apply_timeout=15.0,
        knock_window_us=20000,
        pinmap=None,
        skip_cue=False,
        allow_partial=False,
        cue_drops=3,
        skip_colour=False,
        colour_rolls=3,
    ):
        self.link, self.ui = link, ui
        self.skip_colour, self.colour_rolls = skip_colour, colour_rolls
        self.cue_drops = cue_drops
        self.drops, self.knocks, self.quiet_s = drops, knocks, quiet_s
        self.step_timeout, self.settle_s, self.fraction = step_timeout, settle_s, fraction
        self.apply_timeout, self.knock_window_us = apply_timeout, knock_window_us
        self.pinmap, self.skip_cue, self.allow_partial = pinmap, skip_cue, allow_partial
        self.warnings: list[str] = []
        self.base = None
        self.rev = 0
        self.probe_sent = False
        self.published_rev = 0

    # -- helpers ---
    def _warn(self, text):
        self.warnings.append(text)
        self.ui.say(f"  warning: {text}")

    def _apply(self, cfg, what):
        """Publish `cfg` and wait for the node's status to show it applied (config_rev) or
        refused (a status after the publish with config_error and the old rev)."""
        rev = cfg["rev"]
        n0 = self.link.status_n
        self.link.publish_config(cfg)
        self.published_rev = max(self.published_rev, rev)
        t_refused = None
        deadline = time.monotonic() + self.apply_timeout
        while time.monotonic() < deadline:
            s, n = self.link.wait_for(lambda lk: (lk.status, lk.status_n), 0.2)
            if s and s.get("state") == "online" and s.get("config_rev") == rev:
                self.rev = rev
                return
            if n > n0 and s and s.get("config_error"):
                # an error after our publish; give a late status with the new rev 1 s
                t_refused = t_refused or time.monotonic()
                if time.monotonic() - t_refused > 1.0:
                    raise CalibrationError(
                        f"the node refused the {what} config (rev {rev}): {s['config_error']}"
                    )
            time.sleep(0.05)
        raise CalibrationError(
            f"the node did not apply the {what} config (rev {rev}) within "
            f"{self.apply_timeout:.0f} s; its last status: {self.link.status}"
        )

    def _settle(self, max_s=3.0):
        """Wait until no event has arrived for settle_s (late batches of the last step)."""
        deadline = time.monotonic() + max_s
        while time.monotonic() < deadline:
            if time.monotonic() - self.link.last_rx() >= self.settle_s:
                return
            time.sleep(0.05)

    def _step(self, step: Step, done):
        """Prompt, run the hooks, collect events until done(events) or timeout. Returns
        the events; in interactive mode a timeout offers retry/skip/abort."""
        while True:
            self._settle()
            mark = self.link.mark()
            self.ui.say(step.text)
            for hook in STEP_HOOKS:
                hook(step)
            deadline = time.monotonic() + self.step_timeout
            events = []
            while time.monotonic() < deadline:
                events = self.link.since(mark)
                if done(events) and time.monotonic() - self.link.last_rx() >= self.settle_s:
                    return self.link.since(mark)
                time.sleep(0.05)
            a = self.ui.ask(
                f"  nothing complete seen for {step.kind} {step.target or ''} in "
                f"{self.step_timeout:.0f} s: retry, skip or abort?",
                "rsa",
                "s" if self.allow_partial else "a",
            )
            if a == "r":
                continue
            if a == "a":
                raise CalibrationError(f"aborted at the {step.kind} {step.target or ''} step")
            return events

    # -- the flow ---
    def run(self) -> Result:
        try:
            return self._run()
        except CalibrationError as e:
            return Result(False, None, {}, [], None, 0, 0, self.warnings, str(e))

    def _run(self) -> Result:
        link = self.link
        self.ui.say(f"Calibrating node {link.node} of table {link.table} (venue {link.venue}).")
        st = link.wait_for(
            lambda lk: lk.status if lk.status and lk.status.get("state") == "online" else None,
            self.apply_timeout,
        )
        if not st:
            raise CalibrationError(
                f"node {link.node} is not online (no retained online status on "
                f"{link.topics['status']})"
            )
        link.wait_for(lambda lk: lk.birth, 2.0)
        time.sleep(0.3)  # retained config arrives with the subscription
        self.rev = max(link.config.get("rev", 0) if link.config else 0, st.get("config_rev") or 0)
        self.base = {"v": 1, "rev": 0, "pockets": [], "rails": []}
        if link.config:
            self.base = dict(link.config)
        n_beams, n_rails, cue_ch = self._channels()
        if not link.config:
            # The node runs its built-in config, which no one can read back: the fallback
            # to restore is the firmware's default (identity map, threshold 200).
            self.base = default_config(n_beams, n_rails, cue_ch)
        self.ui.say(
            f"Node online (boot {st['boot']}, config rev {self.rev}); "
            f"{n_beams} beams, {n_rails} rails, cue detector "
            f"{f'channel {cue_ch}' if cue_ch is not None else 'none'}."
        )
        try:
            return self._measure_and_apply(n_beams, n_rails, cue_ch)
        except BaseException:
            if self.probe_sent:
                self._restore()
            raise

    def _channels(self):
        pm = self.pinmap
        if pm is None and self.link.birth:
            try:
                from railbird.hardware import load

                pm = load(self.link.birth["pinmap"])
            except (OSError, ValueError):
                pm = None
        if pm is not None:
            from railbird.hardware import pinmap_core

            ch = pinmap_core.channels(pm)
            return ch["beams"], ch["rails"], pinmap_core.cue_channel(pm)
        # no pin map: the shipped maps' 6 beams and 6 rails; the dedicated cue input is
        # config channel beams + 0 (SPEC.md config `cue_ch`, pinmap_core.cue_channel)
        n_beams = n_rails = 6
        caps = (self.link.birth or {}).get("caps", [])
        cue = (self.link.config or {}).get("cue_ch")
        if cue is None and ("cue" in caps or not self.link.birth):
            cue = n_beams
        return n_beams, n_rails, cue

    def _restore(self):
        cfg = dict(self.base)
        cfg["v"] = 1
        cfg["rev"] = max(self.rev, self.published_rev) + 1
        try:
            self.ui.say(f"Restoring the previous config as rev {cfg['rev']} ...")
            self._apply(codec.validate("config", cfg), "restored")
        except (CalibrationError, codec.ProtocolError) as e:
            self.ui.say(f"  could not restore the previous config: {e}")

    def _measure_and_apply(self, n_beams, n_rails, cue_ch) -> Result:
        probe = probe_config(self.base, self.rev + 1, n_beams, n_rails, cue_ch)
        probe_pockets = {p["pocket"]: p["ch"] for p in probe["pockets"]}
        probe_rails = {r["rail"]: r["ch"] for r in probe["rails"]}
        self.probe_sent = True
        self._apply(probe, "probe")
        self.ui.say(
            f"Probe config rev {probe['rev']} applied: every channel reports, thresholds 0."
        )

        # 1. quiet
        q = Step(
            "quiet", None, 0, f"Keep the table still for {self.quiet_s:g} s (measuring noise) ..."
        )
        self._settle()
        mark = self.link.mark()
        self.ui.say(q.text)
        for hook in STEP_HOOKS:
            hook(q)
        time.sleep(self.quiet_s)
        noise = collections.defaultdict(list)
        for e in self.link.since(mark):
            if e["kind"] == "rail":
                noise[probe_rails[e["rail"]]].append(e["amp"])
            elif e["kind"] in ("drop", "jam"):
                self._warn(
                    f"beam channel {probe_pockets[e['pocket']]} fired with the table still: "
                    "check its alignment"
                )

        # 2. pockets
        pockets, durations = {}, []
        for pocket in POCKETS:
            step = Step(
                "pocket",
                pocket,
                self.drops,
                f"Pocket {pocket}: drop a ball into it {self.drops} time(s), one at a time.",
            )
            evs = self._step(step, lambda ev: sum(e["kind"] == "drop" for e in ev) >= self.drops)
            drops = [e for e in evs if e["kind"] == "drop"]
            if not drops:
                self._warn(f"pocket {pocket}: no drop seen; left out of the config")
                continue
            votes = collections.Counter(probe_pockets[e["pocket"]] for e in drops)
            ch, n = votes.most_common(1)[0]
            if n < len(drops):
                self._warn(f"pocket {pocket}: drops seen on channels {dict(votes)}; using {ch}")
            owner = next((p for p, c in pockets.items() if c == ch), None)
            if owner is not None:
                self._warn(
                    f"pocket {pocket}: beam channel {ch} already answered for {owner}: "
                    f"two pockets wired to one input? {pocket} left out"
                )
                continue
            pockets[pocket] = ch
            durations += [
                e.get("dur") for e in drops if e["pocket"] == probe["pockets"][ch]["pocket"]
            ]
            self.ui.say(
                f"  {pocket} = beam channel {ch} (blocked "
                f"{', '.join('%.1f ms' % (e.get('dur', 0) / 1000) for e in drops)})"
            )

        # 3. rails
        rails = []
        for rail in RAILS:
            step = Step(
                "rail",
                rail,
                self.knocks,
                f"Rail {rail}: knock the middle of the cushion firmly {self.knocks} time(s) "
                "(or roll a ball into it), a second apart.",
            )

            def enough(ev):
                return (
                    len(group_knocks([e for e in ev if e["kind"] == "rail"], self.knock_window_us))
                    >= self.knocks
                )

            evs = self._step(step, enough)
            knocks = group_knocks([e for e in evs if e["kind"] == "rail"], self.knock_window_us)
            ch, hits, cross, warns = analyse_rail(knocks, probe_rails, noise)
            rp = RailProposal(
                rail, ch, None, hits, noise.get(ch, []) if ch is not None else [], cross
            )
            for w in warns:
                self._warn(f"rail {rail}: {w}")
            if ch is not None and any(r.ch == ch for r in rails):
                owner = next(r.rail for r in rails if r.ch == ch)
                self._warn(f"rail {rail}: channel {ch} already answered for rail {owner}; left out")
                ch = rp.ch = None
            if ch is not None:
                rp.threshold, tw = propose_threshold(hits, rp.noise, self.fraction)
                rp.warnings += tw
                for w in tw:
                    self._warn(f"rail {rail}: {w}")
                self.ui.say(
                    f"  {rail} = rail channel {ch}: knocks {hits}, noise max "
                    f"{max(rp.noise) if rp.noise else 0}, cross-talk max "
                    f"{max(cross) if cross else 0} -> threshold {rp.threshold}"
                )
            else:
                self._warn(f"rail {rail}: no channel found; left out of the config")
            rails.append(rp)

        # 4. cue: the detector, and the return delay from each pocket
        cue_seen = None
        final_cue = cue_ch
        cue_returns: dict = {}
        if cue_ch is not None and not self.skip_cue:
            probe_name = {p["ch"]: p["pocket"] for p in probe["pockets"]}
            for pocket in [p for p in POCKETS if p in pockets]:
                step = Step(
                    "cue",
                    pocket,
                    self.cue_drops,
                    f"Cue ball into {pocket}: drop the cue ball into {pocket} "
                    f"{self.cue_drops} time(s) and let it run into the ball return; wait "
                    "until it is there before the next drop.",
                )
                evs = self._step(
                    step, lambda ev: sum(e["kind"] == "cue" for e in ev) >= self.cue_drops
                )
                seen = any(e["kind"] == "cue" for e in evs)
                if not seen and not cue_seen:
                    # the ball went in (or nothing did) and the detector said nothing: a dead
                    # detector gives no cue detection rather than wrong scratches
                    cue_seen = False
                    self._warn("cue detector: no cue event; cue_ch set to null (no cue detection)")
                    final_cue = None
                    break
                cue_seen = True
                ds = cue_return_delays(evs, probe_name[pockets[pocket]])
                if ds:
                    cue_returns[pocket] = ds
                    self.ui.say(
                        f"  cue ball from {pocket}: back in "
                        f"{', '.join(f'{d / 1e6:.2f}' for d in ds)} s"
                    )
                else:
                    self._warn(
                        f"cue ball from {pocket}: no drop and return measured; the table "
                        "size's default delay applies"
                    )
        cue_ms, tw = propose_cue_returns(cue_returns)
        for w in tw:
            self._warn(w)

        # 5. the colour station's table
        colour = self._learn_colours()

        # 6. proposal
        deb, jam, tw = propose_beam_timing(
            durations, self.base.get("debounce_us", 2000), self.base.get("jam_us", 2_000_000)
        )
        for w in tw:
            self._warn(w)
        missing = [p for p in POCKETS[:n_beams] if p not in pockets] + [
            r.rail for r in rails[:n_rails] if r.ch is None
        ]
        if missing and not self.allow_partial:
            raise CalibrationError(
                f"not calibrated: {', '.join(missing)} (use --allow-partial to publish the rest)"
            )
        cfg = final_config(
            self.base,
            self.rev + 1,
            pockets,
            {r.rail: (r.ch, r.threshold) for r in rails if r.ch is not None},
            final_cue,
            deb,
            jam,
            colour=colour,
        )
        self.ui.say("")
        self.ui.say(f"Proposed config rev {cfg['rev']}:")
        self.ui.say("  pockets: " + ", ".join(f"{p['pocket']}=ch{p['ch']}" for p in cfg["pockets"]))
        self.ui.say(
            "  rails:   "
            + ", ".join(
                f"{r['rail']}=ch{r['ch']} (threshold {r['threshold']})" for r in cfg["rails"]
            )
        )
        self.ui.say(f"  cue_ch {cfg['cue_ch']}, debounce {deb} µs, jam {jam} µs")
        if colour is not None:
            self.ui.say("  colour: the table learned above")
        if cue_ms:
            self.ui.say(
                "Host config (railbird run, docs/shots.md): median cue-ball return per pocket"
            )
            self.ui.say(f"  [tables.{self.link.table}]")
            self.ui.say(f"  {cue_return_line(cue_ms)}")
        if self.ui.ask("Publish this config to the node?", "yn", "y") != "y":
            raise CalibrationError("not published (installer declined)")
        self._apply(cfg, "calibrated")
        self.probe_sent = False
        self.ui.say(f"Done: node {self.link.node} runs config rev {cfg['rev']}.")
        return Result(
            True,
            cfg,
            pockets,
            rails,
            cue_seen,
            deb,
            jam,
            self.warnings,
            f"node {self.link.node} runs config rev {cfg['rev']}",
            cue_ms,
            colour,
        )

    def _learn_colours(self):
        """The colour station's table from the balls rolled past it, or None (no station,
        --skip-colour, a node that sends no readings, a ball never read): then the config
        keeps the table it had."""
        caps = (self.link.birth or {}).get("caps", [])
        if "colour" not in caps or self.skip_colour:
            return None
        if "colour_rgb" not in caps:
            self._warn(
                "colour station: this firmware sends no readings (birth caps colour_rgb): "
                "the table's colours are not learned; update the node and calibrate again"
            )
            return None
        self.ui.say(
            "Colour station: the table's ball colours. Roll each ball asked for into a "
            "pocket and let it run past the station."
        )
        reads: dict = {}
        for ball, name in COLOUR_BALLS:
            step = Step(
                "colour",
                str(ball),
                self.colour_rolls,
                f"Roll {name} past the colour station {self.colour_rolls} time(s), one at a time.",
            )
            evs = self._step(
                step, lambda ev: sum(e["kind"] == "ball" for e in ev) >= self.colour_rolls
            )
            seen = [e for e in evs if e["kind"] == "ball"]
            got = [e["rgb"] for e in seen if "rgb" in e]
            if got:
                reads[ball] = got
                as_read = ", ".join(f"{e['ball']} at {e['conf']} %" for e in seen)
                self.ui.say(f"  {name}: read as {as_read}")
            else:
                self._warn(f"colour station: {name} was not read")
        base = ((self.base or {}).get("colour") or {}).get("rgb")
        table, tw = learn_colour_table(reads, base)
        for w in tw:
            self._warn(w)
        return table
