"""Wiring diagram (SVG) generated from a pin map: `railbird hw wiring PINMAP -o FILE.svg`.

The board sits on the left with one row per used GPIO; each row's wire runs to the
connector of the sensor it serves, grouped by sensor kind. Pull resistors, pulse counter
units and the interface-board parts are drawn on the wire. Plain SVG 1.1, no scripts or
external fonts, so it renders in browsers and prints.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

from rbproto import codec

from . import pinmap_core

ROW = 30
TOP = 110
BOARD_X, BOARD_W = 40, 300
WIRE_X0 = BOARD_X + BOARD_W
DEV_X, DEV_W = 700, 560
WIDTH = DEV_X + DEV_W + 40

COLORS = {
    "digital-in": "#1f5fbf",
    "analog": "#d9730d",
    "out": "#2e8b3e",
    "io": "#6a1b9a",
    "5v": "#c62828",
    "3v3": "#ad1457",
    "gnd": "#222222",
}

POCKET_HINT = list(codec.POCKETS)
RAIL_HINT = ["H", "F", "LH", "LF", "RH", "RF"]

GROUPS = [
    ("beam", "Pocket beams: IR break-beam receivers, open collector, in the chute"),
    ("cue", "Cue-ball detector in the ball return (magnetic or size gate; HIGH = cue ball)"),
    ("rail", "Rail front-end board: piezo amp, comparator (EDGE), peak hold (AMP)"),
    ("strike", "Strike sensor: slate piezo through the same front end (hardware/strike.md)"),
    (
        "colour",
        "Colour station in the ball return: TCA9548A I2C mux, gate beam (hardware/colour.md)",
    ),
    ("sync", "Sync line (shared between the boards of one table)"),
    ("led", "Status LED"),
]


def _device_label(pm: dict, name: str) -> str:
    if name.startswith("beam"):
        ch = int(name[4:])
        return f"beam ch{ch} OUT (suggested pocket {POCKET_HINT[ch]})"
    if name == "cue":
        return "cue detector OUT"
    if name.startswith("rail"):
        ch, part = name[4:].split(".")
        hint = RAIL_HINT[int(ch)]
        if part == "dump":
            return f"rail ch{ch} DUMP (peak-hold discharge transistor gate)"
        if part == "edge":
            return f"rail ch{ch} EDGE (comparator out, suggested rail {hint})"
        return f"rail ch{ch} AMP (peak hold, 0-2.45 V, suggested rail {hint})"
    if name.startswith("strike"):
        part = name.split(".")[1]
        if part == "dump":
            return "strike DUMP (peak-hold discharge transistor gate)"
        if part == "edge":
            return "strike EDGE (comparator out, slate piezo)"
        return "strike AMP (peak hold, 0-2.45 V)"
    if name == "colour.sda":
        return "TCA9548A SDA (4.7 kOhm pull-up to 3V3 on the mux board)"
    if name == "colour.scl":
        return "TCA9548A SCL (4.7 kOhm pull-up to 3V3 on the mux board)"
    if name == "colour.gate":
        return "colour gate receiver OUT (blocked = the beams' level)"
    if name == "sync":
        return f"sync pulse ({(pm.get('sync') or {}).get('dir', 'in')})"
    if name == "led":
        return "LED anode via 330 Ohm (cathode to GND)"
    return name


def render(pm: dict, title: str | None = None) -> str:
    """The SVG text for a (shape-valid) pin map dict."""
    pinmap_core.validate(pm)
    funcs = pinmap_core.functions(pm)
    order = {g: i for i, (g, _) in enumerate(GROUPS)}

    def group_of(name):
        for g, _ in GROUPS:
            if name.startswith(g):
                return g
        return name

    funcs = sorted(funcs, key=lambda f: (order.get(group_of(f[0]), 99), funcs.index(f)))
    pcnt = {}
    for u in pm.get("pcnt", []):
        for i, name in enumerate(u["inputs"]):
            pcnt[name] = f"PCNT u{u['unit']}" + (f".{i}" if len(u["inputs"]) > 1 else "")

    # Layout: rows, with a gap and a heading between groups.
    rows, y, headings = [], TOP, []
    last = None
    for f in funcs:
        g = group_of(f[0])
        if g != last:
            y += 18
            headings.append((g, y))
            y += 26
            last = g
        rows.append((f, y))
        y += ROW
    power_y = y + 24
    n_notes = min(len(pm.get("notes", [])), 8)
    height = power_y + 3 * ROW + 110 + 16 * n_notes

    out = []
    a = out.append
    a('<?xml version="1.0" encoding="UTF-8"?>')
    a(
        f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="DejaVu Sans, Arial, sans-serif" '
        'font-size="12">'
    )
    a(f"<title>{escape(title or 'Railbird wiring: ' + pm['id'])}</title>")
    a('<rect x="0" y="0" width="100%" height="100%" fill="#ffffff"/>')
    a(
        f'<text x="{BOARD_X}" y="34" font-size="20" font-weight="bold">'
        f"Railbird sensor node wiring: {escape(pm['id'])}</text>"
    )
    a(
        f'<text x="{BOARD_X}" y="56">{escape(pm.get("board", ""))} / '
        f"{escape(pm.get('module', pm['chip']))} / chip {escape(pm['chip'])}. Generated from "
        f"hardware/pinmaps/{escape(pm['id'])}.json by `railbird hw wiring`: "
        "do not edit by hand.</text>"
    )
    a(
        f'<text x="{BOARD_X}" y="76" fill="#555">Channel numbers are what the firmware and config '
        "use; pocket/rail names are suggestions, `railbird calibrate` learns the real "
        "mapping.</text>"
    )

    board_top, board_bottom = TOP, power_y + 3 * ROW + 10
    a(
        f'<rect x="{BOARD_X}" y="{board_top}" width="{BOARD_W}" '
        f'height="{board_bottom - board_top}" '
        'rx="8" fill="#eef3f8" stroke="#34495e" stroke-width="2"/>'
    )
    a(
        f'<text x="{BOARD_X + 14}" y="{board_top + 22}" font-weight="bold">'
        f"{escape(pm.get('board', pm['chip']))}</text>"
    )

    for g, hy in headings:
        label = dict(GROUPS).get(g, g)
        a(
            f'<text x="{DEV_X}" y="{hy + 6}" font-weight="bold" fill="#34495e">'
            f"{escape(label)}</text>"
        )
    for (name, pin, direction, signal, pull), ry in rows:
        kind = (
            "analog"
            if signal == "analog"
            else (direction if direction in ("out", "io") else "digital-in")
        )
        color = COLORS[kind]
        a(f'<g id="{escape(name)}" class="{kind}">')
        a(f'<text x="{WIRE_X0 - 12}" y="{ry + 4}" text-anchor="end">GPIO {pin}</text>')
        a(f'<text x="{BOARD_X + 14}" y="{ry + 4}" fill="#555">{escape(name)}</text>')
        a(f'<circle cx="{WIRE_X0}" cy="{ry}" r="4" fill="{color}"/>')
        a(
            f'<line x1="{WIRE_X0}" y1="{ry}" x2="{DEV_X - 10}" y2="{ry}" stroke="{color}" '
            'stroke-width="2"/>'
        )
        a(
            f'<rect x="{DEV_X - 10}" y="{ry - 6}" width="12" height="12" fill="#fff" '
            f'stroke="{color}" stroke-width="2"/>'
        )
        notes = []
        src = pinmap_core.pull_source(pm, pin, pull)
        if src == "external":
            notes.append("4.7k to 3V3" if pull == "up" else "100k to GND")
        elif src == "internal":
            notes.append(f"internal pull-{pull}")
        if name in pcnt:
            notes.append(pcnt[name])
        if signal == "analog":
            notes.append("ADC1, 11 dB")
        if notes:
            a(
                f'<text x="{WIRE_X0 + 18}" y="{ry - 5}" font-size="10" fill="{color}">'
                f"{escape(', '.join(notes))}</text>"
            )
        if src == "external":
            _resistor(a, WIRE_X0 + 250, ry, up=(pull == "up"), color=color)
        a(f'<text x="{DEV_X + 10}" y="{ry + 4}">{escape(_device_label(pm, name))}</text>')
        a("</g>")

    # Power rails.
    a(
        f'<text x="{DEV_X}" y="{power_y - 6}" font-weight="bold" fill="#34495e">'
        "Power (one 5 V 2 A supply; see hardware/README.md)</text>"
    )
    for i, (pin_label, net, color, dev) in enumerate(
        [
            (
                "5V",
                "5v",
                COLORS["5v"],
                "IR emitters + receivers, cue detector, 5 V in from the PSU",
            ),
            (
                "3V3",
                "3v3",
                COLORS["3v3"],
                "pull-up resistors; rail board is fed by its own 3.3 V LDO",
            ),
            (
                "GND",
                "gnd",
                COLORS["gnd"],
                "all sensor grounds and cable shields (star point at the board)",
            ),
        ]
    ):
        ry = power_y + 10 + i * ROW
        a(f'<g id="power-{net}">')
        a(f'<text x="{WIRE_X0 - 12}" y="{ry + 4}" text-anchor="end">{pin_label}</text>')
        a(
            f'<line x1="{WIRE_X0}" y1="{ry}" x2="{DEV_X - 10}" y2="{ry}" stroke="{color}" '
            'stroke-width="3"/>'
        )
        a(f'<text x="{DEV_X + 10}" y="{ry + 4}">{escape(dev)}</text>')
        a("</g>")

    ly = board_bottom + 30
    x = BOARD_X
    for kind, label in (
        ("digital-in", "digital input"),
        ("analog", "analog input (ADC1)"),
        ("out", "output"),
        ("io", "I2C (open drain)"),
        ("5v", "5 V"),
        ("3v3", "3.3 V"),
        ("gnd", "ground"),
    ):
        a(
            f'<line x1="{x}" y1="{ly}" x2="{x + 28}" y2="{ly}" stroke="{COLORS[kind]}" '
            'stroke-width="3"/>'
        )
        a(f'<text x="{x + 34}" y="{ly + 4}">{escape(label)}</text>')
        x += 170
    for i, note in enumerate(pm.get("notes", [])[:8]):
        a(
            f'<text x="{BOARD_X}" y="{ly + 26 + i * 16}" font-size="10" fill="#555">'
            f"{escape('- ' + note)}</text>"
        )
    a("</svg>")
    return "\n".join(out) + "\n"


def _resistor(a, x, y, up: bool, color: str) -> None:
    """A small zigzag resistor from the wire to a rail label (3V3 above, GND below)."""
    dy = -1 if up else 1
    pts = [(x, y)]
    for k in range(5):
        pts.append((x + (4 if k % 2 == 0 else -4), y + dy * (3 + k * 2.5)))
    pts.append((x, y + dy * 16))
    a(
        '<polyline fill="none" stroke="{}" stroke-width="1.5" points="{}"/>'.format(
            color, " ".join(f"{px},{py}" for px, py in pts)
        )
    )
    ty = y + dy * 14 + (0 if up else 4)
    a(f'<text x="{x + 8}" y="{ty}" font-size="9" fill="{color}">{"3V3" if up else "GND"}</text>')
