"""Scoring: the shots `railbird assemble` made from the corpus against the ground truth.
Pure (no pooltool): it imports railbird's game layer (railbird.core.game) to rule the breaks
as the daemon does, and nothing else of the project.

Figures (docs/performance.md, "Sensing accuracy"):
- segmentation: a truth shot is segmented right when exactly one assembled shot holds all its
  sensed events and no event of another shot; a shot with no sensed event at all (a soft
  safety without the strike channel, or with its strike missed) is not seen, so it is wrong
  (`segmentation_seen` leaves those out). A wrong one is counted
  as split (its events in more than one assembled shot, or outside any) and/or merged (an
  assembled shot holding its events holds another shot's too). Counting the strike (the
  strike channel on) every stroke has a sensed event; `start_at_strike` also asks that the
  shot starts at its strike.
- pocketed set exact: the assembled shot holding the truth shot's first sensed event has the
  same pockets, with the cue ball in the same pocket (a cue event with no drop is a miss);
- scratch: the truth's scratch (the cue ball pocketed) equals the sensed one (a drop paired
  with the cue detector, or a cue event with no drop);
- ball number exact: of the truly pocketed balls, those the shot names right (the number
  in its pocket, from the colour station's reads, or the cue ball from the cue detector);
  the others are presumed (no number) or wrong;
- break rulings: each break is ruled twice on a fresh game of its kind (10-ball, 14.1)
  right after the lag: once from the assembled shot through `shot_input`, as the daemon
  does, once from the true facts. Wrong = legal where the truth is a foul or the other way
  round; flagged = the ruling is provisional (no referee at the table) or held for the
  referee (with one).
"""

from __future__ import annotations

import bisect
from collections import Counter

GAMES = {
    "break10": {"type": "match", "game": "10-ball", "players": ["A", "B"], "race_to": 5},
    "break15": {"type": "match", "game": "14.1", "players": ["A", "B"], "target": 100},
    # the break model's training breaks only (breaks.py); the bench's corpus has none
    "break9": {"type": "match", "game": "9-ball", "players": ["A", "B"], "race_to": 5},
    "break8": {"type": "match", "game": "8-ball", "players": ["A", "B"], "race_to": 5},
}


def _map_events(shots: list[dict]):
    """-> function(t) -> index of the assembled shot whose [start, end] holds t, or None."""
    starts = [s["start"] for s in shots]

    def find(t):
        i = bisect.bisect_right(starts, t) - 1
        if i >= 0 and shots[i]["start"] <= t <= shots[i]["end"]:
            return i
        return None

    return find


def sensed_pocketed(shot: dict | None) -> Counter:
    if shot is None:
        return Counter()
    c = Counter((p["pocket"], p.get("ball") == 0) for p in shot["pocketed"])
    for _ in shot.get("cue_unpaired") or ():
        c[("?", True)] += 1
    return c


def true_pocketed(truth: dict) -> Counter:
    return Counter((p, b == 0) for b, p in truth["pocketed"])


def _lagged(game):
    ok, res = game.feed({"type": "lag", "winner": "A", "breaker": "A"})
    if not ok:
        raise RuntimeError(f"lag refused: {res.get('error')}")
    return res["state"]


def _break_outcome(res: dict) -> dict:
    """The ruling of a break from the game's answer: the fouls it penalised ("Foul by
    <player>: <foul>"; none: a legal break) and whether it is flagged (provisional, or held
    for the referee's check)."""
    st = res["state"]
    texts = [str(a.get("text", "")) for a in res.get("announcements") or ()]
    fouls = sorted({t.split(": ", 1)[1] for t in texts if t.startswith("Foul by ") and ": " in t})
    held = st.get("awaiting") == "referee_check"
    return {
        "legal": not fouls and not held,
        "fouls": fouls,
        "flagged": bool(st.get("provisional")) or held,
        "held": held,
        "rulings": texts,
    }


def rule_break(kind: str, shot: dict | None, referee: bool = False) -> dict:
    """The daemon's ruling of an assembled break shot (None: no shot was assembled)."""
    from railbird.core.game import Game, shot_input

    match = dict(GAMES[kind])
    if referee:
        match["options"] = {"referee": True}
    g = Game(match)
    st = _lagged(g)
    if shot is None:
        return {
            "legal": True,
            "fouls": [],
            "flagged": False,
            "rulings": ["no shot"],
            "missing": True,
        }
    ok, res = g.feed(shot_input(shot, "warn", st))
    if not ok:
        return {"legal": None, "flagged": False, "rulings": [res.get("error")], "error": True}
    return _break_outcome(res)


