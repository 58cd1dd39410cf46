"""Flash spill: order, restart, overflow policies, torn tail, segment reclaim."""

import os

from hypothesis import given, settings, strategies as st

from rbnode.spill import REC, Spill


def rec(i, boot=3):
    return (boot, i, (1 << 40) + i * 1000, 1 + i % 5, i % 64, i * 7 % 4096)


def test_capacity_at_least_10000_and_order(tmp_path):
    s = Spill(str(tmp_path / "sp"))
    assert s.capacity >= 10000
    for i in range(10000):
        assert s.append(*rec(i))
    s.flush()
    assert len(s) == 10000
    got = []
    while len(s):
        batch = s.peek(32)
        got.extend(batch)
        s.consume(len(batch))
    assert got == [rec(i) for i in range(10000)]
    # fully consumed segments are deleted; at most the writer's segment remains
    assert len([n for n in os.listdir(tmp_path / "sp") if n.endswith(".bin")]) <= 1


def test_restart_finds_pending_records(tmp_path):
    d = str(tmp_path / "sp")
    s = Spill(d, seg_records=100)
    for i in range(250):
        s.append(*rec(i, boot=7))
    s.consume(120)
    s.close()
    s2 = Spill(d, seg_records=100)
    assert len(s2) == 130
    assert s2.peek(1)[0] == rec(120, boot=7)
    for i in range(250, 260):
        s2.append(*rec(i, boot=8))
    got = s2.peek(1000)
    assert got == [rec(i, boot=7) for i in range(120, 250)] + [
        rec(i, boot=8) for i in range(250, 260)
    ]


def test_torn_tail_is_ignored_and_overwritten(tmp_path):
    d = str(tmp_path / "sp")
    s = Spill(d, seg_records=100)
    for i in range(10):
        s.append(*rec(i))
    s.close()
    seg = sorted(p for p in os.listdir(d) if p.endswith(".bin"))[-1]
    with open(os.path.join(d, seg), "ab") as f:
        f.write(b"\xa7\x01\x02")  # power cut mid-record
    s2 = Spill(d, seg_records=100)
    assert len(s2) == 10
    s2.append(*rec(10))
    s2.flush()
    assert s2.peek(100) == [rec(i) for i in range(11)]
    assert os.path.getsize(os.path.join(d, seg)) == 11 * REC


def test_overflow_newest_dropped(tmp_path):
    s = Spill(str(tmp_path / "sp"), capacity=300, seg_records=100)
    results = [s.append(*rec(i)) for i in range(350)]
    assert results.count(False) == 50 and s.dropped == 50
    assert [r[1] for r in s.peek(1000)] == list(range(300))


def test_overflow_oldest_segment_dropped(tmp_path):
    s = Spill(str(tmp_path / "sp"), capacity=300, seg_records=100, policy="oldest")
    for i in range(350):
        assert s.append(*rec(i))
    assert s.dropped == 100
    assert [r[1] for r in s.peek(1000)] == list(range(100, 350))


@settings(max_examples=40, deadline=None)
@given(
    ops=st.lists(
        st.one_of(
            st.tuples(st.just("a"), st.integers(1, 150)),
            st.tuples(st.just("c"), st.integers(0, 150)),
            st.tuples(st.just("r"), st.just(0)),
        ),
        max_size=30,
    )
)
def test_model_with_restarts(tmp_path_factory, ops):
    d = str(tmp_path_factory.mktemp("sp") / "sp")
    s = Spill(d, capacity=400, seg_records=64)
    model, nxt, dropped = [], 0, 0
    for op, n in ops:
        if op == "a":
            for _ in range(n):
                ok = s.append(*rec(nxt))
                assert ok == (len(model) < 400)
                if ok:
                    model.append(rec(nxt))
                else:
                    dropped += 1
                nxt += 1
        elif op == "c":
            k = s.consume(n)
            assert k == min(n, len(model))
            del model[:k]
        else:
            s.close()
            s = Spill(d, capacity=400, seg_records=64)
        assert len(s) == len(model)
        assert s.peek(1000) == model
