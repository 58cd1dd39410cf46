"""rules/frozen.replace gives what dataclasses.replace gives (it is its fast path)."""

import dataclasses

import pytest
from hypothesis import given, strategies as st

from railbird.rules.frozen import replace
from railbird.rules.state import State

BASE = State("9-ball", ("Ann", "Bo"), 5, "alternate", on_table=tuple(range(1, 10)))

CHANGES = st.fixed_dictionaries(
    {},
    optional={
        "rack": st.integers(1, 20),
        "at_table": st.sampled_from([None, 0, 1]),
        "scores": st.tuples(st.integers(0, 9), st.integers(0, 9)),
        "on_table": st.lists(st.integers(1, 15), unique=True).map(tuple),
        "awaiting": st.sampled_from([None, "lag", "shot", "referee_check"]),
        "races": st.sampled_from([None, (5, 3)]),
    },
)


@given(CHANGES, CHANGES)
def test_a_replaced_state_equals_the_standard_replace_and_leaves_the_old_one(a, b):
    got = replace(replace(BASE, **a), **b)
    want = dataclasses.replace(dataclasses.replace(BASE, **a), **b)
    assert got == want and hash(got) == hash(want) and repr(got) == repr(want)
    assert State("9-ball", ("Ann", "Bo"), 5, "alternate", on_table=tuple(range(1, 10))) == BASE
    with pytest.raises(dataclasses.FrozenInstanceError):
        got.rack = 3  # frozen still


def test_a_name_that_is_no_field_is_refused_as_the_standard_replace_refuses_it():
    with pytest.raises(TypeError):
        replace(BASE, rackk=2)  # the misspelling is the test


def test_a_class_with_post_init_still_runs_it():
    @dataclasses.dataclass(frozen=True)
    class Pair:
        a: int
        b: int = 0

        def __post_init__(self):
            if self.a < 0:
                raise ValueError("negative")

    assert replace(Pair(1), b=2) == Pair(1, 2)
    with pytest.raises(ValueError, match="negative"):
        replace(Pair(1), a=-1)
