"""Checks a daemon configuration (the dict read from its TOML file): the JSON Schema of
`railbird.config.schema` first, then, in one place, the rules across keys a schema cannot
say. Every problem is one line naming the key and the fix; all of them are reported.

A value is shown as TOML would write it, except secrets (`config.schema.SECRETS`), which
are never shown.
"""

from __future__ import annotations

import difflib
import itertools
import json
import os
import re
from functools import cache

from railbird.config.schema import SECRETS, goal_key, schema
from railbird.rules import GAMES, OPTIONS, RulesError, new_match
from railbird.tableorder import natural_sorted

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_TYPE_NOUN = {
    "string": "a string",
    "integer": "an integer",
    "boolean": "bool (true or false)",
    "array": "a list [...]",
    "object": "a table (a [section] or { ... })",
}


@cache
def validator():
    import jsonschema

    base = jsonschema.Draft202012Validator
    # TOML has floats: 5.0 is not an integer here (JSON Schema would take it as one).
    checker = base.TYPE_CHECKER.redefine("integer", lambda _checker, x: type(x) is int)
    return jsonschema.validators.extend(base, type_checker=checker)(schema())


def problems(d) -> list[str]:
    """Every problem of configuration `d`, one line each ([] = none)."""
    if not isinstance(d, dict):
        return ["the configuration must be a table of keys (a TOML document)"]
    errors = list(validator().iter_errors(d))
    # A value of the wrong type is reported as that alone, not also as out of range.
    mistyped = {tuple(e.absolute_path) for e in errors if e.validator == "type"}
    out, dirty = [], set()
    for err in errors:
        path = tuple(err.absolute_path)
        if err.validator != "type" and path in mistyped:
            continue
        out.extend(_lines(err))
        dirty.update(path[:i] for i in range(len(path) + 1))
    out.extend(_across(d, dirty))
    return list(dict.fromkeys(out))  # one problem may be seen twice (e.g. two missing keys)


# -- rendering --------------------------------------------------------------------------------
def key_path(parts) -> str:
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            p = p if _BARE_KEY.match(p) else json.dumps(p)
            out += f".{p}" if out else p
    return out


def show(v, limit: int = 60) -> str:
    """`v` as a TOML value, on one line and at most about `limit` characters."""
    if isinstance(v, bool):
        s = "true" if v else "false"
    elif isinstance(v, str):
        s = json.dumps(v, ensure_ascii=False)
    elif isinstance(v, (int, float)):
        s = repr(v)
    elif isinstance(v, list):
        s = "[" + ", ".join(show(x, limit) for x in v) + "]"
    elif isinstance(v, dict):
        s = "{ " + ", ".join(f"{key_path([k])} = {show(x, limit)}" for k, x in v.items()) + " }"
    else:
        s = str(v)
    return s if len(s) <= limit else s[: limit - 3] + "..."


def _secret(parts) -> bool:
    return any(p in SECRETS for p in parts)


def _lhs(parts, value) -> str:
    """`key = value`, or just `key` for a section or a secret."""
    if _secret(parts) or isinstance(value, dict):
        return key_path(parts)
    return f"{key_path(parts)} = {show(value)}"


def _one_of(value, choices, what: str, where: str) -> str:
    listed = f"one of {', '.join(choices)}" if len(choices) <= 8 else f"see {where}"
    if isinstance(value, str):
        close = difflib.get_close_matches(value, choices, n=1, cutoff=0.6)
        if close:
            return f"unknown {what}; did you mean {json.dumps(close[0])}? ({listed})"
    return f"unknown {what}; use {listed}"


def unknown_key(parts, known, what: str = "key") -> str:
    close = difflib.get_close_matches(parts[-1], known, n=1, cutoff=0.6)
    if close:
        return f"{key_path(parts)}: unknown {what}; did you mean {close[0]}?"
    return f"{key_path(parts)}: unknown {what}; remove it (known here: {', '.join(known)})"


def _with_fix(text: str, s: dict) -> str:
    fix = s.get("x-fix")
    return f"{text}; {fix}" if fix else text


