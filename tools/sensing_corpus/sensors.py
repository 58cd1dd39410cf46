"""The sensor model: a shot's physics trace -> the protocol v1 events a Railbird node would
send for it, and the shot's ground truth. Pure and seeded (no pooltool): the same traces and
seed give the same events.

What each sensor does (tools/sensing_corpus/README.md has the reasons and the numbers):

- strike piezo on the slate (the `strike` channel): the cue tip on the cue ball, and the
  louder ball-on-ball contacts as quieter clicks; a threshold and a refractory time like
  the rail channels';
- pocket beams: a ball falls through the pocket's chute and blocks the beam after a chute
  delay, for a blocked time; balls in one chute queue behind each other;
- the cue-ball detector in the ball return: the cue ball arrives after a return delay that
  depends on the pocket (the return runs to the foot end);
- rail piezos, one per cushion segment: the peak amplitude grows with the impact (the ball's
  change of speed) and falls with the distance from the piezo; the other rails' piezos hear
  a hit faintly through the frame (crosstalk); hits below the channel's threshold (soft
  touches, most echoes) and within its refractory time are not reported.
"""

from __future__ import annotations

import math
import random

# Version of this model: part of the report, not of the physics cache key.
SENSOR_VERSION = 2

POCKETS = ("HL", "HR", "SL", "SR", "FL", "FR")
RAILS = ("H", "F", "LH", "LF", "RH", "RF")
# Cue-ball return delays on a 9 ft table, drop -> detector, s (docs/shots.md: about 1 s from
# a foot pocket, 2 s from a side, 2.6-3.1 s from a head pocket); smaller tables scale by length.
RETURN_9FT = {"HL": (2.6, 3.1), "HR": (2.6, 3.1), "SL": (1.85, 2.15), "SR": (1.85, 2.15)}
RETURN_9FT |= {"FL": (0.9, 1.1), "FR": (0.9, 1.1)}
LENGTH = {"7ft": 1.9812, "8ft": 2.2352, "9ft": 2.54}
WIDTH = {"7ft": 0.9906, "8ft": 1.1176, "9ft": 1.27}

CHUTE_MS = (100, 270)  # drop delay after the ball crosses into the pocket
BLOCKED_MS = (30, 50)  # beam blocked by one ball
RAIL_THRESHOLD = 200  # firmware/config.json's rail threshold (12-bit ADC)
RAIL_REFRACTORY_US = 50_000
RAIL_GAIN = 700.0  # ADC counts per m/s of the ball's change of velocity, at the piezo
RAIL_ATTENUATION_M = 0.8  # amplitude falls as 1 / (1 + distance / this) along the rail
# A hard hit is heard through the frame by the other rails' piezos, the nearest (the rails
# that share a pocket with it) louder: the fraction of its amplitude each one gets.
CROSSTALK_NEAR = 0.10
CROSSTALK_FAR = 0.03
NEAR = {
    tuple(sorted(p))
    for p in (("H", "LH"), ("H", "RH"), ("F", "LF"), ("F", "RF"), ("LH", "LF"), ("RH", "RF"))
}
STRIKE_THRESHOLD = 200
STRIKE_REFRACTORY_US = 30_000
CLICK_GAIN = 160.0  # ADC counts per m/s of a ball-ball contact (a cue strike is louder)


def table_hardware(seed: int, table: str) -> dict:
    """The fixed properties of one corpus table: each rail's gain (mounting), each pocket's
    chute delay and true cue-return delay."""
    rng = random.Random(f"hw-{seed}-{table}")
    scale = LENGTH[table] / LENGTH["9ft"]
    return {
        "rail_gain": {r: rng.uniform(0.75, 1.25) for r in RAILS},
        "chute_ms": {p: rng.uniform(130, 240) for p in POCKETS},
        "return_ms": {p: rng.uniform(*RETURN_9FT[p]) * 1000 * scale for p in POCKETS},
    }


def _piezo_xy(rail: str, table: str) -> tuple[float, float]:
    length, w = LENGTH[table], WIDTH[table]
    return {
        "H": (w / 2, 0.0),
        "F": (w / 2, length),
        "LH": (0.0, length / 4),
        "LF": (0.0, 3 * length / 4),
        "RH": (w, length / 4),
        "RF": (w, 3 * length / 4),
    }[rail]


def truth_of(trace: dict) -> dict:
    """The shot's ground truth from its physics: pocketed balls (ball, pocket, in order),
    scratch, the object balls that reached a rail and stayed on the table, the cue ball to a
    rail, and any rail at all."""
    ev = trace["events"]
    pocketed = [(e["ball"], e["pocket"]) for e in ev if e["type"] == "pocket"]
    gone = {b for b, _ in pocketed}
    railed = {e["ball"] for e in ev if e["type"] == "cushion"}
    return {
        "pocketed": pocketed,
        "scratch": any(b == 0 for b, _ in pocketed),
        "object_balls_to_rail": len({b for b in railed if b != 0 and b not in gone}),
        "object_balls_to_rail_any": len({b for b in railed if b != 0}),
        "cue_ball_to_rail": 0 in railed,
        "rail": bool(railed),
    }


