"""A live terminal scoreboard: one panel per table (score, who is at the table, balls on
the table, fouls, the last shot and the latest rulings), redrawn in place with ANSI.

    board = TermBoard(tables={"t1": "10-ball", "t2": "14.1"})
    board.on_state("t1", state_dict, fen, announcements)   # rules output (REFEREE.md)
    board.on_shot("t1", shot_dict)                          # an assembled shot (SPEC `shot`)
    text = board.render(width=100, color=True)              # the whole screen as a string
    board.render_html()                                     # the same, as an HTML page
    board.sync(watch)          # a railbird.hostwatch.HostWatch: stale host, nodes offline

`JournalFeed(path)` follows a daemon journal (SQLite, read-only) and feeds a board: the demo
uses it, so the board shows exactly what the host journalled. A journal cannot say that the
host died, so the board also follows the host's heartbeat and the nodes' status over MQTT
(`sync`) and then says "SCORES MAY BE STALE" instead of showing the last score as current.
"""

from __future__ import annotations

import html
import json
import re
import sqlite3
from collections import deque

from railbird.rules.engine import GAMES
from railbird.tableorder import natural_sorted

RESET = "\x1b[0m"
BOLD = "\x1b[1m"
DIM = "\x1b[2m"
COLORS = {
    "green": "\x1b[32m",
    "yellow": "\x1b[33m",
    "red": "\x1b[31m",
    "cyan": "\x1b[36m",
    "magenta": "\x1b[35m",
    "white": "\x1b[37m",
}
ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")
PANEL_W = 46
# Rulings not worth a line on the board: the presumed identity of an unidentified ball
# (the simulated referee's calls make it right) and call echoes.
QUIET_RULES = ("8.3",)
IN_HAND = {"anywhere": "anywhere", "kitchen": "behind the head string"}


def _fen_field(fen: str | None, key: str):
    for tok in (fen or "").split():
        if tok.startswith(key + "="):
            return tok[len(key) + 1 :]
    return None


def visible_len(s: str) -> int:
    return len(ANSI_RE.sub("", s))


def three_foul_rule(game: str | None) -> bool:
    """Whether three consecutive fouls cost the rack or points (6.14) in `game`: the rules
    class's `three_fouls` (8-ball has none); a board without a known game warns anyway."""
    g = GAMES.get(game or "")
    return g is None or g.three_fouls


