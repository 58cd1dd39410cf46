"""One simulated table: the real node firmware on simulated hardware (rbnode.simnode.SimNode)
plus a referee console, played by a `Player` (random, from a seed) or a `Scenario` (a file).

Each turn: the source decides from the current game state; the referee inputs are published
to `railbird/v1/<venue>/<table>/referee` (user railbird-referee) and the shot's sensor edges
are scheduled on the node's simulated pins, so the host sees exactly what a real table would
send. The simulator keeps its own expectation of the game state (a rules `Referee` fed with
the same referee inputs and with the shot the host will assemble from those edges) and, when
the host publishes its retained `state` topic, waits for the host to reach the same state
before the next turn; a disagreement is counted and the simulator adopts the host's state.
Without a state feed it paces itself by the host's quiet period instead.

A broker outage pauses the table, as it would a referee whose scoreboard went dark: between
turns it waits until the node and the console are connected again, a referee input sent
meanwhile waits in the console's queue until the broker has it, and waiting for the host's
state does not time out while the links are down. Each pause is logged ("broker
unreachable", then "resumed after N s"); nothing raises.

`Offline` is the same loop with no broker and no node: `railbird sim --dry-run` writes the
transcript (referee inputs and sensed shot inputs as JSON lines, `railbird referee` input).
"""

from __future__ import annotations

import json
import logging
import os
import random
import threading
import time
import uuid
from pathlib import Path

from railbird.core.game import with_referee_facts

from . import physics
from .physics import firmware_path
from .player import Player, Style

log = logging.getLogger("railbird.sim")


def watch_parent(event: threading.Event, period_s: float = 0.5) -> None:
    """Set `event` when this process's parent goes away (the demo was killed outright):
    a child in its own session would otherwise live on."""
    parent = os.getppid()

    def watch():
        while not event.wait(period_s):
            if os.getppid() != parent:
                log.warning("parent process %d is gone: stopping", parent)
                event.set()

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


class Expectation:
    """The simulator's own view of the game: a rules Referee fed with the same inputs."""

    def __init__(self, match: dict):
        from railbird.rules import Referee

        self._Referee = Referee
        self.ref = Referee(dict(match))

    def feed(self, inp: dict) -> tuple[bool, str | None]:
        from railbird.rules import RulesError

        try:
            if inp.get("type") == "match":
                self.ref = self._Referee(dict(inp))
            else:
                self.ref.feed(dict(inp))
            return True, None
        except RulesError as e:
            return False, str(e)

    @property
    def state(self) -> dict:
        return self.ref.state_json()

    @property
    def fen(self) -> str:
        from railbird.rules import to_fen

        return to_fen(self.ref.state)

    def adopt(self, fen: str) -> None:
        from railbird.rules import from_fen

        self.ref.state = from_fen(fen)


class Source:
    """Where turns come from: a seeded Player, a Scenario, or a scenario then a player."""

    def __init__(self, player: Player | None = None, scenario=None):
        self.player = player
        self.scenario = scenario
        self._steps = iter(scenario.turns()) if scenario is not None else None

    def next_turn(self, st: dict):
        if self._steps is not None:
            try:
                return next(self._steps)
            except StopIteration:
                self._steps = None
                if self.player is None:
                    return None
        if self.player is None:
            return None
        return self.player.next_turn(st)


