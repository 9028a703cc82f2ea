"""The strategy registry: built-ins by name, plug-ins by module path or entry point.

A strategy is named as ``NAME``, ``NAME:key=value,key=value``,
``module:ClassName`` or ``module:ClassName:key=value`` (``module`` may be
dotted, ``package.module``, and is not a built-in's name).
Installed packages can also register classes under the entry-point group
``bakers_dozen.strategies``.

A plug-in is someone else's code: whatever goes wrong while it is imported,
checked or constructed (an exception, a syntax error, a missing dependency,
``sys.exit()``) is reported as a `StrategyError` naming the plug-in, and a
broken entry point never hides the built-ins, which load whatever happens.

A module path is a dotted name, looked up on the Python path and then in the
current directory, as entry points and tools like uvicorn name ``module:attr``:
``--strategy mystrat:MyStrategy`` loads ``./mystrat.py`` (or the package
``./mystrat/``). The current directory's module is loaded from its file
(`importlib.util.spec_from_file_location`); ``sys.path`` is never changed.

``NAME:key=value`` and ``module:ClassName`` cannot be confused: a parameter always
holds ``=`` and a class name never does, and a built-in's name always means the
built-in (a module file named ``greedy.py`` does not replace it).
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, TypeVar

from sim.cards import quote_short
from sim.errors import UserError
from strategies.base import UNDECIDED, CompiledPolicy, DealInfo, Param, Strategy, StrategyError
from strategies.code import code_digest, current_class
from strategies.greedy import GreedyStrategy
from strategies.heuristic import HeuristicStrategy
from strategies.lookahead import LookaheadStrategy
from strategies.random_play import RandomStrategy
from strategies.sampling import SamplingStrategy
from strategies.solver.strategy import SolverStrategy

__all__ = ["UNDECIDED", "CompiledPolicy", "DealInfo", "Param", "Strategy", "StrategyError", "available",
           "broken_plugins", "compiled_policy", "is_builtin", "load_strategy", "uncompilable"]

ENTRY_POINT_GROUP = "bakers_dozen.strategies"

BUILTINS: dict[str, type[Strategy]] = {cls.name: cls for cls in (RandomStrategy, GreedyStrategy, HeuristicStrategy, LookaheadStrategy,
                                                                  SolverStrategy, SamplingStrategy)}

_MODULE_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*\Z")
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_LABEL_RE = re.compile(r"[A-Za-z0-9_.+-]{1,64}\Z")
"""A strategy's name and version: they label tables and results and name stored runs."""
_SPEC_FORMS = "NAME, NAME:key=value,..., or module:ClassName[:key=value,...]"

T = TypeVar("T")


def _guarded(what: str, call: Callable[[], T]) -> T:
    """``call()``, with any failure of plug-in code (even ``sys.exit()``) as one `StrategyError` about ``what``.

    A KeyboardInterrupt (the user's Ctrl-C) still ends the program.
    """
    try:
        return call()
    except (UserError, KeyboardInterrupt):
        raise
    except SystemExit as exc:
        raise StrategyError(f"{what} called sys.exit({exc.code!r})") from None
    except ModuleNotFoundError as exc:
        needs = f"module {exc.name!r}" if exc.name else f"a module ({_described(exc)})"
        raise StrategyError(f"{what} failed: the plug-in needs {needs}, which is not installed; install it, "
                            "or fix the plug-in's import") from None
    except SyntaxError as exc:
        where = f"{exc.filename}, line {exc.lineno}" if exc.filename else f"line {exc.lineno}"
        raise StrategyError(f"{what} failed: syntax error in {where}: {exc.msg}") from None
    except RecursionError:
        raise StrategyError(f"{what} failed: RecursionError (maximum recursion depth exceeded)") from None
    except BaseException as exc:  # noqa: BLE001 (plug-in code: any failure but the user's Ctrl-C is its own)
        raise StrategyError(f"{what} failed: {_described(exc)}") from None


def _described(exc: BaseException) -> str:
    """``TypeError: message`` on one line, even when the plug-in's exception cannot print itself."""
    try:
        text = str(exc)
    except BaseException:  # noqa: BLE001 (a hostile __str__)
        text = "(its message cannot be shown)"
    return f"{type(exc).__name__}: {_one_line(text)}"


def _one_line(text: str) -> str:
    """``text`` on one line, at most 300 characters."""
    line = " ".join(text.split())
    return line if len(line) <= 300 else line[:297] + "..."


