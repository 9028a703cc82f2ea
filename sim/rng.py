"""A small counter-based random generator, the same in Python and in numba.

Deals and randomised strategies need numbers that depend only on
(seed, deal number, draw index): never on chunking, worker count or machine.
A counter-based generator gives that without building a numpy Generator per
deal. The algorithm, so that it can be re-implemented anywhere:

- ``mix64(z)`` is SplitMix64's finaliser on 64-bit unsigned integers:
  ``z ^= z >> 30; z *= 0xBF58476D1CE4E5B9; z ^= z >> 27; z *= 0x94D049BB133111EB;
  z ^= z >> 31`` (all arithmetic modulo 2**64).
- A stream is keyed by two integers: ``key = mix64(mix64(a + G) * G + b)`` with
  ``G = 0x9E3779B97F4A7C15``.
- Draw number i (i = 1, 2, ...) is ``mix64(key + i * G)``.
- A uniform integer in ``[0, n)`` takes the high 32 bits ``x`` of a draw and
  returns ``(x * n) >> 32``, rejecting a draw (and taking the next) when
  ``(x * n) mod 2**32 < (2**32 - n) mod n``: Lemire's unbiased method.
"""

from __future__ import annotations

import operator

import numba as nb
import numpy as np

GOLDEN = 0x9E3779B97F4A7C15
_M1 = 0xBF58476D1CE4E5B9
_M2 = 0x94D049BB133111EB
_MASK = (1 << 64) - 1

_U_GOLDEN = np.uint64(GOLDEN)
_U_M1 = np.uint64(_M1)
_U_M2 = np.uint64(_M2)
_U30 = np.uint64(30)
_U27 = np.uint64(27)
_U31 = np.uint64(31)
_U32 = np.uint64(32)
_LOW32 = np.uint64(0xFFFFFFFF)
_TWO32 = np.uint64(1 << 32)


def mix64(z: int) -> int:
    """SplitMix64's finaliser (Python integers)."""
    z &= _MASK
    z = ((z ^ (z >> 30)) * _M1) & _MASK
    z = ((z ^ (z >> 27)) * _M2) & _MASK
    return z ^ (z >> 31)


def stream_key(a: int, b: int) -> int:
    """The key of the stream for the pair (a, b), e.g. (seed, deal number)."""
    a, b = operator.index(a), operator.index(b)  # numpy integers would overflow below
    return mix64((mix64(a + GOLDEN) * GOLDEN + b) & _MASK)


class CounterRNG:
    """Uniform integers from one keyed stream: what a Python-tier strategy is handed.

    Its ``below(n)`` sequence is identical to the compiled `nb_below` on the
    same key, which is what lets a compiled strategy replay a Python one.
    """

    __slots__ = ("key", "counter")

    def __init__(self, key: int) -> None:
        self.key = operator.index(key) & _MASK
        self.counter = 0

    def below(self, n: int) -> int:
        """A uniform integer in ``[0, n)``; ``n`` must be 1..2**32."""
        n = operator.index(n)  # a numpy integer would overflow in x * n below
        if not 1 <= n <= 1 << 32:
            raise ValueError(f"below(n) needs 1 <= n <= 2**32, got {n}")
        threshold = ((1 << 32) - n) % n
        while True:
            self.counter += 1
            x = mix64(self.key + self.counter * GOLDEN) >> 32
            m = x * n
            if (m & 0xFFFFFFFF) >= threshold:
                return m >> 32

    def random(self) -> float:
        """A float in [0, 1) with 53 random bits."""
        self.counter += 1
        return (mix64(self.key + self.counter * GOLDEN) >> 11) / float(1 << 53)


@nb.njit(cache=True, inline="always")
def nb_mix64(z: np.uint64) -> np.uint64:
    """`mix64` for compiled code (uint64 in, uint64 out)."""
    z = (z ^ (z >> _U30)) * _U_M1
    z = (z ^ (z >> _U27)) * _U_M2
    return z ^ (z >> _U31)


@nb.njit(cache=True)
def nb_stream_key(a: np.int64, b: np.int64) -> np.uint64:
    """`stream_key` for compiled code; a and b are non-negative int64."""
    return nb_mix64(nb_mix64(np.uint64(a) + _U_GOLDEN) * _U_GOLDEN + np.uint64(b))


@nb.njit(cache=True)
def nb_below(key: np.uint64, counter: np.int64, n: np.int64) -> tuple[np.int64, np.int64]:
    """A uniform integer in [0, n) from the stream; returns (value, new counter)."""
    un = np.uint64(n)
    threshold = (_TWO32 - un) % un
    while True:
        counter += 1
        x = nb_mix64(key + np.uint64(counter) * _U_GOLDEN) >> _U32
        m = x * un
        if (m & _LOW32) >= threshold:
            return np.int64(m >> _U32), counter


STRATEGY_DOMAIN = 0x5354524154454759
"""Mixed into a strategy's stream so that it never coincides with a deal's."""


def strategy_key(strategy_seed: int, deal_number: int) -> int:
    """The stream a strategy draws from on one deal: keyed by (strategy seed, deal)."""
    return stream_key(operator.index(strategy_seed) ^ STRATEGY_DOMAIN, deal_number)


@nb.njit(cache=True)
def nb_strategy_key(strategy_seed: np.int64, deal_number: np.int64) -> np.uint64:
    """`strategy_key` for compiled code."""
    return nb_stream_key(strategy_seed ^ STRATEGY_DOMAIN, deal_number)


@nb.njit(cache=True)
def nb_rng_below(rng: np.ndarray, n: np.int64) -> np.int64:
    """A uniform integer in [0, n) from a compiled RNG held as uint64[2] = (key, counter)."""
    value, counter = nb_below(rng[0], np.int64(rng[1]), n)
    rng[1] = np.uint64(counter)
    return value


@nb.njit(cache=True, inline="always")
def nb_xorshift64(x: np.uint64) -> np.uint64:
    """The next state of Marsaglia's xorshift64 generator (shifts 13, 7, 17) after ``x`` (never 0): the cheap
    pseudo-random terms of the solver's move order and the beam search's tie-break, where the counter-based
    streams above would cost a mix per draw."""
    x ^= x << np.uint64(13)
    x ^= x >> np.uint64(7)
    x ^= x << np.uint64(17)
    return x
