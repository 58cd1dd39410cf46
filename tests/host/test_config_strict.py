"""The daemon's configuration is strict (docs/host.md "Configuration"): each bad config
makes `railbird run --check-config` print one line naming the key and the fix and exit 2,
and `railbird run` refuses to start; every config the project ships or writes passes."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import jsonschema
import pytest

from railbird import cli
from railbird.commands import run as run_command
from railbird.commands.demo import _host_config
from railbird.config import (
    BrokerConfig,
    ClusterConfig,
    Config,
    ConfigError,
    FeedsConfig,
    OutputsConfig,
    SerialConfig,
    TableConfig,
    WebConfig,
    from_dict,
    load,
)
from railbird.config.schema import REFERENCE_BEGIN, REFERENCE_END, reference_markdown, schema
from railbird.core.shots import ShotParams

REPO = Path(__file__).resolve().parents[2]

GOOD = """\
venue = "club"

[tables.t1]
game = "10-ball"
players = ["Ann", "Bob"]
race_to = 5
nodes = ["t1-pockets"]
"""
T2 = """
[tables.t2]
game = "14.1"
players = ["Cleo", "Dev"]
target = 100
nodes = ["t2-pockets"]
"""


def check(tmp_path, capsys, text: str):
    """`railbird run --config FILE --check-config` -> (exit status, stdout, stderr lines)."""
    conf = tmp_path / "railbird.toml"
    conf.write_text(text)
    rc = cli.main(["run", "--config", str(conf), "--check-config"])
    out, err = capsys.readouterr()
    return rc, out, err.splitlines()


# case -> (config text, the one line it must print)
CASES = {
    "unknown top-level key": (
        "stats_period = 60\n" + GOOD,
        "config error: stats_period: unknown key; did you mean stats_period_s?",
    ),
    "unknown nested key": (
        GOOD.replace("game =", "gmae ="),
        "config error: tables.t1.gmae: unknown key; did you mean game?",
    ),
    "unknown game with a suggestion": (
        GOOD.replace('"10-ball"', '"10ball"'),
        'config error: tables.t1.game = "10ball": unknown game; did you mean "10-ball"? '
        "(one of 10-ball, 14.1, 9-ball, 8-ball)",
    ),
    "one player": (
        GOOD.replace('["Ann", "Bob"]', '["Ann"]'),
        'config error: tables.t1.players = ["Ann"]: 1 name; give exactly two different '
        'names, e.g. players = ["Ann", "Bob"]',
    ),
    "three players": (
        GOOD.replace('["Ann", "Bob"]', '["Ann", "Bob", "Cy"]'),
        'config error: tables.t1.players = ["Ann", "Bob", "Cy"]: 3 names; give exactly two '
        'different names, e.g. players = ["Ann", "Bob"]',
    ),
    "the same player twice": (
        GOOD.replace('["Ann", "Bob"]', '["Ann", "Ann"]'),
        'config error: tables.t1.players = ["Ann", "Ann"]: "Ann" is listed twice; give '
        'exactly two different names, e.g. players = ["Ann", "Bob"]',
    ),
    "race_to on 14.1": (
        GOOD.replace('"10-ball"', '"14.1"'),
        "config error: tables.t1.race_to = 5: 14.1 is played to points, not racks; "
        "use target = <points> instead of race_to",
    ),
    "target on 10-ball": (
        GOOD.replace("race_to = 5", "target = 100"),
        "config error: tables.t1.target = 100: 10-ball is won on racks, not points; "
        "use race_to = <racks> instead of target",
    ),
    "a game without its goal": (
        GOOD.replace("race_to = 5\n", ""),
        "config error: tables.t1: 10-ball needs race_to (racks to win); add e.g. race_to = 5",
    ),
    "a node id listed twice": (
        GOOD.replace('["t1-pockets"]', '["t1-pockets", "t1-pockets"]'),
        'config error: tables.t1.nodes = ["t1-pockets", "t1-pockets"]: "t1-pockets" is listed '
        "twice; list each node once",
    ),
    "a node on two tables": (
        GOOD + T2.replace('["t2-pockets"]', '["t2-pockets", "t1-pockets"]'),
        'config error: tables.t2.nodes: node "t1-pockets" is also in tables.t1.nodes; a node '
        "reports for one table: remove it from one of them",
    ),
    "a table without nodes": (
        GOOD.replace('nodes = ["t1-pockets"]\n', ""),
        "config error: tables.t1.nodes: required; list the node ids that report for this "
        'table, e.g. nodes = ["t1-pockets"]',
    ),
    "a table with an empty node list": (
        GOOD.replace('["t1-pockets"]', "[]"),
        "config error: tables.t1.nodes = []: no node ids; list the node ids that report for "
        'this table, e.g. nodes = ["t1-pockets"]',
    ),
    "a rule option of another game": (
        GOOD.replace("race_to = 5", 'race_to = 5\noptions = ["thai_4_3_any_ball"]'),
        "config error: tables.t1.options: thai_4_3_any_ball does not apply to 10-ball "
        "(only 14.1); remove it",
    ),
    "an unknown break order": (
        GOOD.replace("race_to = 5", 'race_to = 5\nbreak_order = "alternating"'),
        'config error: tables.t1.break_order = "alternating": unknown break order; did you '
        'mean "alternate"? (one of alternate, winner, loser, trailing)',
    ),
    "a float where an integer belongs": (
        GOOD.replace("race_to = 5", "race_to = 5.0"),
        "config error: tables.t1.race_to = 5.0: expected an integer",
    ),
    "a serial board of a table that is not configured": (
        GOOD + '[[outputs.serial]]\ntable = "t9"\nport = "/dev/ttyUSB0"\n',
        'config error: outputs.serial[0].table = "t9": no [tables.t9]; use one of t1',
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_config_fails_check_config_with_one_line(tmp_path, capsys, case):
    text, line = CASES[case]
    rc, out, err = check(tmp_path, capsys, text)
    assert (rc, out, err) == (2, "", [line])


def test_the_good_base_config_passes(tmp_path, capsys):
    rc, out, err = check(tmp_path, capsys, GOOD + T2)
    assert rc == 0 and err == []
    assert json.loads(out)["tables"]["t2"]["target"] == 100


def test_every_problem_is_reported_each_on_its_own_line(tmp_path, capsys):
    text = (
        'venue = "Club House"\nwallpaper = "red"\n'
        + GOOD.replace('venue = "club"\n', "").replace('"10-ball"', '"9ball"')
        + T2.replace("target", "race_to")
    )
    rc, _, err = check(tmp_path, capsys, text)
    assert rc == 2
    assert err == [
        'config error: venue = "Club House": not a slug; use lower-case letters, digits '
        "and '-', at most 32, not starting with '-'",
        'config error: tables.t1.game = "9ball": unknown game; did you mean "9-ball"? '
        "(one of 10-ball, 14.1, 9-ball, 8-ball)",
        "config error: wallpaper: unknown key; remove it (known here: venue, subscribe, "
        "accept_unknown_tables, journal, reorder_window_ms, max_hold_ms, journal_sync, "
        "journal_keep_inputs_days, journal_export_dir, "
        "referee_token, director_pin, event_export_dir, lip_policy, stats_period_s, broker, "
        "shots, tables, default_table, outputs, cluster)",
        "config error: tables.t2.race_to = 100: 14.1 is played to points, not racks; use "
        "target = <points> instead of race_to",
    ]


def test_secrets_are_never_printed(tmp_path, capsys):
    # wrong types: the values must not be echoed in the error lines
    text = 'referee_token = 4711\n[broker]\npassword = ["s3cret"]\n' + GOOD.replace(
        'venue = "club"\n', ""
    )
    rc, _, err = check(tmp_path, capsys, 'venue = "club"\n' + text)
    assert rc == 2
    assert err == [
        "config error: referee_token: expected a string",
        "config error: broker.password: expected a string",
    ]
    # a good config prints them masked
    text = GOOD.replace('venue = "club"\n', 'venue = "club"\nreferee_token = "471108"\n')
    rc, out, _ = check(tmp_path, capsys, text + '[broker]\npassword = "s3cret"\n')
    assert rc == 0 and "471108" not in out and "s3cret" not in out
    d = json.loads(out)
    assert d["referee_token"] == "***" and d["broker"]["password"] == "***"


def test_railbird_run_refuses_to_start_on_a_bad_config(tmp_path):
    conf = tmp_path / "railbird.toml"
    conf.write_text(GOOD.replace('"10-ball"', '"10ball"'))
    journal = tmp_path / "journal.sqlite"
    stats = tmp_path / "stats.json"
    p = subprocess.run(
        [
            *[sys.executable, "-m", "railbird", "run", "--config", str(conf)],
            *["--journal", str(journal), "--stats-file", str(stats), "--seconds", "5"],
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert p.returncode == 2
    assert p.stderr.splitlines() == [CASES["unknown game with a suggestion"][1]]
    assert not journal.exists() and not stats.exists()  # nothing started


def test_a_file_that_is_not_toml_is_one_line(tmp_path, capsys):
    rc, _, err = check(tmp_path, capsys, 'venue = "club"\n[tables.t1\n')
    assert rc == 2 and len(err) == 1 and err[0].startswith("config error: ")
    assert "not valid TOML" in err[0]


# -- every config the project ships or writes ----------------------------------------------
def _harness_config(path: str, tmp_path: Path) -> str:
    """The CONFIG template of a test module (and the soak's TABLES), filled in."""
    tree = ast.parse((REPO / path).read_text())
    consts = {
        t.id: ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign)
        for t in node.targets
        if isinstance(t, ast.Name) and t.id in ("CONFIG", "TABLES")
    }
    ca = tmp_path / "ca.crt"
    ca.write_text("not read by the check\n")
    text = consts["CONFIG"].format(
        port=1883, cafile=ca, node="t1-node", client_id="c", pin="471108", venue="club", quiet=400
    )
    for t, (game, nodes) in consts.get("TABLES", {}).items():
        text += f"[tables.{t}]\n{game}\nnodes = {json.dumps(nodes)}\n"
    return text


