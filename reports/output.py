"""Where reports and result files go: checked before the work, named safely, written atomically.

A report's folder is checked before any deal is played (`check_report_dir`): it
must be a folder or not exist yet, be writable, and hold no symbolic link where
the report puts its files. The report is then written into a fresh folder beside
the target (`staged_report`) and moved into place only when complete, so a
failure (read-only or full disk, a bug, Ctrl-C) leaves any earlier report as it
was and no partial ``charts/``.

Names that come from data (a variant's name from a TOML file or a store's
manifest) become file names only through `safe_name`: safe characters, bounded
length, and unique when two names sanitise alike. `contained` refuses any path
that resolves outside the folder it is meant for, symbolic links included.

`check_output_file` and `write_file_atomically` do the same for a single result
file (``solve --out``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import socket
import time
import unicodedata
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

from sim.errors import UserError
from sim.regular_files import check_regular

REPLAY_DIR = "replays"
"""The report's folder of replay pages (and of the analyses the next build reuses)."""
MAKER = ".bakers-dozen-report.json"
"""A report folder's note of the command that wrote it (``{"command": "compare"}``), so that another command
does not overwrite that report unasked (`check_report_dir`)."""
REPORT_ITEMS = ("report.html", "report.md", "charts", "variants", REPLAY_DIR, MAKER)
"""What a report puts in its folder; nothing else there is touched."""

PARTIAL = ".partial-"
"""What the name of a report or result file being written (beside or in its target) holds; it says whose it is
(`_partial_name`), so that a later write removes those of writers that died (`_clean_partials`)."""
STALE_SECONDS = 86_400.0
"""A partial folder or file whose writer cannot be checked (another host, or an older toolkit's name) is taken
for abandoned only after this long."""

MAX_NAME_CHARS = 80
"""Longest file name stem made from data (well under the 255 bytes file systems allow)."""

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}


class OutputError(UserError):
    """An output path that cannot be used: not a folder, not writable, a link out, or a name that leaves its folder."""


def safe_name(name: str, taken: set[str]) -> str:
    """A file name stem for ``name`` made of ``A-Z a-z 0-9 . _ -`` only, at most `MAX_NAME_CHARS` long.

    Accents are dropped (``é`` -> ``e``); every other run of unsafe characters
    (separators, ``..``, spaces, control characters, other scripts) becomes ``_``.
    A name that had to change, or whose result is already in ``taken`` (compared
    without case, for case-insensitive file systems), gets a suffix from a hash of
    the full name, so two names never share a file. The result is added to ``taken``.
    """
    ascii_text = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    base = _UNSAFE.sub("_", ascii_text).strip("._-")[:MAX_NAME_CHARS] or "variant"
    stem = base
    if stem != name or stem.lower() in taken or stem.lower() in _RESERVED:
        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()
        for n in range(8, len(digest) + 1):  # longer hash prefixes only if two names share one
            stem = f"{base[: MAX_NAME_CHARS - 1 - n]}-{digest[:n]}"
            if stem.lower() not in taken:
                break
        else:
            raise RuntimeError(f"safe_name: no unique file name for {name!r}; it was asked for twice")
    taken.add(stem.lower())
    return stem


def contained(root: Path, path: Path) -> Path:
    """``path``, after checking that it resolves (following symbolic links) inside the folder ``root``."""
    base = root.resolve()
    target = path.resolve()
    if target != base and base not in target.parents:
        raise OutputError(f"refusing to write {path}: it resolves to {target}, outside the output folder {base}")
    return path


def _nearest_existing(path: Path) -> Path:
    """``path`` or its closest ancestor that exists."""
    for candidate in (path, *path.parents):
        if candidate.exists() or candidate.is_symlink():
            return candidate
    return Path(path.anchor or ".")


def _probe_writable(folder: Path, what: str) -> None:
    """Create and remove a folder in ``folder``: the only reliable test that it is writable."""
    probe = folder / f".bakers-dozen-probe-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        probe.mkdir()
        probe.rmdir()
    except OSError as exc:
        raise OutputError(f"cannot write {what}: {folder} is not writable ({exc.strerror or exc})") from None


