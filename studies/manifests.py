"""The record of one invocation of a run: a manifest in the key's ``_manifests/`` folder
(`studies.store.Store.write_manifest`).

`run_manifest` says what was asked (every run parameter, the command line, the toolkit version, host and
start); the runner adds the summary when the run finishes. An invocation that plays and repairs nothing and
repeats one the key's manifests record already (`same_invocation`) adds none: it would say nothing new.
Reports find a run's command and a study's runs through them (`reports.groups.sessions`).
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from collections.abc import Sequence
from typing import Any

from sim import __version__
from studies.rows import RunLabels
from studies.spec import RunSpec

HOW_PLAYED = ("jobs", "chunk", "backend", "scheduler", "in_process")
"""Manifest parameters that say how a run was played, not what was asked: they differ between an invocation
that played its deals and the same one repeated, which only reads them back."""


def same_invocation(earlier: dict[str, Any], manifest: dict[str, Any]) -> bool:
    """Whether ``earlier`` is a finished manifest of the invocation ``manifest`` records: the same command line,
    toolkit version and run parameters (but `HOW_PLAYED`). Reports find a tournament's or comparison's runs by
    the command line and deals their manifests share (`reports.groups.sessions`), so a repeat of a command
    is recorded once and another command over the same stored deals is recorded anew."""
    def what(m: dict[str, Any]) -> Any:
        params = m.get("parameters")
        params = {k: v for k, v in params.items() if k not in HOW_PLAYED} if isinstance(params, dict) else None
        return json.loads(json.dumps([m.get("command"), m.get("toolkit_version"), params], default=str))  # as stored

    return "finished" in earlier and what(earlier) == what(manifest)


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def run_manifest(spec: RunSpec, labels: RunLabels, strategy: Any, started: float, run_id: str,
              command: Sequence[str] | None, **params: Any) -> dict[str, Any]:
    return {
        "toolkit": "bakers-dozen",
        "toolkit_version": __version__,
        "run_id": run_id,
        "key": labels.key.hash,
        "command": list(command) if command is not None else list(sys.argv),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started)),
        "started_unix": started,
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "python": sys.version.split()[0],
        "parameters": {
            "variant": spec.rules.name,
            "rules": spec.rules.parameters(),
            "rules_fingerprint": spec.rules.fingerprint,
            "strategy_spec": spec.strategy,
            "strategy_identity": strategy.identity,
            "strategy_label": labels.strategy_label,
            "seed": spec.seed,
            "source": spec.source,
            "strategy_seed": spec.strategy_seed,
            "tier": spec.tier,
            "first": spec.first,
            "deals": spec.deals,
            "last": spec.last,
            **({"ranges": [list(r) for r in spec.ranges]} if spec.ranges else {}),
            **params,
        },
    }
