"""The counter-based generator (sim.rng): Python and numba agree, and golden values pin it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.rng import (
    GOLDEN,
    STRATEGY_DOMAIN,
    CounterRNG,
    mix64,
    nb_below,
    nb_mix64,
    nb_rng_below,
    nb_strategy_key,
    nb_stream_key,
    strategy_key,
    stream_key,
)

U64 = (1 << 64) - 1
NONNEG_I64 = st.integers(min_value=0, max_value=(1 << 62) - 1)
N_VALUES = [1, 2, 3, 7, 13, 52, 100, 1000, 65537, (1 << 31) + 1, 3 << 30, (1 << 32) - 1, 1 << 32]


def nb_sequence(key: int, ns: list[int]) -> tuple[list[int], int]:
    out = []
    counter = 0
    for n in ns:
        value, counter = nb_below(np.uint64(key), np.int64(counter), np.int64(n))
        out.append(int(value))
    return out, int(counter)


def py_sequence(key: int, ns: list[int]) -> tuple[list[int], int]:
    rng = CounterRNG(key)
    return [rng.below(n) for n in ns], rng.counter


# --- golden values -------------------------------------------------------------------------------


def test_mix64_is_splitmix64():
    """SplitMix64 from state 0 outputs mix64(k * GOLDEN): its published first outputs."""
    assert GOLDEN == 0x9E3779B97F4A7C15
    assert mix64(GOLDEN) == 0xE220A8397B1DCDAF
    assert mix64(2 * GOLDEN) == 0x6E789E6AA1B965F4
    assert mix64(3 * GOLDEN) == 0x06C45D188009454F
    assert mix64(0) == 0
    assert mix64(1) == 0x5692161D100B05E5


@pytest.mark.parametrize(
    ("a", "b", "key", "skey"),
    [
        (0, 1, 0xD536D18EB3E1ED88, 0x0A2EF3B4C6D71C20),
        (0, 2, 0x7EB0CAFF873D87C2, 0xAE24453A56F00D23),
        (7, 1000, 0x94AC536D49C2357E, 0x70C0587BE7097A28),
        (123456789, 987654321, 0xEAFD1EF4224A1D19, 0x15492E4A3EA4CE43),
    ],
)
def test_golden_keys(a, b, key, skey):
    assert stream_key(a, b) == key
    assert strategy_key(a, b) == skey
    assert int(nb_stream_key(a, b)) == key
    assert int(nb_strategy_key(a, b)) == skey


def test_golden_draws():
    rng = CounterRNG(stream_key(0, 1))
    assert [rng.below(52) for _ in range(10)] == [24, 2, 33, 16, 42, 30, 41, 39, 12, 23]
    rng = CounterRNG(stream_key(0, 1))
    assert [rng.below(1 << 32) for _ in range(3)] == [2008972955, 181098050, 2738268778]
    assert rng.random() == pytest.approx(0.31807938358725996, abs=0)
    assert nb_sequence(stream_key(0, 1), [52] * 10)[0] == [24, 2, 33, 16, 42, 30, 41, 39, 12, 23]


def test_draw_formula():
    """Draw i is mix64(key + i * GOLDEN); below(2**32) returns its high 32 bits."""
    key = stream_key(5, 6)
    rng = CounterRNG(key)
    for i in range(1, 20):
        assert rng.below(1 << 32) == mix64(key + i * GOLDEN) >> 32
    rng = CounterRNG(key)
    assert rng.random() == (mix64(key + GOLDEN) >> 11) / 2.0**53


def test_stream_key_formula():
    for a, b in [(0, 0), (1, 2), (2**62 - 1, 2**62 - 1)]:
        assert stream_key(a, b) == mix64((mix64(a + GOLDEN) * GOLDEN + b) & U64)
        assert strategy_key(a, b) == stream_key(a ^ STRATEGY_DOMAIN, b)
        assert strategy_key(a, b) != stream_key(a, b)


# --- Python and numba agree -------------------------------------------------------------------


@pytest.mark.parametrize("n", N_VALUES)
def test_python_and_numba_below_agree(n):
    for a in range(6):
        for b in (1, 2, 99, 2**40):
            key = stream_key(a, b)
            ns = [n] * 40
            assert py_sequence(key, ns) == nb_sequence(key, ns)


def test_rejections_keep_counters_in_step():
    """With n = 3 * 2**30 about a quarter of the draws are rejected: both sides must skip the same ones."""
    key = stream_key(1, 1)
    ns = [3 << 30] * 400
    (py_values, py_counter), (nb_values, nb_counter) = py_sequence(key, ns), nb_sequence(key, ns)
    assert py_values == nb_values
    assert py_counter == nb_counter > 400 + 50


def test_mixed_n_sequences_agree():
    ns = [i % 60 + 1 for i in range(300)] + [(1 << 32) - i for i in range(50)]
    for seed in range(10):
        key = stream_key(seed, 12345)
        assert py_sequence(key, ns) == nb_sequence(key, ns)


def test_nb_rng_below_matches_counter_rng():
    for seed in range(8):
        key = strategy_key(seed, 77)
        state = np.array([key, 0], dtype=np.uint64)
        rng = CounterRNG(key)
        for n in [1, 2, 5, 52, 3 << 30, 13, 1 << 32] * 10:
            assert int(nb_rng_below(state, n)) == rng.below(n)
            assert int(state[1]) == rng.counter
        assert int(state[0]) == key


@settings(max_examples=200, deadline=None)
@given(a=NONNEG_I64, b=NONNEG_I64)
def test_keys_agree_everywhere(a, b):
    assert int(nb_stream_key(a, b)) == stream_key(a, b)
    assert int(nb_strategy_key(a, b)) == strategy_key(a, b)


@settings(max_examples=200, deadline=None)
@given(key=st.integers(min_value=0, max_value=U64), ns=st.lists(st.integers(min_value=1, max_value=1 << 32), max_size=20))
def test_below_sequences_agree_everywhere(key, ns):
    assert py_sequence(key, ns) == nb_sequence(key, ns)


@settings(max_examples=100, deadline=None)
@given(z=st.integers(min_value=0, max_value=U64))
def test_mix64_agrees(z):
    assert int(nb_mix64(np.uint64(z))) == mix64(z)


# --- range and input checks -------------------------------------------------------------------


@pytest.mark.parametrize("n", N_VALUES)
def test_below_stays_in_range(n):
    rng = CounterRNG(stream_key(3, n))
    values = [rng.below(n) for _ in range(300)]
    assert all(0 <= v < n for v in values)
    if n == 1:
        assert set(values) == {0}
    elif n <= 13:
        assert set(values) == set(range(n))  # 300 draws hit every value of a small range


def test_below_is_roughly_uniform():
    rng = CounterRNG(stream_key(9, 9))
    counts = np.bincount([rng.below(10) for _ in range(20_000)], minlength=10)
    assert counts.min() > 1800 and counts.max() < 2200


def test_random_is_in_unit_interval():
    rng = CounterRNG(stream_key(4, 4))
    xs = [rng.random() for _ in range(2000)]
    assert all(0.0 <= x < 1.0 for x in xs)
    assert 0.45 < sum(xs) / len(xs) < 0.55


@pytest.mark.parametrize("n", [0, -1, (1 << 32) + 1])
def test_below_rejects_bad_n(n):
    with pytest.raises(ValueError, match=r"1 <= n <= 2\*\*32"):
        CounterRNG(1).below(n)


def test_key_is_masked_to_64_bits():
    assert CounterRNG(-1).key == U64
    assert CounterRNG(1 << 64 | 5).key == 5


def test_streams_differ():
    assert len({stream_key(s, d) for s in range(30) for d in range(1, 30)}) == 30 * 29
    first = {CounterRNG(stream_key(0, d)).below(1 << 32) for d in range(1, 500)}
    assert len(first) > 490


def test_below_accepts_numpy_integers():
    for n in (52, 3 << 30, 1 << 32):
        a, b = CounterRNG(11), CounterRNG(11)
        xs = [a.below(n) for _ in range(50)]
        ys = [b.below(np.int64(n)) for _ in range(50)]
        assert xs == ys
        assert all(type(y) is int for y in ys)
    with pytest.raises(TypeError):
        CounterRNG(1).below(2.5)


def test_keys_accept_numpy_integers():
    for a, b in [(0, 1), (7, 1000), (2**62 - 1, 2**62 - 1)]:
        assert stream_key(np.int64(a), np.int64(b)) == stream_key(a, b)
        assert strategy_key(np.int64(a), np.uint64(b)) == strategy_key(a, b)
        assert type(stream_key(np.int64(a), np.int64(b))) is int
    key = stream_key(0, 1)
    assert CounterRNG(np.uint64(key)).key == key
    assert type(CounterRNG(np.uint64(key)).key) is int
    a, b = CounterRNG(np.uint64(key)), CounterRNG(key)
    assert [a.below(1 << 32) for _ in range(20)] == [b.below(1 << 32) for _ in range(20)]
