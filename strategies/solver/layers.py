"""The layered prover: an exhaustive search whose memory is the largest layer, not the whole space.

`strategies.solver.search` keeps every position it has seen in one
transposition table; a proof of loss that needs more positions than the table
holds never ends. This prover uses the structure of the game instead. With
in-suit foundations and no worrying back, a card home never comes back, so the
foundation heights (h0, h1, h2, h3) never go down along a line: positions fall
into *layers* by their foundation vector, and every move either keeps the
foundations or puts more cards home. Within one foundation vector the cards
in bases (the piles without their top runs) never grow either, unless any
card may enter an empty pile (`strategies.solver.bases` says why): so a layer
is a foundation vector with a number of cards in bases, its *stage*
(`strategies.solver.codec.layer_of`), and every move either stays in its
layer or goes to one with more cards home, or as many home and fewer in
bases. Layers are expanded in that order; a layer is complete once every
position reachable inside it from its seeds has been expanded, and nothing
can ever enter it again (every move into it comes from a layer before it, all
finished). So only the layer being expanded is held whole (positions in an
array, a hash index over them), plus the *seeds* its positions send to later
layers; a finished layer is freed. The stages cut the largest layer about
threefold or more: good-measure 733's proof holds at most 290,304 positions at once
instead of 1,015,952 (one layer a foundation vector), the same 11,495,763 in
all (CHANGELOG.md, solver version 10).

Positions are kept as the compact keys of `strategies.solver.codec` (24 bytes,
decodable; a quiet tableau move changes one card's code, so most children get
their key without being played); seeds waiting for a later layer are kept in chunks, sorted and
without repeats, and go to disk (the checkpoint directory) when they outgrow
half the memory budget, and at every checkpoint.

Soundness. The prover explores the same graph as the search: positions after
the safe moves home (`strategies.solver.safe`), dead positions cut
(`strategies.solver.dead`), moves filtered as in `search._ordered_moves`.
Every argument there is about the graph, not the order of the search: a
winnable position has a generated child closer to a win, and every generated
child of an expanded position is itself expanded (same layer: at once, through
the layer's queue; later layer: through the seeds). So when every layer is
finished without meeting a won position, the root is lost. The keys are exact
(no hashing decides anything), so unlike the one-table search this proof has
no chance of a false cut.

Worrying back brings cards back from home, so the layers are re-entered: the
prover refuses those rules (and alternate-colour foundations, where the
foundations are not given by the cards home), and the solver falls back to the
plain search there.

With ``component_cap`` the layer stores components of inner moves (run cards
moved between holders, reversible, so every member has the value of the
others) instead of positions: `strategies.solver.components` gives the
definitions, the argument that they keep the proof sound, and how a component
too big for the cap is left as single positions. Memory then follows the
components; the work still follows the positions (every member's exits are
generated), plus the enumerations.

A won position ends the proof with WON; the prover keeps no parents, so it has
no line to give (`strategies.solver.strategy` then reports the deal unknown
rather than claim an unreplayed win).

Long proofs are jobs: with a checkpoint directory the prover saves, between
layers and at most every ``checkpoint_seconds``, the seeds of every unfinished
layer with its counters; inside a layer, every `LAYER_CHECKPOINT` times that
and whenever it stops, the layer itself as it stands (the keys it has expanded
and its queue). `prove` with the same directory continues from there, the
layer's expanded keys staying expanded, so that a layer too long for one run
is finished over several (after a kill as well: the directory always holds
one complete checkpoint). Why that is sound: a key is put in the expanded part
only once all its moves have been generated, each child in the layer is in
the layer (expanded or queued) and each child in a later layer is among the
seeds saved with it; so the saved layer is the state of the breadth-first
expansion between two steps, and going on from it expands what a run without
the stop would have.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numba as nb
import numpy as np

from sim.cards import DECK_SIZE
from sim.engine import (
    FOUNDATION,
    P_FOUND,
    P_MOVEBUF,
    P_MOVES,
    P_PILES,
    P_SIZE,
    P_WORRY,
    apply_move,
    cards_home,
    move_from,
    move_to,
    pile_base,
)
from sim.errors import UserError
from sim.rng import nb_mix64
from strategies.solver.codec import (
    KEY_WORDS,
    NO_CARD,
    code_on,
    decode,
    encode,
    layer_name,
    layer_of,
    layer_total,
    quiet_layer,
    root_below,
    set_code,
)
from strategies.solver.components import (
    CS_COMPONENTS,
    CS_DEAD,
    CS_MEMBERS,
    CS_RESUME,
    CW_ABOVE,
    CW_GEN,
    CW_MEMBERS,
    CW_ST,
    CW_STAMP,
    CW_STATS,
    CW_TABLE,
    CW_TMP,
    SINGLE,
    SINGLE_WORD,
    ComponentWork,
    canonical,
    component,
    is_inner,
)
from strategies.solver.dead import is_dead, new_dead_work
from strategies.solver.safe import play_safe_moves, uncovers_safe
from strategies.solver.search import F_DEAD, F_ORDER, F_SAFE, S_LOST, S_UNKNOWN, S_WON, _ordered_moves, home_rule

# statuses of `_expand`
X_DONE, X_GROW, X_FLUSH, X_WON, X_LIMIT, X_BAD = range(6)
EMPTY = np.int64(-1)
CHECKPOINT_META = "prover.json"
"""The checkpoint's index file (the seeds, and the layer a stopped run was expanding, are .npy files beside it)."""
LAYERING = "foundations, then cards in bases"
"""What the layer numbers of a checkpoint mean (`strategies.solver.codec.layer_of`); a checkpoint saved with
other numbers (a prover before the stages, whose index has no such entry) cannot be resumed."""
EXPAND_STEP = 1 << 16
"""Keys expanded between two safe points of a layer (where the prover checks its budgets and interrupts)."""
LAYER_CHECKPOINT = 10
"""Inside a layer the checkpoint is saved every this many ``checkpoint_seconds`` (a layer's members are
written whole each time), so a kill that cannot be caught loses at most that much of a long layer."""


