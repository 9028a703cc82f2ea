"""`check_strategy`: does a strategy keep the promises the toolkit's results rest on?

Modelled on Gymnasium's ``check_env``, for strategy authors. It plays a few
deals of every preset variant, twice, in each tier the strategy has, and
reports six named checks, each passed, failed (with the first problem, its
variant, deal and tier) or skipped (with why):

- ``identity``: name, version, identity and label are the same in two loads
  and after play (results are stored and labelled under them);
- ``code``: what a plug-in's results are keyed by besides name and version: the
  digest of its code and the modules it reads, or nothing when it sets
  ``code_in_key = False`` (it then bumps ``version`` whenever play changes);
- ``plays``: every preset variant plays: nothing escapes the arena, and the
  referee (`sim.referee`) accepts every move and agrees on cards home and wins;
- ``returns``: no game ends because the strategy raised, chose something that is
  not one of its legal moves, or ran past the per-deal time limit (the arena
  already survives all three; here they are the author's bug, with the deal);
- ``determinism``: the same deal and strategy seed give the same game in each
  tier, played again by a second instance, deals in the opposite order;
- ``tiers``: a strategy with a compiled policy plays the same games in the
  Python tier, the compiled tier and the runner's batch. On face-down deals the
  Python tier sees hidden cards blanked, so equal play also shows that the
  compiled policy does not read them (not for a clairvoyant strategy, which
  is shown them in both tiers; the report says so).

It also measures deals per second in each tier, for information.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from sim import engine as E
from sim.deals import check_strategy_seed
from sim.errors import UserError
from sim.game import Game
from sim.referee import replay
from sim.rules import VARIANTS, Rules
from strategies import compiled_policy, is_builtin, load_strategy
from strategies.base import DealInfo, Strategy, StrategyError
from strategies.batch import BatchResult, play_batch
from strategies.code import code_modules
from strategies.memory import check_memory
from strategies.play import GameRecord, play_compiled, play_python, timeout_seconds

DEFAULT_DEALS = 3
"""Deals per preset variant: enough to meet most code paths, seconds for the built-ins."""
MAX_DEALS = 10_000
"""Each deal is played up to six times in each preset (two runs: two tiers and the batch); more is a study."""

PASS, FAIL, SKIP = "pass", "fail", "skip"
TIERS = ("python", "compiled")


@dataclass(frozen=True)
class CheckResult:
    """One named check: its status (``pass``, ``fail`` or ``skip``) and the reason, in one line."""

    name: str
    status: str
    detail: str


@dataclass
class CheckReport:
    """What `check_strategy` found: the strategy's identity, each check, and the speed figures."""

    identity: str
    label: str
    deals: int
    variants: tuple[str, ...]
    strategy_seed: int
    results: list[CheckResult] = field(default_factory=list)
    speed: str = ""

    @property
    def passed(self) -> bool:
        """Whether no check failed (a skipped check does not fail)."""
        return all(r.status != FAIL for r in self.results)

    @property
    def failed(self) -> list[str]:
        """The names of the checks that failed."""
        return [r.name for r in self.results if r.status == FAIL]

    def result(self, name: str) -> CheckResult:
        """The check called ``name``."""
        return next(r for r in self.results if r.name == name)

    def text(self) -> str:
        """The report as `bakers-dozen check-strategy` prints it: a heading, one line per check, the verdict."""
        width = max(len(r.name) for r in self.results)
        lines = [f"check-strategy {self.identity} (label {self.label!r}): {self.deals} deal(s) in each of "
                 f"{len(self.variants)} variants, strategy seed {self.strategy_seed}"]
        lines += [f"  {r.status.upper():4}  {r.name:{width}}  {r.detail}" for r in self.results]
        lines.append(f"  INFO  {'speed':{width}}  {self.speed}")
        failed = self.failed
        lines.append(f"{len(failed)} of {len(self.results)} checks failed: {', '.join(failed)}" if failed
                     else f"all {len(self.results) - self._skipped()} checks passed"
                          + (f" ({self._skipped()} skipped)" if self._skipped() else ""))
        return "\n".join(lines)

    def _skipped(self) -> int:
        return sum(r.status == SKIP for r in self.results)


