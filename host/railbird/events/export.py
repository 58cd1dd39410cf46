"""The static export of an event: `event.json` (the public view: bracket, standings,
results, matches in play with live scores) and `index.html`, the same as a page that needs
no script and no server, so it works opened from disk and can be published anywhere (a
file share, any web host) without an inbound connection to the venue.

Each file is written to a temporary file in the same folder and renamed over the old one,
so a reader (or a sync tool) sees the old export or the new one, never half of one. The
event service rewrites both as matches end and as racks are won (`EventDesk`); `railbird
event export --out DIR` writes them once from the journal.

`bracket_html` is the bracket, the matches in play and the standings as an HTML fragment:
the venue board shows the same fragment (one renderer for the board and the export).
"""

from __future__ import annotations

import html
import json
import os
from pathlib import Path
from typing import Any

STAGES = {"R": "Round", "W": "Winners' round", "L": "Losers' round", "GF": "Grand final"}
REFRESH_S = 30  # a published copy reloads itself this often


def round_name(rnd: str) -> str:
    """ "W2" -> "Winners' round 2", "GF1" -> "Grand final", "GF2" -> "Grand final reset"."""
    stage = rnd.rstrip("0123456789")
    n = rnd[len(stage) :]
    if stage == "GF":
        return "Grand final" if n == "1" else "Grand final reset"
    return f"{STAGES.get(stage, stage)} {n}".strip()


def _e(x: object) -> str:
    return html.escape("" if x is None else str(x))


def _seat(m: dict[str, Any], i: int) -> str:
    s = m["seats"][i]
    if s["name"] is not None:
        name = _e(s["name"])
    elif s["bye"]:
        name = '<span class="dim">bye</span>'
    else:
        name = f'<span class="dim">{_e(s["from"] or "to come")}</span>'
    score = ""
    if m.get("live") is not None:
        score = f'<b class="live">{_e(m["live"][i])}</b>'
    elif m["score"] is not None:
        score = f"<b>{_e(m['score'][i])}</b>"
    elif m["winner"] is not None:
        score = "<b>W</b>" if m["winner"] == i else "<b>F</b>"  # a forfeit: no score
    won = ' class="won"' if m["winner"] == i else ""
    return f"<li{won}><span>{name}</span>{score}</li>"


def _match(m: dict[str, Any]) -> str:
    where = f' · <span class="tbl">{_e(m["table"])}</span>' if m["table"] else ""
    state = m["state"].replace("_", " ")
    return (
        f'<div class="bm {_e(m["state"])}" id="m-{_e(m["id"])}" data-state="{_e(m["state"])}">'
        f'<div class="bh">{_e(m["id"])} · {state}{where}</div>'
        f"<ul>{_seat(m, 0)}{_seat(m, 1)}</ul></div>"
    )


def bracket_html(v: dict[str, Any]) -> str:
    """The event as an HTML fragment: in play, up next, the bracket by round, standings."""
    out = [f'<section class="event" id="event" data-complete="{int(v["complete"])}">']
    title = _e(v["name"] or "Event")
    out.append(f'<h2 id="event-name">{title} <small>{_e(v["game"])} · '
               f'{_e(v["format"].replace("_", " "))}</small></h2>')  # fmt: skip
    champ = next((s["name"] for s in v["standings"] if s["place"] == 1), None)
    if v["complete"] and champ:
        out.append(f'<p class="champion" id="champion">Champion: <b>{_e(champ)}</b></p>')
    inplay = [m for m in v["matches"] if m["state"] == "in_play"]
    if inplay:
        rows = "".join(
            f'<li data-table="{_e(m["table"])}"><b>{_e(m["table"])}</b> '
            f"{_e(m['seats'][0]['name'])} v {_e(m['seats'][1]['name'])} · "
            f"{_e(round_name(m['round']))}"
            + (f" · {m['live'][0]}\u2013{m['live'][1]}" if m.get("live") else " · called")
            + "</li>"
            for m in inplay
        )
        out.append(f'<div class="calls"><h3>Now playing</h3><ul id="now-playing">{rows}</ul></div>')
    up = v.get("up_next") or []
    if up:
        rows = "".join(f"<li>{_e(u['match'])}: {_e(' v '.join(u['players']))}</li>" for u in up)
        out.append(f'<div class="calls"><h3>Up next</h3><ul id="up-next">{rows}</ul></div>')
    rounds: dict[str, list[dict[str, Any]]] = {}
    for m in v["matches"]:
        rounds.setdefault(m["round"], []).append(m)
    cols = []
    for rnd, ms in rounds.items():
        if all(m["state"] == "void" for m in ms) and rnd.startswith("GF"):
            continue  # the reset not needed
        cols.append(
            f'<div class="round"><h4>{_e(round_name(rnd))}</h4>{"".join(map(_match, ms))}</div>'
        )
    out.append(f'<div class="bracket" id="bracket">{"".join(cols)}</div>')
    rows = "".join(
        f"<tr><td>{_e(s['place'] or '')}</td><td>{_e(s['name'])}</td><td>{s['won']}</td>"
        f"<td>{s['lost']}</td><td>{s['for']}\u2013{s['against']}</td></tr>"
        for s in v["standings"]
    )
    out.append(
        '<table class="standings" id="standings"><thead><tr><th>Place</th><th>Player</th>'
        f"<th>Won</th><th>Lost</th><th>Score</th></tr></thead><tbody>{rows}</tbody></table>"
    )
    out.append("</section>")
    return "".join(out)


CSS = """
body{font-family:system-ui,sans-serif;margin:1rem;background:#0d1b14;color:#eee}
h2 small{font-weight:normal;color:#9ab}.dim{color:#889}.champion{font-size:1.4rem}
.bracket{display:flex;gap:1rem;overflow-x:auto;align-items:flex-start}
.round{min-width:11rem}.round h4{margin:.2rem 0}
.bm{border:1px solid #3a5;border-radius:6px;margin:.4rem 0;padding:.2rem .4rem}
.bm.in_play{border-color:#fc3}.bm.void,.bm.bye{opacity:.5}
.bm ul{list-style:none;margin:0;padding:0}.bm li{display:flex;justify-content:space-between}
.bm li.won{font-weight:bold}.bh{font-size:.75rem;color:#9ab}.live{color:#fc3}
.standings{border-collapse:collapse;margin-top:1rem}.standings td,.standings th{padding:.2rem .6rem}
"""


def page(v: dict[str, Any]) -> str:
    title = _e(v["name"] or "Event")
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta http-equiv="refresh" content="{REFRESH_S}">'
        f"<title>{title}</title><style>{CSS}</style></head><body>"
        f"{bracket_html(v)}"
        '<p class="dim">Exported by Railbird; <a href="event.json">event.json</a> holds the '
        "same as data.</p></body></html>\n"
    )


def write(out: Path | str, v: dict[str, Any]) -> list[Path]:
    """`event.json` and `index.html` of the view `v` into `out` (made if missing), each
    written to a temporary file and renamed."""
    d = Path(out)
    d.mkdir(parents=True, exist_ok=True)
    files = [
        (d / "event.json", json.dumps(v, indent=1, sort_keys=True, ensure_ascii=False) + "\n"),
        (d / "index.html", page(v)),
    ]
    for path, text in files:
        tmp = path.with_name(f".{path.name}.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    return [p for p, _ in files]
