"""The free-parking relaxation as a cut inside the search, once per configuration.

The relaxation (`strategies.solver.capacity`) reads a position only through
its *configuration*: each pile's base (the pile without its top run) and the
foundation heights. Its loss is a proof that the position is lost, so the
search may cut every node whose configuration the relaxation loses, as it
cuts a dead one (`strategies.solver.dead`): treated as a node with no moves,
it is a proven loss for the search's argument and for the proofs the restarts
keep (`strategies.solver.search`).

Why it pays where the dead test alone does not. Random walks from good-measure
deals the searches leave unknown meet a relaxed loss long before a dead
position: on deals 806 and 937, of 100 walks each, 59 and 74 reached a
configuration the relaxation loses (within 5,000 states) where the dead test
did not yet fire, and only 8 and 5 the other way round (CHANGELOG.md,
solver version 6). A depth-first search that enters such a
configuration expands everything below it until each line dies on its own.

Why it is cheap. The configuration changes only when a base card leaves its
pile or a card goes home. A move of a run card onto another pile (an *inner*
move) keeps it: the card left a top run and extends another, so no base
changes, and nothing goes home. The search therefore asks only at the root,
after a move that is not inner, and where safe moves went home. The answer
depends on the configuration alone, so it is remembered: a configuration is
packed exactly (each base's length, as the bases of one root are prefixes of
its piles, and the four heights; `strategies.solver.capacity.pack_configuration`) into a
direct-mapped memo of `MEMO_SLOTS` entries, each tagged with the generation of
the root it was computed for; a collision only replaces an entry, which costs
a computation again and never a wrong answer.

Why the bases of one root are prefixes of its piles. With the relaxation's
rules (empty piles never refilled), a card joins a pile only by building on
its top card, so a pile is always a prefix of the root's pile with cards on
it that each build on the one below; the top run holds all those cards, so the
base is a prefix of the root's pile, fixed by its length.

Each new configuration gets at most ``states`` states of the relaxation
(`SolverWork`'s ``relax_states``); past them it is not cut.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from sim.engine import FOUNDATION, MAX_PILE_CAP, P_BUILD, P_PILES, builds_on, fheight_at, move_from, move_to, pile_base
from strategies.solver.capacity import (
    base_lengths,
    holds,
    key_hash,
    pack_configuration,
    pack_fields,
    relaxed_loss,
    slots_for,
)

MEMO_SLOTS = 1 << 16
"""Entries of the memo of configurations (each the packed configuration and a tag word)."""
MEMO_SALT = np.uint64(0x5EED_C0F1_6A7B_3D29)
"""Start of the hash that places a configuration in the memo."""

KEPT_CALLS = 50
"""The relaxation's states for one root are at most this many calls' worth: the kept set of relaxed losses has
room for them (at most half full), and once they are spent the cut answers from the memo only."""

RW_LEN, RW_HOME, RW_WORD, RW_SHIFT, RW_STATE, RW_ROWS = range(6)
"""Rows of the int64 work array: the base lengths and foundation heights of the position asked about; where
the fields of a packed configuration lie (`strategies.solver.capacity.pack_fields` for bases of any length);
the state of the kept set (`KS_*`)."""
KS_ROOT, KS_USED = 0, 1
"""`RW_STATE` slots: the root generation the kept set belongs to, and the configurations it holds at most."""


def new_relax_cut(piles: int, states: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The arrays of `config_lost` for ``piles`` piles and ``states`` states a configuration: (memo, the kept
    set of relaxed losses, int64 work)."""
    word, shift, words = pack_fields(np.full(piles, MAX_PILE_CAP, dtype=np.int64))
    work = np.zeros((RW_ROWS, piles + 4), dtype=np.int64)
    work[RW_WORD], work[RW_SHIFT] = word, shift
    memo = np.zeros((MEMO_SLOTS, words + 1), dtype=np.uint64)
    kept = np.zeros((slots_for(KEPT_CALLS * states) if states > 0 else 1, words + 1), dtype=np.uint64)
    return memo, kept, work


@nb.njit(cache=True, inline="always")
def keeps_configuration(st: np.ndarray, prm: np.ndarray, m: np.int64) -> bool:
    """Whether legal move m, not yet played on ``st``, is inner: a run card (one on a card it builds on) onto
    another pile's card. Such a move keeps the configuration (the module's text)."""
    src = move_from(m)
    dst = move_to(m)
    if src >= FOUNDATION or dst >= FOUNDATION or st[dst] == 0 or st[src] < 2:
        return False
    top = pile_base(prm, src) + np.int64(st[src]) - 1
    return builds_on(np.int64(st[top]), np.int64(st[top - 1]), prm[P_BUILD])


@nb.njit(cache=True)
def config_lost(st: np.ndarray, prm: np.ndarray, memo: np.ndarray, kept: np.ndarray, work: np.ndarray,
                states: np.int64, root: np.int64) -> bool:
    """Whether the relaxation loses the configuration of ``st`` within ``states`` states, remembered per
    configuration for the root of generation ``root`` (a positive number)."""
    P = prm[P_PILES]
    L = work[RW_LEN, :P]
    h = work[RW_HOME, :4]
    base_lengths(st, prm, L)
    for s in range(4):
        h[s] = st[fheight_at(P, s)]
    words = memo.shape[1] - 1
    word, shift = work[RW_WORD], work[RW_SHIFT]
    key = np.zeros(words, dtype=np.uint64)
    pack_configuration(L, h, word, shift, key)
    # the slot depends on the configuration alone, not on the root's number (see `renumber_root`)
    slot = key_hash(key, MEMO_SALT) & np.uint64(memo.shape[0] - 1)
    if memo[slot, words] >> np.uint64(1) == np.uint64(root) and holds(memo[slot], key):
        return (memo[slot, words] & np.uint64(1)) != 0
    ks = work[RW_STATE]
    if ks[KS_ROOT] != root:
        kept[:] = 0
        ks[KS_ROOT], ks[KS_USED] = root, 0
    if ks[KS_USED] + states + 1 > KEPT_CALLS * states:
        return False  # this root's states are spent
    lost, n = relaxed_loss(st, prm, L, states, kept, word, shift)
    ks[KS_USED] += n
    memo[slot, :words] = key
    memo[slot, words] = (np.uint64(root) << np.uint64(1)) | np.uint64(lost)
    return lost


@nb.njit(cache=True)
def renumber_root(memo: np.ndarray, work: np.ndarray, keep: np.int64, to: np.int64) -> None:
    """For when root generations start again (`strategies.solver.table.renumber`): drop every remembered
    verdict and the kept set, except those of root ``keep`` (none when 0), which become root ``to``'s."""
    tag = memo.shape[1] - 1
    one = np.uint64(1)
    for i in range(memo.shape[0]):
        if keep != 0 and memo[i, tag] >> one == np.uint64(keep):
            memo[i, tag] = (np.uint64(to) << one) | (memo[i, tag] & one)
        else:
            memo[i, :] = 0
    ks = work[RW_STATE]
    ks[KS_ROOT] = to if keep != 0 and ks[KS_ROOT] == keep else 0