@dataclass(frozen=True)
class _Game:
    """One game as the checks keep it: a digest of its moves (not the moves: memory stays small), how it ended."""

    digest: str
    moves: int
    termination: str
    cards_home: int
    outcome: str

    def summary(self) -> str:
        return f"{self.moves} moves, {self.outcome} ({self.termination}), {self.cards_home} home"


class _Problems:
    """The problems one check found: the count and the first one, which the report shows."""

    def __init__(self) -> None:
        self.count = 0
        self.first = ""

    def add(self, text: str) -> None:
        self.count += 1
        if self.count == 1:
            self.first = text

    def result(self, name: str, total: int, what: str, ok: str) -> CheckResult:
        if not self.count:
            return CheckResult(name, PASS, ok)
        more = f" (and {self.count - 1} more)" if self.count > 1 else ""
        return CheckResult(name, FAIL, f"{self.count} of {total} {what}: {self.first}{more}")


def check_strategy(spec_or_strategy: str | Strategy, deals: int = DEFAULT_DEALS, strategy_seed: int = 0,
                   deal_timeout: float | None = None, variants: Sequence[Rules] | None = None,
                   ) -> CheckReport:
    """Check a strategy (a spec as ``--strategy`` takes it, or an instance) and report each check.

    Plays deals 1..``deals`` (seed 0) of each preset variant (or of ``variants``)
    with ``strategy_seed``, twice, in both tiers when the strategy has a compiled
    policy. ``deal_timeout`` (seconds) fails a game that runs longer (none by
    default: the first game in each tier includes numba's compilation).

    Raises a `sim.errors.UserError` (`StrategyError` for a spec that does not
    load) for bad arguments; a strategy that misbehaves while it plays is a
    failing check, never an exception.
    """
    load = _loader(spec_or_strategy)
    if isinstance(deals, bool) or not isinstance(deals, int) or not 1 <= deals <= MAX_DEALS:
        raise StrategyError(f"deals {deals!r}: allowed: a whole number 1..{MAX_DEALS:,} (deals per preset variant)")
    check_strategy_seed(strategy_seed)
    timeout = timeout_seconds(deal_timeout)
    rules_list = tuple(v.rules for v in VARIANTS) if variants is None else tuple(variants)
    if not rules_list:
        raise StrategyError("no variants to check; allowed: one or more sim.rules.Rules (default: every preset)")
    first = load()
    for rules in rules_list:  # two instances play here at once (the second checks the first's determinism)
        check_memory(first, rules, 2)
    before = _fingerprint(first)
    try:
        second: Strategy | None = load()
        again = _fingerprint(second)
    except StrategyError as exc:
        second, again = None, f"a second load failed: {exc}"
    numbers = list(range(1, deals + 1))
    one = _Run(first, strategy_seed, timeout)
    one.play(rules_list, numbers)
    two = _Run(second if second is not None else first, strategy_seed, timeout)
    two.play(rules_list[::-1], numbers[::-1])
    identity, label = (before[2], before[3]) if isinstance(before, tuple) else (type(first).__qualname__, "?")
    report = CheckReport(identity, label, deals, tuple(r.name for r in rules_list), strategy_seed)
    report.results += [_identity(before, again, _fingerprint(first)), _code(first), one.plays(), one.returns(),
                       _determinism(one, two), one.tiers(first.peeks)]
    report.speed = two.speed()
    return report


def _loader(spec_or_strategy: str | Strategy) -> Callable[[], Strategy]:
    """A function that loads the strategy afresh each time it is called."""
    if isinstance(spec_or_strategy, str):
        return lambda: load_strategy(spec_or_strategy)
    if isinstance(spec_or_strategy, Strategy):
        given, cls, params = [spec_or_strategy], type(spec_or_strategy), dict(spec_or_strategy.params)
        return lambda: given.pop() if given else _construct(cls, params)
    raise StrategyError(f"check_strategy takes a strategy spec (text) or a strategies.base.Strategy; "
                        f"got {type(spec_or_strategy).__name__}")


def _construct(cls: type[Strategy], params: dict[str, object]) -> Strategy:
    """``cls(**params)``, as `load_strategy` makes a strategy; its failure is a `StrategyError`."""
    try:
        return cls(**params)
    except StrategyError:
        raise
    except Exception as exc:  # noqa: BLE001 (the author's code: its failure is a finding, in one line)
        raise StrategyError(f"creating strategy {cls.__qualname__} again failed: {_one_line(exc)}") from None


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text if len(text) <= 200 else text[:197] + '...'}"