HARNESS = ["tests/test_tls.py", "tests/host/test_crash.py", "tests/host/test_run_outputs.py"]
HARNESS.append("tests/soak/soak.py")


@pytest.mark.parametrize("path", HARNESS)
def test_harness_configs_pass(tmp_path, capsys, path):
    rc, _, err = check(tmp_path, capsys, _harness_config(path, tmp_path))
    assert (rc, err) == (0, [])


def test_the_demo_config_passes(tmp_path, capsys):
    conf = tmp_path / "demo.toml"
    _host_config(conf, 18830, tmp_path / "j.sqlite", 8088, "902417")
    rc, _, err = check(tmp_path, capsys, conf.read_text())
    assert (rc, err) == (0, [])


def _toml_blocks(text: str) -> list[str]:
    return re.findall(r"```toml\n(.*?)```", text, re.S)


def test_the_docs_example_passes_and_fragments_fit_a_config(tmp_path, capsys):
    blocks = _toml_blocks((REPO / "docs/host.md").read_text())
    full = [b for b in blocks if b.startswith("venue =")]
    assert len(full) == 1, "docs/host.md has one complete example config"
    rc, _, err = check(tmp_path, capsys, full[0])
    assert (rc, err) == (0, [])
    fragments = [b for b in blocks if b not in full]
    assert len(fragments) >= 2
    for b in fragments:  # (a [broker] with TLS, outputs) inside a config
        text = 'venue = "club"\n' + b + "\n" + GOOD.replace('venue = "club"\n', "")
        text = text.replace('"/etc/railbird/ca.crt"', json.dumps(str(tmp_path / "ca.crt")))
        (tmp_path / "ca.crt").write_text("x\n")
        rc, _, err = check(tmp_path, capsys, text)
        assert (rc, err) == (0, []), b