class TablePanel:
    def __init__(self, table: str, game: str | None = None):
        self.table = table
        self.game = game
        self.state: dict | None = None
        self.fen: str | None = None
        self.shots = 0
        self.last_shot: dict | None = None
        self.inplay: dict | None = None  # the shot in play, provisional (MQTT `inplay`)
        self.rulings: deque = deque(maxlen=3)
        self.nodes: dict[str, bool] = {}

    def on_state(self, state: dict, fen: str | None, announcements) -> None:
        self.state = state
        self.fen = fen
        self.game = state.get("game", self.game)
        for a in announcements or []:
            if isinstance(a, dict) and a.get("rule") in QUIET_RULES:
                continue
            text = a.get("text") if isinstance(a, dict) else str(a)
            if text:
                rule = a.get("rule") if isinstance(a, dict) else None
                self.rulings.append((text, rule, (a.get("level") if isinstance(a, dict) else None)))

    def on_shot(self, shot: dict) -> None:
        self.shots = max(self.shots, int(shot.get("n", self.shots + 1)))
        self.last_shot = shot
        self.on_inplay(self.inplay)  # a provisional view of this shot is replaced by it

    def on_inplay(self, inplay: dict | None) -> None:
        """The shot in play (provisional); None, or a shot already closed here: none."""
        closed = -1 if self.last_shot is None else int(self.last_shot.get("n", -1))
        if inplay is not None and int(inplay.get("shot", 0)) <= closed:
            inplay = None
        self.inplay = inplay

    def inplay_line(self) -> str | None:
        """`IN PLAY (provisional): FR HL(cue) · 2 down · +1 pt` (14.1 points), or None."""
        ip = self.inplay
        if ip is None:
            return None
        down = ip.get("pocketed") or []
        obj = sum(1 for p in down if p.get("ball") != 0)
        bits = [
            " ".join(str(p.get("pocket")) + ("(cue)" if p.get("ball") == 0 else "") for p in down)
            or "shot in play",
        ]
        if down:
            bits.append(f"{len(down)} down")
        if self.game == "14.1" and obj:
            bits.append(f"+{obj} pt" + ("s" if obj > 1 else ""))
        return "IN PLAY (provisional): " + " · ".join(bits)

    # -- rendering -------------------------------------------------------------------------
    def lines(self, color: bool = True, width: int = PANEL_W, stale: bool = False) -> list:
        c = (lambda name, s: f"{COLORS[name]}{s}{RESET}") if color else (lambda name, s: s)
        b = (lambda s: f"{BOLD}{s}{RESET}") if color else (lambda s: s)
        d = (lambda s: f"{DIM}{s}{RESET}") if color else (lambda s: s)
        inner = width - 4
        st = self.state
        # the state's goal (REFEREE.md section 2); the FEN's goal= for a state older than it
        goal = (st or {}).get("goal") or _fen_field(self.fen, "goal")
        game = self.game or "no game"
        if game == "14.1":
            head = f"{self.table} · 14.1 continuous" + (f" · to {goal}" if goal else "")
        else:
            races = (st or {}).get("races")  # a handicapped match: a race per player
            names = (st or {}).get("players") or []
            if isinstance(races, dict) and len(names) == 2 and all(n in races for n in names):
                head = f"{self.table} · {game} · race {races[names[0]]}-{races[names[1]]}"
            else:
                head = f"{self.table} · {game}" + (f" · race to {goal}" if goal else "")
        rows = []
        if st is None:
            rows.append(d("waiting for the first state…"))
            if self.shots:
                rows.append(f"shots assembled: {self.shots}")
        else:
            players = st.get("players") or []
            at = st.get("at_table")
            scores = st.get("scores") or {}
            for p in players:
                marker = c("green", "▶ ") if p == at else "  "
                name = b(p) if p == at else p
                score = str(scores.get(p, 0))
                shown = d(score) if stale else b(score)
                extra = ""
                if game == "14.1":
                    run = (st.get("run") or {}).get(p, 0)
                    hr = (st.get("high_run") or {}).get(p, 0)
                    extra = d(f" run {run} high {hr}")
                fouls = (st.get("consecutive_fouls") or {}).get(p, 0)
                if fouls and not st.get("match_winner") and not st.get("ended"):
                    # 6.14: a player on two fouls is warned, where the rule applies
                    warn = fouls >= 2 and three_foul_rule(game)
                    what = f"{fouls} foul{'s' if fouls > 1 else ''}" + (" WARNING" if warn else "")
                    extra += " " + c("red" if warn else "yellow", what)
                left = f"{marker}{name}{extra}"
                pad = inner - visible_len(left) - len(score)
                rows.append(left + " " * max(1, pad) + shown)
            win = st.get("match_winner")
            if st.get("ended") == "abandoned":  # REFEREE.md §9: no result
                rows.append(c("magenta", "NO MATCH: the last match was abandoned"))
            elif win:
                rows.append(c("magenta", f"★ MATCH OVER: {win} wins the match"))
            info = [f"rack {st.get('rack', '?')}", f"inning {st.get('inning', 0)}"]
            if st.get("breaking"):
                info.append("break")
            rows.append(d(" · ".join(info)))
            balls = st.get("balls_on_table") or []
            spot = st.get("to_spot") or []
            rows.append(
                "balls "
                + (" ".join(str(x) for x in balls) or "-")
                + (c("yellow", "  spot " + " ".join(map(str, spot))) if spot else "")
            )
            bits = []
            bih = st.get("ball_in_hand")
            if bih:
                bits.append(c("yellow", f"ball in hand: {IN_HAND.get(bih, bih)}"))
            call = st.get("call")
            if isinstance(call, dict):
                bits.append(f"call {call.get('ball')} in {call.get('pocket')}")
            elif call:
                bits.append(f"call {call}".replace("_", " "))
            if st.get("awaiting"):
                bits.append(c("cyan", "awaiting " + st["awaiting"].replace("_", " ")))
            for prov in st.get("provisional") or ():  # REFEREE.md §3b
                bits.append(c("yellow", f"PROVISIONAL: {prov.get('ruling')} ({prov.get('rule')})"))
            rows.append(" · ".join(bits) if bits else d("—"))
        s = self.last_shot
        if s is not None:
            down = list(s.get("pocketed", []))
            what = (
                ", ".join(
                    (
                        "cue"
                        if p.get("ball") == 0
                        else (str(p["ball"]) if p.get("ball") is not None else "ball")
                    )
                    + f"→{p.get('pocket') or '?'}"
                    for p in down
                )
                or "nothing down"
            )
            dur = (s.get("end", 0) - s.get("start", 0)) / 1e6
            if len(what) > 20:
                what = f"{len(down)} down"
            rows.append(
                f"shot {s.get('n')}: {what} · {len(s.get('rails', []))} rails · {dur:.1f} s"
            )
        else:
            rows.append(d("no shot yet"))
        ip = self.inplay_line()
        if ip is not None:
            rows.append(c("yellow", ip))
        if self.nodes:
            off = natural_sorted(n for n, up in self.nodes.items() if not up)
            if off:
                rows.append(c("red", "SENSORS OFFLINE: " + ", ".join(off)))
            else:
                rows.append(
                    c("green", "sensors online")
                    + d(" (" + ", ".join(natural_sorted(self.nodes)) + ")")
                )
        for text, rule, level in list(self.rulings)[-3:]:
            t = text if not rule else f"{text} [{rule}]"
            t = t if len(t) <= inner else t[: inner - 1] + "…"
            col = (
                "red"
                if (level == "foul" or "Foul" in text)
                else "magenta"
                if ("wins" in text)
                else "white"
            )
            rows.append(c(col, t) if color else t)
        while len(rows) < 10:
            rows.append("")
        top = f"┌─ {b(head)} " + "─" * max(0, width - 5 - len(head)) + "┐"
        out = [top]
        for r in rows:
            if visible_len(r) > inner:
                r = ANSI_RE.sub("", r)[:inner]
            out.append("│ " + r + " " * (inner - visible_len(r)) + " │")
        out.append("└" + "─" * (width - 2) + "┘")
        return out