def layered_rules(prm: np.ndarray) -> bool:
    """Whether the prover applies to the rules ``prm``: in-suit foundations without worrying back."""
    return int(prm[P_FOUND]) == 0 and int(prm[P_WORRY]) == 0


@nb.njit(cache=True, inline="always")
def _slot(keys: np.ndarray, row: np.int64, mask: np.uint64) -> np.uint64:
    h = nb_mix64(keys[row, 0] ^ nb_mix64(keys[row, 1] ^ nb_mix64(keys[row, 2])))
    return h & mask


@nb.njit(cache=True)
def _insert(members: np.ndarray, count: np.int64, table: np.ndarray, keys: np.ndarray, row: np.int64) -> bool:
    """Add ``keys[row]`` to the layer (``members[:count]``, indexed by ``table``) unless it is there.
    Returns whether it was added (at ``members[count]``); the caller counts it."""
    mask = np.uint64(table.shape[0] - 1)
    slot = _slot(keys, row, mask)
    while True:
        i = table[slot]
        if i == EMPTY:
            break
        if members[i, 0] == keys[row, 0] and members[i, 1] == keys[row, 1] and members[i, 2] == keys[row, 2]:
            return False
        slot = (slot + np.uint64(1)) & mask
    table[slot] = count
    for w in range(KEY_WORDS):
        members[count, w] = keys[row, w]
    return True


@nb.njit(cache=True)
def _reindex(members: np.ndarray, count: np.int64, table: np.ndarray) -> None:
    """Rebuild the hash index ``table`` (all empty on entry) over ``members[:count]``."""
    mask = np.uint64(table.shape[0] - 1)
    for i in range(count):
        slot = _slot(members, i, mask)
        while table[slot] != EMPTY:
            slot = (slot + np.uint64(1)) & mask
        table[slot] = i


@nb.njit(cache=True)
def _add_seeds(members, count, table, seeds, prm, rb, cw, use_comp):  # noqa: ANN001, ANN201 (numba)
    """Add every seed (as its component's canonical key with ``use_comp``) not yet in the layer; returns
    the new count (the caller sized the arrays)."""
    key = np.zeros((1, KEY_WORDS), dtype=np.uint64)
    for j in range(seeds.shape[0]):
        if use_comp:
            canonical(seeds, j, prm, rb, cw, key, 0)
            added = _insert(members, count, table, key, 0)
        else:
            added = _insert(members, count, table, seeds, j)
        if added:
            count += 1
    return count


