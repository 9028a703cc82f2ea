"""Playing one deal with one strategy, in either tier, with the arena's guards.

A strategy that raises or returns a move that is not legal ends the deal with
outcome ``error`` (the reason is kept); one that makes no progress for
`sim.engine.NO_PROGRESS_LIMIT` moves, or resigns, loses it. Nothing a strategy
does can crash a run or count as a win.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from sim import engine as E
from sim.game import Game
from sim.notation import Move
from sim.rng import CounterRNG, strategy_key
from strategies.base import UNDECIDED

if TYPE_CHECKING:
    from strategies.base import DealInfo, Strategy


@dataclass
class GameRecord:
    """What happened in one deal."""

    outcome: str
    cards_home: int
    moves: list[Move] = field(default_factory=list)
    error: str | None = None
    nodes: int = 0
    seconds: float = 0.0


def strategy_rng(strategy_seed: int, deal_number: int) -> CounterRNG:
    """The generator a strategy gets for one deal (the compiled tier draws the same)."""
    return CounterRNG(strategy_key(strategy_seed, deal_number))


def play_python(strategy: Strategy, game: Game, info: DealInfo, strategy_seed: int = 0) -> GameRecord:
    """Play ``game`` to the end through `Strategy.choose`."""
    start = time.perf_counter()
    strategy.reset(info, strategy_rng(strategy_seed, info.number))
    st, prm = game._st, game._prm
    best, since = E.progress_mark(st, prm), 0

    def done(outcome: int, error: str | None = None) -> GameRecord:
        return GameRecord(E.OUTCOMES[outcome], game.cards_home, game.history, error, nodes=strategy.nodes,
                          seconds=time.perf_counter() - start)

    while True:
        if E.cards_home(st, prm) == 52:
            return done(E.WON)
        moves = game.legal_moves()
        if not moves or since >= E.NO_PROGRESS_LIMIT:
            return done(E.LOST)
        try:
            choice = strategy.choose(game.view(peeks=strategy.peeks), moves)
        except Exception as exc:  # the arena survives any strategy failure
            return done(E.ERROR, f"{strategy.name} raised {type(exc).__name__}: {exc}")
        if choice is None:
            return done(E.LOST)
        if choice is UNDECIDED:
            return done(E.UNKNOWN)
        if choice not in moves:
            return done(E.ERROR, f"{strategy.name} chose {choice!r}, which is not one of the {len(moves)} legal moves")
        game.play_legal(choice)
        mark = E.progress_mark(st, prm)
        if mark > best:
            best, since = mark, 0
        else:
            since += 1


def play_compiled(strategy: Strategy, game: Game, info: DealInfo, strategy_seed: int = 0) -> GameRecord:
    """Play ``game`` to the end in machine code through the strategy's `CompiledPolicy`."""
    policy = strategy.compiled(game.rules)
    if policy is None:
        raise ValueError(f"strategy {strategy.name!r} has no compiled tier")
    start = time.perf_counter()
    strategy.reset(info, strategy_rng(strategy_seed, info.number))
    rng = np.array([strategy_key(strategy_seed, info.number), 0], dtype=np.uint64)
    moves = np.empty(E.MAX_MOVES_BUFFER, dtype=np.int64)
    record = np.empty(1 << 16, dtype=np.int64)
    scratch = np.zeros(max(policy.scratch_size, 2), dtype=np.int64)
    outcome, n = E.play_game(game._st, game._prm, policy.function, policy.pparams, rng, scratch, moves, record)
    played = _decode(game, record[: min(n, record.shape[0])])
    error = None
    if outcome == E.ERROR:
        error = f"{strategy.name} (compiled) chose a move index outside the legal moves"
    return GameRecord(E.OUTCOMES[outcome], game.cards_home, played, error, nodes=int(scratch[E.SCRATCH_NODES]),
                      seconds=time.perf_counter() - start)


def _decode(game: Game, codes: np.ndarray) -> list[Move]:
    """Turn engine codes played from ``game.start`` into Moves (by replaying them on a copy)."""
    replay = Game(game.rules, game.start, game.deal)
    for code in codes:
        replay.play_code(int(code))
    game._history = replay._history
    return replay.history