class Runner:
    """The turn loop shared by the live table and the offline transcript."""

    def __init__(
        self,
        table: str,
        match: dict,
        source: Source,
        seed: int = 1,
        shot_params=None,
        lip_policy: str = "warn",
        pace: float = 1.0,
        max_gap_us: int = physics.DEFAULT_MAX_GAP_US,
        out=None,
        colour: bool = False,
    ):
        self.table = table
        # a colour station reads every pocketed ball (hardware/colour.md): the referee
        # enters no identities (offline only: the simulated node has no station yet)
        self.colour = colour
        self.match = match
        self.source = source
        self.rng = random.Random(seed * 7919 + 17)  # edges; the player has its own
        self.expect = Expectation(match)
        self.shot_params = shot_params
        self.lip_policy = lip_policy
        self.pace = pace
        self.max_gap_us = max_gap_us
        self.out = out  # callable(dict): a line of the transcript
        self.stopped = threading.Event()
        self.turns = 0
        self.shots = 0
        self.refused = 0
        self.facts_entered = 0
        self.disagreements = 0
        self.agreements = 0
        self.checks_failed: list = []

    # transport hooks (overridden by LiveTable)
    def send_referee(self, inp: dict) -> None: ...

    def strike(self, edges: list) -> None: ...

    def settle(self, kind: str, edges=None) -> None:
        """Wait until the host has processed the last action."""

    def sleep(self, s: float) -> None:
        if s > 0:
            self.stopped.wait(s)

    def current_state(self) -> dict:
        return self.expect.state

    def wait_links(self) -> None:
        """Before a turn: wait while the transport is down (LiveTable)."""

    def _emit(self, d: dict) -> None:
        if self.out is not None:
            self.out(d)

    def step(self) -> bool:
        """One turn; False when the source has nothing more to play."""
        st = self.current_state()
        turn = self.source.next_turn(st)
        if turn is None:
            return False
        self.turns += 1
        if turn.text:
            log.info("%s: %s", self.table, turn.text)
        if getattr(turn, "expect", None) is not None:
            self._check(turn.expect)
            return True
        self.sleep(turn.think_s * self.pace)
        for inp in turn.inputs:
            ok, err = self.expect.feed(inp)
            if not ok:
                self.refused += 1
                log.warning("%s: the rules refuse %s: %s (not sent)", self.table, inp, err)
                continue
            self._emit(inp)
            self.send_referee(inp)
            self.settle("referee")
        edges = getattr(turn, "edges", None)
        if turn.plan is not None or edges:
            if edges is None:
                edges = physics.edges(turn.plan, self.rng, self.max_gap_us, self.colour)
            # The host rules the sensed shot in the game state it is played in, with the
            # facts the referee enters while it is in play (a `confirm` with shot facts:
            # ball identities, wrong ball first, a foul the sensors cannot see).
            sensed = physics.sensed_input(
                edges, self.shot_params, self.lip_policy, self.expect.state
            )
            plan = turn.plan
            facts = physics.referee_facts(plan, self.colour) if plan is not None else {}
            shot = with_referee_facts(sensed, facts) if facts else sensed
            ok, err = self.expect.feed(shot)
            if not ok:
                self.refused += 1
                log.warning("%s: the rules refuse the sensed shot %s: %s", self.table, shot, err)
            self._emit({k: v for k, v in shot.items() if k not in ("t_us",)})
            self.shots += 1
            self.facts_entered += bool(facts)
            self.strike(edges)
            if facts:
                self.enter_facts(facts, edges)
            self.settle("shot", edges)
        return True

    def enter_facts(self, facts: dict, edges: list) -> None:
        """The referee enters the shot's facts while it is in play (after the balls have
        dropped, before the host's quiet period closes the shot)."""

    def _check(self, expect: dict) -> None:
        st = self.current_state()
        bad = {k: (v, st.get(k)) for k, v in expect.items() if st.get(k) != v}
        if bad:
            self.checks_failed.append(bad)
            log.error("%s: expectation failed: %s", self.table, bad)

    def run(self, turns: int | None = None, seconds: float | None = None) -> None:
        t_end = None if not seconds else time.monotonic() + seconds
        n = 0
        while not self.stopped.is_set():
            if turns is not None and n >= turns:
                break
            if t_end is not None and time.monotonic() >= t_end:
                break
            self.wait_links()
            if self.stopped.is_set() or not self.step():
                break
            n += 1

    def stats(self) -> dict:
        return {
            "table": self.table,
            "turns": self.turns,
            "shots": self.shots,
            "refused": self.refused,
            "facts": self.facts_entered,
            "agreed": self.agreements,
            "disagreed": self.disagreements,
            "checks_failed": len(self.checks_failed),
            "fen": self.expect.fen,
        }


class Offline(Runner):
    """No broker, no node, no waiting: the transcript only."""

    def sleep(self, s: float) -> None:
        pass