def rule_truth(kind: str, truth: dict) -> dict:
    """The ruling of the same break from its true facts (all certain)."""
    from railbird.core.game import Game

    g = Game(dict(GAMES[kind]))
    _lagged(g)
    inp = {
        "type": "shot",
        "pocketed": [{"ball": b, "pocket": p} for b, p in truth["pocketed"]],
        "object_balls_to_rail": truth["object_balls_to_rail"],
        "cue_ball_to_rail": truth["cue_ball_to_rail"],
        "rail_after_contact": truth["rail"],
    }
    ok, res = g.feed(inp)
    if not ok:
        return {"legal": None, "flagged": False, "rulings": [res.get("error")], "error": True}
    return _break_outcome(res)


def ball_identity(truth: dict, shot: dict | None) -> Counter:
    """Ball identity on one shot: of its truly pocketed balls, how many the assembled shot
    names right (the same number in the same pocket), how many it leaves presumed (no
    number: the rules presume one) and how many it names wrong."""
    want = Counter((b, p) for b, p in truth["pocketed"])  # JSON gives [ball, pocket] lists
    named = Counter()
    presumed = 0
    for p in shot["pocketed"] if shot is not None else ():
        if p.get("ball") is None:
            presumed += 1
        else:
            named[(p["ball"], p["pocket"])] += 1
    exact = sum((want & named).values())
    pocketed = sum(want.values())
    presumed = min(presumed, pocketed - exact)
    return Counter(
        pocketed=pocketed, exact=exact, presumed=presumed, wrong=pocketed - exact - presumed
    )


