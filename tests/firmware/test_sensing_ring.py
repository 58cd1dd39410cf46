"""EventRing: bounded, preallocated, consecutive seqs, drop-newest overflow."""

import pytest
from hypothesis import given, settings, strategies as st

from rbnode import ring as R


def test_push_get_pop_fifo():
    r = R.EventRing(4)
    assert r.push(10, R.K_DROP, 1, 30000) == 0
    assert r.push(20, R.K_RAIL, R.RAIL | 2, 4095) == 1
    assert len(r) == 2
    assert r.peek() == (0, 10, R.K_DROP, 1, 30000)
    assert r.get(1) == (1, 20, R.K_RAIL, R.RAIL | 2, 4095)
    assert r.pop(1) == 1
    assert r.peek() == (1, 20, R.K_RAIL, R.RAIL | 2, 4095)
    with pytest.raises(IndexError):
        r.get(1)


def test_overflow_drops_newest_and_counts():
    r = R.EventRing(3)
    for i in range(3):
        assert r.push(i, R.K_DROP, 0, 1) == i
    assert r.push(99, R.K_DROP, 0, 1) == -1
    assert r.push(99, R.K_DROP, 0, 1) == -1
    assert r.dropped == 2 and len(r) == 3 and r.next_seq == 3
    assert [r.get(i)[1] for i in range(3)] == [0, 1, 2]
    r.pop(2)
    assert r.push(3, R.K_DROP, 0, 1) == 3  # seq continues: dropped events got none
    assert [r.get(i)[0] for i in range(len(r))] == [2, 3]


def test_start_seq_and_capacity():
    r = R.EventRing(512, seq0=1000)
    assert r.capacity >= 512
    assert r.push(1, R.K_CUE, R.CH_CUE, 0) == 1000
    r.next_seq = 5000
    r.clear()
    assert r.push(1, R.K_CUE, R.CH_CUE, 0) == 5000
    assert r.first_seq() == 5000


@settings(max_examples=200, deadline=None)
@given(
    ops=st.lists(
        st.one_of(
            st.tuples(
                st.just("push"),
                st.integers(0, 2**64 - 1),
                st.integers(1, 5),
                st.integers(0, 255),
                st.integers(0, 2**32 - 1),
            ),
            st.tuples(st.just("pop"), st.integers(0, 9)),
        )
    ),
    cap=st.integers(1, 16),
)
def test_model(ops, cap):
    r = R.EventRing(cap, seq0=7)
    model, seq, dropped = [], 7, 0
    for op in ops:
        if op[0] == "push":
            got = r.push(*op[1:])
            if len(model) < cap:
                assert got == seq
                model.append((seq, *op[1:]))
                seq += 1
            else:
                assert got == -1
                dropped += 1
        else:
            n = min(op[1], len(model))
            assert r.pop(op[1]) == n
            del model[:n]
        assert len(r) == len(model) and r.dropped == dropped and r.next_seq == seq
        assert [r.get(i) for i in range(len(r))] == model