def _check_class(cls: Any, where: str) -> type[Strategy]:
    """``cls`` if it is a usable `Strategy` subclass; else a `StrategyError` saying what is wrong (even when
    merely looking at ``cls`` runs plug-in code that fails: a hostile ``__class__`` or metaclass)."""

    def attributes() -> None:
        if not (isinstance(cls, type) and issubclass(cls, Strategy)):
            raise StrategyError(f"{where} is not a Strategy subclass (strategies.base.Strategy); it is "
                                f"{type(cls).__name__}")
        for attr in ("name", "version"):
            value = getattr(cls, attr)
            if attr == "name" and value == f"{cls.__module__}:{cls.__qualname__}":
                continue  # a class without a name of its own is named after its module and class
            if not isinstance(value, str) or not _LABEL_RE.match(value):
                raise StrategyError(f"{where}: class attribute {attr!r} must be 1 to 64 letters, digits or _ . + -")
        if not isinstance(cls.code_in_key, bool):
            raise StrategyError(f"{where}: class attribute 'code_in_key' must be True or False")
        builtin = BUILTINS.get(cls.name)
        if builtin is not None and builtin is not cls and builtin.version == cls.version:
            raise StrategyError(f"{where}: its name and version ({cls.name!r}, {cls.version!r}) are a built-in strategy's; "
                                "results are stored under them, so a plug-in needs its own name or version")
        if not isinstance(cls.description, str):
            raise StrategyError(f"{where}: class attribute 'description' must be a str")
        if not isinstance(cls.peeks, bool):
            raise StrategyError(f"{where}: class attribute 'peeks' must be True or False")
        params = cls.PARAMETERS
        if not isinstance(params, Mapping) or not all(isinstance(k, str) and isinstance(p, Param) for k, p in params.items()):
            raise StrategyError(f"{where}: class attribute 'PARAMETERS' must map parameter names to strategies.base.Param")

    _guarded(f"checking strategy class {where}", attributes)
    return cls


def _loaded_entry_points() -> tuple[dict[str, type[Strategy]], dict[str, str]]:
    """The plug-ins registered as entry points that load, and a one-line reason for each that does not."""
    found: dict[str, type[Strategy]] = {}
    broken: dict[str, str] = {}
    try:
        eps = list(entry_points(group=ENTRY_POINT_GROUP))
    except Exception as exc:  # a malformed distribution's metadata must not hide the built-ins
        return found, {"?": f"the installed packages' entry points cannot be read: {_described(exc)}"}
    for ep in eps:
        where = f"entry point {ep.name!r} ({ep.value})"
        if ep.name in BUILTINS:
            broken[ep.name] = f"{where} has the name of a built-in strategy and is ignored"
            continue
        try:
            found[ep.name] = _check_class(_load_entry_point(ep, where), where)
        except StrategyError as exc:
            broken[ep.name] = str(exc)
    return found, broken


def _load_entry_point(ep: Any, where: str) -> Any:
    """What entry point ``ep`` names; a module of its own that is not installed (a package half
    uninstalled) is said as such, not taken for a missing dependency of the plug-in."""
    def attempt() -> Any:
        try:
            return ep.load()
        except ModuleNotFoundError as exc:
            if exc.name is not None and _is_prefix(exc.name, ep.module):
                raise StrategyError(f"{where} names module {ep.module!r}, which is not installed "
                                    "(its package may be half uninstalled)") from None
            raise

    return _guarded(f"loading {where}", attempt)


def available() -> dict[str, type[Strategy]]:
    """Every strategy that can be named without a module path: built-ins, then the plug-ins that load."""
    return {**BUILTINS, **_loaded_entry_points()[0]}


def broken_plugins() -> list[str]:
    """One line for each registered entry point that cannot be used, and why."""
    return list(_loaded_entry_points()[1].values())


def is_builtin(strategy: Strategy) -> bool:
    """Whether ``strategy`` is one of the toolkit's own classes (not a plug-in)."""
    return type(strategy) in BUILTINS.values()


def _parse_params(text: str, strategy: str) -> dict[str, str]:
    params: dict[str, str] = {}
    for item in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise StrategyError(f"strategy {quote_short(strategy)}: parameter {quote_short(item)} is not key=value")
        if key.strip() in params:
            raise StrategyError(f"strategy {quote_short(strategy)}: parameter {quote_short(key.strip())} is given twice")
        params[key.strip()] = value.strip()
    return params


def _try_import(module_name: str) -> Any:
    """The module, from the Python path or else from the current directory; None when it is in neither
    (as opposed to failing while it loads)."""
    def attempt() -> Any:
        try:
            return importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name is None or not _is_prefix(exc.name, module_name):
                raise
            top = module_name.partition(".")[0]
            if top in sys.modules or not _load_from_directory(top, Path.cwd()):
                return None
        try:
            return importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and _is_prefix(exc.name, module_name):
                return None
            raise

    return _guarded(f"importing strategy module {module_name!r}", attempt)


def _load_from_directory(name: str, directory: Path) -> bool:
    """Load top-level module ``name`` from ``directory`` (``name/__init__.py`` or ``name.py``) by its file path
    and register it in ``sys.modules`` as an import would; False when neither file is there.

    The package's submodules then import by their dotted names (the package's ``__path__`` finds them), so
    ``sys.path`` stays as it is.
    """
    package = directory / name / "__init__.py"
    found = (package, [str(package.parent)]) if package.is_file() else (directory / f"{name}.py", None)
    if not found[0].is_file():
        return False
    spec = importlib.util.spec_from_file_location(name, found[0], submodule_search_locations=found[1])
    if spec is None or spec.loader is None:
        return False
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return True