def check_report_dir(out_dir: str | Path, maker: str = "", force: bool = False) -> Path:
    """Check, before any work, that a report can be written to ``out_dir``; return it as an absolute path.

    Refused in one line: an existing file; a path under a file; a folder that
    cannot be written (or, when it does not exist yet, whose nearest existing
    ancestor cannot); a symbolic link in the folder where the report puts
    ``report.html``, ``report.md``, ``charts`` or ``variants``; and, unless ``force``, a folder
    holding the report of another command than ``maker`` (its `MAKER` note says which).
    """
    try:
        out = _check_report_dir(Path(out_dir).absolute(), out_dir)
    except OSError as exc:  # a name too long, a loop of links, ...
        raise OutputError(f"--out {out_dir}: {exc.strerror or exc}") from None
    found = report_maker(out)
    if maker and not force and found is not None and found != maker:
        raise OutputError(f"--out {out_dir} holds the report of `bakers-dozen {found}`; choose another folder, "
                          "or pass --force to replace it")
    return out


def report_maker(out: Path) -> str | None:
    """The command whose report ``out`` holds, from its `MAKER` note; None when there is no readable note."""
    note = out / MAKER
    try:
        if note.is_symlink() or not note.is_file() or note.stat().st_size > 4096:
            return None
        found = json.loads(note.read_text(encoding="utf-8")).get("command")
    except (OSError, ValueError, AttributeError):  # unreadable, not JSON, not an object
        return None
    return found if isinstance(found, str) and found.isidentifier() else None


def _check_report_dir(out: Path, out_dir: str | Path) -> Path:
    if out.is_symlink() and not out.exists():
        raise OutputError(f"--out {out_dir} is a symbolic link to {os.readlink(out)}, which does not exist")
    if out.exists() and not out.is_dir():
        raise OutputError(f"--out {out_dir}: it is an existing file; give a folder for the report (it is created if missing)")
    anchor = _nearest_existing(out)
    if not anchor.is_dir():
        raise OutputError(f"--out {out_dir}: {anchor} is a file, so no folder can be made under it")
    if out.is_dir():
        for item in REPORT_ITEMS:
            p = out / item
            if p.is_symlink():
                raise OutputError(f"--out {out_dir}: {p} is a symbolic link (to {os.readlink(p)}); the report never writes "
                                  "through links: remove it or choose another folder")
    _probe_writable(anchor, f"the report into {out_dir}")
    return out


def _partial_name(name: str, suffix: str = "") -> str:
    """A fresh name for a partial copy of ``name``: ``.NAME.partial-ID@PID@HOST`` plus ``suffix`` (`_partial_prefix`)."""
    return f"{_partial_prefix(name)}{uuid.uuid4().hex[:8]}@{os.getpid()}@{socket.gethostname()[:64]}{suffix}"


def _partial_prefix(name: str) -> str:
    """How the partial copies of ``name`` begin (a long name is cut, so that theirs stays within 255 bytes)."""
    return f".{name[:100]}{PARTIAL}"


def _clean_partials(folder: Path, name: str, suffix: str = "") -> None:
    """Remove from ``folder`` the partial copies of ``name`` (names ending in ``suffix``) whose writer is gone:
    on this host, its process has ended; elsewhere, or with no writer in the name, it is older than
    `STALE_SECONDS`. A live writer's is kept; a symbolic link is removed, never followed. Nothing that cannot
    be removed is an error."""
    prefix = _partial_prefix(name)
    try:
        entries = [e for e in os.scandir(folder) if e.name.startswith(prefix)]
    except OSError:
        return
    from studies.files import pid_alive

    host = socket.gethostname()[:64]
    for entry in entries:
        parts = entry.name[len(prefix):].split("@")
        try:
            if len(parts) == 3 and parts[2] == host + suffix and parts[1].isdigit():
                stale = not pid_alive(int(parts[1]))
            else:
                stale = time.time() - entry.stat(follow_symlinks=False).st_mtime > STALE_SECONDS
            if not stale:
                continue
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)
        except OSError:
            continue