@nb.njit(cache=True)
def _expand(members, count, head, table, up, up_layer, up_count, rb, prm, flags, layer, limit, dwork, cw,  # noqa: ANN001, ANN201 (numba)
            use_comp):
    """Expand the layer's queue ``members[head:count]`` (growing as children of the layer join it).

    Without components (``use_comp`` false) a member is a position; with them, the canonical key of a
    component (`strategies.solver.components`), whose members are enumerated again here and whose
    exits (every move of every member but the inner ones) are expanded, none when a member is dead;
    a component over the cap is its single position, expanded with every move. Same-layer children
    join the layer (as canonical keys with components); children in later layers go to ``up``
    (exact keys) and ``up_layer``. Stops when the queue is empty (`X_DONE`), when the arrays may lack
    room for one more member's children (`X_GROW`: members or table, `X_FLUSH`: up; the expansion
    of a component resumes at that member, ``cw``'s `CS_RESUME`), after ``limit`` positions
    (`X_LIMIT`), on a won child (`X_WON`) or on a child no key describes (`X_BAD`, a bug).
    Returns (status, count, head, up_count); positions and components are counted in ``cw``'s stats.
    """
    use_safe = (flags & F_SAFE) != 0
    rule = home_rule(flags)
    use_dead = (flags & F_DEAD) != 0
    room = prm[P_MOVES] + 1
    comp, ctab, cstamp, gen = cw[CW_MEMBERS], cw[CW_TABLE], cw[CW_STAMP], cw[CW_GEN]
    cst, cabove, stats, ctmp = cw[CW_ST], cw[CW_ABOVE], cw[CW_STATS], cw[CW_TMP]
    st = np.zeros(prm[P_SIZE], dtype=np.int8)
    ch = np.zeros_like(st)
    above = np.empty(DECK_SIZE, dtype=np.int64)
    tmp = np.empty(prm[P_MOVEBUF], dtype=np.int64)
    scores = np.zeros(prm[P_MOVES], dtype=np.int64)
    mbuf = np.zeros(prm[P_MOVES], dtype=np.int64)
    abuf = np.zeros(DECK_SIZE + 1, dtype=np.int64)
    rng = np.zeros(1, dtype=np.uint64)
    key = np.zeros((1, KEY_WORDS), dtype=np.uint64)
    canon = np.zeros((1, KEY_WORDS), dtype=np.uint64)
    done = 0
    while head < count:
        if done >= limit:
            return X_LIMIT, count, head, up_count
        single = not use_comp or (members[head, SINGLE_WORD] & SINGLE) != 0
        if single:
            n = 1
            for w in range(KEY_WORDS):
                comp[0, w] = members[head, w]
            comp[0, SINGLE_WORD] &= ~SINGLE
        else:
            n = component(members, head, prm, rb, comp, ctab, cstamp, gen, cst, cabove, ctmp)
            if n < 0:
                return X_BAD, count, head, up_count  # a component stored whole is never over the cap
        resume = stats[CS_RESUME]
        if resume == 0:
            stats[CS_COMPONENTS] += 1
            dead = False
            if use_dead:
                for j in range(n):
                    decode(comp, j, prm, rb, st, above)
                    if is_dead(st, prm, dwork):
                        dead = True
                        break
            if dead:
                # one dead member: the component is lost (its members reach each other)
                stats[CS_DEAD] += 1
                stats[CS_MEMBERS] += n
                head += 1
                done += n
                continue
        for j in range(max(resume - 1, 0), n):
            if count + room > members.shape[0] or 2 * (count + room) > table.shape[0]:
                stats[CS_RESUME] = j + 1
                return X_GROW, count, head, up_count
            if up_count + room > up.shape[0]:
                stats[CS_RESUME] = j + 1
                return X_FLUSH, count, head, up_count
            decode(comp, j, prm, rb, st, above)
            stats[CS_MEMBERS] += 1
            k = _ordered_moves(st, prm, flags & ~F_ORDER, tmp, scores, mbuf, 0, rng, 0)
            for i in range(k):
                m = mbuf[i]
                if not single and is_inner(st, prm, m):
                    continue  # its child is a member of this component
                src = move_from(m)
                dst = move_to(m)
                quiet = False
                if src < FOUNDATION and dst < FOUNDATION:
                    # a tableau move that uncovers no safe card: no safe move follows (the moved card was
                    # not safe where it lay, no foundation changed), so only the moved card's code changes
                    c = np.int64(st[pile_base(prm, src) + np.int64(st[src]) - 1])
                    if not (use_safe and uncovers_safe(st, prm, src, False, rule)):
                        hd = np.int64(st[dst])
                        below = np.int64(st[pile_base(prm, dst) + hd - 1]) if hd > 0 else NO_CARD
                        code = code_on(rb, c, below)
                        if code < 0:
                            return X_BAD, count, head, up_count
                        for w in range(KEY_WORDS):
                            key[0, w] = comp[j, w]
                        set_code(key, 0, c, code)
                        quiet = True
                if quiet:
                    lay = quiet_layer(st, prm, layer, src, dst)
                else:
                    ch[:] = st
                    apply_move(ch, prm, m)
                    if use_safe:
                        play_safe_moves(ch, prm, abuf, 0, False, rule)
                    if cards_home(ch, prm) == DECK_SIZE:
                        return X_WON, count, head, up_count
                    if not encode(ch, prm, rb, key, 0):
                        return X_BAD, count, head, up_count
                    lay = layer_of(ch, prm)
                if lay == layer:
                    if use_comp:
                        canonical(key, 0, prm, rb, cw, canon, 0)
                        added = _insert(members, count, table, canon, 0)
                    else:
                        added = _insert(members, count, table, key, 0)
                    if added:
                        count += 1
                else:
                    for w in range(KEY_WORDS):
                        up[up_count, w] = key[0, w]
                    up_layer[up_count] = lay
                    up_count += 1
        stats[CS_RESUME] = 0
        head += 1
        done += n
    return X_DONE, count, head, up_count