# --- identity ---------------------------------------------------------------------------------------------

def _fingerprint(strategy: Strategy) -> tuple[str, ...] | str:
    """Name, version, identity, label and parameters, or the error that reading them raised."""
    try:
        return (strategy.name, strategy.version, strategy.identity, strategy.label, repr(sorted(strategy.params.items())))
    except Exception as exc:  # noqa: BLE001 (a hostile property is the finding)
        return f"reading its identity raised {_one_line(exc)}"


def _identity(first: tuple[str, ...] | str, second: tuple[str, ...] | str, after: tuple[str, ...] | str) -> CheckResult:
    """Whether the first load, a second load and the first after play show the same identity."""
    fields = ("name", "version", "identity", "label", "parameters")
    for text in (first, second, after):
        if isinstance(text, str):
            return CheckResult("identity", FAIL, text)
    for other, when in ((second, "a second load"), (after, "the same instance after play")):
        for name, a, b in zip(fields, first, other, strict=True):
            if a != b:
                return CheckResult("identity", FAIL, f"{name} {a!r} on the first load, {b!r} in {when}; results are "
                                                     "stored under it, so it must depend only on the parameters")
    return CheckResult("identity", PASS, f"{first[2]}, label {first[3]!r}: the same in two loads and after play")


def _code(strategy: Strategy) -> CheckResult:
    """What a plug-in's stored results are keyed by besides its name and version: a digest of its code (which
    modules), or, with ``code_in_key = False``, nothing, which the check says so the author knows to bump
    ``version``."""
    if is_builtin(strategy):
        return CheckResult("code", PASS, f"a built-in: its results are keyed by its version ({strategy.version}), "
                                         "which its pinned-play tests guard")
    if not type(strategy).code_in_key:
        return CheckResult("code", PASS, "code_in_key = False: results are keyed by name and version alone, so an "
                                         "edited plug-in reuses its old rows; bump version whenever a change alters play")
    try:
        digest = strategy.code_digest
    except UserError as exc:
        return CheckResult("code", FAIL, str(exc))
    modules = ", ".join(code_modules(type(strategy)))
    return CheckResult("code", PASS, f"digest {digest} of {modules}: results are keyed by it, so an edit plays "
                                     "every deal again and restoring the code reuses the old rows")


# --- playing ----------------------------------------------------------------------------------------------

