"""Run the real node application on simulated hardware under CPython (tests, demo, bench).

CPython only (threads); not part of the deployable firmware set. The node code is the
IDENTICAL rbnode.node.Node the ESP32 runs; only the hardware layer is rbnode.hw.sim.

    sn = SimNode("127.0.0.1", broker.port, "club", "t1", "n1", "pw", state_dir, seed=1)
    sn.start(); sn.wait_connected()
    sn.drop("HL", dur_us=30000)          # a ball through the HL beam, 1 ms from now
    sn.rail("LH", 1500)                  # a cushion hit, amplitude 1500
    sn.strike(2500)                      # the cue tip on the ball (config `strike` set)
    sn.balls([13])                       # the 13 rolls past the colour station (colour=3)
    sn.unplug_colour()                   # its sensors stop answering (OSError on a read)
    truth = sn.random(20.0, drops=100, rails=500)   # scripted random play
    sn.wait_idle(); sn.stop()            # power cut: no DISCONNECT, last will fires
    sn.restart()                         # next boot, same flash (boot counter +1)

Over-the-air updates: each boot first runs boot.py's choice of firmware set
(rbnode.ota.select on the state directory), and a node that resets itself (an installed
update, a rolled-back trial) boots again on its own (`.reboots`). The Python code is the
same whichever set is chosen (status and birth report its version, `.fw`; to run a
downloaded set's own code, broken or not, use rbnode.simproc.SimBoard); `fw_faults`
makes a version misbehave as a broken set would: {"<version>": "crash"} dies at every boot
before it can report (`.crashes`), "no_sync" runs but never gets a time-sync sample (so it
never reports healthy), "config_bug" has a config handler that reads the message before
the codec checked it (a malformed config, `{"v": 1, "rev": 9}`, makes it raise KeyError).

Time: the simulated clock (hw.now_us, what the node stamps events with) runs at `speed`
times real time, advanced in steps of at most `step_us` with the sensors polled after each
step, so amplitudes and debouncing see every edge in order. Network and broker time is
real time. State (boot counter, persisted config, spill) lives in `state_dir`.

Colour station (hardware/colour.md): `colour=N` gives the board N colour sensors and the
station's gate (rbnode.hw.simcolour; 3 is the real station), so the node builds its
ColourStation and announces caps `colour` and `colour_rgb`. `balls` rolls balls past it,
each read as a `ball` event stamped when the gate closed; `unplug_colour` pulls its cable
(every read fails, the node names "colour" in sensing_dead and counts colour_errors). The
cable stays out across reboots, as on a real board, until unplug_colour(False).
"""

import asyncio
import concurrent.futures
import json
import os
import threading
import time

from rbnode import ota
from rbnode.hw.sim import SimHardware
from rbnode.mqtt import ssl_context
from rbnode.node import Node
from rbproto import codec

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CONFIG = os.path.join(os.path.dirname(HERE), "config.json")


def default_device_config():
    """firmware/config.json as a dict (the device defaults, including `sensing`)."""
    with open(DEFAULT_CONFIG) as f:
        return json.load(f)


