"""Value texts in bulk (summarize_many) and the collector pause used while building views."""

from __future__ import annotations

import gc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import numpy as np
import wengert as wg
from wengert.core.collector import collector_paused
from wengert.core.formatting import summarize, summarize_many
from wengert.jupyter.explorer.frames import explorer_frames

floats = st.floats(allow_nan=True, allow_infinity=True, width=64)
values = st.one_of(
    floats,
    st.just(-0.0),
    st.integers(-10**6, 10**6),
    st.booleans(),
    st.none(),
    hnp.arrays(np.float64, st.integers(0, 8), elements=floats),
    hnp.arrays(np.float32, st.integers(1, 4)),
    hnp.arrays(np.float64, st.tuples(st.integers(1, 3), st.integers(1, 3)), elements=floats),
    hnp.arrays(np.int64, st.integers(0, 7)),
    st.complex_numbers(allow_nan=False, allow_infinity=False),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(values, max_size=30), st.sampled_from([4, 6]), st.sampled_from([3, 4, 8]))
def test_bulk_texts_equal_one_at_a_time(items, max_items, digits):
    assert summarize_many(items, max_items, digits) == \
        [summarize(v, max_items, digits) for v in items]


@pytest.mark.parametrize("items", [
    [], [-0.0], [0.0, -0.0, -0.001, float("nan"), float("-inf")],
    [np.array([-0.0, 1.0]), np.array([-0.0]), -0.0, np.array([0.5, -0.0, -0.0])],
])
def test_negative_zero_reads_as_zero_in_bulk(items):
    assert summarize_many(items) == [summarize(v) for v in items]
    assert not any(t == "-0" or "-0," in t or "-0]" in t for t in summarize_many(items))


def test_the_collector_comes_back_after_an_exception_and_stays_off_if_it_was():
    assert gc.isenabled()
    with pytest.raises(ZeroDivisionError), collector_paused():
        assert not gc.isenabled()
        raise ZeroDivisionError("inside the block")
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            with collector_paused():  # nested: still off after the inner one
                pass
            assert not gc.isenabled()
        assert not gc.isenabled()  # the caller's choice is kept
    finally:
        gc.enable()


def test_building_frames_leaves_the_collector_as_it_was():
    x = wg.tensor(2.0, requires_grad=True)
    explorer_frames(wg.tape_of(x * x))
    assert gc.isenabled()
    with pytest.raises(ValueError):
        explorer_frames(wg.tape_of(x * x), mode="sideways")
    assert gc.isenabled()
