"""What `tune` searches: a strategy's declared parameters (`strategies.base.Param`), their ranges and choices.

A parameter is searched over what it declares: a bool over false and true, a parameter with ``choices``
over them, a number with both a ``minimum`` and a ``maximum`` over that range (on a log scale when it is
positive and spans a hundredfold or more). Free text and unbounded numbers are left at their value
unless ``--param`` gives them something to search. Parameters written in the strategy spec
(``heuristic:allow_dig=false``) are held at that value. ``--param NAME=LOW..HIGH`` (a number range) or
``--param NAME=a,b,c`` (choices; one value holds it fixed) narrows or adds; each value is checked
against the parameter's declaration, so a search never leaves what the strategy allows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sim.errors import UserError
from strategies import available, load_strategy
from strategies.base import Param, Strategy

LOG_SPAN = 100
"""A positive range whose ends differ by this factor or more is searched on a log scale."""


class SearchSpaceError(UserError):
    """A strategy with nothing to search, or a ``--param`` that names no parameter or gives no usable range."""


@dataclass(frozen=True)
class Dimension:
    """One searched parameter: ``choices`` (categorical), or ``low``..``high`` (a number, ``log`` scale or not)."""

    name: str
    kind: type
    choices: tuple[Any, ...] | None = None
    low: float | None = None
    high: float | None = None
    log: bool = False

    def describe(self) -> str:
        """The searched values in words, for the study's record and the report."""
        if self.choices is not None:
            return ", ".join(value_text(v) for v in self.choices)
        return f"{value_text(self.low)}..{value_text(self.high)}" + (" (log)" if self.log else "")


@dataclass(frozen=True)
class SearchSpace:
    """The strategy to tune (as named, with its fixed parameters), the spec's head, and what is searched."""

    strategy: Strategy
    prefix: str
    """The spec up to its parameters: ``heuristic`` or ``module:ClassName``."""
    fixed: Mapping[str, Any]
    dimensions: tuple[Dimension, ...]

    def spec(self, values: Mapping[str, Any]) -> str:
        """The strategy spec for searched ``values`` with the fixed parameters: what ``simulate -s`` accepts."""
        params = {**self.fixed, **values}
        if not params:
            return self.prefix
        return self.prefix + ":" + ",".join(f"{k}={value_text(params[k])}" for k in sorted(params))

    @property
    def default_spec(self) -> str:
        """The spec as named, with only its fixed parameters: the setting a tuned one is confirmed against."""
        return self.spec({})


def value_text(value: Any) -> str:
    """A parameter value as a spec writes it: ``true``, ``12``, ``0.5``, ``builder``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value)) if abs(value) < 1e15 else repr(value)
    return str(value)


def split_spec(spec: str) -> tuple[str, list[str]]:
    """``spec``'s head (``NAME`` or ``module:ClassName``) and the names of the parameters it writes."""
    head, _, rest = spec.strip().partition(":")
    class_name, _, class_params = rest.partition(":")
    if head.strip() in available():
        prefix, text = head.strip(), rest
    else:
        prefix, text = f"{head.strip()}:{class_name.strip()}", class_params
    names = [item.partition("=")[0].strip() for item in text.split(",") if item.strip()]
    return prefix, names


def search_space(spec: str, overrides: Sequence[str] = ()) -> SearchSpace:
    """What tuning ``spec`` searches, with ``overrides`` (``NAME=LOW..HIGH`` or ``NAME=a,b,c``) applied."""
    strategy = load_strategy(spec)
    declared = strategy.PARAMETERS
    if not declared:
        raise SearchSpaceError(f"strategy {strategy.name!r} declares no parameters (strategies.base.Param); "
                               "there is nothing to tune")
    prefix, written = split_spec(spec)
    given = _overrides(strategy, overrides)
    fixed = {k: strategy.params[k] for k in written if k not in given}
    dims: list[Dimension] = []
    for name, param in declared.items():
        if name in given:
            dims.append(given[name])
        elif name not in fixed:
            dim = _declared_dimension(name, param)
            if dim is not None:
                dims.append(dim)
    if not dims:
        raise SearchSpaceError(f"strategy {strategy.name!r}: none of its parameters ({', '.join(declared)}) has a declared "
                               "range or choices left to search; give one with --param NAME=LOW..HIGH or NAME=a,b,c")
    fixed.update({d.name: d.choices[0] for d in dims if d.choices is not None and len(d.choices) == 1})
    return SearchSpace(strategy, prefix, fixed, tuple(d for d in dims if d.choices is None or len(d.choices) > 1))


def _declared_dimension(name: str, param: Param) -> Dimension | None:
    """The dimension ``param`` declares, or None when it declares no finite set of values."""
    if param.kind is bool:
        return Dimension(name, bool, choices=(False, True))
    if param.choices is not None:
        return Dimension(name, param.kind, choices=tuple(param.choices))
    if param.kind in (int, float) and param.minimum is not None and param.maximum is not None:
        return _range(name, param.kind, param.minimum, param.maximum)
    return None


def _range(name: str, kind: type, low: float, high: float) -> Dimension:
    log = low > 0 and high / low >= LOG_SPAN
    return Dimension(name, kind, low=kind(low), high=kind(high), log=log)


def _overrides(strategy: Strategy, overrides: Sequence[str]) -> dict[str, Dimension]:
    out: dict[str, Dimension] = {}
    for text in overrides:
        name, sep, value = text.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name or not value:
            raise SearchSpaceError(f"--param {text!r} is not NAME=LOW..HIGH or NAME=a,b,c")
        param = strategy.PARAMETERS.get(name)
        if param is None:
            raise SearchSpaceError(f"--param {text!r}: strategy {strategy.name!r} has no parameter {name!r}; "
                                   f"its parameters: {', '.join(strategy.PARAMETERS)}")
        if name in out:
            raise SearchSpaceError(f"--param {name} is given twice")
        if ".." in value:
            low_text, _, high_text = value.partition("..")
            if param.kind not in (int, float):
                raise SearchSpaceError(f"--param {text!r}: {name} is not a number (allowed: {param.allowed}); "
                                       "give its choices as NAME=a,b,c")
            low = param.convert(strategy.name, name, low_text)
            high = param.convert(strategy.name, name, high_text)
            if not low < high:
                raise SearchSpaceError(f"--param {text!r}: the range's low end must be below its high end")
            out[name] = _range(name, param.kind, low, high)
        else:
            values = tuple(dict.fromkeys(param.convert(strategy.name, name, v) for v in value.split(",")))
            out[name] = Dimension(name, param.kind, choices=values)
    return out
