"""Many deals in one compiled call: deal, play with a compiled policy, collect per-deal results.

This is the unit of work the runner hands to each worker: one call plays a
chunk of deals in machine code and returns plain arrays.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from sim import engine as E
from sim.deals import deck_and_home, make_deal
from sim.game import Game
from sim.rules import Rules
from strategies.base import DealInfo, Strategy, StrategyError
from strategies.loops import loops_for
from strategies.play import illegal_index_reason, play_python, timeout_seconds


@dataclass
class BatchResult:
    """Per-deal arrays for one chunk; ``win_moves[win_offsets[i]:win_offsets[i+1]]`` are deal i's
    move codes when it was won (empty otherwise). ``termination`` holds int8 indices into
    `sim.engine.TERMINATIONS`; ``errors`` says, by index, why each deal that ended in error did.
    ``game_moves[game_offsets[i]:game_offsets[i+1]]`` are deal i's move codes whatever its end, kept
    where a strategy played in this process (the Python tier), for the runner's check of every row
    (``verify``); None for a compiled batch, whose engine made and counted every move itself."""

    numbers: np.ndarray
    outcome: np.ndarray
    termination: np.ndarray
    cards_home: np.ndarray
    moves: np.ndarray
    nodes: np.ndarray
    micros: np.ndarray
    win_moves: np.ndarray
    win_offsets: np.ndarray
    errors: dict[int, str] = field(default_factory=dict)
    game_moves: np.ndarray | None = None
    game_offsets: np.ndarray | None = None


def preset_states(rules: Rules, numbers: np.ndarray, seed: int, source: str) -> np.ndarray:
    """Engine states of deals from a source the compiled dealer does not know (e.g. ``pysol``)."""
    prm = E.rule_params(rules)
    out = np.zeros((len(numbers), prm[E.P_SIZE]), dtype=np.int8)
    for i, number in enumerate(numbers):
        d = make_deal(rules, int(number), seed, source)
        game = Game(rules, d.position, d)
        if not np.array_equal(game.rule_params, prm):
            raise RuntimeError(f"deal {number} from source {source!r} has a pile taller than the rules deal")
        out[i] = game.state_array()
    return out


def play_batch(
    rules: Rules, strategy: Strategy, numbers: np.ndarray, seed: int = 0, strategy_seed: int = 0, source: str = "default",
    deal_timeout: float | None = None,
) -> BatchResult:
    """Deal and play each deal number with the strategy's compiled tier.

    ``deal_timeout`` (seconds) ends a deal still running after it with termination
    ``timeout`` (outcome unknown), checked between moves by a compiled clock; a
    policy that never returns from one call cannot be stopped in this process
    (the runner kills such a worker)."""
    policy = strategy.compiled(rules)
    if policy is None:
        raise StrategyError(f"strategy {strategy.name!r} has no compiled tier; play it through strategies.play.play_python")
    timeout = timeout_seconds(deal_timeout)
    prm = E.rule_params(rules)
    base, home = deck_and_home(rules)  # the deck and home cards `sim.deals` deals from: the same deals
    numbers = np.ascontiguousarray(numbers, dtype=np.int64)
    if source == "default":
        preset = np.zeros((0, prm[E.P_SIZE]), dtype=np.int8)
    else:
        preset = preset_states(rules, numbers, seed, source)
    n = numbers.shape[0]
    outcome = np.zeros(n, dtype=np.int8)
    termination = np.zeros(n, dtype=np.int8)
    cards_home = np.zeros(n, dtype=np.int16)
    moves = np.zeros(n, dtype=np.int32)
    nodes = np.zeros(n, dtype=np.int64)
    micros = np.zeros(n, dtype=np.int64)
    win_offsets = np.zeros(n + 1, dtype=np.int64)
    win_moves = np.zeros(max(1024, n * 8), dtype=np.int16)
    play_deals = loops_for(policy.function).play_deals  # compiled once per machine, not per process
    done = 0
    while True:  # at least one call, even for no deals: that loads the loop (`prepare`)
        stop = play_deals(
            prm, seed, numbers[done:], preset[done:], base, home, policy.pparams, policy.scratch_size,
            strategy_seed, timeout, outcome[done:], termination[done:], cards_home[done:], moves[done:],
            nodes[done:], micros[done:], win_moves, win_offsets[done:],
        )
        done += stop
        if done >= n:
            break
        # the win at `done` did not fit: grow the buffer and go on from there
        need = int(win_offsets[done]) + int(moves[done])
        win_moves = np.concatenate([win_moves, np.zeros(max(win_moves.shape[0], need), dtype=np.int16)])
    errors = {int(i): illegal_index_reason(strategy.name) for i in np.flatnonzero(outcome == E.ERROR)}
    return BatchResult(numbers, outcome, termination, cards_home, moves, nodes, micros, win_moves[: win_offsets[-1]],
                       win_offsets, errors)


def prepare(rules: Rules, strategy: Strategy) -> None:
    """Load (or compile) the strategy's compiled loop for ``rules`` now, without playing a deal: what a
    worker process does while the main process readies a run. Nothing to do without a compiled tier."""
    policy = strategy.compiled(rules)
    if policy is not None:
        play_batch(rules, strategy, np.zeros(0, dtype=np.int64))  # calls the loop once, on no deals


def play_batch_python(
    rules: Rules, strategy: Strategy, numbers: np.ndarray, seed: int = 0, strategy_seed: int = 0, source: str = "default",
    deal_timeout: float | None = None,
) -> BatchResult:
    """Deal and play each deal number through the strategy's Python tier (`strategies.play.play_python`,
    with its guards), one deal at a time, into the same arrays as `play_batch`."""
    numbers = np.ascontiguousarray(numbers, dtype=np.int64)
    n = numbers.shape[0]
    outcome, termination = np.zeros(n, dtype=np.int8), np.zeros(n, dtype=np.int8)
    cards_home, moves = np.zeros(n, dtype=np.int16), np.zeros(n, dtype=np.int32)
    nodes, micros = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    win_offsets, game_offsets = np.zeros(n + 1, dtype=np.int64), np.zeros(n + 1, dtype=np.int64)
    codes: list[int] = []
    played: list[int] = []
    errors: dict[int, str] = {}
    for i, number in enumerate(numbers.tolist()):
        game = Game.from_deal(rules, number, seed, source)
        rec = play_python(strategy, game, DealInfo(rules, number, seed, source), strategy_seed, deal_timeout=deal_timeout)
        outcome[i], termination[i] = E.OUTCOMES.index(rec.outcome), E.TERMINATIONS.index(rec.termination)
        cards_home[i], moves[i], nodes[i], micros[i] = rec.cards_home, len(rec.moves), rec.nodes, int(rec.seconds * 1e6)
        if rec.error:
            errors[i] = rec.error
        game_codes = [m.code for m in rec.moves]
        played.extend(game_codes)
        game_offsets[i + 1] = len(played)
        if outcome[i] == E.WON:
            codes.extend(game_codes)
        win_offsets[i + 1] = len(codes)
    return BatchResult(numbers, outcome, termination, cards_home, moves, nodes, micros,
                       np.asarray(codes, dtype=np.int16), win_offsets, errors,
                       np.asarray(played, dtype=np.int16), game_offsets)
