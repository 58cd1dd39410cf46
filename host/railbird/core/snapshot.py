"""A pipeline's whole state as plain JSON data, and back: what a journal snapshot holds.

`dump(pipeline)` -> a dict of JSON types; `load(cfg, data)` -> a Pipeline that behaves exactly
as the dumped one on every later input (tests/hardening/test_snapshots.py replays random
input streams both ways and compares every record). `encode`/`decode` turn it into bytes
and back: JSON (never pickle) with the keys in the order the pipeline built them, so the
same state always gives the same bytes and a loaded pipeline iterates its dicts in the same
order as the dumped one.

What is kept, per part:
- clock models: every (node, boot) with its samples and fit;
- timelines: the reorder heap (events with node time and synced flag), the dedup sets of
  each (node, boot) with the contents kept for conflict detection (`Event.content`, a tuple,
  so it is the same in every process), the watermarks and counts;
- shot assembly: the open shot (its drops and cues are rebuilt from its events), the rest,
  pending warnings and the next shot number;
- games: the match, and the rules `Referee` with its undo history as it is (each state as
  its field values, the announcements and input after it) and its current state and
  announcements, so a restart computes no rules; the replaced matches `undo` can bring
  back, likewise. `state_fields` names the rules' state fields: a snapshot of another
  rules version is not used;
- per table: referee ids seen (bounded), pending referee facts, node watermarks (holds and
  the nodes' own `wm`), warned sets, the last shots kept for inspection, the timeline
  position;
- counters, rejections by reason, events of unknown kinds per node, the last status of each
  node.

What the configuration gives (table nodes, window, shot parameters, policies) is not kept:
`config_key(cfg)` names it, and a snapshot is for the configuration that made it;
`table_key(cfg, name)` names what of it one table's state depends on, so that after a
configuration change the tables it did not touch can resume from the snapshot
(railbird.daemon.snapshots). `comparable` gives two states in an order-free form.

`FIELDS` lists the attributes each class of the state has; a test checks the classes have
no others, so a new attribute cannot be left out of snapshots unnoticed.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import operator
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Iterable
from dataclasses import asdict
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict, cast

from railbird.core.clockmodel import BootClock, Sample
from railbird.core.game import Game
from railbird.core.pipeline import NodeMark, Pipeline, Table
from railbird.core.shotclock import clock_data, load_clock
from railbird.core.shots import ShotAssembler, _Open
from railbird.core.timeline import Content, Event, Key, SeqSet, Timeline

if TYPE_CHECKING:  # annotations only: config imports the core, the rules load lazily
    from railbird.config import Config
    from railbird.rules import Referee, State
    from railbird.rules.inputs import JsonObject

FORMAT = 2  # the layout of `dump`; a snapshot of another format is not used

# Attributes of each class, as `dump` keeps them: kept, or given by the config / code.
FIELDS = {
    "Pipeline": {
        "cfg",
        "tables",
        "clocks",
        "counters",
        "rejected",
        "unknown_kinds",
        "node_status",
        "node_table",
        "boots",
    },
    "Table": {
        "venue",
        "table",
        "nodes",
        "sensors",
        "timeline",
        "assembler",
        "game",
        "referee_ids",
        "referee_id_set",
        "pos",
        "unsynced_warned",
        "shots",
        # sensor_activity: derived from the shots (Table.activity), rebuilt on first use
        "sensor_activity",
        "pending_facts",
        "clock",
        "marks",
        "conflicted",
        "quarantine_warned",
    },
    "NodeMark": set(NodeMark.__slots__),
    "Timeline": {"window_us", "_heap", "_seen", "max_seen", "released_t", "counts"},
    "SeqSet": set(SeqSet.__slots__),
    "ShotAssembler": {"table", "p", "n", "cur", "last_activity", "pending_warnings"},
    "_Open": set(_Open.__slots__),
    "BootClock": {
        "keep",
        "slack_us",
        "min_span_us",
        "samples",
        "fallback",
        "suspect",
        "t_ref",
        "offset",
        "drift",
        "synced",
    },
    "ClockModels": {"_clocks"},
    "Game": {"match", "defaults", "referee", "error", "_earlier", "_mod"},
    # _facts_cache: derived from the history (Referee.shot_facts), rebuilt on first use
    "Referee": {"state", "_history", "_produced", "announcements", "_facts_cache"},
    "Event": set(Event.__slots__),
}


# -- the layout `dump` writes ---------------------------------------------------------------
# Rows of several values (a key and what it maps to, a (node, boot) pair, an event) are
# tuples as `dump` builds them and JSON arrays once through `encode`/`decode` (the same
# bytes either way): `load` only unpacks them. A value the state keeps as a tuple (a clock
# sample, an event's content, a timeline key) `dump` writes as a list of its values, and
# `load` makes it a tuple again: JSON cannot say the type of each, so those `tuple(...)`
# are `cast` to the state's tuple type. FORMAT and the config key say the data is `dump`'s.
ContentRow = list[int | str | None]  # Event.content as a list
# An event (`_event`): t, node, boot, seq, kind, pocket, rail, amp, dur, n, t_node, synced,
# ball, conf (format 2: the colour station's reads)
EventRow = tuple[
    int,
    str,
    int,
    int,
    str,
    str | None,
    str | None,
    int | None,
    int | None,
    int | None,
    int,
    bool,
    int | None,
    int | None,
]
StateRow = list[object]  # a rules State's field values, in field order (`_state_layout`)


class ClockData(TypedDict):
    keep: int
    slack_us: int
    min_span_us: int
    samples: list[list[float]]  # each clockmodel.Sample as a list
    fallback: int | None
    suspect: list[int | None] | None  # BootClock.suspect as a list
    t_ref: int
    offset: float
    drift: float
    synced: bool


class SeqSetData(TypedDict):
    floor: int
    above: list[int]
    first: list[tuple[int, ContentRow]]
    recent: list[tuple[int, ContentRow]]
    clashes: list[tuple[int, ContentRow]]


class TimelineData(TypedDict):
    heap: list[EventRow]
    seen: list[tuple[str, int, SeqSetData]]  # (node, boot, its seqs)
    max_seen: int | None
    released_t: list[int | str] | None  # a timeline Key as a list
    counts: dict[str, int]


class OpenShotData(TypedDict):
    events: list[EventRow]
    start: int
    last: int
    rest_before: int | None
    warnings: list[str]


class AssemblerData(TypedDict):
    n: int
    last_activity: int | None
    pending_warnings: list[str]
    cur: OpenShotData | None


class RefereeData(TypedDict):
    history: list[tuple[StateRow, list[dict[str, str]], JsonObject]]
    state: StateRow
    announcements: list[dict[str, str]]


class GameData(TypedDict):
    match: JsonObject | None
    defaults: JsonObject | None
    error: str | None
    referee: RefereeData | None
    earlier: list[tuple[RefereeData, JsonObject | None]]  # (referee, its match)


class MarkData(TypedDict):
    known: int | None
    since: int | None
    reason: str | None
    gone: bool
    boot: int | None
    status_key: list[int] | None  # (boot, uptime_us) as a list
    reconnects: int | None
    wm: NotRequired[int | None]  # absent before node watermarks
    wm_boot: NotRequired[int | None]


class TableData(TypedDict):
    timeline: TimelineData
    assembler: AssemblerData
    game: GameData
    referee_ids: list[str]
    pos: int
    unsynced_warned: list[tuple[str, int]]  # (node, boot)
    shots: NotRequired[list[JsonObject]]  # Table.shots (absent: dumped with shots=False)
    pending_facts: JsonObject
    clock: NotRequired[JsonObject | None]  # the shot clock (absent before it)
    marks: list[tuple[str, MarkData]]  # (node, its watermark state)
    conflicted: list[tuple[str, int]]
    quarantine_warned: list[tuple[str, int]]


class SnapshotData(TypedDict):
    """What `dump` returns and `decode` gives back."""

    format: int
    state_fields: list[str]
    counters: list[tuple[str, int]]
    unknown_kinds: NotRequired[list[tuple[str, int]]]  # node -> events; absent before kinds
    rejected: list[tuple[str, int]]
    node_status: list[tuple[str, str, str, JsonObject]]  # (venue, table, node, status)
    clocks: list[tuple[str, int, ClockData]]  # (node, boot, its clock)
    boots: list[tuple[str, list[int]]]  # node -> its boots, least recently active first
    tables: list[tuple[str, str, TableData]]  # (venue, table, its state)


def config_key(cfg: Config) -> str:
    """What of the configuration the pipeline's behaviour depends on, as a short digest.
    Not the referee token: the pipeline judges journalled referee input by its seal
    (railbird.core.refauth), and a digest of a short PIN in the journal would give it away."""
    tables = {
        name: {
            "nodes": list(tc.nodes),
            "match": tc.match(),
            "defaults": tc.match_defaults(),
            "cue_return_us": tc.shot_params(cfg.shots).cue_return_us,
        }
        for name, tc in sorted(cfg.table.items())
    }
    dt = cfg.default_table
    d = {
        "venue": cfg.venue,
        "tables": tables,
        "unknown_tables": bool(cfg.accept_unknown_tables),
        "default_table": [
            list(dt.nodes),
            dt.match(),
            dt.match_defaults(),
            dt.shot_params(cfg.shots).cue_return_us,
        ],
        "window_us": cfg.window_us,
        "max_hold_us": cfg.max_hold_us,
        "lip_policy": cfg.lip_policy,
        "shots": asdict(cfg.shots),
    }
    text = json.dumps(d, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def table_key(cfg: Config, name: str) -> str:
    """What of the configuration one configured table's state depends on, as a short
    digest (railbird.daemon.snapshots: a snapshot's table whose key is unchanged resumes
    from it, another is rebuilt from its own inputs): the venue-wide parameters every
    table's timeline, holds and rules use, the table's match and shot parameters (game,
    rules options, players, pocket return delays, playing surface), and its nodes with the
    table each of them counts on (a node listed by two tables counts on one: the key of
    the other changes when that one does). A table that takes any node (no `nodes`)
    depends on every other table's nodes: its key has the whole mapping."""
    return _table_key(cfg, name, _homes(cfg))