class TermBoard:
    def __init__(self, tables: dict | None = None, title: str = "Railbird"):
        self.title = title
        self.panels: dict = {}
        self.footer: list = []
        self.stale: str | None = None  # why the scores may be stale (None: the host is live)
        for t, g in (tables or {}).items():
            self.panels[t] = TablePanel(t, g)

    def panel(self, table: str) -> TablePanel:
        if table not in self.panels:
            self.panels[table] = TablePanel(table)
        return self.panels[table]

    def on_state(self, table, state, fen=None, announcements=()) -> None:
        self.panel(table).on_state(state, fen, announcements)

    def on_shot(self, table, shot) -> None:
        self.panel(table).on_shot(shot)

    def on_node(self, table, node, online: bool) -> None:
        self.panel(table).nodes[node] = online

    def on_inplay(self, table, inplay: dict | None) -> None:
        self.panel(table).on_inplay(inplay)

    def sync(self, watch) -> None:
        """Take the host's liveness and the nodes' status from a `hostwatch.Liveness`."""
        self.stale = watch.stale()
        for (table, node), up in watch.nodes().items():
            if table in self.panels:
                self.on_node(table, node, up)
        for table, inplay in watch.inplay().items():
            if table in self.panels:
                self.panels[table].on_inplay(inplay)

    def render(self, width: int = 100, color: bool = True) -> str:
        stale = self.stale is not None
        panels = [self.panels[k].lines(color, stale=stale) for k in natural_sorted(self.panels)]
        per_row = max(1, min(len(panels) or 1, width // (PANEL_W + 1)))
        title = f"{self.title} · live scoreboard"
        out = [(BOLD + title + RESET) if color else title, ""]
        if stale:
            warn = f"!! SCORES MAY BE STALE: {self.stale}"
            out[1] = f"\x1b[41m\x1b[37m{BOLD}{warn}{RESET}" if color else warn
        for i in range(0, len(panels), per_row):
            group = panels[i : i + per_row]
            h = max(len(p) for p in group)
            for r in range(h):
                out.append(" ".join(p[r] if r < len(p) else " " * PANEL_W for p in group))
        if self.footer:
            out.append("")
            out += [(DIM + f + RESET) if color else f for f in self.footer]
        return "\n".join(out)

    def frame(self, width: int = 100) -> str:
        """Clear-and-redraw ANSI frame for a live terminal."""
        return "\x1b[H\x1b[2J" + self.render(width, True) + "\n"

    def render_html(self, width: int = 100) -> str:
        """The board as a standalone HTML page (ANSI colours as spans), for screenshots."""
        text = self.render(width, True)
        css = {
            "1": "font-weight:bold",
            "2": "opacity:.6",
            "31": "color:#ff6b6b",
            "32": "color:#69db7c",
            "33": "color:#ffd43b",
            "35": "color:#e599f7",
            "36": "color:#66d9e8",
            "37": "color:#f1f3f5",
            "41": "background:#c92a2a",
        }
        out, open_spans = [], 0
        pos = 0
        for m in ANSI_RE.finditer(text):
            out.append(html.escape(text[pos : m.start()]))
            code = m.group()[2:-1]
            if code in ("0", ""):
                out.append("</span>" * open_spans)
                open_spans = 0
            elif code in css:
                out.append(f'<span style="{css[code]}">')
                open_spans += 1
            pos = m.end()
        out.append(html.escape(text[pos:]))
        out.append("</span>" * open_spans)
        body = "".join(out)
        return (
            "<!doctype html><html><head><meta charset='utf-8'><style>"
            "body{margin:0;background:#1e1e2e;}pre{margin:0;padding:14px 18px;"
            "color:#dee2e6;font:15px/1.25 'DejaVu Sans Mono','Liberation Mono',monospace;}"
            "</style></head><body><pre>" + body + "</pre></body></html>"
        )


class JournalFeed:
    """Follows a daemon journal read-only and feeds new states and shots to callbacks."""

    def __init__(self, path, venue: str | None = None):
        self.path = str(path)
        self.venue = venue
        self.db = None
        self.last_state = 0
        self.seen_shots: set = set()
        self.last_shot_row = 0

    def _open(self):
        if self.db is None:
            self.db = sqlite3.connect(
                f"file:{self.path}?mode=ro", uri=True, timeout=1.0, check_same_thread=False
            )
        return self.db

    def poll(self, on_state, on_shot) -> int:
        """Feed everything new, in journal order (a shot before the state it caused);
        returns how many records were fed (0 when the journal does not exist yet or is
        busy)."""
        try:
            db = self._open()
            items = []
            for sid, venue, tbl, state, fen, anns, iid in db.execute(
                "SELECT id, venue, tbl, state, fen, announcements, input_id FROM states "
                "WHERE id > ? ORDER BY id",
                (self.last_state,),
            ):
                self.last_state = sid
                if self.venue and venue != self.venue:
                    continue
                items.append((iid or 0, 1, sid, ("state", tbl, state, fen, anns)))
            for rowid, venue, tbl, num, shot, iid in db.execute(
                "SELECT rowid, venue, tbl, n, shot, input_id FROM shots WHERE rowid > ?"
                " ORDER BY rowid",
                (self.last_shot_row,),
            ):
                self.last_shot_row = rowid
                if (venue, tbl, num) in self.seen_shots:
                    continue
                self.seen_shots.add((venue, tbl, num))
                if self.venue and venue != self.venue:
                    continue
                items.append((iid or 0, 0, num, ("shot", tbl, shot)))
        except sqlite3.Error:
            if self.db is not None:
                self.db.close()
                self.db = None
            return 0
        items.sort(key=lambda x: x[:3])
        for *_k, rec in items:
            if rec[0] == "state":
                _, tbl, state, fen, anns = rec
                on_state(tbl, json.loads(state), fen, json.loads(anns or "[]"))
            else:
                on_shot(rec[1], json.loads(rec[2]))
        return len(items)

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None