def _lines(err) -> list[str]:
    """One line per problem of a jsonschema error."""
    parts = list(err.absolute_path)
    v, s, inst = err.validator, err.schema, err.instance
    if "propertyNames" in err.absolute_schema_path:
        return [_with_fix(f"{key_path([*parts, inst])}: the id is not a slug", s)]
    if v == "additionalProperties":
        known = list(s.get("properties", {}))
        return [
            unknown_key([*parts, k], known, s.get("x-what", "key")) for k in inst if k not in known
        ]
    if v == "required":
        out = []
        for k in s["required"]:
            if k not in inst:
                sub = s["properties"].get(k, {})
                fix = sub.get("x-fix-missing") or sub.get("x-fix")
                out.append(f"{key_path([*parts, k])}: required" + (f"; {fix}" if fix else ""))
        return out
    if v == "anyOf":
        return _any_of(err)
    lhs = _lhs(parts, inst)
    if v == "type":
        return [_with_fix(f"{lhs}: expected {_TYPE_NOUN.get(s['type'], s['type'])}", s)]
    if v == "enum":
        what, where = s.get("x-what", "value"), s.get("x-doc", "docs/host.md")
        return [f"{lhs}: " + _one_of(inst, s["enum"], what, where)]
    if v in ("minimum", "maximum"):
        lo, hi = s.get("minimum"), s.get("maximum")
        bound = f"use {lo} to {hi}" if lo is not None and hi is not None else None
        bound = bound or (f"must be at least {lo}" if v == "minimum" else f"at most {hi}")
        return [f"{lhs}: out of range; {bound}"]
    if v in ("minItems", "maxItems"):
        item = s.get("x-item", "item")
        n = len(inst)
        count = f"no {item}s" if n == 0 else f"{n} {item}" + ("s" if n != 1 else "")
        return [_with_fix(f"{lhs}: {count}", s)]
    if v == "uniqueItems":
        seen, dup = [], None
        for x in inst:
            if x in seen:
                dup = x
                break
            seen.append(x)
        fix = s.get("x-fix-twice") or s.get("x-fix")
        return [f"{lhs}: {show(dup)} is listed twice" + (f"; {fix}" if fix else "")]
    if v == "pattern":
        bad = "not a slug" if s["pattern"].startswith("^[a-z0-9]") else "not valid"
        if s["pattern"] == r"\S":
            bad = "a blank name"
        return [_with_fix(f"{lhs}: {bad}", s)]
    if v == "minLength":
        return [_with_fix(f"{lhs}: empty", s)]
    return [f"{lhs}: {err.message}"]


def _any_of(err) -> list[str]:
    """`options`: a list of names or a table; report the branch of the value's type."""
    parts = list(err.absolute_path)
    for i, branch in enumerate(err.validator_value):
        if branch.get("type") == {list: "array", dict: "object"}.get(type(err.instance)):
            out = []
            for sub in err.context:
                if sub.relative_schema_path[0] == i:
                    out.extend(_lines(sub))
            return out
    return [_with_fix(f"{_lhs(parts, err.instance)}: wrong type", err.schema)]


# -- rules across keys -----------------------------------------------------------------------
def _across(d: dict, dirty: set) -> list[str]:
    out = []
    tables = d.get("tables") if isinstance(d.get("tables"), dict) else {}
    owner: dict = {}
    for tid, t in tables.items():
        if not isinstance(t, dict):
            continue
        out.extend(_table(["tables", tid], t, clean=("tables", tid) not in dirty))
        nodes = t.get("nodes")
        for n in nodes if isinstance(nodes, list) else ():
            if not isinstance(n, str):
                continue
            if owner.setdefault(n, tid) != tid:
                out.append(
                    f"{key_path(['tables', tid, 'nodes'])}: node {json.dumps(n)} is also in "
                    f"{key_path(['tables', owner[n], 'nodes'])}; a node reports for one table: "
                    "remove it from one of them"
                )
    if isinstance(d.get("default_table"), dict):
        dt = d["default_table"]
        out.extend(_table(["default_table"], dt, clean=("default_table",) not in dirty))
    known = None if d.get("accept_unknown_tables") is True else natural_sorted(tables or {})
    out.extend(_subscribe(d.get("subscribe"), known))
    out.extend(_referee_token(d.get("referee_token")))
    out.extend(_director_pin(d.get("director_pin"), d.get("referee_token")))
    out.extend(_broker(d.get("broker")))
    out.extend(_serial(d.get("outputs"), known))
    return out


