"""Memory a strategy's settings ask for, checked against this machine's before any work.

A strategy's size settings (the solver's table, its relaxation's state budget,
the prover's memory, the sampling player's completions) each allocate memory in
every worker process that plays it. `Strategy.memory_use` says how much, per
setting; `check_memory` refuses, in one line, a run whose workers together would
ask for more than the machine has, naming the settings, the total asked and what
the machine has. A value that fits its own range but not the machine is then
refused before the first table is allocated, not by the kernel's out-of-memory
killer part way through a run.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from sim.errors import UserError, quoted, shortened

if TYPE_CHECKING:
    from sim.rules import Rules
    from strategies.base import Strategy

MIB = 2**20
CGROUP_LIMIT = Path("/sys/fs/cgroup/memory.max")
"""Where a container's memory limit is (cgroup v2): a machine may have more than this process may use."""


class MemoryLimitError(UserError):
    """Settings whose memory, for all the workers that play them together, is more than this machine has."""


def machine_mib() -> float:
    """The memory this process may use in MiB: the machine's physical memory, or its container's limit where lower
    (a large figure where the platform says neither)."""
    try:
        mib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / MIB
    except (ValueError, OSError, AttributeError):
        mib = float(2**20)
    try:
        limit = CGROUP_LIMIT.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return mib
    return min(mib, int(limit) / MIB) if limit.isdigit() else mib


def check_memory(strategy: Strategy, rules: Rules, workers: int, jobs_hint: str = "--jobs") -> None:
    """Refuse (`MemoryLimitError`) ``strategy`` under ``rules`` played by ``workers`` processes at once when the
    memory its settings ask for (`Strategy.memory_use`, per worker) times ``workers`` is more than `machine_mib`.
    ``jobs_hint`` is what the message suggests lowering besides the settings. A plug-in whose ``memory_use`` fails
    or answers other than bytes by setting is refused in one line (`StrategyError`); a built-in's failure is a bug."""
    from strategies import is_builtin
    from strategies.base import StrategyError

    try:
        use = strategy.memory_use(rules)
        if not isinstance(use, dict) or not all(isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool)
                                                and v >= 0 for k, v in use.items()):
            raise TypeError(f"it returned {quoted(use)}, not a dict of setting names to bytes")
    except Exception as exc:
        if is_builtin(strategy):
            raise
        raise StrategyError(f"strategy {quoted(strategy.name)}: memory_use failed: {type(exc).__name__}: "
                            f"{shortened(str(exc), 200)}") from None
    check_sizes(f"strategy {strategy.name!r}", use, workers, jobs_hint)


def check_sizes(what: str, use: dict[str, int], workers: int, jobs_hint: str = "--jobs") -> None:
    """Refuse (`MemoryLimitError`) sizes ``use`` (bytes per worker by setting, ``"tt_mb=128"``) of ``what`` when,
    for ``workers`` processes together, they are more than `machine_mib`."""
    per_worker = sum(use.values()) / MIB
    total = per_worker * max(workers, 1)
    have = machine_mib()
    if total <= have:
        return
    big = sorted(use, key=lambda k: -use[k])
    shown = ", ".join(f"{k} ({use[k] / MIB:,.0f} MiB)" for k in big[:3])
    lower = " or ".join([big[0].partition("=")[0]] + ([jobs_hint] if workers > 1 else []))
    raise MemoryLimitError(f"{what}: {shown} need {per_worker:,.0f} MiB a worker, {total:,.0f} MiB in all for "
                           f"{workers} worker(s); this machine has {have:,.0f} MiB: lower {lower}")
