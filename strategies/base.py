"""The `Strategy` interface: what every player, built-in or third-party, implements.

A strategy sees only what a player at the table sees (a `sim.game.View`), is
handed its random generator by the runner (`reset`), and picks one of the
legal moves (`choose`). Strategies that also run in machine code return a
`CompiledPolicy` from `compiled()`; both tiers must make identical choices.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from sim.engine import POLICY_RESIGN, POLICY_TIMEOUT, POLICY_UNDECIDED, SCRATCH_NODES, SCRATCH_OWN, SCRATCH_PROVEN
from sim.errors import UserError
from sim.game import View
from sim.notation import Move
from sim.rng import CounterRNG
from sim.rules import Rules
from strategies.code import code_digest

CLAIRVOYANT = " (clairvoyant)"
"""What a label ends with when the figure saw face-down cards (`Strategy.label_for`)."""


class StrategyError(UserError):
    """An unknown strategy, parameter or parameter value."""


class _Undecided:
    """The type of `UNDECIDED` and `TIMED_OUT`."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name


UNDECIDED = _Undecided("UNDECIDED")
"""What `Strategy.choose` returns to give up without a verdict (outcome ``unknown``),
as a search does when its budget runs out; ``None`` resigns (outcome ``lost``)."""

TIMED_OUT = _Undecided("TIMED_OUT")
"""What `Strategy.choose` returns to give up because a wall-clock cap stopped its search before
its budget ran out (outcome ``unknown``, termination ``timeout``): a result another machine or
load may not repeat, kept apart from `UNDECIDED`."""