def _table(parts, t: dict, clean: bool) -> list[str]:
    game = t.get("game")
    if not isinstance(game, str) or game not in GAMES:
        return []  # no game (shots only), or the schema reported it
    out = []
    key = goal_key(game)
    wrong = "target" if key == "race_to" else "race_to"
    how = "won on racks, not points" if key == "race_to" else "played to points, not racks"
    unit = "racks" if key == "race_to" else "points"
    if wrong in t:
        out.append(
            f"{_lhs([*parts, wrong], t[wrong])}: {game} is {how}; "
            f"use {key} = <{unit}> instead of {wrong}"
        )
    elif key not in t:
        example = 5 if key == "race_to" else 100
        out.append(
            f"{key_path(parts)}: {game} needs {key} ({unit} to win); add e.g. {key} = {example}"
        )
    opts = t.get("options")
    names = opts if isinstance(opts, list) else list(opts) if isinstance(opts, dict) else []
    for name in names:
        spec = OPTIONS.get(name) if isinstance(name, str) else None
        if spec is not None and game not in spec.games:
            out.append(
                f"{key_path([*parts, 'options'])}: {name} does not apply to {game} (only "
                f"{', '.join(spec.games)}); remove it"
            )
    if clean and not out:
        # The rules engine has the last word: a table that passed the checks above but
        # whose match the engine refuses would have no game state.
        match = {
            "type": "match",
            "game": game,
            "players": t.get("players", ["Player 1", "Player 2"]),
        }
        match.update({k: t[k] for k in ("race_to", "target", "break_order", "options") if k in t})
        try:
            new_match(match)
        except RulesError as e:
            out.append(f"{key_path(parts)}: the rules refuse this match: {e}")
    return out


PIN_DIGITS = (6, 12)  # the referee app's keypad takes at most 12
WEAK_PIN = (
    f"referee_token: too weak (it is the referee PIN); use {PIN_DIGITS[0]} to "
    f"{PIN_DIGITS[1]} random digits, not one digit repeated nor a run like 123456"
)


def weak_pin(token: str) -> bool:
    """A referee token a guesser would find: not 6-12 digits, one digit repeated (000000),
    or a run up or down (123456, 987654). The web server compares at most 5 wrong PINs a
    minute per venue (railbird.outputs.web.pinguard), and a guesser tries these first."""
    lo, hi = PIN_DIGITS
    if not (token.isascii() and token.isdigit() and lo <= len(token) <= hi):
        return True
    steps = {(int(b) - int(a)) % 10 for a, b in itertools.pairwise(token)}
    return len(steps) == 1 and steps <= {0, 1, 9}


def _referee_token(token) -> list[str]:
    # "" turns referee input off; a non-string the schema reported
    if not isinstance(token, str) or token == "" or not weak_pin(token):
        return []
    return [WEAK_PIN]


def _director_pin(pin, referee) -> list[str]:
    if not isinstance(pin, str) or pin == "":
        return []
    if not pin.isdigit() or not PIN_DIGITS[0] <= len(pin) <= PIN_DIGITS[1]:
        return [f"director_pin: {PIN_DIGITS[0]} to {PIN_DIGITS[1]} digits"]
    if weak_pin(pin):
        return [WEAK_PIN.replace("referee_token", "director_pin").replace("referee", "director")]
    if pin == referee:
        return ["director_pin: the same as referee_token; a referee must not run the event"]
    return []


def _subscribe(sub, known) -> list[str]:
    if known is None or not isinstance(sub, list):
        return []
    return [
        f"subscribe: {json.dumps(t)} has no [tables.{t}] (its messages would be refused); "
        "add the section or remove it from subscribe"
        for t in sub
        if isinstance(t, str) and t not in known
    ]


def _broker(b) -> list[str]:
    if not isinstance(b, dict) or not isinstance(b.get("cafile"), str) or not b["cafile"]:
        return []
    lhs = _lhs(["broker", "cafile"], b["cafile"])
    if b.get("tls") is not True:
        return [
            f"{lhs}: set, but broker.tls is false (the connection would not be encrypted); "
            "add tls = true to [broker]"
        ]
    if not os.path.isfile(b["cafile"]):
        return [f"{lhs}: no such file; give the PEM file of the broker's CA"]
    return []


def _serial(outputs, known) -> list[str]:
    boards = outputs.get("serial") if isinstance(outputs, dict) else None
    if not isinstance(boards, list):
        return []
    out, ports = [], {}
    for i, b in enumerate(boards):
        if not isinstance(b, dict):
            continue
        where = ["outputs", "serial", i]
        port = b.get("port")
        if isinstance(port, str) and port:
            if port in ports:
                out.append(
                    f"{_lhs([*where, 'port'], port)}: also the port of outputs.serial"
                    f"[{ports[port]}]; one board per port"
                )
            ports.setdefault(port, i)
        table = b.get("table")
        if known is not None and isinstance(table, str) and table not in known:
            out.append(
                f"{_lhs([*where, 'table'], table)}: no [tables.{table}]; use one of "
                f"{', '.join(known) or '(no tables configured)'}"
            )
    return out