def sorted_unique(keys: np.ndarray, unique: bool = False) -> np.ndarray:
    """The rows of ``keys`` (n x `KEY_WORDS` uint64) sorted, each once: a sorted run. With ``unique``
    the caller vouches that no row repeats (a layer's members), which spares a copy."""
    if len(keys) <= 1:
        return keys.copy()
    order = np.lexsort(keys.T[::-1])
    s = keys[order]
    if unique:
        return s
    keep = np.ones(len(s), dtype=bool)
    keep[1:] = np.any(s[1:] != s[:-1], axis=1)
    return s[keep]


@dataclass
class ProofResult:
    """What `prove` found: the verdict (`S_WON`, `S_LOST`, `S_UNKNOWN`) and what it cost."""

    verdict: int
    positions: int
    """Positions expanded (in this run and the runs it resumed); with components, every member of every
    expanded component."""
    layers: int
    """Layers finished."""
    largest_layer: int
    """The most keys one layer held (positions, or components with components on)."""
    peak_bytes: int
    """The most bytes the layer, the seeds in memory and the component arrays held at once, counting the
    copies made while a layer doubles or is read back (a bound kept within ``max_bytes``)."""
    seconds: float
    """Seconds of this run."""
    reason: str = ""
    """Why the verdict is unknown ("memory", "seconds", "interrupted", "rules"), or empty."""
    components: int = 0
    """Keys expanded (in this run and the runs it resumed): positions without components, components with."""
    stats: dict[str, int] | None = None
    """This run's component counters (`strategies.solver.components`, ``CS_*``), with components on."""


