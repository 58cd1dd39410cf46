"""The sensor node application: sensing -> ring -> (spill) -> MQTT, status, config, sync.

`Node(hw, dev)` builds everything from the hardware layer `hw` (rbnode.hw.hal) and the
device settings `dev` (firmware/config.json: identity, broker, buffer sizes, the initial
sensing config); `await node.run()` runs until `node.stop()`. The identical code runs on
the ESP32 (main.py) and under CPython on simulated hardware (rbnode.simnode).

Tasks (asyncio, each beats the supervisor, which feeds the watchdog only when all did):
- sensor: polls every beam/rail channel every `poll_ms` (edges come from the IRQ rings of
  beam.py/rail.py) and pushes events into the RAM ring (clock: 64-bit µs since boot).
- publisher: drains the spill first, then the ring, in batches of up to `batch_max` events
  (waiting up to `batch_linger_ms` for a batch to fill), QoS 1, at most `max_inflight`
  batches unacknowledged. Offline, or when the ring is over 3/4 full, it moves the oldest
  ring events to the flash spill, so order is always: in flight < spill < ring. Until the
  boot's first sync result is out, it holds events for up to SYNC_FIRST_MS after each
  connect, so the host has status (uptime_us) and a sync sample of the boot before an
  offline backlog arrives and maps its times right (docs/host.md, "Table time").
- status: retained status every `status_period_s` and at once on a change (config,
  connect), and once the backlog is out after a connect (ring, spill and in-flight batches
  all empty: the host ends its hold on the node, docs/host.md "Per-node watermarks");
  retained birth once per boot (again when the config hash changes), before the
  boot's events: the publisher sends it first when the status task has not yet.
- sync: a four-timestamp exchange with the host every `sync_period_s` (3 quick samples
  after each connect); the min-delay sample goes into status.sync.
- net: the MQTT client's own reconnect loop (mqtt.MQTTClient.run).
- led: the status LED (led.py) shows `condition()` every LED_MS; not supervised.
- wifi: keeps the station joined with the settings in use (rbnode.netcfg); drops the
  broker connection when the link goes, so the client redials at once; not supervised.
- improv: once the Wi-Fi has been down `improv_after_s`, answers Improv Wi-Fi on the
  board's serial port (hw.serial(), rbnode.improv): new credentials tried like a `net`
  command; not supervised; never on a locked board (rbnode.lock).
Network changes (rbnode.netcfg, SPEC.md `net`): a `net` command tries new Wi-Fi and
broker settings; the status task reverts them when the broker was not reached in time.
- supervisor: see supervisor.py.
Over-the-air updates (rbnode.updater): the `update` command starts a download task; the
status task checks the trial's deadline; status and birth carry the running set's version.

Buffers and policies (all stated in firmware/README.md):
- RAM ring `ring` events (default 512, 14 B each): full -> newest dropped (`dropped_ram`)
  unless the spill takes the oldest first.
- Flash spill `spill` events (default 10240, 24 B each on flash): full -> newest dropped
  (`dropped_spill`). Spill records keep their boot: after a reboot they go out with the
  boot they happened in.
- In flight: `max_inflight` batches (the MQTT client's window); re-sent with DUP after a
  reconnect (`resent` counts the events in re-sent batches).
"""

try:
    import asyncio
except ImportError:  # older MicroPython names it uasyncio
    import uasyncio as asyncio

from rbproto import codec
from rbnode import config as rbconfig
from rbnode.beam import Beam
from rbnode.bootcount import boot_count
from rbnode.clock import Clock
from rbnode import led as rbled
from rbnode.mqtt import MQTTClient
from rbnode.netcfg import Net
from rbnode.rail import Rail, Strike
from rbnode.ring import CH_CUE, CH_STRIKE, K_CUE, K_DROP, K_LOST, K_RAIL, K_STRIKE, KIND_NAMES
from rbnode.ring import BALL_CONF, BALL_HAS_RGB, BALL_RGB_SHIFT, K_BALL
from rbnode.ring import NO_AMP, RAIL
from rbnode.ring import EventRing
from rbnode.spill import Spill
from rbnode.supervisor import Supervisor
from rbnode.trust import RETAINED_CONFIG, Trust
from rbnode.updater import Updater

FW_VERSION = "rbnode-0.1.0"
# After a connect, events wait up to this long for the boot's first sync result (above).
SYNC_FIRST_MS = 2000
# The watermark looks at most this many queued ring events after a batch; with a longer
# backlog it stays where it was (a scan of the whole ring per batch costs milliseconds on
# the ESP32, and a node with a backlog has nothing to release early anyway).
WM_SCAN = 64

# Device settings and their defaults (firmware/config.json overrides them).
DEV_DEFAULTS = {
    "venue": "venue", "table": "table", "node": "node",
    "broker": {"host": "192.168.4.1", "port": 1883, "user": None, "password": "",
               "tls": False, "keepalive_s": 30},
    "ring": 512, "spill": 10240, "max_inflight": 4, "poll_ms": 2,
    "sync_period_s": 60, "wdt_ms": 10000, "wdt": True,
    # Improv Wi-Fi over serial (rbnode.improv) is offered once the Wi-Fi is down this long
    "improv_after_s": 30, "improv_trial_s": 60,
    # the venue key's public part (rbnode.trust): with it, only signed updates and configs
    "venue_key": None,
    # the locked build (rbnode.lock, read by boot.py): the USB console shut, no Improv
    "locked": False, "recovery_pin": 0,
}