@contextlib.contextmanager
def staged_report(out_dir: str | Path, maker: str = "", force: bool = False) -> Iterator[Path]:
    """Yield a fresh folder to write a report into; move the report into ``out_dir`` when the block ends.

    The folder is made beside ``out_dir`` when that does not exist yet (and
    renamed to it at the end), else inside it (and the report's items,
    `REPORT_ITEMS`, replace the old ones; other files there are left alone).
    On any exception the staged folder is removed and ``out_dir`` is as it was; the staged folders of earlier
    builds that were killed are removed (`_clean_partials`). ``maker``, the command writing the report, is
    noted in the folder (`MAKER`) and checked with ``force`` as `check_report_dir` does.
    """
    out = check_report_dir(out_dir, maker, force)
    fresh = not out.exists()
    for folder in (out.parent, out):
        _clean_partials(folder, out.name or "report")
    try:
        if fresh:
            out.parent.mkdir(parents=True, exist_ok=True)
        work = (out.parent if fresh else out) / _partial_name(out.name or "report")
        work.mkdir()
    except OSError as exc:
        raise OutputError(f"cannot write the report into {out_dir}: {exc.strerror or exc}") from None
    try:
        try:
            yield work
            if maker:
                (work / MAKER).write_text(json.dumps({"command": maker}) + "\n", encoding="utf-8")
        except OSError as exc:  # a full or read-only disk while writing: the user's to fix, not a bug
            raise OutputError(f"cannot write the report into {out_dir}: {exc.strerror or exc}; "
                              "nothing was changed there") from None
        try:
            if fresh:
                os.replace(work, out)
            else:
                _swap_items(work, out)
        except OSError as exc:
            raise OutputError(f"cannot move the finished report into {out_dir}: {exc.strerror or exc}; "
                              "nothing was changed there") from None
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _swap_items(work: Path, out: Path) -> None:
    """Replace the report items in ``out`` by those in ``work``: the old ones are moved aside first (a link is
    moved, never followed), and everything is put back as it was if a rename fails."""
    old = work / ".replaced"
    old.mkdir()
    moved: list[str] = []
    placed: list[str] = []
    try:
        for item in REPORT_ITEMS:
            if (out / item).exists() or (out / item).is_symlink():
                os.replace(out / item, old / item)
                moved.append(item)
        for item in REPORT_ITEMS:
            if (work / item).exists():
                os.replace(work / item, out / item)
                placed.append(item)
    except OSError:
        for item in placed:
            os.replace(out / item, work / item)
        for item in moved:
            os.replace(old / item, out / item)
        raise


def check_output_file(path: str | Path, suffixes: tuple[str, ...], option: str = "--out") -> Path:
    """Check, before any work, that a result file can be written at ``path`` (its folder exists and is writable,
    it is not a folder, its suffix is one of ``suffixes``); return it."""
    p = Path(path)
    if p.suffix not in suffixes:
        raise OutputError(f"{option} {str(p)!r}: allowed file types are {' and '.join(suffixes)}")
    try:
        return _check_output_file(p, suffixes, option)
    except OSError as exc:  # a name too long, a loop of links, ...
        raise OutputError(f"{option} {str(p)!r}: {exc.strerror or exc}") from None


def _check_output_file(p: Path, suffixes: tuple[str, ...], option: str) -> Path:
    if p.is_dir():
        raise OutputError(f"{option} {str(p)!r} is a folder; give a file name ending in {' or '.join(suffixes)}")
    parent = p.absolute().parent
    if not parent.is_dir():
        raise OutputError(f"{option} {str(p)!r}: the folder {parent} does not exist")
    check_regular(p)
    _probe_writable(parent, f"{option} {str(p)!r}")
    return p


def write_file_atomically(path: Path, write: Callable[[Path], None]) -> None:
    """Call ``write`` on a temporary file beside ``path`` and rename it onto ``path`` when it succeeds (removing the
    temporary files of earlier writers that were killed, `_clean_partials`)."""
    check_regular(path)  # a FIFO or a device there is refused, not replaced
    _clean_partials(path.absolute().parent, path.name, path.suffix)
    tmp = path.with_name(_partial_name(path.name, path.suffix))
    try:
        write(tmp)
        os.replace(tmp, path)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        tmp.unlink(missing_ok=True)