class _Seeds:
    """The seeds of the unfinished layers: per layer, sorted runs in memory or in .npy files."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory
        self.runs: dict[int, list[np.ndarray | str]] = {}
        self.bytes = 0
        self.serial = 0

    def add(self, layer: int, keys: np.ndarray, unique: bool = False) -> None:
        run = sorted_unique(keys, unique)
        self.runs.setdefault(layer, []).append(run)
        self.bytes += run.nbytes

    def next_layer(self) -> int | None:
        return min(self.runs, key=lambda lay: (layer_total(lay), lay)) if self.runs else None

    def count(self, layer: int) -> int:
        """Seeds waiting for ``layer``, in memory and on disk (files are read for their shape only)."""
        return sum(len(np.load(self.directory / r, mmap_mode="r")) if isinstance(r, str) else len(r)
                   for r in self.runs.get(layer, []))

    def take(self, layer: int) -> list[np.ndarray]:
        out = []
        for run in self.runs.pop(layer):
            if isinstance(run, str):
                out.append(np.load(self.directory / run))
            else:
                self.bytes -= run.nbytes
                out.append(run)
        return out

    def spill(self) -> None:
        """Write every run in memory to a file (needs a directory)."""
        for layer, runs in self.runs.items():
            for i, run in enumerate(runs):
                if not isinstance(run, str):
                    name = f"seeds-{layer}-{self.serial}.npy"
                    self.serial += 1
                    np.save(self.directory / name, run)
                    self.bytes -= run.nbytes
                    runs[i] = name

    def files(self) -> set[str]:
        return {r for runs in self.runs.values() for r in runs if isinstance(r, str)}


def _save_open(directory: Path, seeds: _Seeds, layer: int, members: np.ndarray, head: int, count: int,
               component_cap: int) -> dict:
    """Write the layer being expanded as it stands, its expanded members and its queue, under new names;
    return the checkpoint's record of it (`_checkpoint`'s ``opened``)."""
    names = {}
    for part, rows in (("expanded", members[:head]), ("queued", members[head:count])):
        names[part] = f"open-{layer}-{seeds.serial}-{part}.npy"
        seeds.serial += 1
        np.save(directory / names[part], rows)
    return dict(names, layer=layer, component_cap=component_cap)


def _checkpoint(directory: Path, seeds: _Seeds, root: np.ndarray, prm: np.ndarray, state: dict,
                opened: dict | None = None) -> None:
    """Save a complete checkpoint: spill the seeds, write the index atomically, drop stale files.
    ``opened`` records the layer being expanded (`_save_open`), so that a resumed run goes on with it
    where this one stopped instead of expanding it again from its seeds."""
    seeds.spill()
    meta = dict(state, root=root.tolist(), rules=prm.tolist(), layering=LAYERING, serial=seeds.serial, open=opened,
                runs={str(k): [r for r in v if isinstance(r, str)] for k, v in seeds.runs.items()})
    tmp = directory / (CHECKPOINT_META + ".tmp")
    tmp.write_text(json.dumps(meta))
    os.replace(tmp, directory / CHECKPOINT_META)
    keep = seeds.files() | ({opened["expanded"], opened["queued"]} if opened else set())
    for f in [*directory.glob("seeds-*.npy"), *directory.glob("open-*.npy")]:
        if f.name not in keep:
            f.unlink()


def prove(st0: np.ndarray, prm: np.ndarray, flags: int, max_bytes: float, max_seconds: float,
          checkpoint: str | os.PathLike | None = None, checkpoint_seconds: float = 60.0,
          progress: Callable[[ProofResult], None] | None = None, component_cap: int = 0,
          cache_entries: int = 1 << 20) -> ProofResult:
    """Decide ``st0`` (rules ``prm``) by expanding every layer in order; see the module text.

    ``flags`` are the search's switches (`F_SAFE`, `F_DEAD`, `F_LONE`; ordering
    is irrelevant here). ``max_bytes`` bounds the layer and the seeds kept in
    memory (seeds beyond half of it go to ``checkpoint`` when given; without a
    directory the proof stops as unknown), counting the copies made while a layer
    doubles or is read back: a layer that cannot double within it stops the
    proof as unknown ("memory") before it allocates. ``max_seconds`` bounds this run.
    With ``checkpoint`` an earlier run's state there is resumed (when it is for
    the same position) and the state is saved as described above; a run that stops inside a layer
    saves that layer as it stands, and the next run goes on with it (its expanded keys are not
    expanded again). ``progress``
    is called with the figures so far after each layer, and every ``checkpoint_seconds`` inside a
    long one. ``component_cap`` above 0
    stores components of inner moves instead of positions (`strategies.solver.components`),
    each of at most that many members (bigger ones stay single positions), with a cache of
    ``cache_entries`` members; a checkpoint holds exact keys either way, so a proof may resume
    with another setting. With ``checkpoint``, a first Ctrl-C or ``kill`` (SIGINT or SIGTERM, in the
    main thread) stops the proof at its next safe point as unknown ("interrupted"), its checkpoint
    saved; without one they act as usual (KeyboardInterrupt, the end of the process), so that a caller
    such as the solver never takes an interrupt for a verdict.
    """
    with _Interrupts(checkpoint is not None) as interrupts:
        return _prove(st0, prm, flags, max_bytes, max_seconds, checkpoint, checkpoint_seconds, progress,
                      component_cap, cache_entries, interrupts)


class _Interrupts:
    """Ctrl-C (SIGINT) or a plain ``kill`` (SIGTERM) during a proof with a checkpoint (``catch``): the
    first asks the prover to stop at its next safe point (between two expansions of at most
    `EXPAND_STEP` keys), saving its checkpoint, with the reason "interrupted"; a second acts at once as usual
    (KeyboardInterrupt, or the end of the process), and the checkpoint directory still holds its last
    complete checkpoint. A proof run in the background by a shell ignores SIGINT, hence SIGTERM.
    Only where Python delivers signals (the main thread), and only for a signal that still has its
    default handling: the runner's workers ignore SIGINT and are stopped by the runner."""

    DEFAULTS = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL}
    """The signals caught, and the handling each gets back after its first arrival."""

    def __init__(self, catch: bool) -> None:
        self.asked = False
        self._catch = catch
        self._old: dict[int, object] = {}

    def __enter__(self) -> _Interrupts:
        if self._catch and threading.current_thread() is threading.main_thread():
            for signum, default in self.DEFAULTS.items():
                old = signal.getsignal(signum)
                if old is default:
                    self._old[signum] = old
                    signal.signal(signum, self._ask)
        return self

    def _ask(self, signum: int, frame: object) -> None:
        self.asked = True
        signal.signal(signum, self.DEFAULTS[signum])

    def __exit__(self, *exc: object) -> None:
        for signum, old in self._old.items():
            signal.signal(signum, old)


