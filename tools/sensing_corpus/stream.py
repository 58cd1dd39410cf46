"""Shots on three tables -> the input of `railbird assemble` (JSON lines: a time sync per
node, the nodes' event batches as the firmware sends them, the daemon's ticks) and the
ground truth of every shot. Pure and seeded.

The node model follows firmware/README.md: an event is pushed when the node knows it (a
drop when its beam clears, a rail or strike hit after the ADC delay), numbered in push
order, and sent in batches of at most 32 after a 20 ms linger, each batch with the node's
watermark `wm` (no beam still blocked before it); the host receives a batch 2-10 ms later.
"""

from __future__ import annotations

import json
import random

from rbproto import codec

from .sensors import colour_reads, sense, table_colours, table_hardware, truth_of

VENUE = "corpus"
TABLE_IDS = {"7ft": "t7", "8ft": "t8", "9ft": "t9"}
START_US = 200_000_000
SYNC_T1 = 100_000_000
LINGER_US = 20_000
BATCH_MAX = 32
TICK_US = 500_000


def node_of(table_id: str) -> str:
    return f"{table_id}-node"


def config_toml(calibrated: dict | None = None) -> str:
    """The `railbird assemble --config` of the corpus: its three tables and their sizes,
    with the default cue-return delays of each size, or with `calibrated` ({table id:
    {pocket: ms}}: what `railbird calibrate` writes)."""
    lines = [f'venue = "{VENUE}"', ""]
    for size, tid in TABLE_IDS.items():
        lines += [f"[tables.{tid}]", f'nodes = ["{node_of(tid)}"]', f'table_size = "{size}"']
        if calibrated and tid in calibrated:
            ms = ", ".join(f"{p} = {v}" for p, v in calibrated[tid].items())
            lines.append(f"cue_return_ms = {{{ms}}}")
        lines.append("")
    return "\n".join(lines)


def calibration(seed: int) -> dict:
    """Each corpus table's cue-return delays as `railbird calibrate` measures them (the
    median of drops into each pocket: the table's own delay, the per-ball spread averaged
    out), ms."""
    return {
        tid: {p: round(ms) for p, ms in table_hardware(seed, size)["return_ms"].items()}
        for size, tid in TABLE_IDS.items()
    }


def timelines(traces: list[dict], seed: int) -> tuple[dict, list[dict]]:
    """Place the shots of each table one after another as play would: the next stroke comes
    a few seconds after the balls stop (and after the cue ball is back from the return, on
    a scratch). -> ({table id: [event, ...]}, [truth per shot]). Each event keeps `shot`
    (the index of its truth record)."""
    rng = random.Random(f"stream-{seed}")
    now = dict.fromkeys(TABLE_IDS, START_US)
    events: dict = {tid: [] for tid in TABLE_IDS.values()}
    truth: list[dict] = []
    for tr in traces:
        if not tr.get("ok"):
            continue
        spec = tr["spec"]
        size = spec["table"]
        tid = TABLE_IDS[size]
        hw = table_hardware(seed, size)
        t0 = now[size]
        evs = sense(tr, t0, hw, random.Random(f"sense-{seed}-{spec['id']}"), size)
        i = len(truth)
        t = truth_of(tr)
        t.update(
            shot=i,
            id=spec["id"],
            kind=spec["kind"],
            table=tid,
            size=size,
            strike_t=t0,
            drops=[(e["t"], e["pocket"], e["ball"]) for e in evs if e["kind"] == "drop"],
        )
        truth.append(t)
        for e in evs:
            e["shot"] = i
        events[tid].extend(evs)
        rest = t0 + round(tr["duration"] * 1e6)
        last = max([rest] + [e["ready"] for e in evs])
        gap = rng.uniform(2.0, 12.0)
        if t["scratch"]:
            gap += rng.uniform(3.0, 8.0)  # fetch the cue ball from the return, place it
        now[size] = last + round(gap * 1e6)
    return events, truth


def with_reads(events: dict, seed: int) -> dict:
    """`events` plus the colour station's `ball` reads of every pocketed ball (sensors.
    colour_reads), each table with its own ball colours and return delays. The next stroke
    is not held for them (players do not wait for the object balls in the return), so a
    late read can fall into the next shot."""
    out = {}
    for size, tid in TABLE_IDS.items():
        evs = events.get(tid, [])
        rng = random.Random(f"colour-{seed}-{tid}")
        reads = colour_reads(evs, table_hardware(seed, size), rng, table_colours(seed, size))
        out[tid] = list(evs) + reads
    return out


