"""A plug-in's code digest: what its stored results are keyed by besides its name, version and parameters.

A plug-in's author edits its code and runs it again; the store must then play
every deal again, not hand back the old code's rows. So a plug-in's identity
(`strategies.base.Strategy.identity`) holds a digest of the code it runs: the
source files of every module, outside the toolkit and the standard library, that
its class is built from (its own module, the modules of its bases and mixins),
and of the helper modules those import from their own folder or package.
Restore the code and the digest is the old one again, so the old rows are reused.

A module that was imported before the file changed holds the old code: a
notebook that ran a plug-in, edited its file and runs it again, or a worker kept
from an earlier run. `current_class` reloads such modules, so that the code
played is always the code the digest names.

A plug-in opts out with ``code_in_key = False``: its results are then keyed by
name and version alone, and the author bumps ``version`` whenever play changes.
"""

from __future__ import annotations

import hashlib
import inspect
import sys
import types
from pathlib import Path
from typing import Any

from sim.errors import UserError

TOOLKIT_PACKAGES = frozenset({"sim", "strategies", "studies", "reports", "bakers_dozen"})
"""The toolkit's own top-level packages: their code is the toolkit's version, not a plug-in's."""

DIGEST_CHARS = 12
"""Hex characters of a code digest as stored and shown (48 bits: no two versions of one plug-in collide)."""

_DIGESTS: dict[type, str | None] = {}
"""Each class's digest, taken once when it is first asked for (`load_strategy` asks as it loads the class)."""

_EXECUTED: dict[str, str] = {}
"""Module name -> digest of the source file that module's code was executed from in this process, as far as known."""


class CodeUnreadable(UserError):  # noqa: N818 (named for the condition, as the user reads it)
    """A module whose source a plug-in's code digest needs cannot be read."""


def is_toolkit(module_name: str) -> bool:
    """Whether ``module_name`` is part of the toolkit (its classes are built-ins or their bases)."""
    return module_name.partition(".")[0] in TOOLKIT_PACKAGES


def _is_plugin_module(module_name: str) -> bool:
    """A module whose source is part of a plug-in's code: not the toolkit's, not Python's own."""
    top = module_name.partition(".")[0]
    return not is_toolkit(module_name) and top not in sys.stdlib_module_names and top != "builtins"


def _file_of(module: types.ModuleType) -> Path | None:
    file = getattr(module, "__file__", None)
    return Path(file) if isinstance(file, str) else None


def _helpers(module: types.ModuleType) -> set[str]:
    """The plug-in modules ``module`` imports names from that live beside it: in its own package, or as files in
    its own folder (a shared helper file), not installed libraries such as numpy."""
    own = _file_of(module)
    top = module.__name__.partition(".")[0]
    found: set[str] = set()
    for value in list(vars(module).values()):
        name = value.__name__ if isinstance(value, types.ModuleType) else getattr(value, "__module__", None)
        if not isinstance(name, str) or name == module.__name__ or not _is_plugin_module(name) or name not in sys.modules:
            continue
        other = _file_of(sys.modules[name])
        beside = own is not None and other is not None and other.parent == own.parent and other.name != "__init__.py"
        if name.partition(".")[0] == top or beside:
            found.add(name)
    return found


def code_modules(cls: type) -> list[str]:
    """The plug-in modules whose source makes ``cls``'s code, those it is built from first and its own module
    last: the modules of its bases and mixins outside the toolkit, and the helper modules beside them that they
    import from (`_helpers`). Empty for a toolkit class."""
    order: list[str] = []

    def visit(name: str) -> None:  # a module after the helpers it imports from (post-order)
        if name in order or name not in sys.modules:
            return
        order.append(name)  # placed now against import cycles; moved after its helpers below
        for helper in sorted(_helpers(sys.modules[name])):
            visit(helper)
        order.remove(name)
        order.append(name)

    for c in reversed(cls.__mro__):  # bases first
        if _is_plugin_module(c.__module__):
            visit(c.__module__)
    own = cls.__module__  # the class's own module last
    return [m for m in order if m != own] + ([own] if own in order else [])


