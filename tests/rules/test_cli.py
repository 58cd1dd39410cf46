"""`railbird referee`: JSON Lines in, one state line per input out, never a crash."""

import json
import subprocess
import sys

from hypothesis import given, settings, strategies as st

from railbird.commands.referee import process_line

MATCH = '{"type":"match","game":"10-ball","players":["Ann","Bob"],"race_to":2}'


def run_cli(lines):
    proc = subprocess.run(
        [sys.executable, "-m", "railbird", "referee"],
        input="\n".join(lines),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr
    return [json.loads(x) for x in proc.stdout.splitlines()]


def test_cli_bad_lines_get_errors_and_state_is_kept():
    out = run_cli(
        [
            MATCH,
            "{not json",
            '{"type":"lag","winner":"Ann"}',
            '{"type":"push_out"}',
            '{"type":"shot","pocketed":[{"ball":3,"pocket":"XX"}]}',
            '"text"',
            "",
            '{"type":"shot","pocketed":[{"ball":3,"pocket":"FL"}]}',
        ]
    )
    assert len(out) == 7
    assert "error" in out[1] and "error" in out[3] and "error" in out[4] and "error" in out[5]
    assert out[2]["at_table"] == "Ann" and out[6]["pocketed"] == [3]


def test_cli_first_line_must_be_match():
    out = run_cli(['{"type":"shot"}', MATCH, MATCH])
    assert "error" in out[0] and out[1]["awaiting"] == "lag" and "error" in out[2]


def test_cli_help_mentions_contract():
    proc = subprocess.run(
        [sys.executable, "-m", "railbird", "referee", "--help"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0 and "REFEREE.md" in proc.stdout


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(max_size=30),
            st.sampled_from(
                [
                    '{"type":"shot","pocketed":[{"ball":1,"pocket":"FL"}]}',
                    '{"type":"undo"}',
                    '{"type":"call","ball":1,"pocket":"FL"}',
                    '{"type":"lag","winner":"Bob"}',
                    "[]",
                    "null",
                    '{"type":"shot","first_contact":true}',
                    '{"type":"option","choice":[1]}',
                    '{"type":"shot","pocketed":[{"ball":1.5,"pocket":"FL"}]}',
                    '{"type":"match"}',
                ]
            ),
        ),
        max_size=20,
    )
)
def test_cli_never_crashes_on_any_line(lines):
    ref, out = process_line(None, MATCH)
    for line in lines:
        ref, out = process_line(ref, line)
        assert isinstance(out, dict)
        assert "error" in out or "fen" in out
        assert not out.get("error", "").startswith("internal error")