def _prove(st0: np.ndarray, prm: np.ndarray, flags: int, max_bytes: float, max_seconds: float,
           checkpoint: str | os.PathLike | None, checkpoint_seconds: float,
           progress: Callable[[ProofResult], None] | None, component_cap: int, cache_entries: int,
           interrupts: _Interrupts) -> ProofResult:
    """`prove`'s work, stopping at the next safe point once ``interrupts`` is asked to."""
    t0 = time.perf_counter()
    if not layered_rules(prm):
        return ProofResult(S_UNKNOWN, 0, 0, 0, 0, 0.0, "rules")
    directory = Path(checkpoint) if checkpoint is not None else None
    root = st0.copy()
    if flags & F_SAFE:
        play_safe_moves(root, prm, np.zeros(DECK_SIZE + 1, dtype=np.int64), 0, False,
                        home_rule(flags))
    if cards_home(root, prm) == DECK_SIZE:
        return ProofResult(S_WON, 0, 0, 0, 0, time.perf_counter() - t0)
    rb = root_below(root, prm)
    seeds = _Seeds(directory)
    counters = {"positions": 0, "components": 0, "layers": 0, "largest_layer": 0}
    opened = None  # the layer a stopped run was expanding (`_save_open`), to go on with first
    meta_path = directory / CHECKPOINT_META if directory is not None else None
    if meta_path is not None and meta_path.exists():
        meta = json.loads(meta_path.read_text())
        if meta.get("layering") != LAYERING:
            raise UserError(f"the proof saved in {directory} numbers its layers otherwise (an older prover); "
                            "start it again in an empty directory")
        if np.array_equal(np.array(meta["root"], dtype=root.dtype), root) and meta["rules"] == prm.tolist():
            counters = {k: int(meta.get(k, 0)) for k in counters}
            seeds.serial = int(meta["serial"])
            seeds.runs = {int(k): list(v) for k, v in meta["runs"].items() if v}
            opened = meta.get("open")
            if opened is not None and opened["component_cap"] != component_cap:
                # stored as another setting's components: back to exact positions, as seeds of the layer
                for part in ("expanded", "queued"):
                    keys = np.load(directory / opened[part])
                    keys[:, SINGLE_WORD] &= ~SINGLE
                    seeds.add(int(opened["layer"]), keys)
                opened = None
            if not seeds.runs and opened is None:
                return ProofResult(S_LOST, counters["positions"], counters["layers"], counters["largest_layer"], 0,
                                   time.perf_counter() - t0, components=counters["components"])
    if directory is not None:
        directory.mkdir(parents=True, exist_ok=True)
    if not seeds.runs and opened is None and counters["layers"] == 0:
        if (flags & F_DEAD) and is_dead(root, prm, new_dead_work(int(prm[P_PILES]))):
            return ProofResult(S_LOST, 0, 0, 0, 0, time.perf_counter() - t0)
        key = np.zeros((1, KEY_WORDS), dtype=np.uint64)
        encode(root, prm, rb, key, 0)
        seeds.add(int(layer_of(root, prm)), key)
    use_comp = component_cap > 0
    # without components only the counters of the (smallest) arrays are used: every key is its own position
    cwork = ComponentWork(prm, component_cap, cache_entries) if use_comp else ComponentWork(prm, 1, 16)
    cw = cwork.arrays()
    stats = cwork.stats
    room = int(prm[P_MOVES]) + 1
    up = np.zeros((max(1 << 16, 4 * room), KEY_WORDS), dtype=np.uint64)
    up_layer = np.zeros(len(up), dtype=np.int64)
    dwork = new_dead_work(int(prm[P_PILES]))
    peak = 0
    finished = 0  # layers finished in this run: a run out of time between layers has finished at least one
    last_checkpoint = last_report = time.perf_counter()
    done = {"positions": 0, "components": 0}  # this run's part of the counters, up to the last finished layer

    def totals() -> dict:
        return dict(counters, positions=counters["positions"] + int(stats[CS_MEMBERS]) - done["positions"],
                    components=counters["components"] + int(stats[CS_COMPONENTS]) - done["components"])

    def settle() -> None:
        counters.update(totals())
        done.update(positions=int(stats[CS_MEMBERS]), components=int(stats[CS_COMPONENTS]))

    def outside() -> int:
        """Bytes held beside the layer's arrays: the up buffer and room for the copies its next flush makes,
        the seeds in memory, the component arrays."""
        return up.nbytes * (1 + FLUSH_COPIES) + seeds.bytes + cwork.nbytes

    def result(verdict: int, reason: str = "") -> ProofResult:
        t = totals()
        names = ("members", "components", "enumerated", "visited", "cache_hits", "oversize", "big_config", "dead")
        return ProofResult(verdict, t["positions"], t["layers"], t["largest_layer"], peak,
                           time.perf_counter() - t0, reason, t["components"],
                           dict(zip(names, (int(x) for x in stats), strict=False)) if use_comp else None)

    while True:
        layer = int(opened["layer"]) if opened is not None else seeds.next_layer()
        if layer is None:
            if directory is not None:
                _checkpoint(directory, seeds, root, prm, counters)
            return result(S_LOST)
        if interrupts.asked or (finished and time.perf_counter() - t0 > max_seconds):
            if directory is not None:
                _checkpoint(directory, seeds, root, prm, counters, opened)
            return result(S_UNKNOWN, "interrupted" if interrupts.asked else "seconds")
        if directory is not None and time.perf_counter() - last_checkpoint > checkpoint_seconds:
            _checkpoint(directory, seeds, root, prm, counters, opened)
            last_checkpoint = time.perf_counter()
        if opened is not None:  # the stopped run's layer, mapped: read once it has room
            expanded, queued = (np.load(directory / opened[part], mmap_mode="r") for part in ("expanded", "queued"))
            n_seeds = len(expanded) + len(queued)
        else:
            n_seeds = seeds.count(layer)
        cap = max(1024, 2 * n_seeds + room)
        # the layer's arrays with its seeds (or the stopped run's layer) read back beside them
        start = _layer_bytes(cap) + n_seeds * KEY_BYTES + outside()
        if start > max_bytes:
            if directory is not None:
                _checkpoint(directory, seeds, root, prm, counters, opened)
            return result(S_UNKNOWN, "memory")
        peak = max(peak, start)
        members = np.zeros((cap, KEY_WORDS), dtype=np.uint64)
        table = np.full(_pow2(2 * cap), EMPTY, dtype=np.int64)
        if opened is not None:  # the stopped run's layer as it stood: its expanded members stay expanded
            head, count = len(expanded), n_seeds
            members[:head] = expanded
            members[head:count] = queued
            del expanded, queued
            _reindex(members, count, table)
            opened = None
        else:
            runs = seeds.take(layer)
            count = 0
            for r in runs:
                count = _add_seeds(members, count, table, r, prm, rb, cw, use_comp)
            del runs
            head = 0
        while True:
            status, count, head, up_count = _expand(members, count, head, table, up, up_layer, 0, rb, prm, flags,
                                                    layer, EXPAND_STEP, dwork, cw, use_comp)
            if up_count:
                _flush(seeds, up[:up_count], up_layer[:up_count])
            peak = max(peak, members.nbytes + table.nbytes + outside())
            if status == X_WON:
                return result(S_WON)
            if status == X_BAD:
                raise RuntimeError("the prover met a position its keys cannot describe, or a component stored whole grew past the cap")
            growth = _growth_bytes(len(members)) + outside() if status == X_GROW else 0
            no_room = growth > max_bytes
            if status == X_GROW and not no_room:
                peak = max(peak, growth)
                del table  # before the copy, so that old and new tables are never held together
                members = _grown(members, count)
                table = np.full(_pow2(2 * len(members)), EMPTY, dtype=np.int64)
                _reindex(members, count, table)
            if directory is not None and (seeds.bytes > max_bytes / 2
                                          or members.nbytes + table.nbytes + outside() > max_bytes):
                seeds.spill()
            over = no_room or members.nbytes + table.nbytes + outside() > max_bytes
            if status == X_DONE:
                break
            if progress is not None and time.perf_counter() - last_report > checkpoint_seconds:
                last_report = time.perf_counter()
                progress(result(S_UNKNOWN, f"in {layer_name(layer)}: {count:,} keys, "
                                           f"{head:,} expanded"))
            late = interrupts.asked or time.perf_counter() - t0 > max_seconds
            saving = directory is not None and time.perf_counter() - last_checkpoint > LAYER_CHECKPOINT * checkpoint_seconds
            if over or late or saving:
                # the layer as it stands: the head key's expansion may be partial (a component resumed at a
                # member), so it is saved as queued and expanded again whole
                settle()
                if directory is not None:
                    _checkpoint(directory, seeds, root, prm, counters,
                                _save_open(directory, seeds, layer, members, head, count, component_cap))
                    last_checkpoint = time.perf_counter()
            if over or late:
                stats[CS_RESUME] = 0
                return result(S_UNKNOWN, "memory" if over else "interrupted" if interrupts.asked else "seconds")
        settle()
        counters["layers"] += 1
        finished += 1
        counters["largest_layer"] = max(counters["largest_layer"], count)
        del members, table
        if progress is not None:
            progress(result(S_UNKNOWN, layer_name(layer)))