class LiveTable(Runner):
    """A SimNode and a referee console connected to a broker."""

    def __init__(
        self,
        *,
        host: str,
        port: int,
        venue: str,
        table: str,
        node: str,
        node_password: str,
        match: dict,
        source: Source,
        seed: int = 1,
        state_dir=None,
        referee_user: str = "railbird-referee",
        referee_password: str = "referee-secret",
        referee_token: str = "",
        quiet_us: int = 5_000_000,
        window_us: int = 500_000,
        strike_sensor: bool = False,
        **kw,
    ):
        super().__init__(table, match, source, seed, **kw)
        # the simulated node has a strike sensor (hardware/strike.md) on its dedicated
        # input and sends a `strike` at the start of every shot
        self.strike_sensor = strike_sensor
        self.host, self.port, self.venue, self.node_id = host, port, venue, node
        self.node_password = node_password
        self.seed = seed
        self.state_dir = str(
            state_dir or Path(os.environ.get("TMPDIR", "/tmp")) / f"railbird-sim-{venue}-{table}"
        )
        self.referee_user, self.referee_password = referee_user, referee_password
        self.referee_token = referee_token
        self.quiet_us, self.window_us = quiet_us, window_us
        self.sn = None
        self.client = None
        self._host_fen = None
        self._host_seen = threading.Event()
        self._cond = threading.Condition()
        self._session = uuid.uuid4().hex[:8]
        self._rid = 0
        self._acked: set = set()  # mids of referee inputs the broker has (PUBACK)
        self._down_since = None  # monotonic time the current outage was noticed

    # -- life cycle ----------------------------------------------------------------------
    def start(self, timeout: float = 15.0) -> LiveTable:
        firmware_path()
        from railbird.mqttclient import BrokerLogin, new_client  # paho: only when used
        from rbnode.simnode import SimNode, default_device_config
        from rbproto import codec

        self._codec = codec
        sensing = None
        if self.strike_sensor:
            sensing = dict(default_device_config()["sensing"])
            # the simulated board's dedicated strike input comes after its 6 rail inputs
            sensing["strike"] = {"ch": 6, "threshold": 200, "refractory_us": 30000}
        self.sn = SimNode(
            self.host,
            self.port,
            self.venue,
            self.table,
            self.node_id,
            self.node_password,
            self.state_dir,
            seed=self.seed,
            sensing=sensing,
        )
        self.sn.start()
        self.sn.wait_connected(timeout)
        c, self.link = new_client(
            f"sim {self.table}",
            BrokerLogin(self.host, self.port, self.referee_user, self.referee_password),
            client_id=f"railbird-sim-{self.table}-{self._session}",
            on_connect=self._on_connect,
        )
        c.on_message = self._on_message
        c.on_publish = self._on_publish
        connected = threading.Event()
        c.on_subscribe = lambda *a: connected.set()
        c.connect(self.host, self.port, 30)
        c.loop_start()
        self.client = c
        if not connected.wait(timeout):
            raise RuntimeError(f"referee console for {self.table} could not subscribe")
        # A retained state (the host has been playing this table already): take it over.
        if self._host_seen.wait(1.0):
            with self._cond:
                fen = self._host_fen
            if fen and fen != self.expect.fen:
                log.info("%s: continuing the host's game: %s", self.table, fen)
                self.expect.adopt(fen)
        return self

    def stop(self) -> None:
        self.stopped.set()
        if self.client is not None:
            try:
                self.client.disconnect()
            finally:
                self.client.loop_stop()
            self.client = None
        if self.sn is not None:
            try:
                self.sn.wait_idle(timeout=8.0)  # the shot in play ends
            except Exception:  # stopping anyway: note why, go on
                log.debug("%s: node not idle at stop", self.table, exc_info=True)
            self.sn.stop(park=True)
            self.sn = None

    # -- MQTT ------------------------------------------------------------------------------
    def _state_topic(self) -> str:
        return self._codec.topic(self.venue, self.table, "state")

    def _on_connect(self, client, userdata, flags, rc, props=None):
        client.subscribe(self._state_topic(), qos=1)

    def _on_message(self, client, userdata, msg):
        try:
            d = json.loads(msg.payload)
        except ValueError:
            return
        fen = d.get("fen")
        with self._cond:
            self._host_fen = fen
            self._cond.notify_all()
        self._host_seen.set()

    def _on_publish(self, client, userdata, mid, reason_code=None, props=None):
        with self._cond:
            self._acked.add(mid)
            self._cond.notify_all()

    def links_up(self) -> bool:
        c, sn = self.client, self.sn
        return c is not None and c.is_connected() and sn is not None and sn.connected()

    def note_links(self) -> bool:
        """Whether the links are up; logs the start and the end of each outage once."""
        up = self.links_up()
        if not up and self._down_since is None:
            self._down_since = time.monotonic()
            log.warning("%s: broker unreachable: play paused", self.table)
        elif up and self._down_since is not None:
            took = _since(self._down_since)
            self._down_since = None
            log.warning("%s: broker back: play resumed after %.1f s", self.table, took)
        return up

    def wait_links(self) -> None:
        while not self.note_links() and not self.stopped.wait(0.1):
            pass

    def send_referee(self, inp: dict) -> None:
        """Publish a referee input (QoS 1) and wait until the broker has it. While the
        broker is away the message waits in the client's queue (paho sends it on
        reconnect); the turn waits with it rather than play on past an input not given."""
        self._rid += 1
        msg = {
            "v": 1,
            "input": inp,
            "id": f"sim-{self.table}-{self._session}-{self._rid}",
            "by": "sim-referee",
        }
        if self.referee_token:
            msg["token"] = self.referee_token
        payload = self._codec.encode("referee", msg)
        topic = self._codec.topic(self.venue, self.table, "referee")
        mid = self.client.publish(topic, payload, qos=1).mid
        while not self.stopped.is_set():
            with self._cond:
                if mid in self._acked:
                    self._acked.discard(mid)
                    break
                self._cond.wait(0.1)
            self.note_links()

    # -- the node ----------------------------------------------------------------------------
    def strike(self, edges: list) -> None:
        sn = self.sn
        lead = 150_000

        def schedule():
            base = sn.hw.now_us + lead
            st = sn.node.cfg.get("strike")
            if st is not None:  # the cue tip on the ball: the stroke's time 0
                nr = sn.hw.channels("rail")
                if st["ch"] < nr:
                    sn.hw.schedule_strike(st["ch"], base, 2500, kind="rail")
                else:
                    sn.hw.schedule_strike(st["ch"] - nr, base, 2500)
                sn.truth.append((sn.node.boot, "strike", None, base, 2500))
            for e in edges:
                at = base + e.t_us
                if e.kind == "rail":
                    sn.hw.schedule_rail(sn._ch("rails", e.where), at, e.value)
                    sn.truth.append((sn.node.boot, "rail", e.where, at, e.value))
                elif e.kind == "drop":
                    sn.hw.schedule_drop(sn._ch("pockets", e.where), at, e.value)
                    sn.truth.append((sn.node.boot, "drop", e.where, at, e.value))
                elif e.kind == "ball":
                    continue  # the simulated node has no colour station (offline only)
                else:
                    nb = sn.hw.channels("beam")
                    ch = sn.node.cfg["cue_ch"]
                    if ch is None:
                        continue
                    if ch >= nb:
                        sn.hw.schedule_drop(ch - nb, at, e.value, kind="cue")
                    else:
                        sn.hw.schedule_drop(ch, at, e.value)
                    sn.truth.append((sn.node.boot, "cue", None, at, e.value))
            return base

        sn.call(schedule)
        self._strike_t = time.monotonic() + lead / 1e6

    def enter_facts(self, facts: dict, edges: list) -> None:
        """Sent as `confirm` with the shot facts after the last edge has played, well
        inside the host's quiet period: the host holds them for the shot in play and rules
        that shot once with them (docs/host.md, "Referee facts for a sensed shot"). Never
        before the node has handed the shot's events to the broker: a confirm that reached
        the host first would correct the shot before it (after an outage the node's spilled
        events come late); a confirm after the shot has closed corrects it, to the same
        effect."""
        last = physics.duration_us(edges) / 1e6
        wait = self._strike_t + last + min(0.3, self.quiet_us / 4e6) - time.monotonic()
        self.sleep(wait)
        while not self.stopped.is_set() and not (self.note_links() and self._node_idle()):
            self.stopped.wait(0.05)
        if self.stopped.is_set():
            return
        self.send_referee(dict({"type": "confirm"}, **facts))

    def _node_idle(self) -> bool:
        try:
            return self.sn.idle()
        except Exception:  # noqa: BLE001 - a node thread slow to answer: ask again
            return False

    # -- pacing ------------------------------------------------------------------------------
    def settle(self, kind: str, edges=None) -> None:
        want = self.expect.fen
        if kind == "shot":
            # the edges play out, the host waits for the quiet period, then ticks
            budget = (physics.duration_us(edges) + self.quiet_us + self.window_us) / 1e6 + 0.2
            if not self._host_seen.is_set():
                self.sleep(budget)
                return
            timeout = budget + 4.0
        else:
            if not self._host_seen.is_set():
                self.sleep(0.3)
                return
            timeout = 3.0
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._host_fen != want and not self.stopped.is_set():
                if not self.note_links():  # the host cannot answer: no time out meanwhile
                    deadline = time.monotonic() + timeout
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(min(left, 0.2))
            fen = self._host_fen
        if self.stopped.is_set():
            return
        if fen == want:
            self.agreements += 1
            return
        self.disagreements += 1
        log.warning(
            "%s: the host's state differs from the simulator's after a %s:\n  host: %s\n  sim:  %s",
            self.table,
            kind,
            fen,
            want,
        )
        if fen:
            try:
                self.expect.adopt(fen)
            except Exception as e:  # noqa: BLE001 - the check goes on from its own state
                log.error("%s: cannot adopt the host's state: %s", self.table, e)


def _since(t0: float) -> float:
    return time.monotonic() - t0


def make_source(
    match: dict, seed: int, scenario=None, style: Style | None = None, then_random: bool = True
) -> Source:
    player = Player(match, seed, style) if (scenario is None or then_random) else None
    return Source(player, scenario)
