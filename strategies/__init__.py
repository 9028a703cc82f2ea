"""The strategy registry: built-ins by name, plug-ins by module path or entry point.

A strategy is named as ``NAME``, ``NAME:key=value,key=value``,
``package.module:ClassName`` or ``package.module:ClassName:key=value``.
Installed packages can also register classes under the entry-point group
``bakers_dozen.strategies``.
"""

from __future__ import annotations

import importlib
import os
import sys
from importlib.metadata import entry_points

from strategies.base import UNDECIDED, CompiledPolicy, DealInfo, Param, Strategy, StrategyError
from strategies.greedy import GreedyStrategy
from strategies.heuristic import HeuristicStrategy
from strategies.lookahead import LookaheadStrategy
from strategies.random_play import RandomStrategy
from strategies.sampling import SamplingStrategy
from strategies.solver import SolverStrategy

__all__ = ["UNDECIDED", "CompiledPolicy", "DealInfo", "Param", "Strategy", "StrategyError", "available", "load_strategy"]

ENTRY_POINT_GROUP = "bakers_dozen.strategies"

BUILTINS: dict[str, type[Strategy]] = {cls.name: cls for cls in (RandomStrategy, GreedyStrategy, HeuristicStrategy, LookaheadStrategy,
                                                                  SolverStrategy, SamplingStrategy)}


def _plugins() -> dict[str, type[Strategy]]:
    found: dict[str, type[Strategy]] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            cls = ep.load()
        except Exception as exc:  # a broken plug-in must not hide the built-ins
            raise StrategyError(f"entry point {ep.name!r} ({ep.value}) failed to load: {exc}") from None
        found[ep.name] = cls
    return found


def available() -> dict[str, type[Strategy]]:
    """Every strategy that can be named without a module path: built-ins, then plug-ins."""
    return {**BUILTINS, **_plugins()}


def _parse_params(text: str, strategy: str) -> dict[str, str]:
    params: dict[str, str] = {}
    for item in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise StrategyError(f"strategy {strategy!r}: parameter {item!r} is not key=value")
        params[key.strip()] = value.strip()
    return params


def _import_class(module_name: str, class_name: str) -> type[Strategy]:
    """Import ``module_name`` from the Python path, or else from the current directory."""
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError:
        if os.getcwd() in sys.path:
            raise StrategyError(f"cannot import strategy module {module_name!r}: not on the Python path or in {os.getcwd()}") from None
        sys.path.append(os.getcwd())
        return _import_class(module_name, class_name)
    except ImportError as exc:
        raise StrategyError(f"cannot import strategy module {module_name!r}: {exc}") from None
    cls = getattr(module, class_name, None)
    if not (isinstance(cls, type) and issubclass(cls, Strategy)):
        raise StrategyError(f"{module_name}:{class_name} is not a Strategy subclass")
    return cls


def load_strategy(spec: str) -> Strategy:
    """Make the strategy that ``spec`` names, with its parameters."""
    head, _, rest = spec.strip().partition(":")
    if "." in head:
        class_name, _, param_text = rest.partition(":")
        if not class_name:
            raise StrategyError(f"{spec!r}: a module path needs a class, as in package.module:ClassName")
        cls = _import_class(head, class_name)
    else:
        known = available()
        if head not in known:
            raise StrategyError(
                f"unknown strategy {head!r}; known strategies: {', '.join(known)}; or package.module:ClassName"
            )
        cls, param_text = known[head], rest
    return cls(**_parse_params(param_text, head))