def _flush(seeds: _Seeds, keys: np.ndarray, layers: np.ndarray) -> None:
    order = np.argsort(layers, kind="stable")
    ls = layers[order]
    ks = keys[order]
    cuts = np.flatnonzero(np.diff(ls)) + 1
    for part_l, part_k in zip(np.split(ls, cuts), np.split(ks, cuts), strict=True):
        seeds.add(int(part_l[0]), part_k)


KEY_BYTES = KEY_WORDS * 8
"""Bytes of one key (a member of a layer, or a seed)."""
FLUSH_COPIES = 3
"""Buffers' worth of memory a flush of the up buffer holds at once beside it (`_flush`: a sorted copy, and
`sorted_unique`'s copy of each part with the index arrays)."""


def _layer_bytes(rows: int) -> int:
    """Bytes of a layer's arrays for ``rows`` members: the members and their hash index."""
    return rows * KEY_BYTES + 8 * _pow2(2 * rows)


def _growth_bytes(rows: int) -> int:
    """The most bytes a layer of ``rows`` members holds from the moment it doubles until it is done:
    while doubling (old and new members; the old index is freed first), then doubled."""
    return max(3 * rows * KEY_BYTES, _layer_bytes(2 * rows))


def _grown(members: np.ndarray, count: int) -> np.ndarray:
    out = np.zeros((2 * len(members), KEY_WORDS), dtype=np.uint64)
    out[:count] = members[:count]
    return out


def _pow2(n: int) -> int:
    return 1 << max(10, int(n - 1).bit_length())
