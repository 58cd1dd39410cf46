"""The golden pipeline corpus (tests/golden/README.md): every stream in corpus/ replayed
through the pipeline must give its `.out.tsv` byte for byte; through a broker-less Daemon,
its `.journal.tsv`; and both again when the replay is interrupted by snapshots and
restarts (a pipeline restored from its snapshot after every few inputs; a daemon stopped
mid-stream and started on its journal as `railbird run` does). A failure names the stream,
the input index and the input, and shows the first line that differs.
"""

from __future__ import annotations

import json

import pytest

from . import replay

NAMES = replay.stream_names()
# A restart after every input in the pipeline layer; in the long streams (whole matches,
# whose rules history makes a snapshot dearer) after every RESTART_EVERY_LONG-th input.
LONG = 150
RESTART_EVERY_LONG = 3


def first_difference(name: str, inputs: list, want: list[str], got: list[str], what: str) -> str:
    k = next(
        (i for i, (w, g) in enumerate(zip(want, got, strict=False)) if w != g),
        min(len(want), len(got)),
    )
    line = want[k] if k < len(want) else got[k]
    head = line.split("\t", 1)[0]
    where = ""
    if head.isdigit() and int(head) < len(inputs):
        where = f" at input {head}: {replay.describe(inputs[int(head)])}"
    elif head.isdigit():
        where = " after the last input (the counters)"
    return (
        f"{what}: stream {name!r}, line {k + 1}{where}\n"
        f"  expected: {want[k] if k < len(want) else '<no more lines>'}\n"
        f"  got:      {got[k] if k < len(got) else '<no more lines>'}\n"
        f"({len(want)} lines expected, {len(got)} got; regenerate only for an intended change:"
        " tests/golden/README.md)"
    )


def check(name, inputs, want, got, what, ids=None):
    if want == got:
        return
    text = first_difference(name, inputs, want, got, what)
    if ids is not None:
        text = journal_input(inputs, want, got, ids) + text
    pytest.fail(text, pytrace=False)


def journal_input(inputs: list, want: list[str], got: list[str], ids: dict) -> str:
    """Which stream input wrote the first differing journal row (`input_id`, or an input's
    own `id`)."""
    k = next((n for n, (w, g) in enumerate(zip(want, got, strict=False)) if w != g), None)
    k = min(len(want), len(got)) if k is None else k
    line = want[k] if k < len(want) else got[k]
    table, row = line.split("\t", 1)
    row = json.loads(row)
    iid = row.get("id") if table == "inputs" else row.get("input_id")
    if iid not in ids:
        return ""
    i = ids[iid]
    return f"journal input {iid} is stream input {i}: {replay.describe(inputs[i])}\n"


def test_corpus_is_there():
    assert len(NAMES) >= 10, NAMES
    for name in NAMES:
        for suffix in (".out.tsv", ".journal.tsv"):
            assert (replay.CORPUS / f"{name}{suffix}").exists(), f"{name}{suffix} missing"


@pytest.mark.parametrize("name", NAMES)
def test_pipeline(name):
    header, inputs = replay.read_stream(name)
    want = replay.read_lines(replay.CORPUS / f"{name}.out.tsv")
    check(name, inputs, want, replay.pipeline_lines(header, inputs), "pipeline records")


@pytest.mark.parametrize("name", NAMES)
def test_pipeline_restored_from_snapshots(name):
    header, inputs = replay.read_stream(name)
    want = replay.read_lines(replay.CORPUS / f"{name}.out.tsv")
    every = 1 if len(inputs) <= LONG else RESTART_EVERY_LONG
    got = replay.pipeline_lines(header, inputs, restart_every=every)
    check(
        name,
        inputs,
        want,
        got,
        f"pipeline records, restored from a snapshot every {every} input(s)",
    )


@pytest.mark.parametrize("name", NAMES)
def test_daemon_journal(name, tmp_path):
    header, inputs = replay.read_stream(name)
    want = replay.read_lines(replay.CORPUS / f"{name}.journal.tsv")
    ids: dict = {}
    got = replay.daemon_journal(header, inputs, str(tmp_path / "journal.sqlite"), ids=ids)
    check(name, inputs, want, got, "daemon journal", ids)


@pytest.mark.parametrize("name", NAMES)
def test_daemon_restarted_midway(name, tmp_path):
    header, inputs = replay.read_stream(name)
    want = replay.read_lines(replay.CORPUS / f"{name}.journal.tsv")
    at = len(inputs) * 3 // 5
    ids: dict = {}
    path = str(tmp_path / "journal.sqlite")
    got = replay.daemon_journal(header, inputs, path, restart_at=at, ids=ids)
    check(name, inputs, want, got, f"daemon journal, restarted after input {at - 1}", ids)


@pytest.mark.parametrize("name", NAMES)
def test_journal_replay(name, tmp_path):
    """The daemon's journal replayed from the start gives the records the inputs gave live
    (all but `flush`'s, which is no daemon input) and the same final state."""
    header, inputs = replay.read_stream(name)
    flush = {i for i, inp in enumerate(inputs) if inp["op"] == "flush"}
    want_at = []
    for line in replay.read_lines(replay.CORPUS / f"{name}.out.tsv"):
        i, kind, text = line.split("\t", 2)
        if kind == "record" and int(i) not in flush:
            want_at.append((int(i), text))
    got, live, replayed = replay.journal_replay(header, inputs, str(tmp_path / "j.sqlite"))
    want = [text for _, text in want_at]
    if got != want:
        k = next((n for n, (w, g) in enumerate(zip(want, got, strict=False)) if w != g), None)
        k = min(len(want), len(got)) if k is None else k
        i = want_at[k][0] if k < len(want_at) else want_at[-1][0]
        pytest.fail(
            f"journal replay: stream {name!r}, record {k + 1} (of input {i}:"
            f" {replay.describe(inputs[i])})\n"
            f"  expected: {want[k] if k < len(want) else '<no more records>'}\n"
            f"  got:      {got[k] if k < len(got) else '<no more records>'}",
            pytrace=False,
        )
    assert live == replayed, f"{name}: the replayed pipeline's state differs from the live one"
