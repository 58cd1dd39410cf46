"""Scripted scenarios for `railbird sim --scenario FILE` (format: docs/demo.md).

A scenario is a JSON object:

    {
      "match": {"game": "10-ball", "players": ["Ann", "Bob"], "race_to": 3},
      "steps": [
        {"referee": {"type": "lag", "winner": "Ann"}},
        {"shot": {"kind": "break", "pots": [[1, "FR"], [2, "SL"]]}},
        {"referee": {"type": "call", "ball": 3, "pocket": "HL"}},
        {"shot": {"kind": "pot", "pots": [[3, "HL"]], "rails": 2}, "think_s": 1.0},
        {"shot": {"kind": "miss", "scratch": "FR"}},
        {"edges": [{"t_us": 0, "kind": "rail", "where": "H", "value": 900},
                   {"t_us": 600000, "kind": "drop", "where": "HL", "value": 40000}]},
        {"expect": {"scores": {"Ann": 0, "Bob": 0}, "at_table": "Bob"}}
      ]
    }

Steps, in order:
- `referee`: one referee input (protocol/REFEREE.md), sent as the referee console would.
  A list of inputs is accepted too.
- `shot`: a shot plan (railbird.sim.physics.ShotPlan fields: `kind` break | pot | miss |
  safety | push_out | safe_break | weak_break, `pots` [[ball, pocket], ...], `scratch`
  pocket or null, `rails` hits after contact, `power` 0..1); its edges get realistic timing
  from the run's seed. Balls are what the script means; the host only senses pockets (see
  railbird.sim.player for how identities are presumed).
- `edges`: exact sensor edges (µs from the strike): `kind` rail (`value` = amplitude),
  drop (`value` = beam blocked µs) or cue (cue-ball detector).
- `expect`: keys of the game state (the rules engine's output dict) that must hold now;
  a mismatch is reported and makes `railbird sim` exit 1.
- Any step may carry `think_s` (seconds before it; default 0.8 for shots, 0 otherwise).

`match` may be omitted when the command line gives the game. After the last step the run
ends, or goes on with random play from the seed (`railbird sim --then-random`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from .physics import Edge, ShotPlan
from .player import Turn

PLAN_FIELDS = {
    "kind",
    "pots",
    "scratch",
    "rails",
    "power",
    "text",
    "first_contact",
    "rail_after_contact",
    "fouls",
}
STEP_KEYS = {"referee", "shot", "edges", "expect", "think_s", "comment"}


class ScenarioError(ValueError):
    pass


@dataclass
class ScriptTurn(Turn):
    edges: list | None = None
    expect: dict | None = None


@dataclass
class Scenario:
    match: dict | None
    steps: list = field(default_factory=list)

    def turns(self):
        yield from self.steps


def _plan(d: dict, where: str) -> ShotPlan:
    if not isinstance(d, dict):
        raise ScenarioError(f"{where}: shot must be an object")
    extra = set(d) - PLAN_FIELDS
    if extra:
        raise ScenarioError(f"{where}: unknown shot field(s) {', '.join(sorted(extra))}")
    kind = d.get("kind", "pot")
    if kind not in ("break", "pot", "miss", "safety", "push_out", "safe_break", "weak_break"):
        raise ScenarioError(f"{where}: unknown shot kind {kind!r}")
    pots = []
    for p in d.get("pots", []):
        if not (isinstance(p, (list, tuple)) and len(p) == 2):
            raise ScenarioError(f"{where}: pots are [ball, pocket] pairs")
        pots.append((p[0], p[1]))
    fouls = d.get("fouls", [])
    if not (isinstance(fouls, list) and all(isinstance(f, str) for f in fouls)):
        raise ScenarioError(f"{where}: fouls is a list of rule numbers")
    return ShotPlan(
        kind,
        pots,
        d.get("scratch"),
        int(d.get("rails", 2)),
        float(d.get("power", 0.5)),
        d.get("text", ""),
        d.get("first_contact"),
        d.get("rail_after_contact"),
        list(fouls),
    )


def _edges(lst, where: str) -> list:
    out = []
    if not isinstance(lst, list) or not lst:
        raise ScenarioError(f"{where}: edges must be a non-empty list")
    for e in lst:
        try:
            out.append(Edge(int(e["t_us"]), e["kind"], e.get("where"), int(e["value"])))
        except (KeyError, TypeError, ValueError) as x:
            raise ScenarioError(f"{where}: bad edge {e!r}: {x}") from None
        if out[-1].kind not in ("rail", "drop", "cue"):
            raise ScenarioError(f"{where}: edge kind must be rail, drop or cue")
    out.sort(key=lambda e: e.t_us)
    return out


def parse(d: dict) -> Scenario:
    if not isinstance(d, dict) or not isinstance(d.get("steps"), list):
        raise ScenarioError("a scenario is an object with a list of steps")
    match = d.get("match")
    if match is not None:
        match = dict(match)
        match.setdefault("type", "match")
    steps = []
    for i, s in enumerate(d["steps"], 1):
        where = f"step {i}"
        if not isinstance(s, dict):
            raise ScenarioError(f"{where}: a step is an object")
        extra = set(s) - STEP_KEYS
        if extra:
            raise ScenarioError(f"{where}: unknown key(s) {', '.join(sorted(extra))}")
        think = float(s.get("think_s", 0.8 if ("shot" in s or "edges" in s) else 0.0))
        inputs = s.get("referee", [])
        if isinstance(inputs, dict):
            inputs = [inputs]
        if not all(isinstance(x, dict) and "type" in x for x in inputs):
            raise ScenarioError(f"{where}: referee inputs are objects with a type")
        plan = _plan(s["shot"], where) if "shot" in s else None
        edges = _edges(s["edges"], where) if "edges" in s else None
        expect = s.get("expect")
        if expect is not None and not isinstance(expect, dict):
            raise ScenarioError(f"{where}: expect is an object")
        if expect is not None and (inputs or plan or edges):
            raise ScenarioError(f"{where}: expect stands alone in its step")
        if not (inputs or plan or edges or expect is not None):
            raise ScenarioError(f"{where}: nothing to do")
        steps.append(ScriptTurn(list(inputs), plan, think, s.get("comment", ""), edges, expect))
    return Scenario(match, steps)


def load(path) -> Scenario:
    with open(path) as f:
        try:
            d = json.load(f)
        except ValueError as e:
            raise ScenarioError(f"{path}: not JSON: {e}") from None
    return parse(d)