def _source(module_name: str, cls: type) -> bytes:
    """The source of ``module_name`` as a digest reads it: its file's bytes, or, for a class defined where there is
    no file (a notebook cell), the class's own source."""
    file = _file_of(sys.modules[module_name])
    if file is not None:
        try:
            return file.read_bytes()
        except OSError as exc:
            raise CodeUnreadable(f"{_whose(cls)}: cannot read {file} for its code digest: {exc.strerror or exc}") from None
    if module_name == cls.__module__:
        try:
            return inspect.getsource(cls).encode()
        except (OSError, TypeError):
            pass
    raise CodeUnreadable(f"{_whose(cls)}: module {module_name!r} has no source to read for its code digest; define the "
                         "class in a module file, or set code_in_key = False and bump version whenever play changes")


def _whose(cls: type) -> str:
    return f"strategy {cls.__module__}:{cls.__qualname__}"


def _digest(parts: list[tuple[str, bytes]]) -> str:
    h = hashlib.sha256()
    for name, source in parts:
        h.update(name.encode() + b"\0" + hashlib.sha256(source).digest())
    return h.hexdigest()[:DIGEST_CHARS]


def module_digest(module_name: str, cls: type) -> str:
    """The digest of one module's source as it is on disk now."""
    return _digest([(module_name, _source(module_name, cls))])


def code_digest(cls: type) -> str | None:
    """The digest of ``cls``'s code (`code_modules`), taken once per class; None for a toolkit class and for a
    plug-in that sets ``code_in_key = False``. `CodeUnreadable` when a module's source cannot be read."""
    if cls not in _DIGESTS:
        modules = code_modules(cls) if getattr(cls, "code_in_key", True) else []
        _DIGESTS[cls] = _digest([(m, _source(m, cls)) for m in modules]) if modules else None
    return _DIGESTS[cls]


def _compiled_digest(module_name: str, digest_now: str) -> str | None:
    """For a module this process imported without the registry (a notebook's import), whether it was executed
    from the file as it is now: ``digest_now`` when its bytecode cache records the file's present modification
    time and size (the cache header of PEP 552), None when it records another (the file changed since); when
    there is no cache to tell, the file is taken as what was executed."""
    module = sys.modules[module_name]
    cached, file = getattr(module, "__cached__", None), _file_of(module)
    if not isinstance(cached, str) or file is None:
        return digest_now
    try:
        header = Path(cached).read_bytes()[:16]
        st = file.stat()
    except OSError:
        return digest_now
    if len(header) < 16 or int.from_bytes(header[4:8], "little") != 0:  # a hash-checked cache: no time to compare
        return digest_now
    same = (int.from_bytes(header[8:12], "little") == int(st.st_mtime) & 0xFFFFFFFF
            and int.from_bytes(header[12:16], "little") == st.st_size & 0xFFFFFFFF)
    return digest_now if same else None


def _execute_again(module_name: str, cls: type) -> str:
    """Execute ``module_name``'s file again in its module, as `importlib.reload` does, from the bytes read
    here (never a bytecode cache, which an edit within the same second can leave looking current); return the
    digest of those bytes. Works for a module loaded from a file outside the Python path too, which
    `importlib.reload` cannot find again."""
    module = sys.modules[module_name]
    source = _source(module_name, cls)
    exec(compile(source, str(_file_of(module)), "exec", dont_inherit=True), module.__dict__)  # noqa: S102 (a reload)
    return _digest([(module_name, source)])


def current_class(cls: type, imported_now: set[str]) -> type:
    """``cls`` as its modules' files define it now: when a module of its code (`code_modules`) was executed
    before this load from a file that has changed since, or from a file this process never read (a notebook
    imported it), its modules are reloaded, those it is built from first, and the class is looked up again.
    ``imported_now``: modules this load imported, whose code is the file's as it is."""
    modules = code_modules(cls)
    now = {m: module_digest(m, cls) for m in modules}
    stale = [m for m in modules if m not in imported_now and _EXECUTED.get(m, _compiled_digest(m, now[m])) != now[m]]
    if stale:
        for m in modules:
            if m != "__main__":  # a script's own code is what runs; it is never executed twice
                now[m] = _execute_again(m, cls)
        found: Any = sys.modules[cls.__module__]
        for part in cls.__qualname__.split("."):
            found = getattr(found, part)
        cls = found
    _EXECUTED.update(now)
    return cls


def identity_code(identity: str) -> str | None:
    """The code digest in a stored ``strategy_identity`` (``name@version#digest:params``); None when it holds none
    (a built-in, a plug-in with ``code_in_key = False``, or a plug-in's rows stored before digests were)."""
    version = identity.partition("@")[2].partition(":")[0]
    return version.partition("#")[2] or None