def sense(trace: dict, t0_us: int, hw: dict, rng: random.Random, table: str) -> list[dict]:
    """The node's events for one shot whose strike is at node time `t0_us`: dicts with
    t (µs), kind and the kind's fields, plus `ready` (µs: when the node can send it)."""
    out: list[dict] = []
    last_strike = None
    last_rail: dict = {}
    chute_free: dict = {}  # pocket -> when its beam is clear again (balls queue in the chute)
    for e in sorted(trace["events"], key=lambda e: e["t"]):
        t = t0_us + round(e["t"] * 1e6)
        typ = e["type"]
        if typ in ("strike", "ball"):
            if typ == "strike":
                amp = (350 + 450 * e["speed"]) * math.exp(rng.gauss(0, 0.1))
            else:
                amp = CLICK_GAIN * e["dv"] * math.exp(rng.gauss(0, 0.25))
            amp = min(4095, round(amp))
            if amp < STRIKE_THRESHOLD:
                continue
            if last_strike is not None and t - last_strike < STRIKE_REFRACTORY_US:
                continue
            last_strike = t
            out.append({"t": t, "kind": "strike", "amp": amp, "ready": t + 1000})
        elif typ == "cushion":
            rail = e["rail"]
            px, py = _piezo_xy(rail, table)
            d = math.hypot(e["x"] - px, e["y"] - py)
            raw = RAIL_GAIN * e["dv"] * hw["rail_gain"][rail] / (1 + d / RAIL_ATTENUATION_M)
            raw *= math.exp(rng.gauss(0, 0.15))
            heard = [(rail, t, raw, e["ball"])]
            for other in RAILS:
                if other != rail:
                    k = CROSSTALK_NEAR if tuple(sorted((rail, other))) in NEAR else CROSSTALK_FAR
                    echo = raw * k * math.exp(rng.gauss(0, 0.2))
                    heard.append((other, t + rng.randint(300, 900), echo, -1))
            for r, tr, a, ball in heard:
                amp = min(4095, round(a))
                if amp < RAIL_THRESHOLD:
                    continue  # a soft touch (or a faint echo): below the channel's threshold
                prev = last_rail.get(r)
                if prev is not None and tr - prev < RAIL_REFRACTORY_US:
                    continue  # within the refractory time of the last reported hit
                last_rail[r] = tr
                ev = {"t": tr, "kind": "rail", "rail": r, "amp": amp, "ready": tr + 1000}
                out.append(dict(ev, ball=ball))
        elif typ == "pocket":
            p = e["pocket"]
            chute = hw["chute_ms"][p] + rng.uniform(-25, 25)
            chute = min(max(chute, CHUTE_MS[0]), CHUTE_MS[1])
            td = max(t + round(chute * 1000), chute_free.get(p, 0))
            dur = round(rng.uniform(*BLOCKED_MS) * 1000)
            chute_free[p] = td + dur + 10_000
            out.append(
                {
                    "t": td,
                    "kind": "drop",
                    "pocket": p,
                    "dur": dur,
                    "ready": td + dur,
                    "ball": e["ball"],
                }
            )
            if e["ball"] == 0:
                ret = hw["return_ms"][p] * (1 + rng.uniform(-0.04, 0.04))
                tc = td + round(ret * 1000)
                out.append({"t": tc, "kind": "cue", "ready": tc + 30_000})
    return out


# -- ball identity (hardware/colour.md) --------------------------------------------------
# The colour station sits on the return just past the cue-ball detector: every pocketed ball
# rolls past it, the cue ball STATION_AFTER_CUE_MS after its detector, the others after the
# same pocket's return delay (the return is one track), each ball with its own spread.
STATION_AFTER_CUE_MS = 40
RETURN_SPREAD = 0.04
BALL_PASS_US = 150_000  # a ball at the slowest return speed clears the gate in this


def _firmware():
    """rbnode (the node firmware's colour driver and its simulated station) importable."""
    import sys
    from pathlib import Path

    fw = str(Path(__file__).resolve().parents[2] / "firmware")
    if fw not in sys.path:
        sys.path.insert(0, fw)
    from rbnode.hw import simcolour

    return simcolour


def colour_reads(evs: list[dict], hw: dict, rng: random.Random, rgb) -> list[dict]:
    """The colour station's `ball` events for one table's events (drops with their true
    `ball`, cue events): each pocketed ball reaches the station after its return delay,
    queues behind a ball still in the gate (touching it), and the firmware's driver reads it
    from the simulated sensors (rbnode.hw.simcolour.read_balls: this table's ball colours
    `rgb`, ambient light, noise). Each read keeps `true_ball` and the drop's `shot`."""
    sc = _firmware()
    cue_t = sorted(e["t"] for e in evs if e["kind"] == "cue")
    arrivals = []
    for e in evs:
        if e["kind"] != "drop":
            continue
        if e["ball"] == 0:
            later = [t for t in cue_t if t >= e["t"]]
            t = (later[0] if later else e["t"]) + STATION_AFTER_CUE_MS * 1000
        else:
            ret = hw["return_ms"][e["pocket"]] * (1 + rng.uniform(-RETURN_SPREAD, RETURN_SPREAD))
            t = e["t"] + round(ret * 1000)
        arrivals.append((t, e["ball"], e["shot"]))
    arrivals.sort()
    out: list[dict] = []
    free = 0  # when the gate is clear of the ball before
    group: list[tuple[int, int, int]] = []

    def read(group):
        balls = [b for _, b, _ in group]
        got = sc.read_balls(balls, rng.random, rgb=rgb, touching=set(range(1, len(group))))
        for (t, b, shot), (_, ball, conf) in zip(group, got, strict=False):
            out.append(
                {"t": t, "kind": "ball", "ball": ball, "conf": conf, "ready": t + BALL_PASS_US,
                 "true_ball": b, "shot": shot}
            )  # fmt: skip

    for t, b, shot in arrivals:
        if t < free and group:
            t = free  # behind the ball in the gate: touching it
            group.append((t, b, shot))
        else:
            if group:
                read(group)
            group = [(t, b, shot)]
        free = t + BALL_PASS_US // 2
    if group:
        read(group)
    return out


def table_colours(seed: int, table: str):
    """One corpus table's ball set and light, as `railbird calibrate` learns them."""
    sc = _firmware()
    return sc.table_colours(random.Random(f"colours-{seed}-{table}").random)