@dataclass(frozen=True)
class Param:
    """A declared strategy parameter: its type, default, meaning and allowed values.

    Numeric parameters give the range a run can afford (``minimum`` and
    ``maximum``): a value that would exhaust memory or never end is refused
    with that range, before any deal is played.
    """

    kind: type
    default: Any
    doc: str
    choices: tuple[Any, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None

    @property
    def allowed(self) -> str:
        """The allowed values in words, as error messages and `bakers-dozen strategies` print them."""
        if self.kind is bool:
            return "true or false"
        if self.choices is not None:
            return ", ".join(map(str, self.choices))
        if self.kind in (int, float):
            low = "" if self.minimum is None else _number_text(self.minimum)
            high = "" if self.maximum is None else _number_text(self.maximum)
            what = "a whole number" if self.kind is int else "a number"
            if low and high:
                return f"{what} in {low}..{high}"
            return f"{what} of {low} or more" if low else (f"{what} of {high} or less" if high else what)
        return "text" if self.kind is str else f"a {self.kind.__name__}"

    def convert(self, strategy: str, name: str, value: Any) -> Any:
        """``value`` (text from the command line, or a Python value) as this parameter's type.

        Raise `StrategyError` naming the strategy, the parameter, the value and
        what is allowed when it is not of the type, not finite, or out of range.
        """
        out = _converted(self.kind, value)
        if out is None:
            kind = {bool: "a bool", int: "a whole number", float: "a finite number", str: "text"}.get(self.kind, self.kind.__name__)
            raise StrategyError(f"strategy {strategy!r}: parameter {name}={_shown(value)} is not {kind}; "
                                f"allowed: {self.allowed}")
        if self.choices is not None and out not in self.choices:
            raise StrategyError(f"strategy {strategy!r}: parameter {name}={_shown(value)} is not allowed; "
                                f"allowed: {self.allowed}")
        if (self.minimum is not None and out < self.minimum) or (self.maximum is not None and out > self.maximum):
            raise StrategyError(f"strategy {strategy!r}: parameter {name}={_shown(value)} is out of range; "
                                f"allowed: {self.allowed}")
        return out


_TRUE = ("true", "1", "yes", "on")
_FALSE = ("false", "0", "no", "off")


def _converted(kind: type, value: Any) -> Any:
    """``value`` as ``kind`` (bool, int, float or str), or None when it is not one (NaN and infinities are not)."""
    if kind is bool:
        if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
            return value.strip().lower() in _TRUE
        return bool(value) if isinstance(value, bool | int) and value in (0, 1) else None
    if kind is str:
        return value if isinstance(value, str) else None
    if kind not in (int, float):
        raise TypeError(f"Param kind {kind!r} is not one of bool, int, float, str")  # a bug in a declaration
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip()
        if len(text) > 40 or not text.isascii():  # no allowed number is written longer; int() reads other digits too
            return None
        try:
            value = int(text)
        except ValueError:
            try:
                value = float(text)
            except ValueError:
                return None
    if not isinstance(value, int | float) or not math.isfinite(value):
        return None
    if kind is int:
        if isinstance(value, float) and not value.is_integer():
            return None
        return int(value)
    return float(value)


def _number_text(x: float) -> str:
    """``x`` as it can be typed back: ``1000000``, ``0.01`` (no trailing ``.0``)."""
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def _shown(value: Any) -> str:
    """``value`` as a message shows it: text as typed (shortened), other values by repr."""
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


@dataclass(frozen=True)
class DealInfo:
    """What a strategy is told about the deal it is about to play."""

    rules: Rules
    number: int
    seed: int
    source: str


@dataclass(frozen=True)
class CompiledPolicy:
    """A numba-compiled move chooser and its parameter array.

    ``function(st, prm, moves, n, pparams, rng, scratch) -> index`` receives
    copies of the engine state (see `sim.engine`), of the rule parameters and of
    the n legal moves in ``moves[:n]`` (engine order), refreshed before every
    call: writing them changes nothing in the game, which the engine plays from
    its own arrays. Also ``pparams`` (an array, or a tuple of arrays, that the
    strategy prepared), the RNG as uint64[2] (draw with `sim.rng.nb_rng_below`)
    and ``scratch``, ``scratch_size`` int64 slots of memory for the current
    game, zeroed before each deal (slots `sim.engine.SCRATCH_NODES` and
    ``SCRATCH_MICROS`` report search nodes and microseconds; the policy's own
    slots start at ``SCRATCH_OWN``). It returns the index of its
    move, -1 to resign, or -2 to give up undecided; any other index outside
    0..n-1 ends the game as an error (termination ``illegal``). It must not read
    face-down cards unless the strategy declares ``peeks``.
    """

    function: Callable[..., int]
    pparams: Any
    scratch_size: int = SCRATCH_OWN


class Strategy:
    """Base class of every strategy.

    Subclasses set ``name`` (a class without its own is named ``module:Class``),
    ``description`` and ``PARAMETERS``, and implement `choose`. A plug-in's
    results are stored under its name, ``version``, parameters and a digest of
    its code (`strategies.code`), so an edited plug-in is played again; one that
    sets ``code_in_key = False`` is keyed by name and version alone, and then
    bumps ``version`` whenever a change alters play (as built-ins do). Set
    ``peeks = True`` to be shown face-down cards; results are then labelled
    clairvoyant. ``uses`` names the strategies whose compiled code this
    one's calls, so that a study compiles those first and this one loads
    their part from numba's cache (`studies.backends.warm_study`).
    """

    name: ClassVar[str] = "strategy"
    version: ClassVar[str] = "1"
    description: ClassVar[str] = ""
    peeks: ClassVar[bool] = False
    uses: ClassVar[tuple[str, ...]] = ()
    code_in_key: ClassVar[bool] = True
    """Whether a plug-in's stored results are keyed by a digest of its code (`strategies.code`)."""
    PARAMETERS: ClassVar[Mapping[str, Param]] = {}
    on_proven_line: bool = False
    """Set by `choose` when the move it returns is one of a proven winning line (see `choose`)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A class that does not set its own ``name`` is named after its module and class (``homefirst:HomeThenRandom``):
        two classes never share a name, hence stored results, by inheriting one."""
        super().__init_subclass__(**kwargs)
        if "name" not in cls.__dict__:
            cls.name = f"{cls.__module__}:{cls.__qualname__}"

    def __init__(self, **params: Any) -> None:
        unknown = sorted(set(params) - set(self.PARAMETERS))
        if unknown:
            allowed = ", ".join(self.PARAMETERS) or "none"
            raise StrategyError(f"strategy {self.name!r} has no parameter {', '.join(unknown)}; its parameters: {allowed}")
        self.params: dict[str, Any] = {
            key: spec.convert(self.name, key, params.get(key, spec.default)) for key, spec in self.PARAMETERS.items()
        }
        self.rng: CounterRNG | None = None
        self.deal: DealInfo | None = None
        self.nodes = 0

    @property
    def code_digest(self) -> str | None:
        """The digest of a plug-in's code (`strategies.code.code_digest`); None for a built-in, and for a plug-in
        that sets ``code_in_key = False``."""
        return code_digest(type(self))

    @property
    def identity(self) -> str:
        """Name, version, code digest (a plug-in's) and normalised parameters: what results are stored under,
        ``name@version#digest:key=value,...``."""
        args = ",".join(f"{k}={self.params[k]}" for k in sorted(self.params))
        digest = self.code_digest
        return f"{self.name}@{self.version}" + (f"#{digest}" if digest else "") + (f":{args}" if args else "")

    @property
    def label(self) -> str:
        """The name shown in tables; clairvoyant strategies say so (`label_for` says it only where it is true)."""
        args = ",".join(f"{k}={v}" for k, v in self.params.items() if v != self.PARAMETERS[k].default)
        text = self.name + (f":{args}" if args else "")
        return text + (CLAIRVOYANT if self.peeks else "")

    def sees_hidden(self, rules: Rules) -> bool:
        """Whether this strategy's play under ``rules`` sees cards an honest player could not: it peeks and
        the rules deal cards face down (on a face-up deal peeking sees nothing more)."""
        return self.peeks and rules.face_down > 0

    def label_for(self, rules: Rules) -> str:
        """`label` for a run under ``rules``: "(clairvoyant)" only when `sees_hidden`, as the figure is then an
        upper bound for an honest player and otherwise is not."""
        return self.label if self.sees_hidden(rules) else self.label.removesuffix(CLAIRVOYANT)

    def reset(self, deal: DealInfo, rng: CounterRNG) -> None:
        """Called once before each deal with the RNG the runner made for it."""
        self.deal = deal
        self.rng = rng
        self.nodes = 0
        self.on_proven_line = False

    def choose(self, view: View, moves: list[Move]) -> Move | None | _Undecided:
        """Pick one of ``moves`` (never empty) for the position ``view``.

        Return None to resign, `UNDECIDED` to give up without a verdict (`TIMED_OUT` when a
        wall-clock cap, not a budget, stopped the search). A strategy that searches counts its
        nodes in ``self.nodes``, and sets ``self.on_proven_line`` when the move it returns is one
        of a winning line it has proven from a fully known position: the arena's no-progress
        guard does not count such moves (`sim.engine.SCRATCH_PROVEN`).
        """
        raise NotImplementedError

    def compiled(self, rules: Rules) -> CompiledPolicy | None:
        """The machine-code version of this strategy for ``rules``, if it has one."""
        return None

    def ready(self, rules: Rules) -> None:
        """Compile now (or load from numba's cache) compiled code that the strategy calls outside its compiled
        loop, from an object-mode stage, on some deals only: a worker readying a run (`studies.chunks.warm_up`)
        then pays for it once, at the start, instead of at the first deal that needs it, and a study on a
        fresh machine compiles it in one worker rather than in each. Nothing by default."""

    def memory_use(self, rules: Rules) -> dict[str, int]:
        """Bytes a process playing this strategy under ``rules`` allocates, keyed by the setting that sizes them
        (``"tt_mb=128"``): what a run weighs against the machine's memory, for all its workers together, before
        it starts (`strategies.memory.check_memory`). Empty by default: no setting sizes a table."""
        return {}

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.identity}>"