class _Run:
    """One pass over the deals with one strategy instance: every game's summary, and what went wrong."""

    def __init__(self, strategy: Strategy, strategy_seed: int, timeout: float) -> None:
        self.strategy = strategy
        self.seed = strategy_seed
        self.timeout = timeout
        self.games: dict[tuple[str, int, str], _Game] = {}
        self.batches: dict[str, tuple[list[int], BatchResult]] = {}
        self.face_down: set[str] = set()
        self.broken = _Problems()
        self.bad_returns = _Problems()
        self.tier_diffs = _Problems()
        self.tier_diff_face_up = False
        self.differing: set[tuple[str, int]] = set()
        self.judged: tuple[str, int, _Game] | None = None
        self.played = 0
        self.compared = 0
        self.compiled_variants = 0
        self.seconds = {"python": 0.0, "batch": 0.0}
        self.counted = {"python": 0, "batch": 0}

    def play(self, rules_list: Sequence[Rules], numbers: list[int]) -> None:
        """Play every deal of every variant in each tier the strategy has, checking each game as it ends."""
        for rules in rules_list:
            if rules.face_down:
                self.face_down.add(rules.name)
            compiled = self._has_compiled(rules)
            self.compiled_variants += compiled
            for number in numbers:
                played = {tier: self._one(rules, number, tier) for tier in TIERS[: 1 + compiled]}
                if compiled:
                    self._compare_tiers(rules, number, played["python"], played["compiled"])
            if compiled:
                self._batch(rules, numbers)

    def _has_compiled(self, rules: Rules) -> bool:
        try:
            return compiled_policy(self.strategy, rules) is not None
        except StrategyError as exc:
            self.broken.add(f"{rules.name} (compiled tier): {exc}")
            return False

    def _one(self, rules: Rules, number: int, tier: str) -> list[int] | None:
        """Play one game, check it with the referee, keep its summary; its move codes, or None when it did not end."""
        where = f"{rules.name} deal {number} ({tier} tier)"
        game = Game.from_deal(rules, number)
        info = DealInfo(rules, number, 0, "default")
        play = play_python if tier == "python" else play_compiled
        self.played += 1
        try:
            record = play(self.strategy, game, info, self.seed, self.timeout or None)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 (whatever escapes the arena is the finding)
            if is_builtin(self.strategy):
                raise  # a built-in strategy's fault is a bug of the toolkit: its traceback, not a finding
            self.broken.add(f"{where}: {_one_line(exc)} escaped the arena")
            return None
        if tier == "python":
            self.seconds[tier] += record.seconds
            self.counted[tier] += 1
        if record.termination in ("raised", "illegal", "timeout"):
            self.bad_returns.add(f"{where}: {record.termination}: {record.error}")
        codes = [m.code for m in record.moves]
        summary = _Game(_digest(codes), len(codes), str(record.termination), record.cards_home, record.outcome)
        self.games[rules.name, number, tier] = summary
        if self.judged != (rules.name, number, summary):  # the other tier's same game is judged already
            self.judged = (rules.name, number, summary)
            self._referee(rules, game, record, where)
        return codes

    def _referee(self, rules: Rules, game: Game, record: GameRecord, where: str) -> None:
        """Replay the game with the independent referee: every move legal, the same cards home and the same win."""
        verdict = replay(rules, game.start, record.moves)
        if not verdict.legal:
            self.broken.add(f"{where}: the referee refuses {verdict.reason}")
        elif verdict.cards_home != record.cards_home or verdict.won != (record.outcome == "won"):
            self.broken.add(f"{where}: the game reports {record.cards_home} home ({record.outcome}), the referee "
                            f"{verdict.cards_home} ({'won' if verdict.won else 'not won'})")

    def _batch(self, rules: Rules, numbers: list[int]) -> None:
        """Play the deals as the runner does (one compiled batch); keep the arrays and the time it took."""
        start = time.perf_counter()
        try:
            self.batches[rules.name] = numbers, play_batch(rules, self.strategy, np.array(numbers), 0, self.seed,
                                                           "default", self.timeout or None)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 (whatever escapes the batch is the finding)
            if is_builtin(self.strategy):
                raise  # a built-in strategy's fault is a bug of the toolkit: its traceback, not a finding
            self.broken.add(f"{rules.name} deals {numbers[0]}..{numbers[-1]} (batch): {_one_line(exc)}")
            return
        self.seconds["batch"] += time.perf_counter() - start
        self.counted["batch"] += len(numbers)
        for i, number in enumerate(numbers):
            game = self.games.get((rules.name, number, "compiled"))
            batch = _batch_game(self.batches[rules.name][1], i)
            if not _comparable(game, batch):
                continue
            if (batch.termination, batch.cards_home, batch.moves) != (game.termination, game.cards_home, game.moves) \
                    or (batch.outcome == "won" and batch.digest != game.digest):
                self._tier_diff(rules, number, f"{rules.name} deal {number}: compiled tier {game.summary()}, "
                                       f"batch {batch.summary()}")

    def _compare_tiers(self, rules: Rules, number: int, python: list[int] | None, compiled: list[int] | None) -> None:
        """Whether both tiers played deal ``number`` (move codes ``python`` and ``compiled``) the same way."""
        if python is None or compiled is None:
            return
        a, b = self.games[rules.name, number, "python"], self.games[rules.name, number, "compiled"]
        if not _comparable(a, b):
            return
        self.compared += 1
        if a == b:
            return
        first = next((k for k, (x, y) in enumerate(zip(python, compiled, strict=False)) if x != y), min(a.moves, b.moves))
        self._tier_diff(rules, number, f"{rules.name} deal {number}: python tier {a.summary()}, compiled {b.summary()}; "
                               f"first difference at move {first + 1}")

    def _tier_diff(self, rules: Rules, number: int, text: str) -> None:
        """Count deal ``number`` of ``rules`` once as played differently by the tiers, however many ways it differs."""
        if (rules.name, number) in self.differing:
            return
        self.differing.add((rules.name, number))
        self.tier_diffs.add(text)
        self.tier_diff_face_up |= not rules.face_down

    # --- the checks this run decides alone --------------------------------------------------------------

    def plays(self) -> CheckResult:
        return self.broken.result("plays", self.played, "games",
                                   f"{self.played} games in {len({k[0] for k in self.games})} variants; the referee "
                                   "accepts every move, cards home and wins")

    def returns(self) -> CheckResult:
        limit = " or the time limit" if self.timeout else ""
        return self.bad_returns.result("returns", self.played, "games",
                                       f"no game ended by an exception or an illegal choice{limit}")

    def tiers(self, peeks: bool) -> CheckResult:
        if not self.compiled_variants:
            return CheckResult("tiers", SKIP, "no compiled tier (compiled() returns None): nothing to compare")
        if self.tier_diffs.count:
            result = self.tier_diffs.result("tiers", self.compared, "deals differ", "")
            if not self.tier_diff_face_up and not peeks:
                return CheckResult(result.name, FAIL, result.detail + "; only on face-down deals, where the Python "
                                   "tier sees hidden cards blanked: does the compiled policy read face-down cards?")
            return result
        down = sum(1 for (variant, _, tier) in self.games if tier == "python" and variant in self.face_down)
        hidden = (f"{down} of them face-down deals, hidden cards blanked in the Python tier" if not peeks else
                  "clairvoyant (peeks): both tiers are shown face-down cards, so this does not test hiding")
        return CheckResult("tiers", PASS, f"python tier, compiled tier and batch played the same {self.compared} "
                                          f"games ({hidden})")

    def speed(self) -> str:
        """Deals per second in the Python tier (one game at a time) and the compiled tier (a batch, as the runner plays)."""
        parts = [f"{what} {self.counted[tier] / self.seconds[tier]:,.0f} deals/s" for tier, what in
                 (("python", "python tier"), ("batch", "compiled tier (batch)")) if self.counted[tier] and self.seconds[tier] > 0]
        return "; ".join(parts) + f" (over {self.counted['python']} deals)" if parts else "no game finished"