def _sleep_ms(ms):
    s = getattr(asyncio, "sleep_ms", None)
    if s is not None:
        return s(ms)
    return asyncio.sleep(ms / 1000)


def dev_settings(dev):
    """`dev` completed with DEV_DEFAULTS (one level deep for "broker")."""
    out = {}
    for k in DEV_DEFAULTS:
        out[k] = DEV_DEFAULTS[k]
    b = {}
    for k in DEV_DEFAULTS["broker"]:
        b[k] = DEV_DEFAULTS["broker"][k]
    for k in dev or {}:
        if k == "broker":
            for kk in dev[k]:
                b[kk] = dev[k][kk]
        else:
            out[k] = dev[k]
    out["broker"] = b
    return out


def _spill_fields(ev):
    """(kind, ch, val) of the spill record of a decoded event: the inverse of
    Node._event_dict."""
    k = KIND_NAMES.index(ev["kind"])
    if k == K_BALL:
        rgb = ev.get("rgb")
        if rgb is None:
            return k, ev["ball"], ev["conf"]
        from rbnode.colour import packed_of  # a node that sent rgb has the station's module

        return k, ev["ball"], ev["conf"] | (packed_of(rgb) << BALL_RGB_SHIFT) | BALL_HAS_RGB
    if k == K_STRIKE:
        return k, CH_STRIKE, ev.get("amp", NO_AMP)
    if "rail" in ev:
        ch = RAIL | codec.RAILS.index(ev["rail"])
    elif "pocket" in ev:
        ch = codec.POCKETS.index(ev["pocket"])
    else:
        ch = CH_CUE
    return k, ch, ev.get("amp", ev.get("n", ev.get("dur", 0)))