class PolicyStrategy(Strategy):
    """A strategy written once, as a compiled policy, and played in both tiers.

    Subclasses implement `compiled`. The Python tier (`choose`) runs the same
    compiled function on the view's state, where face-down cards are blanked
    (see `sim.game.View.state`), with the same random stream and its own
    per-game scratch memory: equal play in both tiers therefore also shows that
    the compiled code never reads a hidden card.
    """

    def reset(self, deal: DealInfo, rng: CounterRNG) -> None:
        super().reset(deal, rng)
        self._policy = self.compiled(deal.rules)
        assert self._policy is not None, "a PolicyStrategy returns a CompiledPolicy from compiled()"
        self._scratch = np.zeros(max(self._policy.scratch_size, SCRATCH_OWN), dtype=np.int64)
        self._rng = np.array([rng.key, 0], dtype=np.uint64)

    def choose(self, view: View, moves: list[Move]) -> Move | None | _Undecided:
        # the policy gets copies (view.state(), view.rule_params and codes are fresh arrays), like in play_game
        codes = np.array([m.code for m in moves], dtype=np.int64)
        before = int(self._scratch[SCRATCH_NODES])
        self._scratch[SCRATCH_PROVEN] = 0
        i = self._policy.function(view.state(), view.rule_params, codes, len(codes), self._policy.pparams, self._rng,
                                  self._scratch)
        self.nodes += int(self._scratch[SCRATCH_NODES]) - before
        self.on_proven_line = bool(self._scratch[SCRATCH_PROVEN])
        if i == POLICY_RESIGN:
            return None
        if i == POLICY_UNDECIDED:
            return UNDECIDED
        if i == POLICY_TIMEOUT:
            return TIMED_OUT
        return moves[i] if 0 <= i < len(moves) else Move(-1, -1, -1)
