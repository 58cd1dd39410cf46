"""Summaries and replay checks of a daemon journal (the demo's record).

`summary(path)` reads what the host journalled per table: shots, states, scores, fouls.
`replay_check(path)` runs every journalled input through a fresh pipeline (as the daemon does
at start-up and `railbird replay` does) and compares the shots and the game states it
produces with the journalled ones, record for record.
"""

from __future__ import annotations

import json
import sqlite3


def _ro(path):
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def summary(path) -> dict:
    db = _ro(path)
    try:
        out = {}
        tables = sorted(
            {r[0] for r in db.execute("SELECT DISTINCT tbl FROM shots")}
            | {r[0] for r in db.execute("SELECT DISTINCT tbl FROM states")}
        )
        for t in tables:
            shots = [
                json.loads(s)
                for (s,) in db.execute("SELECT shot FROM shots WHERE tbl=? ORDER BY n", (t,))
            ]
            states = [
                (json.loads(s), fen, json.loads(a or "[]"), cause)
                for s, fen, a, cause in db.execute(
                    "SELECT state, fen, announcements, cause FROM states WHERE tbl=? ORDER BY id",
                    (t,),
                )
            ]
            game = states[-1][0].get("game") if states else None
            score_changes = 0
            prev = None
            fouls = 0
            racks_won = 0
            matches_won = 0
            for st, _fen, anns, cause in states:
                sc = st.get("scores")
                if prev is not None and sc != prev:
                    score_changes += 1
                prev = sc
                fouls += sum(1 for a in anns if str(a.get("text", "")).startswith("Foul"))
                if st.get("rack_winner"):
                    racks_won += 1
                if st.get("match_winner") and cause != "match":
                    matches_won += 1
            balls = sum(1 for s in shots for p in s.get("pocketed", []) if p.get("ball") != 0)
            last = states[-1][0] if states else {}
            out[t] = {
                "game": game,
                "shots": len(shots),
                "states": len(states),
                "score_changes": score_changes,
                "scores": last.get("scores"),
                "rack": last.get("rack"),
                "racks_won": racks_won,
                "matches_won": matches_won,
                "balls_pocketed": balls,
                "fouls": fouls,
                "rules_errors": db.execute(
                    "SELECT COUNT(*) FROM rules_errors WHERE tbl=?", (t,)
                ).fetchone()[0],
                "referee_inputs": db.execute(
                    "SELECT COUNT(*) FROM referee WHERE tbl=?", (t,)
                ).fetchone()[0],
                "referee_refused": db.execute(
                    "SELECT COUNT(*) FROM referee WHERE tbl=? AND ok=0", (t,)
                ).fetchone()[0],
                "fen": states[-1][1] if states else None,
            }
        return out
    finally:
        db.close()


def progressed(s: dict) -> bool:
    """A table progressed: shots were assembled and its score changed."""
    return s.get("shots", 0) > 0 and s.get("score_changes", 0) > 0


def replay_check(path) -> dict:
    """Replay the journal's inputs through a fresh pipeline; compare shots and states."""
    from railbird.core.pipeline import Pipeline, shot_json
    from railbird.core.records import ShotRecord, StateRecord
    from railbird.daemon.journal import Journal
    from railbird.daemon.offline import journal_config
    from railbird.daemon.replay import rebuild

    j = Journal(path)
    try:
        shots, states = [], []

        def collect(records):
            for r in records:
                if isinstance(r, ShotRecord):
                    shots.append((r.venue, r.table, shot_json(r.shot)))
                elif isinstance(r, StateRecord):
                    states.append((r.venue, r.table, _canon(r.state), r.fen))

        rebuild(Pipeline(journal_config(j)), j, collect)
        stored_shots = sorted(
            (v, t, shot_json(json.loads(s)))
            for v, t, s in j.db.execute("SELECT venue, tbl, shot FROM shots")
        )
        stored_states = [
            (v, t, _canon(json.loads(s)), f)
            for v, t, s, f in j.db.execute("SELECT venue, tbl, state, fen FROM states ORDER BY id")
        ]
        return {
            "shots": len(shots),
            "states": len(states),
            "stored_shots": len(stored_shots),
            "stored_states": len(stored_states),
            "shots_equal": sorted(shots) == stored_shots,
            "states_equal": states == stored_states,
        }
    finally:
        j.close()


def _canon(d) -> str:
    return json.dumps(d, sort_keys=True, separators=(",", ":"))