class Node:
    def __init__(self, hw, dev=None, ssl=None):
        dev = dev_settings(dev)
        self.hw = hw
        self.dev = dev
        self.node_id = dev["node"]
        self.boot = boot_count(hw)
        self.reset_cause = hw.reset_cause()
        self.clock = Clock(hw.ticks_us, hw.ticks_diff)
        self.ring = EventRing(dev["ring"])
        self.spill = Spill(rbconfig.join(hw.fs_root(), "spill"), dev["spill"]) if dev["spill"] \
            else None
        self.c = {"events": 0, "published": 0, "batches": 0, "dropped_ram": 0,
                  "dropped_spill": 0, "spilled": 0, "resent": 0, "lost_edges": 0, "jams": 0,
                  "reconnects": 0, "irq_overflow": 0, "glitches": 0, "rail_below": 0,
                  "rail_suppressed": 0, "config_rejected": 0, "config_applied": 0,
                  "sync_samples": 0, "sync_rejected": 0, "encode_errors": 0, "skipped": 0,
                  "update_rejected": 0, "strikes": 0, "strike_below": 0,
                  "strike_suppressed": 0}
        self.config_error = None
        self.sync = None  # [offset, delay, samples]
        self._sync_id = 0
        self._sync_pending = {}
        self._pending = []  # [pid, n events] of batches in flight, oldest first
        self._beams = []
        self._rails = []
        self._strike = None  # rail.Strike when the config has a strike sensor
        # the colour station (rbnode.colour, hardware/colour.md) when the pin map has one
        self._colour = None
        if hw.colour_sensors() > 0:
            from rbnode.colour import ColourStation
            self._colour = ColourStation(hw, self._emit_ball)
        self._wm = 0  # the last watermark sent in this boot (never decreases)
        self._stopping = False
        self._status_now = asyncio.Event()
        self._drain_status = False  # after a connect: a status is owed once drained()
        self._birth_hash = None
        self._base = None
        self._window = dev["max_inflight"] - 1 if dev["max_inflight"] > 1 else 1
        self._sync_burst = 3
        self._sync_result = None
        self._sync_sent = False  # a sync result of this boot went out
        self._hold_until = 0  # clock.now() until which events wait for it
        self.trust = Trust(dev)
        self.upd = Updater(self, FW_VERSION)
        # on trial the watchdog boot.py armed is fed whatever the config says (it cannot
        # be stopped: a board with "wdt": false would reset into a rollback otherwise)
        self.sup = Supervisor(hw, dev["wdt_ms"],
                              enable=dev["wdt"] or self.upd.trial is not None)
        self.led = rbled.StatusLed(hw)
        v, t, n = dev["venue"], dev["table"], self.node_id
        self.t_events = codec.topic(v, t, "events", n)
        self.t_birth = codec.topic(v, t, "birth", n)
        self.t_status = codec.topic(v, t, "status", n)
        self.t_config = codec.topic(v, t, "config", n)
        self.t_sync_req = codec.topic(v, t, "sync_req", n)
        self.t_sync_resp = codec.topic(v, t, "sync_resp", n)
        self.t_sync_result = codec.topic(v, t, "sync_result", n)
        self.t_update = codec.topic(v, t, "update", n)
        self.t_net = codec.topic(v, t, "net", n)
        self.net = Net(hw, dev)
        # Sensing config: persisted one, else the default from config.json.
        self.cfg = rbconfig.load(hw, dev.get("sensing"))
        self.cfg_hash = rbconfig.config_hash(self.cfg)
        self._apply(self.cfg)
        b = dev["broker"]
        nc = self.net.cur
        will = codec.encode("status", {"v": 1, "node": n, "boot": self.boot,
                                       "state": "offline"})
        self.mqtt = MQTTClient(
            n, nc["host"], nc["port"], b["user"] or n, b["password"],
            keepalive=b["keepalive_s"], ssl=ssl, will=(self.t_status, will, 1, True),
            max_inflight=dev["max_inflight"],
            subs=[(self.t_config, 1), (self.t_sync_resp, 0), (self.t_update, 1),
                  (self.t_net, 1)],
            on_message=self._on_message, on_connect=self._on_connect,
            on_puback=self._on_puback, on_resend=self._on_resend,
            on_callback_error=self._on_callback_error, resolve=self.net.dial)

    # -- sensing -------------------------------------------------------------------------
    def _emit(self, t, kind, ch, val):
        """Event sink of beams and rails (task context): into the ring, spilling the oldest
        ring events to flash first when the ring is full."""
        r = self.ring
        if len(r) >= r.capacity:
            self._spill_some(r.capacity // 8)
        if r.push(t, kind, ch, val) >= 0:
            self.c["events"] += 1

    def _emit_ball(self, t, ball, conf, rgb):
        self._emit(t, K_BALL, ball, conf | (rgb << BALL_RGB_SHIFT) | BALL_HAS_RGB)

    def _emit_cue_beam(self, t, kind, ch, val):
        # a pocket-beam input wired as the cue detector: its "drop" is the cue
        self._emit(t, K_CUE if kind == K_DROP else kind, CH_CUE, val)

    def _apply(self, cfg):
        """(Re)build the channel objects for `cfg` (validated). Channels keep running
        objects when only thresholds change; a changed map rebuilds them."""
        if self._beams or self._rails or self._strike is not None:
            c = self.counters()  # keep what the old channel objects counted
            self._base = [c["irq_overflow"], c["lost_edges"], c["jams"], c["glitches"],
                          c["rail_below"], c["rail_suppressed"], c["strikes"],
                          c["strike_below"], c["strike_suppressed"]]
        for o in self._channels():
            o.close()
        self._beams = []
        self._rails = []
        self._strike = None
        hw, clk = self.hw, self.clock
        deb, jam = cfg["debounce_us"], cfg["jam_us"]
        for p in cfg["pockets"]:
            self._beams.append(Beam(hw, clk, self._emit, p["ch"], "beam",
                                    codec.POCKETS.index(p["pocket"]), deb, None, jam))
        cue = cfg["cue_ch"]
        if cue is not None:
            nb = hw.channels("beam")
            if cue >= nb:
                self._beams.append(Beam(hw, clk, self._emit, cue - nb, "cue", CH_CUE, deb,
                                        None, jam))
            else:
                self._beams.append(Beam(hw, clk, self._emit_cue_beam, cue, "beam", CH_CUE,
                                        deb, None, jam))
        for r in cfg["rails"]:
            self._rails.append(Rail(hw, clk, self._emit, r["ch"], r["threshold"],
                                    r["refractory_us"], code=RAIL | codec.RAILS.index(r["rail"])))
        st = cfg.get("strike")
        if st is not None:
            nr = hw.channels("rail")
            if st["ch"] < nr:  # the piezo on a rail input (comparator + ADC)
                kind, ch = "rail", st["ch"]
            else:
                kind, ch = "strike", st["ch"] - nr
            self._strike = Strike(hw, clk, self._emit, kind, ch, st["threshold"],
                                  st["refractory_us"])
        if self._colour is not None:
            # the table's learned colours (`railbird calibrate`), else the nominal ones
            col = cfg.get("colour")
            from rbnode.colour import table_rgb
            self._colour.set_rgb(None if col is None else table_rgb(col["rgb"],
                                                                    codec.COLOUR_SCALE))
        self.cfg = cfg
        self.cfg_hash = rbconfig.config_hash(cfg)

    def _channels(self):
        out = self._beams + self._rails
        if self._strike is not None:
            out.append(self._strike)
        return out

    def sensing_dead(self):
        """The configured channels that are not alive (Beam.alive, Rail.alive), by name:
        "pocket HL", "cue", "rail LH", "strike"; [] when all are."""
        out = []
        names = ["pocket " + p["pocket"] for p in self.cfg["pockets"]]
        if self.cfg["cue_ch"] is not None:
            names.append("cue")
        for i in range(len(self._beams)):
            if not self._beams[i].alive():
                out.append(names[i] if i < len(names) else "beam %d" % i)
        rails = self.cfg["rails"]
        for i in range(len(self._rails)):
            if not self._rails[i].alive():
                out.append("rail " + rails[i]["rail"])
        if self._strike is not None and not self._strike.alive():
            out.append("strike")
        if self._colour is not None and not self._colour.ok:
            out.append("colour")  # its last read failed: unplugged, or the bus is stuck
        return out

    def poll_sensors(self):
        now = self.clock.now()
        for o in self._beams:
            o.poll(now)
        for o in self._rails:
            o.poll(now)
        if self._strike is not None:
            self._strike.poll(now)
        if self._colour is not None:
            self._colour.poll(now)

    def watermark(self, k=0, spilled=0):
        """The `wm` of a batch of this boot that takes the ring's first k events, or the
        spill's first `spilled` records (SPEC `events`): no event of this boot before it
        is still to be published. The earliest
        of: now; the start of every beam run not yet emitted (blocked, or in its debounce
        gap: its drop is stamped at the start and sent when it clears); every edge a channel
        holds unread; the ring's events after the first k (not in time order: a drop
        follows later rail hits). With the flash spill holding events, or more than WM_SCAN
        ring events after the batch, the last watermark (neither is scanned). Never below
        the last one sent: an older bound stays true (every later event is stamped after
        the clock read it was taken at)."""
        wm = self.clock.now()  # first: a handler that runs after this stamps a later time
        chans = self._channels()
        if self._colour is not None:  # a ball under the station: its read is stamped then
            chans.append(self._colour)
        for o in chans:
            p = o.pending_since()
            if p is not None and p < wm:
                wm = p
        r = self.ring
        n = len(r)
        if n - k > WM_SCAN:
            wm = self._wm
        else:
            for i in range(k, n):
                t = r.get(i)[1]
                if t < wm:
                    wm = t
        if self.spill is not None and len(self.spill) > spilled:
            wm = self._wm
        if wm < self._wm:
            wm = self._wm
        self._wm = wm
        return wm

    async def _sensor_task(self):
        pm = self.dev["poll_ms"]
        while not self._stopping:
            self.poll_sensors()
            self.sup.beat("sensor")
            await _sleep_ms(pm)

    # -- spill -----------------------------------------------------------------------------
    def _spill_some(self, n):
        """Move up to n of the oldest ring events to the flash spill (order kept)."""
        sp = self.spill
        r = self.ring
        if sp is None:
            return
        k = 0
        while k < n and len(r):
            seq, t, kind, ch, val = r.get(0)
            sp.append(self.boot, seq, t, kind, ch, val)
            r.pop(1)
            k += 1
        if k:
            sp.flush()

    # -- publishing ------------------------------------------------------------------------
    def _event_dict(self, seq, t, kind, ch, val):
        e = {"seq": seq, "t": t, "kind": KIND_NAMES[kind]}
        if kind == K_RAIL:
            e["rail"] = codec.RAILS[ch & 0x0F]
            e["amp"] = val if val < 4096 else 4095
        elif kind == K_STRIKE:
            if val != NO_AMP:
                e["amp"] = val if val < 4096 else 4095
        elif kind == K_LOST:
            if ch == CH_CUE or ch == CH_STRIKE:
                return None  # no pocket or rail to name (SPEC `lost`); counted in status
            if ch & RAIL:
                e["rail"] = codec.RAILS[ch & 0x0F]
            else:
                e["pocket"] = codec.POCKETS[ch]
            e["n"] = val if val > 0 else 1
        elif kind == K_CUE:
            pass
        elif kind == K_BALL:
            e["ball"] = ch
            e["conf"] = val & BALL_CONF
            if val & BALL_HAS_RGB:
                from rbnode.colour import rgb_of  # loaded already: the station made it
                e["rgb"] = rgb_of(val >> BALL_RGB_SHIFT)
        else:  # drop, jam
            if ch == CH_CUE:
                # a jammed cue input: SPEC `jam` names a pocket, and there is none (counted
                # in status.counters.jams); its IndexError used to kill the publisher task
                return None
            e["pocket"] = codec.POCKETS[ch]
            e["dur"] = val
        return e

    def _take_batch(self, nmax):
        """-> (boot, [event dicts], n consumed from its source, source) or None."""
        sp = self.spill
        if sp is not None and len(sp):
            recs = sp.peek(nmax)
            boot = recs[0][0]
            evs = []
            n = 0
            for rec in recs:
                if rec[0] != boot:
                    break
                n += 1
                e = self._event_dict(rec[1], rec[2], rec[3], rec[4], rec[5])
                if e is not None:
                    evs.append(e)
            return boot, evs, n, sp
        r = self.ring
        k = len(r)
        if k > nmax:
            k = nmax
        evs = []
        for i in range(k):
            e = self._event_dict(*r.get(i))
            if e is not None:
                evs.append(e)
        return self.boot, evs, k, r

    def next_batch(self):
        """Take the next batch off the spill or the ring -> (payload, n events consumed),
        or None when nothing is left to send (all skipped, or not encodable). Stamps the
        watermark of this boot's batches (watermark()); no await inside, so no sensor poll
        runs between taking the events and stamping it."""
        boot, evs, n, src = self._take_batch(self.cfg["batch_max"])
        payload = None
        if evs:
            msg = {"v": 1, "node": self.node_id, "boot": boot, "events": evs}
            if boot == self.boot:
                # spilled events of an earlier boot go without: that boot's state is gone
                if src is self.ring:
                    msg["wm"] = self.watermark(n)
                else:
                    msg["wm"] = self.watermark(0, n)  # the whole ring is still to go
            try:
                payload = codec.encode("events", msg)
            except codec.ProtocolError:
                self.c["encode_errors"] += 1
            msg = None
        if src is self.spill:
            src.consume(n)
        else:
            src.pop(n)
        self.c["skipped"] += n - len(evs)
        if payload is None:
            return None
        return payload, n

    def _ready(self):
        """True when a batch should go now: the spill has data, the ring holds a full
        batch, or its oldest event waited batch_linger_ms."""
        if self.spill is not None and len(self.spill):
            return True
        n = len(self.ring)
        if n == 0:
            return False
        if n >= self.cfg["batch_max"]:
            return True
        age = self.clock.now() - self.ring.get(0)[1]
        return age >= self.cfg["batch_linger_ms"] * 1000

    async def _publisher_task(self):
        m = self.mqtt
        while not self._stopping:
            self.sup.beat("publisher")
            r = self.ring
            # the birth of the boot (of the config) goes out before any further events:
            # queued here, not only when the status task next wakes (up to 100 ms later,
            # by when a backlog can be drained and the node cut off with no birth sent)
            if m.isconnected() and m.inflight_count() < self._window:
                if await self._publish_birth():
                    continue
            # one in-flight slot stays free for birth/status/sync results
            if not m.isconnected() or m.inflight_count() >= self._window or \
                    (not self._sync_sent and self.clock.now() < self._hold_until):
                if len(r) * 4 >= r.capacity * 3:
                    self._spill_some(r.capacity // 4)
                await _sleep_ms(10)
                continue
            if not self._ready():
                await _sleep_ms(5)
                continue
            payload = self.next_batch()
            if payload is None:
                continue
            self.c["batches"] += 1
            pid = await m.publish(self.t_events, payload[0], 1)
            self._pending.append([pid, payload[1]])
            payload = None
            await _sleep_ms(0)

    def _on_puback(self, pid):
        if self.upd.on_puback(pid):
            self._status_now.set()
        p = self._pending
        for i in range(len(p)):
            if p[i][0] == pid:
                self.c["published"] += p[i][1]
                p.pop(i)
                return

    def _on_resend(self, pid):
        for e in self._pending:
            if e[0] == pid:
                self.c["resent"] += e[1]
                return

    # -- MQTT callbacks ----------------------------------------------------------------------
    def _on_connect(self):
        self.c["reconnects"] = self.mqtt.counters["reconnects"]
        self.net.connected()  # a trial's settings reached the broker: kept
        self._sync_burst = 3
        self._hold_until = self.clock.now() + SYNC_FIRST_MS * 1000
        self._status_now.set()
        self._drain_status = True

    def _on_callback_error(self, reason):
        # an MQTT callback raised (mqtt.MQTTClient._call): say so in a status at once
        self._status_now.set()

    def _on_message(self, topic, payload, retain):
        if topic == self.t_config:
            self._on_config(payload, retain)
        elif topic == self.t_sync_resp:
            self._on_sync_resp(payload)
        elif topic == self.t_update:
            # a retained, unsigned or older one is refused there (rbnode.trust)
            if self.upd.on_command(payload, retain):
                self._status_now.set()
        elif topic == self.t_net:
            self._on_net(payload, retain)

    # -- network changes (rbnode.netcfg) -------------------------------------------------
    def _on_net(self, payload, retain):
        if retain:
            # like `update`: never retained by the host, so a retained one is stale
            self.net.refuse("refused: a retained net command")
            self._status_now.set()
            return
        try:
            cmd = codec.decode("net", payload)
        except codec.ProtocolError as e:
            self.net.refuse(e.reason)
            self._status_now.set()
            return
        wifi, broker = self.net.begin(cmd, self.clock.now())
        self._status_now.set()
        if wifi or broker:
            asyncio.create_task(self._net_switch(wifi, broker))

    async def _net_switch(self, wifi, broker):
        """Say "trial" on the old link first (up to 3 s), then use the new settings."""
        waited = 0
        await _sleep_ms(50)
        while waited < 3000 and (self._status_now.is_set() or self.mqtt.inflight_count()):
            await _sleep_ms(100)
            waited += 100
        self._net_use(wifi, broker)

    def _net_use(self, wifi, broker):
        cur = self.net.cur
        m = self.mqtt
        m.server = cur["host"]
        m.port = cur["port"]
        if wifi:
            try:
                self.hw.wlan().disconnect()  # the Wi-Fi task joins with the new credentials
            except (OSError, NotImplementedError):
                pass
        m.drop("net: new settings")

    def _note_wifi(self, up):
        """Since when the Wi-Fi is down (None: up), for the Improv offer."""
        if up:
            self.wifi_down_since = None
        elif self.wifi_down_since is None:
            self.wifi_down_since = self.clock.now()

    async def _wifi_task(self):
        try:
            w = self.hw.wlan()
            w.active(True)
        except (OSError, NotImplementedError):
            return  # a board without Wi-Fi (hal.wlan)
        joined = None
        was_up = False
        self.wifi_down_since = self.clock.now()
        while not self._stopping:
            self._note_wifi(w.isconnected())
            cur = self.net.cur
            want = (cur["ssid"], cur["password"])
            up = w.isconnected()
            if up and joined != want:
                try:
                    w.disconnect()  # joined with other credentials: switch
                except OSError:
                    pass
                up = False
            if not up:
                if was_up and self.mqtt.isconnected():
                    self.mqtt.drop("wifi lost")
                if want[0]:
                    try:
                        w.connect(want[0], want[1])
                        joined = want
                    except OSError:
                        pass
                for _ in range(10):
                    if w.isconnected() or self._stopping:
                        break
                    await _sleep_ms(300)
            was_up = w.isconnected()
            await _sleep_ms(1000)

    def _on_config(self, payload, retain=False):
        try:
            msg = codec.decode("config", payload)
            cfg = rbconfig.check(msg, self.hw, self.cfg)
        except (codec.ProtocolError, rbconfig.ConfigError) as e:
            self._refuse(RETAINED_CONFIG if retain else e.reason)
            return
        if rbconfig.config_hash(cfg) == self.cfg_hash:
            # nothing to obey: the copy of the active config that `railbird calibrate`
            # leaves retained, re-delivered on (re)connect, or a live one sent again
            return
        why = self.trust.config(msg, retain)  # retained, unsigned or another key's
        if why is not None:
            self._refuse(why)
            return
        old = self.cfg
        try:
            self._apply(cfg)
        except (MemoryError, OSError, ValueError) as e:
            # a config the board cannot take (the heap for its channels' edge rings, a pin's
            # IRQ refused): back to the old one; what else _apply raises is a bug, counted by
            # the MQTT client as a callback error (status.callback_error)
            self._apply(old)
            self._refuse("bad value: apply: %r" % (e,))
            return
        try:
            rbconfig.save(self.hw, cfg)
        except OSError as e:
            self.config_error = "persist failed: %r" % (e,)
        else:
            self.config_error = None
        self.c["config_applied"] += 1
        self._status_now.set()

    def _refuse(self, reason):
        self.config_error = reason[:200]
        self.c["config_rejected"] += 1
        self._status_now.set()

    async def _improv_task(self):
        if self.dev["locked"]:
            return  # Improv on the console would let anyone at the table move its Wi-Fi
        from rbnode import improv
        try:
            port = self.hw.serial()
        except NotImplementedError:
            return
        if port is None:
            return
        n = 0
        sess = improv.Session((FW_VERSION.split("-")[0], self.upd.version, self.hw.pinmap_id,
                               self.node_id), None)
        pending = [None]  # the net trial id Improv asked for

        def on_wifi(ssid, pw):
            pending[0] = "improv-%d-%d" % (self.boot, n)
            cmd = {"id": pending[0], "wifi": {"ssid": ssid, "password": pw},
                   "trial_s": self.dev["improv_trial_s"]}
            wifi, broker = self.net.begin(cmd, self.clock.now())
            if wifi or broker:
                self._net_use(wifi, broker)
            else:
                pending[0] = None
                port.write(sess.result(False))  # nothing new to try, or a trial runs
        sess.on_wifi = on_wifi
        after = self.dev["improv_after_s"] * 1000000
        offered = False
        while not self._stopping:
            down = getattr(self, "wifi_down_since", None)
            offer = pending[0] is not None or \
                (down is not None and self.clock.now() - down >= after)
            if offer != offered:
                offered = offer
                port.listen(offer)
            if offer:
                data = port.read()
                if data:
                    n += 1
                    out = sess.feed(data)
                    if out:
                        port.write(out)
                r = self.net.report
                if pending[0] is not None and r is not None and r.get("id") == pending[0] \
                        and r["state"] in ("done", "reverted"):
                    pending[0] = None
                    port.write(sess.result(r["state"] == "done"))
            await _sleep_ms(50)

    # -- status ------------------------------------------------------------------------------
    def counters(self):
        c = self.c
        irq = 0
        lost = 0
        jams = 0
        gl = 0
        below = 0
        sup = 0
        for b in self._beams:
            irq += b.ring_overflow
            lost += b.lost_edges
            jams += b.jams
            gl += b.glitches
        for r in self._rails:
            irq += r.ring_overflow
            lost += r.lost_edges
            below += r.below
            sup += r.suppressed
        sev = sbelow = ssup = 0
        s = self._strike
        if s is not None:
            irq += s.ring_overflow
            lost += s.lost_edges
            sev = s.events
            sbelow = s.below
            ssup = s.suppressed
        # channel objects are rebuilt by a config change: keep what the old ones counted
        base = self._base
        if base is not None:
            irq += base[0]
            lost += base[1]
            jams += base[2]
            gl += base[3]
            below += base[4]
            sup += base[5]
            sev += base[6]
            sbelow += base[7]
            ssup += base[8]
        c["strikes"] = sev
        c["strike_below"] = sbelow
        c["strike_suppressed"] = ssup
        c["irq_overflow"] = irq
        c["lost_edges"] = lost
        c["jams"] = jams
        c["glitches"] = gl
        c["rail_below"] = below
        c["rail_suppressed"] = sup
        st = self._colour
        if st is not None:  # the colour station (rbnode.colour): reads, failed reads, long passes
            c["colour_reads"] = st.reads
            c["colour_errors"] = st.errors
            c["colour_long"] = st.long
        c["dropped_ram"] = self.ring.dropped
        if self.spill is not None:
            c["dropped_spill"] = self.spill.dropped
            c["spilled"] = self.spill.spilled
        c["reconnects"] = self.mqtt.counters["reconnects"]
        c["callback_errors"] = self.mqtt.counters["callback_errors"]
        c["update_rejected"] = self.upd.rejected
        c["net_rejected"] = self.net.rejected
        return c

    def status_msg(self):
        msg = {"v": 1, "node": self.node_id, "boot": self.boot, "state": "online",
               "uptime_us": self.clock.now(), "heap_free": self.hw.mem_free(),
               "queue": len(self.ring), "spill": len(self.spill) if self.spill else 0,
               "counters": self.counters(), "config_rev": self.cfg["rev"],
               "config_error": self.config_error, "sync": None, "fw": self.upd.version,
               "callback_error": self.mqtt.callback_error}
        u = self.upd.status()
        if u is not None:
            msg["update"] = u
        if self.net.report is not None:
            msg["net"] = self.net.report
        try:
            msg["rssi"] = self.hw.wlan().status("rssi")
        except (OSError, ValueError, NotImplementedError):
            pass  # not associated (OSError), a port without "rssi", a board without Wi-Fi
        s = self.sync
        if s is not None:
            msg["sync"] = {"offset_us": s[0], "delay_us": s[1], "uncertainty_us": s[1] // 2,
                           "samples": s[2]}
        return msg

    def birth_msg(self):
        caps = ["pcnt"] if self.hw.counter("beam", 0) is not None else []
        if self.hw.channels("cue"):
            caps.append("cue")
        caps.append("spill")
        if self._strike is not None:
            caps.append("strike")
        if self._colour is not None:
            caps.append("colour")
            caps.append("colour_rgb")  # its `ball` events carry the pass's `rgb`
        caps.append("wm")
        if self.trust.required:
            caps.append("signed")  # takes only updates and configs the venue key signed
        return {"v": 1, "node": self.node_id, "boot": self.boot, "fw": self.upd.version,
                "reset": self.reset_cause, "config_hash": self.cfg_hash,
                "pinmap": self.hw.pinmap_id, "caps": caps}

    # -- status LED ------------------------------------------------------------------------
    def condition(self):
        """What the status LED shows (rbnode.led): Wi-Fi, broker, a jammed beam, syncing
        (the boot's first sync result or a connect's backlog not through), a blocked beam."""
        try:
            wifi = self.hw.wlan().isconnected()
        except (OSError, NotImplementedError):  # a board without Wi-Fi (hal.wlan): the host
            wifi = True  # link is not ours to judge
        jam = blk = False
        for b in self._beams:
            s = b.shown()
            if s == 2:
                jam = True
            elif s:
                blk = True
        syncing = not self._sync_sent or self._drain_status
        return rbled.condition(wifi, self.mqtt.isconnected(), jam, syncing, blk)

    async def _led_task(self):
        # not supervised: a stuck LED must not reset the board
        while not self._stopping:
            self.led.update(self.condition(), self.clock.now() // 1000)
            await _sleep_ms(rbled.LED_MS)

    def drained(self):
        """True when no event waits in the ring or the spill or is unacknowledged."""
        return not len(self.ring) and not self._pending and \
            (self.spill is None or not len(self.spill))

    async def _publish_birth(self):
        """Publish the retained birth when this boot's birth for the active config has not
        been handed to the client yet (publisher and status task both call it; the check
        and the mark happen with no await between them, so it goes out once) -> True when
        it did."""
        if self._birth_hash == self.cfg_hash:
            return False
        self._birth_hash = self.cfg_hash
        await self.mqtt.publish(self.t_birth, codec.encode("birth", self.birth_msg()), 1, True)
        return True

    async def _status_task(self):
        m = self.mqtt
        last = self.clock.now()
        while not self._stopping:
            self.sup.beat("status")
            # never wait for an in-flight slot here (the publisher leaves one free)
            if m.isconnected() and m.inflight_count() < m.max_inflight:
                now = self.clock.now()
                if await self._publish_birth():
                    pass
                elif self._status_now.is_set() or \
                        (self._drain_status and self.drained()) or \
                        now - last >= self.cfg["status_period_s"] * 1000000:
                    self._status_now.clear()
                    last = now
                    # the status of a drained node (queue 0, spill 0) settles what a
                    # connect owed; no await between this check and status_msg()
                    if self._drain_status and self.drained():
                        self._drain_status = False
                    synced = self.sync is not None
                    pid = await m.publish(self.t_status,
                                          codec.encode("status", self.status_msg()), 1, True)
                    if self.upd.on_status(pid, synced):
                        self._status_now.set()  # committed: say "done"
                    continue
            self.upd.tick(self.clock.now())
            back = self.net.tick(self.clock.now(), m.last_error)
            if back is not None:
                self._net_use(back[0], back[1])  # the old settings: reverted
                self._status_now.set()
            await _sleep_ms(100)

    # -- time sync ----------------------------------------------------------------------------
    async def _sync_task(self):
        m = self.mqtt
        self._sync_burst = 3
        last = None
        while not self._stopping:
            self.sup.beat("sync")
            await _sleep_ms(200)
            if not m.isconnected():
                continue
            now = self.clock.now()
            if self._sync_burst <= 0 and last is not None and \
                    now - last < self.dev["sync_period_s"] * 1000000:
                continue
            if self._sync_burst > 0:
                self._sync_burst -= 1
            last = now
            self._sync_id += 1
            sid = self._sync_id
            # keep at most a few outstanding requests (answers may never come)
            if len(self._sync_pending) > 4:
                self._sync_pending = {}
            t1 = self.clock.now()
            self._sync_pending[sid] = t1
            await m.publish(self.t_sync_req, codec.encode(
                "sync_req", {"v": 1, "node": self.node_id, "boot": self.boot, "id": sid,
                             "t1": t1}), 0)
            await _sleep_ms(300)

    def _on_sync_resp(self, payload):
        t4 = self.clock.now()
        try:
            msg = codec.decode("sync_resp", payload)
        except codec.ProtocolError:
            self.c["sync_rejected"] += 1
            return
        t1 = self._sync_pending.pop(msg["id"], None)
        if t1 is None or t1 != msg["t1"]:
            return
        t2, t3 = msg["t2"], msg["t3"]
        offset = ((t2 - t1) + (t3 - t4)) // 2
        delay = (t4 - t1) - (t3 - t2)
        if delay < 0:
            delay = 0
        s = self.sync
        n = 1 if s is None else s[2] + 1
        if s is None or delay <= s[1]:
            self.sync = [offset, delay, n]
        else:
            s[2] = n
        self.c["sync_samples"] = n
        if n == 1 and self.upd.trial is not None:
            self._status_now.set()  # a set on trial is healthy once this status is out
        self._sync_result = {"v": 1, "node": self.node_id, "boot": self.boot,
                             "id": msg["id"], "t1": t1, "t2": t2, "t3": t3, "t4": t4}
        asyncio.create_task(self._send_sync_result())

    async def _send_sync_result(self):
        r = self._sync_result
        if r is not None:
            self._sync_result = None
            await self.mqtt.publish(self.t_sync_result, codec.encode("sync_result", r), 1)
            self._sync_sent = True

    # -- life cycle -----------------------------------------------------------------------------
    async def _net_task(self):
        """Beats while the MQTT client is alive: connected with traffic, or still trying."""
        m = self.mqtt
        while not self._stopping:
            if m.alive_ms() < (m.keepalive * 2000 + m.backoff_max_ms + m.connect_timeout_ms):
                self.sup.beat("net")
            await _sleep_ms(500)

    def tasks(self):
        """The coroutines of a running node (main.py / simnode gather them)."""
        s = self.sup
        s.register("sensor", 2000)
        s.register("publisher", 5000)
        s.register("status", 5000)
        s.register("sync", 5000)
        s.register("net", 5000)
        return [self._sensor_task(), self._publisher_task(), self._status_task(),
                self._sync_task(), self._net_task(), self.mqtt.run(), s.run(),
                self._led_task(), self._wifi_task(), self._improv_task()]

    async def run(self):
        ts = [asyncio.create_task(c) for c in self.tasks()]
        while not self._stopping:
            await _sleep_ms(100)
        for t in ts:
            t.cancel()

    def stop(self):
        """Stop the tasks; the MQTT connection is dropped without DISCONNECT (the broker
        publishes the last will, as on a power cut)."""
        self._stopping = True
        self.sup.running = False
        self.mqtt.stop()
        if self.spill is not None:
            self.spill.flush()
        for o in self._channels():
            o.close()

    def reboot(self):
        """A planned reset (an installed update, a rolled-back trial): queued and in-flight
        events go to the flash spill first, so the next boot sends them."""
        self.stop()
        self.park()
        self.hw.reset()

    def park(self):
        """Move every unacknowledged and queued event to the flash spill (a graceful
        shutdown that keeps them for the next boot): in-flight batches are re-created from
        their payloads. Call after stop()."""
        sp = self.spill
        if sp is None:
            return
        tmp = []
        for e in self.mqtt.inflight:
            if e[1] == self.t_events:
                try:
                    msg = codec.decode("events", e[2])
                except codec.ProtocolError:
                    continue
                tmp.append(msg)
        self.mqtt.inflight = []
        if tmp and len(sp):
            # in flight is older than the spill: rebuild the spill behind them
            rest = []
            while len(sp):
                recs = sp.peek(256)
                rest.extend(recs)
                sp.consume(len(recs))
        else:
            rest = []
        for msg in tmp:
            for ev in msg["events"]:
                k, ch, val = _spill_fields(ev)
                sp.append(msg["boot"], ev["seq"], ev["t"], k, ch, val)
        for rec in rest:
            sp.append(*rec)
        while len(self.ring):
            self._spill_some(256)
        sp.flush()
        sp.close()
