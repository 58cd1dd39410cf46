"""Game state -> scoreboard frames (protocol/SCOREBOARD.md "Screens").

Works on the state object of protocol/REFEREE.md as a dict. Players are indices 0 and 1,
shown as A and B. Field names the rules engine may use under either of two names are read
under both (`consecutive_fouls`/`fouls`, `goal`/`race_to`/`target`).
"""

from __future__ import annotations

import re

from railbird.rules.engine import GAMES

GAME_CODES = {name: g.code for name, g in GAMES.items()}  # the rules classes' `code`
WHO = ("a", "b")


def _first(state: dict, *names):
    for n in names:
        if state.get(n) is not None:
            return state[n]
    return None


def _fen_fields(fen) -> dict:
    """`k=v` words of the canonical one-line form (rules/fen.py), e.g. goal=5."""
    out = {}
    for word in str(fen or "").split():
        k, eq, v = word.partition("=")
        if eq:
            out[k] = v
    return out


def _pair(state: dict, v):
    """A per-player value as (A, B): a pair, or a dict keyed by player name."""
    if isinstance(v, (list, tuple)) and len(v) == 2:
        return tuple(v)
    if isinstance(v, dict):
        players = state.get("players") or list(v)
        if len(players) == 2 and all(p in v for p in players):
            return (v[players[0]], v[players[1]])
    return None


def player_index(state: dict, who):
    """0, 1 or None for a player given as index or name."""
    if who in (0, 1) and not isinstance(who, bool):
        return who
    players = state.get("players") or []
    if isinstance(who, str) and who in players:
        return players.index(who)
    return None


def _who(state: dict, who):
    i = player_index(state, who)
    return None if i is None else WHO[i]


# The shot clock's status on the board (SCREEN field `ss`, protocol/SCOREBOARD.md)
CLOCK_CODES = {"running": "r", "held": "h", "waiting": "p", "expired": "x"}


def clock_fields(clock: dict | None, now_us: int | None) -> dict:
    """The shot clock's SCREEN fields: `sc` whole seconds left (rounded up), `ss` its status
    (`r` running, `w` running in the warning, `h` held, `p` waiting for the cue ball or
    rack, `x` ran out); none when nothing is timed. `now_us` is table time now (the host's
    monotonic clock); without it the count is as of the state's `at`."""
    if not isinstance(clock, dict) or clock.get("status") not in CLOCK_CODES:
        return {}
    code = CLOCK_CODES[clock["status"]]
    left = clock.get("remaining_us")
    if code == "r" and isinstance(clock.get("deadline"), int) and now_us is not None:
        left = clock["deadline"] - now_us
    left = max(0, left if isinstance(left, int) else 0)
    if code == "r" and left <= int(clock.get("warning_us") or 0):
        code = "w"
    return {"sc": min(999, -(-left // 1_000_000)), "ss": code}


def screen_fields(
    game: str, state: dict, fen: str | None = None, now_us: int | None = None
) -> dict:
    """The SCREEN frame fields for a table's state (`now_us`: table time now, for the shot
    clock's seconds)."""
    ff = _fen_fields(fen or state.get("fen"))
    f: dict = {"g": GAME_CODES.get(game or state.get("game"), "10")}
    scores = _pair(state, state.get("scores")) or (0, 0)
    f["a"], f["b"] = int(scores[0]), int(scores[1])
    f["t"] = _who(state, state.get("at_table"))
    fouls = _pair(state, _first(state, "consecutive_fouls", "fouls"))
    if fouls:
        f["fa"], f["fb"] = int(fouls[0]), int(fouls[1])
    f["w"] = _who(state, state.get("match_winner"))
    # protocol/REFEREE.md §3b: a ruling on the fair default (row 2 PROVISNL) or a shot held
    # for the referee (REF CHCK); a board without these fields ignores them
    if state.get("provisional"):
        f["p"] = 1
    if state.get("awaiting") == "referee_check":
        f["q"] = 1
    if not f["w"]:
        f.update(clock_fields(state.get("shot_clock"), now_us))
    if f["g"] == "141":
        run = state.get("run")
        pr = _pair(state, run)
        if pr is not None:
            at = player_index(state, state.get("at_table"))
            run = pr[at] if at is not None else max(pr)
        if isinstance(run, int):
            f["run"] = run
        phr = _pair(state, state.get("high_run"))
        if phr is not None:
            f["ha"], f["hb"] = int(phr[0]), int(phr[1])
    else:
        race = _first(state, "race_to", "goal")
        if race is None and ff.get("goal", "").isdigit():
            race = int(ff["goal"])
        if race is not None:
            f["r"] = int(race)
        races = _pair(state, state.get("races"))  # a handicapped match: A's race-B's race
        if races is not None:
            f["r"] = f"{int(races[0])}-{int(races[1])}"
        f["k"] = _who(state, state.get("breaker"))
        if state.get("inning") is not None:
            f["inn"] = int(state["inning"])
    return {k: v for k, v in f.items() if v is not None}


def board_announcement(announcements: list[dict], state: dict | None = None):
    # the rack winner is set only by the input that ended the rack (REFEREE.md), so a
    # state with rack_winner announces the win even if no text says so
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
            head = re.split(r"[(;:]", low[low.index("spot") :])[0]
            for b in re.findall(r"\b(1[0-5]|[1-9])\b", head):
                if b not in spots:
                    spots.append(b)
            if not spots:
                spots.append("")
        push = push or "push" in low
        safety = safety or "safety" in low
    mw = _who(st, st.get("match_winner"))
    rw = _who(st, st.get("rack_winner"))
    if mw and (win or rw):
        return ("MATCH", f"{mw.upper()} WINS", 10000)
    if rw:
        return (f"RACK {rw.upper()}", "", 6000)
    if win:
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
    hand = hand or (bool(st.get("ball_in_hand")) and not st.get("breaking"))
    if foul and hand and len(items) == 1:
        items.append("IN HAND")
    if not items:
        return None
    ms = 6000 if (rerack or spots) else 4000
    return (items[0], items[1] if len(items) > 1 else "", ms)