def _comparable(a: _Game | None, b: _Game | None) -> bool:
    """Whether two games can be compared: both ended, and not by the clock (how far a game gets
    before its time limit depends on the machine; the ``returns`` check reports it)."""
    return a is not None and b is not None and "timeout" not in (a.termination, b.termination)


def _digest(codes: Sequence[int] | np.ndarray) -> str:
    """A fingerprint of a move list: equal lists, equal digests."""
    return hashlib.blake2b(np.asarray(codes, dtype=np.int64).tobytes(), digest_size=16).hexdigest()


def _batch_game(batch: BatchResult, i: int) -> _Game:
    """Deal i of a batch as a `_Game` (the batch keeps the moves of won games only; others get no digest)."""
    won = batch.outcome[i] == E.WON
    digest = _digest(batch.win_moves[batch.win_offsets[i]: batch.win_offsets[i + 1]]) if won else ""
    return _Game(digest, int(batch.moves[i]), E.TERMINATIONS[batch.termination[i]], int(batch.cards_home[i]),
                 E.OUTCOMES[batch.outcome[i]])


def _determinism(one: _Run, two: _Run) -> CheckResult:
    """Whether the second run played every game (and batch) the first one did, the same way."""
    problems = _Problems()
    pairs = [(f"{variant} deal {number} ({tier} tier)", a, two.games.get((variant, number, tier)))
             for (variant, number, tier), a in one.games.items()]
    for variant, (numbers, a_batch) in one.batches.items():
        if variant in two.batches:
            b_numbers, b_batch = two.batches[variant]
            at = {number: i for i, number in enumerate(b_numbers)}
            pairs += [(f"{variant} deal {number} (batch)", _batch_game(a_batch, i), _batch_game(b_batch, at[number]))
                      for i, number in enumerate(numbers)]
    compared = 0
    for where, a, b in pairs:
        if _comparable(a, b):
            compared += 1
            if a != b:
                same = " (same length and end, other moves)" if a.summary() == b.summary() else ""
                problems.add(f"{where}: first {a.summary()}, then {b.summary()}{same}")
    return problems.result("determinism", compared, "games", f"{compared} games replayed the same by a second instance, "
                           "deals in the opposite order (same deal and strategy seed, each tier and the batch)")