class SimNode:
    def __init__(self, broker_host, port, venue, table, node, password, state_dir, seed=1,
                 speed=1.0, sensing=None, dev=None, user=None, keepalive_s=10,
                 step_us=1000, reset_cause="power", ssl=None, sim_kw=None, fw_faults=None,
                 colour=0):
        d = default_device_config()
        d.update({"venue": venue, "table": table, "node": node})
        d["broker"] = dict(d["broker"], host=broker_host, port=port, user=user or node,
                           password=password, keepalive_s=keepalive_s)
        d["wdt"] = True
        if sensing is not None:
            d["sensing"] = sensing
        if dev:
            for k, v in dev.items():
                d[k] = dict(d[k], **v) if isinstance(v, dict) and isinstance(d.get(k), dict) \
                    else v
        self.dev = d
        self.state_dir = str(state_dir)
        os.makedirs(self.state_dir, exist_ok=True)
        self.seed = seed
        self.speed = speed
        self.step_us = step_us
        self.reset_cause = reset_cause
        # TLS: an SSLContext, or none and the device config's broker "tls"/"ca" keys, as on
        # the board (firmware/README.md): SimNode(..., dev={"broker": {"tls": True,
        # "ca": "ca.crt", "port": 8883}}).
        if ssl is None and d["broker"].get("tls"):
            ssl = ssl_context(d["broker"].get("ca"))
        self.ssl = ssl
        self.sim_kw = dict(sim_kw or {})
        if colour:
            self.sim_kw["colour"] = colour  # the colour station's sensors (SimHardware)
        self._colour_unplugged = False  # the station's cable, kept across boots
        self.node_id = node
        self.hw = None
        self.node = None
        self.loop = None
        # (boot, kind, name, at_us, dur_or_amp) for drop/cue/rail/strike; (boot, "ball",
        # None, start_us, ball) for a ball past the colour station
        self.truth = []
        self._thread = None
        self._ready = threading.Event()
        self._done = threading.Event()
        self._stop_evt = None
        self._park = False
        self.error = None
        self.boots = []
        self.fw_faults = dict(fw_faults or {})
        self.reboots = 0  # resets the node asked for itself
        self.crashes = 0  # boots of a set in fw_faults as "crash"
        self._reset_req = False
        self._halt = False

    # -- life cycle --------------------------------------------------------------------------
    def start(self, timeout=10.0):
        self._ready.clear()
        self._halt = False
        self._done.clear()
        self.error = None
        self._thread = threading.Thread(target=self._thread_main, name="simnode-%s"
                                        % self.node_id, daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise RuntimeError("simnode did not start: %r" % (self.error,))
        if self.error:
            raise self.error
        return self

    def _thread_main(self):
        loop = asyncio.new_event_loop()
        self.loop = loop
        try:
            loop.run_until_complete(self._main())
        except BaseException as e:  # noqa: BLE001 - reported to the caller
            self.error = e
            self._ready.set()
        finally:
            loop.close()
            self._done.set()

    async def _main(self):
        while await self._boot() and not self._halt:
            self.reboots += 1
            self.reset_cause = "soft"
            self.seed += 1000

    def _on_reset(self):
        self._reset_req = True
        self._stop_evt.set()

    async def _boot(self):
        """One boot: boot.py's choice of set, then the node until stop() or until it resets
        itself -> True to boot again."""
        self._stop_evt = asyncio.Event()
        self._reset_req = False
        self.hw = SimHardware(seed=self.seed, fs_root=self.state_dir,
                              reset_cause=self.reset_cause, **self.sim_kw)
        self.hw.colour_unplugged = self._colour_unplugged
        self.hw.wlan().active(True)  # as main.py's Wi-Fi task does (hw.net_up: the link)
        fault = self.fw_faults.get(ota.select(self.hw.storage(), self.reset_cause)["version"])
        if fault == "crash":
            # dies before it can report (a boot loop): the boot counts for the set's trial
            self.crashes += 1
            await asyncio.sleep(0.05)
            return True
        self.node = Node(self.hw, self.dev, ssl=self.ssl)
        if fault == "no_sync":
            self.node._on_sync_resp = lambda payload: None  # never synced: never healthy
        elif fault == "config_bug":
            self.node._on_config = _unchecked_config_handler(self.node._on_config)
        self.hw.reset_hook = self._on_reset
        self.boots.append(self.node.boot)
        tasks = [asyncio.ensure_future(c) for c in self.node.tasks()]
        tasks.append(asyncio.ensure_future(self._drive()))
        self._ready.set()
        await self._stop_evt.wait()
        self.node.stop()
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.node.mqtt._close()
        if self._reset_req:
            return True  # Node.reboot() parked the events already
        if self._park:
            self.node.park()
        elif self.node.spill is not None:
            self.node.spill.close()
        return False

    async def _drive(self):
        hw, node = self.hw, self.node
        t0 = time.monotonic()
        s0 = hw.now_us
        while True:
            target = s0 + int((time.monotonic() - t0) * 1e6 * self.speed)
            k = 0
            while hw.now_us < target:
                hw.run_until(min(target, hw.now_us + self.step_us))
                node.poll_sensors()
                k += 1
                if k % 200 == 0:
                    await asyncio.sleep(0)
            await asyncio.sleep(0.001)

    def stop(self, park=False, timeout=10.0):
        """Stop the node as a power cut would (no DISCONNECT; the will fires). With
        park=True, queued and in-flight events are first moved to the flash spill (a
        graceful shutdown), so the next boot sends them with their original boot/seq."""
        if self._thread is None:
            return
        self._park = park
        self._halt = True
        self.loop.call_soon_threadsafe(self._stop_evt.set)
        self._done.wait(timeout)
        self._thread.join(timeout)
        self._thread = None

    def restart(self, park=True, reset_cause="soft", timeout=10.0):
        """stop() then boot again on the same state directory (boot counter + 1)."""
        self.stop(park=park)
        self.reset_cause = reset_cause
        self.seed += 1000
        return self.start(timeout)

    # -- calls into the node thread ---------------------------------------------------------
    def call(self, fn, *args):
        """Run fn(*args) in the node's thread and return its result. Called from that
        thread (inside another call) it runs at once: several stimuli in one call are
        scheduled against the same simulated instant, however late the caller runs."""
        if threading.current_thread() is self._thread:
            return fn(*args)
        fut = concurrent.futures.Future()

        def run():
            try:
                fut.set_result(fn(*args))
            except BaseException as e:  # noqa: BLE001 - the caller's thread re-raises it
                fut.set_exception(e)
        self.loop.call_soon_threadsafe(run)
        return fut.result(10)

    @property
    def boot(self):
        return self.node.boot

    @property
    def fw(self):
        """The firmware version the running boot reports (birth and status `fw`)."""
        return self.node.upd.version

    @property
    def now_us(self):
        return self.hw.now_us

    def connected(self):
        return self.node is not None and self.node.mqtt.isconnected()

    def wait_connected(self, timeout=10.0):
        deadline = time.monotonic() + timeout
        while not self.connected():
            if time.monotonic() > deadline:
                raise TimeoutError("simnode not connected: %s" % self.node.mqtt.last_error)
            time.sleep(0.01)

    def status(self):
        return self.call(self.node.status_msg)

    def counters(self):
        return dict(self.call(self.node.counters))

    def idle(self):
        """True when every scheduled edge has happened and nothing is queued, spilled or
        in flight; and, while connected, the birth and the status due (on connect, on a
        config change, once drained after a connect) have been handed to the client too
        (so a power cut after wait_idle() loses nothing the node owed the broker)."""
        def check():
            n = self.node
            owed = n.mqtt.isconnected() and (n._birth_hash != n.cfg_hash
                                              or n._status_now.is_set()
                                              or n._drain_status)
            # a ball still to roll past the colour station, or under it: its read is owed
            colour = not self.hw._passes and (n._colour is None or n._colour.start is None)
            return (not self.hw._edges and not self.hw._pending and colour
                    and len(n.ring) == 0
                    and (n.spill is None or len(n.spill) == 0)
                    and n.mqtt.inflight_count() == 0 and not n._pending
                    and all(b._st == 0 for b in n._beams) and not owed)
        return self.call(check)

    def wait_idle(self, timeout=60.0):
        deadline = time.monotonic() + timeout
        while not self.idle():
            if time.monotonic() > deadline:
                raise TimeoutError("simnode not idle: %r" % (self.counters(),))
            time.sleep(0.05)

    # -- stimuli (simulated time, µs since this boot) ---------------------------------------
    def _ch(self, what, name):
        cfg = self.node.cfg
        for p in cfg[what]:
            if p["pocket" if what == "pockets" else "rail"] == name:
                return p["ch"]
        raise KeyError("%s %s is not mapped in the active config" % (what, name))

    def drop(self, pocket, dur_us=30000, at_us=None):
        """A ball through `pocket`'s beam, blocked for dur_us, at at_us (default: 1 ms from
        now). Returns at_us."""
        def do():
            at = self.hw.now_us + 1000 if at_us is None else at_us
            self.hw.schedule_drop(self._ch("pockets", pocket), at, dur_us)
            self.truth.append((self.node.boot, "drop", pocket, at, dur_us))
            return at
        return self.call(do)

    def cue(self, dur_us=30000, at_us=None):
        def do():
            at = self.hw.now_us + 1000 if at_us is None else at_us
            nb = self.hw.channels("beam")
            ch = self.node.cfg["cue_ch"]
            if ch >= nb:
                self.hw.schedule_drop(ch - nb, at, dur_us, kind="cue")
            else:
                self.hw.schedule_drop(ch, at, dur_us)
            self.truth.append((self.node.boot, "cue", None, at, dur_us))
            return at
        return self.call(do)

    def rail(self, rail, amp, at_us=None, width_us=3000):
        def do():
            at = self.hw.now_us + 1000 if at_us is None else at_us
            self.hw.schedule_rail(self._ch("rails", rail), at, amp, width_us)
            self.truth.append((self.node.boot, "rail", rail, at, amp))
            return at
        return self.call(do)

    def strike(self, amp=2000, at_us=None, width_us=3000):
        """An onset on the strike sensor (the config's `strike` input: a rail input or the
        board's dedicated one), amplitude amp, at at_us (default: 1 ms from now)."""
        def do():
            at = self.hw.now_us + 1000 if at_us is None else at_us
            st = self.node.cfg.get("strike")
            if st is None:
                raise KeyError("no strike sensor in the active config")
            nr = self.hw.channels("rail")
            if st["ch"] < nr:
                self.hw.schedule_strike(st["ch"], at, amp, width_us, kind="rail")
            else:
                self.hw.schedule_strike(st["ch"] - nr, at, amp, width_us)
            self.truth.append((self.node.boot, "strike", None, at, amp))
            return at
        return self.call(do)

    def balls(self, balls, at_us=None, touching=(), rgb=None, speed=(300.0, 900.0)):
        """`balls` (numbers 0-15) roll past the colour station one after another, the first
        at at_us (default: 1 ms from now; later when a ball is still passing), the next
        once the one before has cleared the gate (`touching`: indices of balls that follow
        with no space between). `rgb`: the table's true colours (simcolour.table_colours;
        default the nominal ones). `speed`: the range (mm/s) each ball's speed is drawn from;
        a pass lasts 44 mm of it (49-147 ms at the default). Returns the passes
        [(start_us, ball)]: a read is stamped at its pass's start and sent at its end."""
        def do():
            if not self.hw.colour_sensors():
                raise KeyError("no colour station: SimNode(..., colour=3)")
            at = self.hw.now_us + 1000 if at_us is None else at_us
            passes = self.hw.schedule_balls(at, list(balls), touching=touching, rgb=rgb,
                                            speed=speed)
            for start, ball in passes:
                self.truth.append((self.node.boot, "ball", None, start, ball))
            return passes
        return self.call(do)

    def unplug_colour(self, on=True):
        """Pull the colour station's cable (on=False: plug it back): every sensor read then
        fails, so passes go unread, as when the I2C cable is out or the bus is stuck."""
        def do():
            self._colour_unplugged = on
            self.hw.colour_unplugged = on
        self.call(do)

    def random(self, duration_s, drops=0, rails=0, min_gap_us=60000, start_in_us=2000,
               dur_us=(20000, 45000), amp=(300, 4000)):
        """Random drops and rail hits over the next duration_s of simulated time, at least
        min_gap_us apart per channel; returns their truth tuples (also in .truth)."""
        def do():
            hw = self.hw
            start = hw.now_us + start_in_us
            n0 = len(hw.truth)
            hw.schedule_random(start, start + int(duration_s * 1e6), drops=drops,
                               rails=rails, min_gap_us=min_gap_us, dur_us=dur_us, amp=amp)
            pk = {p["ch"]: p["pocket"] for p in self.node.cfg["pockets"]}
            rl = {r["ch"]: r["rail"] for r in self.node.cfg["rails"]}
            out = []
            for kind, ch, at, v in hw.truth[n0:]:
                if kind == "beam":
                    out.append((self.node.boot, "drop", pk[ch], at, v))
                elif kind == "rail":
                    out.append((self.node.boot, "rail", rl[ch], at, v))
            out.sort(key=lambda x: x[3])
            self.truth.extend(out)
            return out
        return self.call(do)


def _unchecked_config_handler(handler):
    """`handler` behind a bug: a field read before the codec checked the message has it."""

    def unchecked(payload, retain=False):
        json.loads(payload)["pockets"]  # KeyError on a config without pockets
        handler(payload, retain)

    return unchecked


def config_message(rev, sensing=None, **changes):
    """A config message for a SimNode: firmware/config.json's sensing section with `rev`
    and `changes` applied, as JSON bytes (for the config topic: sent live, since a node
    refuses a retained one)."""
    c = dict(sensing or default_device_config()["sensing"])
    c.update(changes)
    c["rev"] = rev
    return codec.encode("config", c)