def _homes(cfg: Config) -> dict[str, str]:
    """node -> the table it counts on (as `Pipeline.node_table`)."""
    return {n: t for t, c in cfg.table.items() for n in c.nodes}


def _table_key(cfg: Config, name: str, homes: dict[str, str]) -> str:
    tc = cfg.table[name]
    d = {
        "venue": cfg.venue,
        "unknown_tables": bool(cfg.accept_unknown_tables),
        "window_us": cfg.window_us,
        "max_hold_us": cfg.max_hold_us,
        "lip_policy": cfg.lip_policy,
        "nodes": [[n, homes.get(n)] for n in tc.nodes] if tc.nodes else sorted(homes.items()),
        "match": tc.match(),
        "defaults": tc.match_defaults(),
        "shots": asdict(tc.shot_params(cfg.shots)),
        "format": [FORMAT, *_state_fields()],
    }
    text = json.dumps(d, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def table_keys(cfg: Config) -> dict[str, str]:
    """{table name: `table_key`} of every configured table."""
    homes = _homes(cfg)
    return {name: _table_key(cfg, name, homes) for name in sorted(cfg.table)}


# The parts of `dump` that are the venue's statistics (what `Pipeline.stats` counts),
# not state any later record depends on.
STATISTICS = ("counters", "rejected", "unknown_kinds")


def comparable(blob: bytes, statistics: bool = True) -> bytes:
    """`encode`d data in an order-free form, to compare two pipelines' states: the venue-wide
    maps (tables, clocks, boots, node status, counters) sorted by key. Their order is that
    in which the inputs first named each entry, which no later record depends on (every
    walk over tables sorts them; the rest is looked up by key), and which a pipeline whose
    tables were rebuilt apart (railbird.daemon.snapshots) cannot reproduce. Without
    `statistics`, `STATISTICS` are left out."""
    data = decode(blob)
    out: dict[str, object] = dict(data)
    for name in ("counters", "rejected", "unknown_kinds", "node_status", "clocks", "boots"):
        if name in out:
            out[name] = sorted(cast("list[Any]", out[name]), key=lambda row: row[:-1])
    out["tables"] = sorted(data["tables"], key=lambda row: row[:2])
    if not statistics:
        for name in STATISTICS:
            out.pop(name, None)
    return json.dumps(out, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def encode(data: SnapshotData) -> bytes:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def decode(blob: bytes) -> SnapshotData:
    """The data `encode` wrote. cast: JSON cannot say its layout; `load` refuses data of
    another FORMAT before it reads any of the rest."""
    return cast(SnapshotData, json.loads(blob))


# -- dump ------------------------------------------------------------------------------------
def dump(p: Pipeline, shots: bool = True) -> SnapshotData:
    """The state as JSON data. It shares the pipeline's own lists and dicts (a copy would cost
    more than the rest): encode it before the pipeline sees more input. `shots=False` leaves
    out each table's last shots (`Table.shots`, up to SHOTS_KEPT of them, the bulk of the
    state), for a caller that keeps them anyway: a journal has them in its `shots` table."""
    return {
        "format": FORMAT,
        "state_fields": list(_state_fields()),
        "counters": list(p.counters.items()),
        "unknown_kinds": list(p.unknown_kinds.items()),
        "rejected": list(p.rejected.items()),
        "node_status": [(v, t, n, m) for (v, t, n), m in p.node_status.items()],
        "clocks": [(n, b, _clock(c)) for (n, b), c in p.clocks._clocks.items()],
        "boots": [(n, list(boots)) for n, boots in p.boots.items()],
        "tables": [(v, t, _table(tb, shots)) for (v, t), tb in p.tables.items()],
    }


def _clock(c: BootClock) -> ClockData:
    return {
        "keep": c.keep,
        "slack_us": c.slack_us,
        "min_span_us": c.min_span_us,
        "samples": [list(s) for s in c.samples],
        "fallback": c.fallback,
        "suspect": None if c.suspect is None else list(c.suspect),
        "t_ref": c.t_ref,
        "offset": c.offset,
        "drift": c.drift,
        "synced": c.synced,
    }


def _event(e: Event) -> EventRow:
    return (e.t, e.node, e.boot, e.seq, e.kind, e.pocket, e.rail, e.amp, e.dur, e.n, e.t_node,
            e.synced, e.ball, e.conf)  # fmt: skip


def _seqset(s: SeqSet) -> SeqSetData:
    return {
        "floor": s.floor,
        "above": sorted(s.above),
        "first": [(k, list(v)) for k, v in s.first.items()],
        "recent": [(k, list(v)) for k, v in s.recent.items()],
        # sorted by seq, then content (a clash is one per content): tuples sort as the
        # lists they become, element by element
        "clashes": sorted((k, list(v)) for k, v in s.clashes),
    }


def _timeline(tl: Timeline) -> TimelineData:
    return {
        "heap": [_event(h[4]) for h in tl._heap],  # the heap's own order, kept as it is
        "seen": [(n, b, _seqset(s)) for (n, b), s in tl._seen.items()],
        "max_seen": tl.max_seen,
        "released_t": None if tl.released_t is None else list(tl.released_t),
        "counts": dict(tl.counts),
    }


def _assembler(a: ShotAssembler) -> AssemblerData:
    cur = a.cur
    return {
        "n": a.n,
        "last_activity": a.last_activity,
        "pending_warnings": list(a.pending_warnings),
        "cur": None
        if cur is None
        else {
            "events": [_event(e) for e in cur.events],
            "start": cur.start,
            "last": cur.last,
            "rest_before": cur.rest_before,
            "warnings": list(cur.warnings),
        },
    }


@functools.cache
def _state_layout() -> tuple[tuple[str, ...], Callable[[State], tuple[object, ...]]]:
    """(field names, a getter of all their values): worked out once. `dataclasses.fields`
    on every state row was 60 % of a snapshot at 1,000 tables (0.5 s of the worker's)."""
    from dataclasses import fields

    from railbird.rules.state import State

    names = tuple(f.name for f in fields(State))
    return names, operator.attrgetter(*names)


def _state_fields() -> tuple[str, ...]:
    return _state_layout()[0]


def _state_row(st: State) -> StateRow:
    """A rules `State` (immutable data of numbers, strings and tuples) as its field values."""
    return list(_state_layout()[1](st))


def _tuples(v: object) -> object:
    return tuple(map(_tuples, v)) if v.__class__ is list else v


def _referee(ref: Referee) -> RefereeData:
    """The match's undo history as it is: each state with the announcements and input that
    followed it (JSON turns their tuples into lists; `_tuples` turns them back)."""
    if ref.state is not ref._produced:
        raise ValueError("a referee state set from outside its history cannot be kept")
    return {
        "history": [(_state_row(st), anns, inp) for st, anns, inp in ref._history],
        "state": _state_row(ref.state),
        "announcements": ref.announcements,
    }


def _game(g: Game) -> GameData:
    return {
        "match": g.match,
        "defaults": g.defaults,
        "error": g.error,
        "referee": None if g.referee is None else _referee(g.referee),
        "earlier": [(_referee(r), m) for r, m in g._earlier],
    }


def _mark(m: NodeMark) -> MarkData:
    return {
        "known": m.known,
        "since": m.since,
        "reason": m.reason,
        "gone": m.gone,
        "boot": m.boot,
        "status_key": None if m.status_key is None else list(m.status_key),
        "reconnects": m.reconnects,
        "wm": m.wm,
        "wm_boot": m.wm_boot,
    }


def _table(t: Table, shots: bool) -> TableData:
    d: TableData = {
        "timeline": _timeline(t.timeline),
        "assembler": _assembler(t.assembler),
        "game": _game(t.game),
        "referee_ids": list(t.referee_ids),
        "pos": t.pos,
        "unsynced_warned": sorted((n, b) for n, b in t.unsynced_warned),
        "shots": t.shots,
        "pending_facts": t.pending_facts,
        "clock": clock_data(t.clock),
        "marks": [(n, _mark(m)) for n, m in t.marks.items()],
        "conflicted": sorted((n, b) for n, b in t.conflicted),
        "quarantine_warned": sorted((n, b) for n, b in t.quarantine_warned),
    }
    if not shots:
        del d["shots"]
    return d


# -- load ------------------------------------------------------------------------------------
def load(
    cfg: Config,
    data: SnapshotData,
    shots: Callable[[str, str], Iterable[JsonObject]] | None = None,
) -> Pipeline:
    """A pipeline for `cfg` in the state `data` (from `dump`). A table the configuration no
    longer has is left out (a full replay under this configuration would refuse its input).
    `shots(venue, table)` gives a table's last shots when `data` was dumped without them."""
    if data.get("format") != FORMAT:
        raise ValueError(f"snapshot format {data.get('format')} is not {FORMAT}")
    if tuple(data["state_fields"]) != _state_fields():
        raise ValueError("snapshot of game states with other fields (another rules version)")
    p = Pipeline(cfg)
    p.counters = Counter(dict(data["counters"]))
    p.rejected = Counter(dict(data["rejected"]))
    p.unknown_kinds = Counter(dict(data.get("unknown_kinds", ())))  # absent before kinds
    p.node_status = {(v, t, n): m for v, t, n, m in data["node_status"]}
    clocks = p.clocks._clocks
    clocks.clear()
    for node, boot, c in data["clocks"]:
        clocks[(node, boot)] = _load_clock(c)
    p.boots = {node: dict.fromkeys(boots) for node, boots in data["boots"]}
    configured = p.tables
    p.tables = {}
    for venue, name, td in data["tables"]:
        t = configured.get((venue, name))
        if t is None:
            tcfg = cfg.table_config(name)
            if tcfg is None or cfg.venue not in ("*", venue):
                continue
            t = Table(venue, name, tcfg, cfg)
        _load_table(t, td)
        if "shots" not in td:
            t.shots = list(shots(venue, name)) if shots is not None else []
            t.sensor_activity = None
        p.tables[(venue, name)] = t
    for key, t in configured.items():  # configured since the snapshot: fresh, as in a replay
        p.tables.setdefault(key, t)
    return p


def _load_clock(d: ClockData) -> BootClock:
    c = BootClock(keep=d["keep"], slack_us=d["slack_us"], min_span_us=d["min_span_us"])
    # cast: a tuple again of the values `_clock` listed (see "the layout `dump` writes")
    c.samples = [cast(Sample, tuple(s)) for s in d["samples"]]
    c.fallback = d["fallback"]
    suspect = d["suspect"]
    c.suspect = None if suspect is None else cast("tuple[int, int | None]", tuple(suspect))
    c.t_ref = d["t_ref"]
    c.offset = d["offset"]
    c.drift = d["drift"]
    c.synced = d["synced"]
    return c


def _load_event(x: EventRow) -> Event:
    t, node, boot, seq, kind, pocket, rail, amp, dur, n, t_node, synced, ball, conf = x
    return Event(
        t=t,
        node=node,
        boot=boot,
        seq=seq,
        kind=kind,
        pocket=pocket,
        rail=rail,
        amp=amp,
        dur=dur,
        n=n,
        t_node=t_node,
        synced=synced,
        ball=ball,
        conf=conf,
    )


def _content(v: ContentRow) -> Content:
    return cast(Content, tuple(v))  # a tuple again of what `_seqset` listed


def _load_seqset(d: SeqSetData) -> SeqSet:
    s = SeqSet()
    s.floor = d["floor"]
    s.above = set(d["above"])
    s.first = {k: _content(v) for k, v in d["first"]}
    s.recent = OrderedDict((k, _content(v)) for k, v in d["recent"])
    s.clashes = {(k, _content(v)) for k, v in d["clashes"]}
    return s


def _load_table(t: Table, d: TableData) -> None:
    tl, td = t.timeline, d["timeline"]
    tl._heap = [(e.t, e.node, e.boot, e.seq, e) for e in map(_load_event, td["heap"])]
    tl._seen = {(n, b): _load_seqset(s) for n, b, s in td["seen"]}
    tl.max_seen = td["max_seen"]
    released = td["released_t"]
    # cast: a tuple again of the Key `_timeline` listed
    tl.released_t = None if released is None else cast(Key, tuple(released))
    tl.counts = dict(td["counts"])
    a, ad = t.assembler, d["assembler"]
    a.n = ad["n"]
    a.last_activity = ad["last_activity"]
    a.pending_warnings = list(ad["pending_warnings"])
    cur = ad["cur"]
    if cur is None:
        a.cur = None
    else:
        events = [_load_event(e) for e in cur["events"]]
        a.cur = _Open(events[0], cur["rest_before"], list(cur["warnings"]))
        for e in events[1:]:
            a.cur.add(e)  # its drops and cues too
        a.cur.start = cur["start"]
        a.cur.last = cur["last"]
    _load_game(t.game, d["game"])
    t.referee_ids = deque(d["referee_ids"])
    t.referee_id_set = set(t.referee_ids)
    t.pos = d["pos"]
    t.unsynced_warned = {(n, b) for n, b in d["unsynced_warned"]}
    t.shots = d.get("shots", [])
    t.sensor_activity = None  # of the shots just loaded: built again from them on first use
    t.pending_facts = d["pending_facts"]
    t.clock = load_clock(d.get("clock"))
    t.marks = {}
    for node, md in d["marks"]:
        m = t.marks[node] = NodeMark()
        m.known, m.since, m.reason, m.gone = md["known"], md["since"], md["reason"], md["gone"]
        m.boot, m.reconnects = md["boot"], md["reconnects"]
        sk = md["status_key"]
        # cast: a tuple again of the (boot, uptime_us) `_mark` listed
        m.status_key = None if sk is None else cast("tuple[int, int]", tuple(sk))
        m.wm, m.wm_boot = md.get("wm"), md.get("wm_boot")  # absent before node watermarks
    t.conflicted = {(n, b) for n, b in d["conflicted"]}
    t.quarantine_warned = {(n, b) for n, b in d["quarantine_warned"]}


def _load_game(g: Game, d: GameData) -> None:
    g.match, g.defaults, g.error = d["match"], d["defaults"], d["error"]
    ref = d["referee"]
    g.referee = None if ref is None else _load_referee(g, ref, g.match)
    g._earlier = [(_load_referee(g, r, m), m) for r, m in d["earlier"]]


def _load_referee(g: Game, d: RefereeData, match: JsonObject | None) -> Referee:
    if g._mod is None:
        raise ValueError("the snapshot has a game but the rules engine is not available")
    if match is None:  # a Game holds a referee only with the match it was made for
        raise ValueError("the snapshot has a referee without its match")
    from railbird.rules.state import State

    def state(row: StateRow) -> State:
        # cast: the State's field values in field order (`_state_row`, `_tuples` making
        # JSON's lists tuples again); a row cannot say each field's type, State's own do
        return State(*cast("Iterable[Any]", map(_tuples, row)))

    ref = g._mod[0](copy.deepcopy(match))
    ref._history = [(state(row), anns, inp) for row, anns, inp in d["history"]]
    ref.state = ref._produced = state(d["state"])
    ref.announcements = d["announcements"]
    return ref