def score(truth: list[dict], events: dict, shots: list[dict], strike: bool = True) -> dict:
    """Figures of one variant. `events`: {table: [event with `shot` and `t`]} as sent
    (strike events are dropped here when `strike` is off); `shots`: the assembled shots."""
    by_table: dict = {}
    for s in shots:
        by_table.setdefault(s["table"], []).append(s)
    for lst in by_table.values():
        lst.sort(key=lambda s: s["start"])
    finders = {tid: _map_events(lst) for tid, lst in by_table.items()}
    sensed: dict = {}  # truth shot -> [assembled index per sensed event]
    holds: dict = {}  # (table, assembled index) -> Counter of truth shots
    for tid, evs in events.items():
        find = finders.get(tid, lambda t: None)
        for e in evs:
            if e["kind"] == "strike" and not strike:
                continue
            if e["shot"] < 0:
                continue  # a knock (stream.with_knocks): no shot's; phantom shots below
            j = find(e["t"])
            sensed.setdefault(e["shot"], []).append(j)
            if j is not None:
                holds.setdefault((tid, j), Counter())[e["shot"]] += 1
    n = len(truth)
    balls = Counter()  # ball identity: pocketed, named right, presumed, named wrong
    seg_ok = start_ok = pocket_ok = scratch_ok = 0
    split = merged = 0  # truth shots in more than one assembled shot; sharing one
    scratches = scratches_seen = invisible = 0
    lags = []
    rows = []
    breaks = []
    for tr in truth:
        i, tid = tr["shot"], tr["table"]
        js = sensed.get(i, [])
        first = js[0] if js else None
        shot = by_table[tid][first] if first is not None else None
        whole = bool(js) and first is not None and all(j == first for j in js)
        seg = whole and set(holds[(tid, first)]) == {i}
        seg_ok += seg
        split += len(set(js)) > 1 or None in js
        merged += any(j is not None and len(holds[(tid, j)]) > 1 for j in set(js))
        invisible += not js
        if shot is not None:
            lags.append(shot["start"] - tr["strike_t"])
        st_ok = seg and abs(shot["start"] - tr["strike_t"]) <= 5_000
        start_ok += st_ok
        pk = sensed_pocketed(shot) == true_pocketed(tr)
        pocket_ok += pk
        sens_scratch = any(k[1] for k in sensed_pocketed(shot))
        scratch_ok += sens_scratch == tr["scratch"]
        if tr["scratch"]:
            scratches += 1
            scratches_seen += sens_scratch
        rows.append({"shot": i, "kind": tr["kind"], "seg": seg, "pocketed": pk})
        balls.update(ball_identity(tr, shot))
        if tr["kind"] in GAMES:
            ruled = rule_break(tr["kind"], shot)
            want = rule_truth(tr["kind"], tr)
            rails = shot["rails"] if shot else []
            breaks.append(
                {
                    "shot": i,
                    "id": tr["id"],
                    "kind": tr["kind"],
                    "table": tid,
                    "size": tr["size"],
                    "true_object_balls_to_rail": tr["object_balls_to_rail"],
                    "true_object_balls_to_rail_any": tr["object_balls_to_rail_any"],
                    "true_cue_ball_to_rail": tr["cue_ball_to_rail"],
                    "true_pocketed": tr["pocketed"],
                    "rail_events": len(rails),
                    "rails_hit": sorted({r["rail"] for r in rails}),
                    "amps": [r["amp"] for r in rails],
                    "rail_times_ms": [round((r["t"] - tr["strike_t"]) / 1000) for r in rails],
                    "clicks": shot.get("clicks") if shot else None,
                    "estimate": shot.get("object_balls_to_rail") if shot else None,
                    "range": shot.get("object_balls_to_rail_range") if shot else None,
                    "truth_legal": want["legal"],
                    "ruled_legal": ruled["legal"],
                    "flagged": ruled["flagged"],
                    "truth_fouls": want.get("fouls"),
                    "ruled_fouls": ruled.get("fouls"),
                    "wrong": ruled.get("fouls") != want.get("fouls"),
                    "ruling": ruled["rulings"],
                    "truth_ruling": want["rulings"],
                }
            )
    lags.sort()
    wrong_unflagged = sum(1 for b in breaks if b["wrong"] and not b["flagged"])
    wrong_flagged = sum(1 for b in breaks if b["wrong"] and b["flagged"])
    flagged = sum(1 for b in breaks if b["flagged"])
    return {
        "shots": n,
        "assembled": len(shots),
        # assembled shots holding no event of any shot: a knock taken for a stroke
        "phantom_shots": len(shots) - len(holds),
        "segmentation": seg_ok / n if n else 0.0,
        "segmentation_n": seg_ok,
        # of the shots with a sensed event: a stroke the sensors missed entirely (its
        # strike missed, nothing else sensed) no assembler can see
        "segmentation_seen": seg_ok / (n - invisible) if n > invisible else 0.0,
        "segmentation_split": split,
        "segmentation_merged": merged,
        "start_at_strike": start_ok / n if n else 0.0,
        "invisible": invisible,
        "start_lag_ms": {
            "median": lags[len(lags) // 2] / 1000 if lags else None,
            "max": lags[-1] / 1000 if lags else None,
        },
        "pocketed_exact": pocket_ok / n if n else 0.0,
        "pocketed_exact_n": pocket_ok,
        "scratch": scratch_ok / n if n else 0.0,
        "scratch_n": scratch_ok,
        "scratches": scratches,
        "scratches_seen": scratches_seen,
        "balls_pocketed": balls["pocketed"],
        "ball_exact": balls["exact"] / balls["pocketed"] if balls["pocketed"] else 0.0,
        "ball_exact_n": balls["exact"],
        "ball_presumed_n": balls["presumed"],
        "ball_wrong_n": balls["wrong"],
        "breaks": len(breaks),
        "breaks_illegal": sum(1 for b in breaks if b["truth_legal"] is False),
        "breaks_wrong_unflagged": wrong_unflagged,
        "breaks_wrong_flagged": wrong_flagged,
        "breaks_flagged": flagged,
        "breaks_flagged_share": flagged / len(breaks) if breaks else 0.0,
        "breaks_by_game": {
            kind: {
                "breaks": len(rows),
                "illegal": sum(1 for b in rows if b["truth_legal"] is False),
                "wrong_unflagged": sum(1 for b in rows if b["wrong"] and not b["flagged"]),
                "wrong_flagged": sum(1 for b in rows if b["wrong"] and b["flagged"]),
                "flagged": sum(1 for b in rows if b["flagged"]),
            }
            for kind in GAMES
            for rows in [[b for b in breaks if b["kind"] == kind]]
        },
        "break_rows": breaks,
        "rows": rows,
    }