def _import_module(module_name: str) -> Any:
    """Import ``module_name`` from the Python path or else from the current directory (`_try_import`)."""
    module = _try_import(module_name)
    if module is None:
        raise StrategyError(f"cannot import strategy module {module_name!r}: not found on the Python path or in the "
                            f"current directory ({Path.cwd()})")
    return module


def _is_prefix(name: str, module_name: str) -> bool:
    """Whether ``name`` is ``module_name`` or one of its parent packages."""
    return module_name == name or module_name.startswith(name + ".")


def _import_class(module_name: str, class_name: str) -> type[Strategy]:
    """The strategy class ``module_name:class_name``, checked."""
    if not _MODULE_RE.match(module_name):
        raise StrategyError(f"strategy module {quote_short(module_name)} is not a dotted module name (relative names and file "
                            "paths are not allowed); write module:ClassName or "
                            "package.module:ClassName, found on the Python path or in "
                            "the current directory")
    if not _NAME_RE.match(class_name):
        raise StrategyError(f"{quote_short(class_name)} is not a class name; write module:ClassName[:key=value,...]")
    module = _import_module(module_name)
    where = f"{module_name}:{class_name}"
    cls = _guarded(f"looking up {where}", lambda: getattr(module, class_name, None))
    if cls is None:
        raise StrategyError(f"strategy module {module_name!r} has no class {class_name!r}")
    return _check_class(cls, where)


def load_strategy(spec: str) -> Strategy:
    """Make the strategy that ``spec`` names, with its parameters."""
    if not isinstance(spec, str) or not spec.strip():
        raise StrategyError(f"no strategy named; write {_SPEC_FORMS}")
    before = set(sys.modules)
    head, _, rest = spec.strip().partition(":")
    head = head.strip()
    class_name, _, class_params = rest.partition(":")
    if head in BUILTINS:
        cls, param_text = BUILTINS[head], rest
    elif "." in head or "/" in head or "\\" in head or (_NAME_RE.match(class_name.strip()) and "=" not in class_name):
        if not class_name.strip():
            raise StrategyError(f"{quote_short(spec)}: a module path needs a class, as in module:ClassName")
        cls, param_text = _import_class(head, class_name.strip()), class_params
    else:
        found, broken = _loaded_entry_points()
        if head in broken:
            raise StrategyError(broken[head])
        if head not in found:
            raise StrategyError(f"unknown strategy {quote_short(head)}; known strategies: {', '.join({**BUILTINS, **found})}; "
                                f"or module:ClassName (a module on the Python path or a module file in the current directory)")
        cls, param_text = found[head], rest
    params = _parse_params(param_text, head)
    if cls in BUILTINS.values():
        return cls(**params)
    cls = _current(cls, before)
    strategy = _guarded(f"creating strategy {cls.__module__}.{cls.__qualname__}", lambda: cls(**params))
    if not isinstance(strategy, Strategy) or not isinstance(getattr(strategy, "params", None), dict):
        raise StrategyError(f"creating strategy {cls.__module__}.{cls.__qualname__} did not run Strategy.__init__ "
                            "(a plug-in's __init__ must call super().__init__(**params))")
    return strategy


def _current(cls: type[Strategy], before: set[str]) -> type[Strategy]:
    """``cls`` as its files define it now, and its code digest taken (`strategies.code`): a module of its code that
    was imported before this load (``before``: the modules then loaded) from a file changed since is reloaded, so
    the code played is the code its results are stored under."""
    where = f"{cls.__module__}:{cls.__qualname__}"
    fresh = set(sys.modules) - before
    cls = _guarded(f"reloading the changed code of strategy {where}", lambda: current_class(cls, fresh))
    cls = _check_class(cls, where)
    _guarded(f"reading the code of strategy {where}", lambda: code_digest(cls))  # taken now, from the files just loaded
    return cls


def compiled_policy(strategy: Strategy, rules: Any) -> CompiledPolicy | None:
    """``strategy.compiled(rules)``, checked: a plug-in whose ``compiled()`` fails or returns something that
    is not a `CompiledPolicy` (or None) gets a `StrategyError` naming it."""
    what = f"strategy {type(strategy).__qualname__}: compiled()"
    policy = strategy.compiled(rules) if is_builtin(strategy) else _guarded(what, lambda: strategy.compiled(rules))
    if policy is not None and not isinstance(policy, CompiledPolicy):
        raise StrategyError(f"{what} returned {type(policy).__name__}; allowed: a strategies.base.CompiledPolicy or None")
    if policy is not None and not callable(policy.function):
        raise StrategyError(f"{what} returned a CompiledPolicy whose function is not callable")
    return policy


def uncompilable(strategy: Strategy, exc: BaseException) -> StrategyError:
    """The one-line error for a plug-in whose compiled policy numba cannot compile (``exc``, numba's
    error): the plug-in's fault, not the toolkit's, so it is told as such with numba's first reason."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc))  # numba's highlighting (bold), which it adds on some terminals
    reasons = [line.strip() for line in text.splitlines()
               if line.strip() and not line.startswith(("Failed in", "During"))]
    reason = _one_line(reasons[0]) if reasons else type(exc).__name__
    return StrategyError(f"strategy {strategy.name!r}: its compiled policy does not compile: {reason}")