def with_knocks(events: dict, seed: int, per_hour: float) -> dict:
    """`events` plus knocks the strike sensor takes for a stroke: a bump of the table, a
    glass put down on the rail, a cue butt on the frame, at random times (Poisson,
    `per_hour` per table) with amplitudes just over the threshold (210-700). They belong to
    no shot (`shot` -1)."""
    rng = random.Random(f"knocks-{seed}")
    out = {}
    for tid, evs in events.items():
        lst = list(evs)
        if evs and per_hour > 0:
            t, end = min(e["t"] for e in evs), max(e["t"] for e in evs)
            while True:
                t += round(rng.expovariate(per_hour / 3600e6))
                if t >= end:
                    break
                amp = rng.randint(210, 700)
                lst.append({"t": t, "kind": "strike", "amp": amp, "ready": t + 1000, "shot": -1})
        out[tid] = lst
    return out


def with_missed_strikes(events: dict, truth: list[dict], seed: int, share: float) -> dict:
    """`events` less the stroke's own strike (the cue tip on the ball, at the shot's
    `strike_t`) of `share` of the shots (rounded; a seeded draw): the strike sensor missed
    it (a soft stroke, a loose piezo). Its later clicks, when it hears any, stay."""
    k = min(len(truth), round(share * len(truth)))
    missed = set(random.Random(f"missed-{seed}").sample([t["shot"] for t in truth], k))
    out = {}
    for tid, evs in events.items():
        out[tid] = [
            e
            for e in evs
            if not (
                e["kind"] == "strike"
                and e["shot"] in missed
                and e["t"] == truth[e["shot"]]["strike_t"]
            )
        ]
    return out


def _sync_line(node: str, tid: str) -> str:
    # the exchange says host = node time exactly (offset 0, 200 µs round trip)
    t1 = SYNC_T1
    t2 = t1 + 100
    t3 = t2 + 10
    t4 = t3 + 100
    payload = {"v": 1, "node": node, "boot": 1, "id": 1, "t1": t1, "t2": t2, "t3": t3, "t4": t4}
    topic = codec.topic(VENUE, tid, "sync_result", node)
    return json.dumps({"topic": topic, "payload": payload}, sort_keys=True)


def node_messages(tid: str, evs: list[dict], seed: int, strike: bool = True) -> list[tuple]:
    """One node's batches -> [(rx µs, line)], with `strike` events or without them (a
    node that has no strike sensor: nothing is sent for them, no seq is used)."""
    rng = random.Random(f"net-{seed}-{tid}-{strike}")
    node = node_of(tid)
    topic = codec.topic(VENUE, tid, "events", node)
    pending = sorted(
        (e for e in evs if strike or e["kind"] != "strike"), key=lambda e: (e["ready"], e["t"])
    )
    out = []
    seq = 0
    i = 0
    wm_prev = 0
    rx_prev = 0
    while i < len(pending):
        first = pending[i]["ready"]
        send = first + LINGER_US
        batch = []
        while i < len(pending) and pending[i]["ready"] <= send and len(batch) < BATCH_MAX:
            batch.append(pending[i])
            i += 1
        if len(batch) == BATCH_MAX:
            send = batch[-1]["ready"]
        # every event of this boot before wm is in this batch or an earlier one
        unsent = [e["t"] for e in pending[i:] if e["t"] < send]
        wm = max(wm_prev, min([send, *unsent]))
        wm_prev = wm
        items = []
        for e in batch:
            item = {"seq": seq, "t": e["t"], "kind": e["kind"]}
            for k in ("pocket", "rail", "amp", "dur"):
                if k in e:
                    item[k] = e[k]
            if e["kind"] == "ball":  # elsewhere `ball` is the truth, never sent
                item.update(ball=e["ball"], conf=e["conf"])
            items.append(item)
            seq += 1
        rx = max(rx_prev, send + rng.randint(2_000, 10_000))
        rx_prev = rx
        payload = {"v": 1, "node": node, "boot": 1, "events": items, "wm": wm}
        out.append((rx, json.dumps({"topic": topic, "payload": payload, "rx": rx}, sort_keys=True)))
    return out


def assemble_input(events: dict, seed: int, strike: bool = True) -> list[str]:
    """The whole corpus as `railbird assemble` input lines: the syncs, then every node's
    batches and the daemon's ticks (every 500 ms) in order of arrival."""
    lines = [_sync_line(node_of(tid), tid) for tid in events]
    msgs = []
    for tid, evs in events.items():
        msgs += node_messages(tid, evs, seed, strike)
    msgs.sort(key=lambda m: m[0])
    if not msgs:
        return lines
    tick = (msgs[0][0] // TICK_US + 1) * TICK_US
    for rx, line in msgs:
        while tick <= rx:
            lines.append(json.dumps({"tick": tick}))
            tick += TICK_US
        lines.append(line)
    end = msgs[-1][0] + 10_000_000
    while tick <= end:
        lines.append(json.dumps({"tick": tick}))
        tick += TICK_US
    return lines
