"""Fuzz, in process: good node traffic with bad messages of every kind interleaved, fed to the
deterministic `Pipeline` (the daemon's core) with simulated arrival times and the daemon's
idle ticks. Whatever the bad messages are, no exception escapes; each is answered as the
protocol says (rejected with its code, ignored, quarantined, or ruled by the rules); the
rejections and quarantines are counted; and every good event is on its table's timeline
exactly once, with the timeline and the shots exactly those of the good traffic alone (shot
warnings aside: the host warns about what it refused)."""

from __future__ import annotations

from collections import Counter

from hypothesis import event, given, note, settings, strategies as st

from railbird.config import from_dict
from railbird.core.pipeline import Pipeline
from railbird.core.records import EventRecord, ShotRecord

from . import ingest as F
from .budget import examples


def run(msgs: list) -> dict:
    """Feed `msgs` in order, a tick after every good one; -> what the host made of them."""
    pipe = Pipeline(from_dict(F.config_dict()))
    timeline: dict = {"t1": [], "t2": []}
    shots: dict = {"t1": [], "t2": []}
    answers = []

    def collect(records):
        for r in records:
            if isinstance(r, EventRecord):
                timeline[r.table].append(r.event.to_dict())
            elif isinstance(r, ShotRecord):
                shots[r.table].append({k: v for k, v in r.shot.items() if k != "warnings"})

    for m in msgs:
        status, reason, records = pipe.on_message(m.topic, m.payload, m.rx)
        answers.append((m, status, reason))
        collect(records)
        if m.label in ("good", "dup"):
            collect(pipe.tick(m.rx))
    collect(pipe.flush())
    return {"pipe": pipe, "timeline": timeline, "shots": shots, "answers": answers}


def check_answers(answers) -> Counter:
    """Every message got an answer it may get; -> statuses counted."""
    seen = Counter()
    for m, status, reason in answers:
        assert status in m.expect, (m.label, status, reason, m.topic, m.payload[:200])
        if status == "rejected" and m.codes:
            code = (reason or "").split(":")[0]
            assert code in m.codes, (m.label, reason, m.topic, m.payload[:200])
        seen[status] += 1
        if m.label not in ("good", "dup"):
            event(f"{m.label}: {status}")  # `make fuzz` prints how often each came up
    return seen


@settings(max_examples=examples("ingest in process", 60))
@given(plan=F.plans(), data=st.data())
def test_bad_messages_interleaved_change_nothing_and_are_counted(plan, data):
    good = plan.good()
    bads = data.draw(F.interleaving(len(good), max_bad=60), label="bad")
    msgs = F.noisy(plan, bads)
    note(f"{len(good)} good, {len(bads)} bad: {Counter(b.kind for _, b in bads)}")

    ref = run(good)
    got = run(msgs)

    # the good traffic alone: every good event on its table's timeline, once, none late
    check_answers(ref["answers"])
    for table in ("t1", "t2"):
        keys = [(e["node"], e["boot"], e["seq"]) for e in ref["timeline"][table]]
        assert len(keys) == len(set(keys))
    assert {
        (e["node"], e["boot"], e["seq"]) for tl in ref["timeline"].values() for e in tl
    } == plan.good_keys()
    assert ref["pipe"].counters["late"] == 0

    # with the bad ones: the same timelines and shots, the bad ones answered and counted
    statuses = check_answers(got["answers"])
    assert got["timeline"] == ref["timeline"]
    assert got["shots"] == ref["shots"]
    pipe = got["pipe"]
    assert pipe.counters["rejected"] == statuses["rejected"]
    assert sum(pipe.rejected.values()) == statuses["rejected"]
    future = sum(
        m.payload.count(b'"seq"')
        for m, status, _ in got["answers"]
        if m.label in ("future", "broken clock")
    )
    assert pipe.counters["quarantined"] == future
    assert pipe.counters["late"] == 0
    assert pipe.counters["events"] == ref["pipe"].counters["events"]  # quarantined: not events