def test_the_readme_example_passes(tmp_path, capsys):
    (example,) = _toml_blocks((REPO / "README.md").read_text())
    rc, _, err = check(tmp_path, capsys, "\n".join(x.strip() for x in example.splitlines()))
    assert (rc, err) == (0, [])


def test_the_config_module_example_passes():
    doc = sys.modules["railbird.config.model"].__doc__
    example = doc.split("Example (every key optional except where noted):\n", 1)[1]
    text = "\n".join(line[4:] for line in example.splitlines())
    from_dict(tomllib.loads(text))


def test_bench_config_passes():
    from railbird.bench.suite import _config

    assert _config().table


# -- the schema and its documentation -------------------------------------------------------
def test_the_schema_is_a_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(schema())


def test_docs_reference_is_the_schemas():
    text = (REPO / "docs/host.md").read_text()
    begin, end = text.index(REFERENCE_BEGIN), text.index(REFERENCE_END) + len(REFERENCE_END)
    assert text[begin:end] == reference_markdown(), (
        "docs/host.md: replace the reference with `python -m railbird.config.schema --markdown`"
    )


def _leaves(s: dict, path=()):
    for k, sub in s.get("properties", {}).items():
        if "properties" in sub:
            yield from _leaves(sub, (*path, k))
        elif "properties" in sub.get("items", {}):
            yield from _leaves(sub["items"], (*path, k))
        elif k == "tables":
            yield from _leaves(sub["additionalProperties"], (*path, k))
        else:
            yield (*path, k), sub


def test_schema_defaults_are_the_configs():
    """What the docs say a key defaults to is what the daemon uses."""
    sections = {
        (): Config(),
        ("broker",): BrokerConfig(),
        ("tables",): TableConfig(),
        ("default_table",): TableConfig(),
        ("outputs",): OutputsConfig(),
        ("outputs", "feeds"): FeedsConfig(),
        ("outputs", "web"): WebConfig(),
        ("outputs", "serial"): SerialConfig(),
        ("cluster",): ClusterConfig(),
    }
    shots = ShotParams()
    checked = 0
    for path, sub in _leaves(schema()):
        if "default" not in sub or sub["default"] == {}:
            continue
        if path[0] == "shots":
            actual = getattr(shots, path[-1][: -len("_ms")] + "_us") // 1000
        elif path[-1] == "nodes" and path[0] == "tables":
            continue
        else:
            actual = getattr(sections[path[:-1]], path[-1])
            if path[-1] == "break_order" and actual is None:
                actual = "alternate"  # the rules' default (general 35)
        assert sub["default"] == actual, path
        checked += 1
    assert checked > 40


def test_run_help_names_every_key():
    epilog = run_command.EPILOG
    missing = [".".join(p) for p, _ in _leaves(schema()) if p[-1] not in epilog]
    assert missing == []


def test_load_reports_the_same_lines_as_check_config(tmp_path):
    conf = tmp_path / "x.toml"
    conf.write_text(CASES["a node on two tables"][0])
    with pytest.raises(ConfigError) as e:
        load(conf)
    assert str(e.value) == CASES["a node on two tables"][1]
