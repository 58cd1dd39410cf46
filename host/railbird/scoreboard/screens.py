"""Game state -> scoreboard frames (protocol/SCOREBOARD.md "Screens").

Works on the state object of protocol/REFEREE.md as a dict. Players are indices 0 and 1,
shown as A and B. Field names the rules engine may use under either of two names are read
under both (`consecutive_fouls`/`fouls`, `goal`/`race_to`/`target`).
"""

from __future__ import annotations

import re

GAME_CODES = {"10-ball": "10", "9-ball": "9", "8-ball": "8", "14.1": "141"}
WHO = ("a", "b")


def _first(state: dict, *names):
    for n in names:
        if state.get(n) is not None:
            return state[n]
    return None


def _pair(v):
    if isinstance(v, (list, tuple)) and len(v) == 2:
        return v
    return None


def _who(i):
    return WHO[i] if i in (0, 1) else None


def screen_fields(game: str, state: dict) -> dict:
    """The SCREEN frame fields for a table's state."""
    f: dict = {"g": GAME_CODES.get(game, "10")}
    scores = _pair(state.get("scores")) or (0, 0)
    f["a"], f["b"] = int(scores[0]), int(scores[1])
    f["t"] = _who(state.get("at_table"))
    fouls = _pair(_first(state, "consecutive_fouls", "fouls"))
    if fouls:
        f["fa"], f["fb"] = int(fouls[0]), int(fouls[1])
    f["w"] = _who(state.get("match_winner"))
    if f["g"] == "141":
        run = _first(state, "run")
        pr = _pair(run)
        if pr is not None:
            at = state.get("at_table")
            run = pr[at] if at in (0, 1) else max(pr)
        if run is not None:
            f["run"] = int(run)
        hr = _first(state, "high_run")
        phr = _pair(hr)
        if phr is not None:
            f["ha"], f["hb"] = int(phr[0]), int(phr[1])
        elif hr is not None:
            f["ha"] = int(hr)
    else:
        race = _first(state, "race_to", "goal")
        if race is None and isinstance(state.get("match"), dict):
            race = state["match"].get("race_to")
        if race is not None:
            f["r"] = int(race)
        f["k"] = _who(state.get("breaker"))
        if state.get("inning") is not None:
            f["inn"] = int(state["inning"])
    return {k: v for k, v in f.items() if v is not None}


def board_announcement(announcements: list[dict], state: dict | None = None):
    """The one announcement the board shows for an input: (row2, row3, ms) or None.
    A win shows alone; otherwise the two most important of FOUL, RERACK, SPOT n,
    PUSH OUT, SAFETY (a foul with ball in hand and nothing else adds IN HAND)."""
    st = state or {}
    foul = hand = rerack = push = safety = False
    spots: list[str] = []
    win = False
    for a in announcements or ():
        text = str(a.get("text", ""))
        low = text.lower()
        level = a.get("level", "info")
        if level == "win" or "wins the match" in low or "wins the rack" in low:
            win = True
        if level == "foul" or low.startswith("foul"):
            foul = True
            hand = hand or "ball in hand" in low
        if "rerack" in low or "re-rack" in low:
            rerack = True
        if "spot" in low:
            for b in re.findall(r"\b(1[0-5]|[1-9])\b", text):
                if b not in spots:
                    spots.append(b)
            if not spots:
                spots.append("")
        push = push or "push" in low
        safety = safety or "safety" in low
    if win:
        if st.get("match_winner") in (0, 1):
            return ("MATCH", f"{WHO[st['match_winner']].upper()} WINS", 10000)
        if st.get("rack_winner") in (0, 1):
            return (f"RACK {WHO[st['rack_winner']].upper()}", "", 6000)
        return ("RACK", "", 6000)
    items = []
    if foul:
        items.append("FOUL")
    if rerack:
        items.append("RERACK")
    if spots:
        items.append(("SPOT " + " ".join(b for b in spots if b)).strip()[:8])
    if push:
        items.append("PUSH OUT")
    if safety:
        items.append("SAFETY")
    if foul and hand and len(items) == 1:
        items.append("IN HAND")
    if not items:
        return None
    ms = 6000 if (rerack or spots) else 4000
    return (items[0], items[1] if len(items) > 1 else "", ms)
