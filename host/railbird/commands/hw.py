"""`railbird hw`: pin maps: check them against the chip's pin facts, list them, and draw
their wiring diagram (hardware/pinmaps/README.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "hw",
        help="pin maps: check, list, wiring diagrams",
        description="Sensor node hardware: pin maps (hardware/pinmaps/*.json), the pin checker "
        "and the wiring diagram generator. PINMAP is a file or the id of a shipped "
        "map (e.g. esp32-devkitc).",
    )
    sub = p.add_subparsers(dest="hw_command", metavar="ACTION")

    c = sub.add_parser(
        "check",
        help="check pin maps against the chip's pin facts",
        description="Reject a pin map that puts two functions on one pin, an "
        "output on an input-only pin, a pulled input on a pin without "
        "pull and no external resistor, an analog input on ADC2 or off "
        "the ADC, a sensor on a strapping, flash, PSRAM, USB or console "
        "pin, or uses more pulse counters than the chip has. Exit "
        "status 1 when any map has errors (warnings do not fail).",
    )
    c.add_argument(
        "pinmaps",
        metavar="PINMAP",
        nargs="*",
        help="pin map files or ids (default: every shipped map)",
    )
    c.add_argument("--strict", action="store_true", help="fail on warnings too")
    c.add_argument("--json", action="store_true", help="print findings as JSON")
    c.set_defaults(func=cmd_check)

    ls = sub.add_parser("list", help="list the shipped pin maps")
    ls.set_defaults(func=cmd_list)

    s = sub.add_parser("show", help="print a pin map's GPIO assignments as a table")
    s.add_argument("pinmap", metavar="PINMAP", help="pin map file or shipped id")
    s.set_defaults(func=cmd_show)

    w = sub.add_parser(
        "wiring",
        help="generate the SVG wiring diagram of a pin map",
        description="Draw the board, every used GPIO and the sensor it goes to, "
        "with pull resistors and pulse counter units, as SVG.",
    )
    w.add_argument("pinmap", metavar="PINMAP", help="pin map file or shipped id")
    w.add_argument(
        "-o", "--output", metavar="FILE.svg", help="output file (default: standard output)"
    )
    w.set_defaults(func=cmd_wiring)

    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _read(name: str):
    from railbird.hardware import resolve

    path = resolve(name)
    return path, json.loads(Path(path).read_text())


def cmd_check(args) -> int:
    from railbird.hardware import check, shipped_pinmaps

    names = args.pinmaps or [str(p) for p in shipped_pinmaps()]
    if not names:
        print("hw check: no pin maps given and none shipped", file=sys.stderr)
        return 2
    failed, report = False, []
    for name in names:
        try:
            path, pm = _read(name)
        except (OSError, ValueError) as e:
            print(f"{name}: error: cannot read: {e}", file=sys.stderr)
            failed = True
            continue
        findings = check.check(pm)
        errs = check.errors(findings)
        warns = [f for f in findings if f.level == check.WARNING]
        if errs or (args.strict and warns):
            failed = True
        if args.json:
            report.append(
                {"pinmap": str(path), "ok": not errs, "findings": [f.__dict__ for f in findings]}
            )
            continue
        for f in findings:
            print(f"{path}: {f}", file=sys.stderr if f.level == check.ERROR else sys.stdout)
        verdict = "FAIL" if errs else "ok"
        print(f"{path}: {verdict}: {len(errs)} error(s), {len(warns)} warning(s)")
    if args.json:
        print(json.dumps(report, indent=2))
    return 1 if failed else 0


def cmd_list(args) -> int:
    from railbird.hardware import shipped_pinmaps

    for path in shipped_pinmaps():
        pm = json.loads(path.read_text())
        print(f"{pm.get('id', path.stem):20} {pm.get('chip', '?'):8} {pm.get('board', '')}")
    return 0


def cmd_show(args) -> int:
    from railbird.hardware import pinmap_core

    try:
        _path, pm = _read(args.pinmap)
        pinmap_core.validate(pm)
    except (OSError, ValueError) as e:
        print(f"{args.pinmap}: error: {e}", file=sys.stderr)
        return 2
    print(f"{pm['id']}: {pm.get('board', '')} ({pm['chip']}, {pm.get('module', '?')})")
    for name, pin, direction, signal, pull in sorted(pinmap_core.functions(pm), key=lambda f: f[1]):
        src = pinmap_core.pull_source(pm, pin, pull)
        pull_txt = "" if src == "none" else f"pull-{pull} ({src})"
        pc = pinmap_core.pcnt_for(pm, name)
        pc_txt = "" if pc is None else f"PCNT unit {pc[0]} ch {pc[1]}"
        print(f"  GPIO {pin:2}  {name:11} {direction:3} {signal:7} {pull_txt:22} {pc_txt}")
    return 0


def cmd_wiring(args) -> int:
    from railbird.hardware import wiring

    try:
        _path, pm = _read(args.pinmap)
        svg = wiring.render(pm)
    except (OSError, ValueError) as e:
        print(f"{args.pinmap}: error: {e}", file=sys.stderr)
        return 2
    if args.output:
        Path(args.output).write_text(svg)
        print(f"wrote {args.output}")
    else:
        sys.stdout.write(svg)
    return 0
