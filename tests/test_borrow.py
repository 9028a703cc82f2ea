"""`sim.borrow.borrowed`: a view of the same data without a reference, and the search that passes such views."""

from __future__ import annotations

import numba as nb
import numpy as np
import pytest
from numba.core.errors import TypingError

from sim.borrow import borrowed
from sim.rules import find_variant
from strategies.batch import preset_states
from tests.solver_helpers import solver


@nb.njit
def _write_through(a, start):  # noqa: ANN001, ANN202 (numba)
    view = borrowed(a)
    flat = view.reshape(-1)
    for i in range(flat.shape[0]):
        flat[i] = start + i
    return view.shape, view.sum()


@nb.njit
def _borrow_a_number(x):  # noqa: ANN001, ANN202 (numba)
    return borrowed(x)


@pytest.mark.parametrize("shape", [(7,), (3, 5)])
def test_a_borrowed_view_reads_and_writes_its_owners_data(shape):
    a = np.zeros(shape, dtype=np.int64)
    got_shape, total = _write_through(a, 10)
    assert got_shape == shape
    assert a.reshape(-1).tolist() == list(range(10, 10 + a.size))
    assert total == a.sum()


def test_only_an_array_can_be_borrowed():
    with pytest.raises(TypingError):
        _borrow_a_number(3)


def test_a_search_leaves_its_position_untouched_and_repeats_itself_on_the_same_work():
    """The search plays in a state array of its work (borrowed), not in the position it is given."""
    rules = find_variant("bakers-dozen")
    strategy = solver()
    for st in preset_states(rules, np.arange(1, 13), 0, "pysol"):
        before = st.copy()
        first = strategy.solve_state(rules, st)
        assert np.array_equal(st, before)
        assert strategy.solve_state(rules, st)[:3] == first[:3]
