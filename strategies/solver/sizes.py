"""The solver's memory per process, by setting, computed from the same formulas that size its arrays.

`SolverWork` allocates the transposition table (``tt_mb``), the per-depth work
arrays (``depth``) and the relaxation cut's kept set (``relax_states``) when the
strategy first plays; the free-parking relaxation allocates its set of
configurations (``capacity_states``) for a deal the searches leave undecided, and
the layered prover may fill ``prover_mb`` when it runs (``prover_seconds`` above
0), and the beam search its set of seen positions, candidates and paths (``beam_width``
above 0). Nothing is allocated here: the figures are what those allocations will be, so
that a run can be refused before any of them (`strategies.memory`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sim.engine import MAX_PILE_CAP, rule_params
from sim.rules import Rules
from strategies.solver.beam import beam_bytes
from strategies.solver.capacity import applies_to, pack_fields, slots_for
from strategies.solver.relax_cut import KEPT_CALLS, MEMO_SLOTS
from strategies.solver.search import FRAME_FIELDS
from strategies.solver.table import BYTES_PER_SLOT, table_slots

MIB = 2**20
WORD = 8


def _words(lengths: np.ndarray) -> int:
    """64-bit words of a packed configuration for bases of at most ``lengths`` cards (`pack_fields`, run as Python:
    no compilation for a figure)."""
    return int(pack_fields.py_func(lengths)[2])


def solver_memory(params: dict[str, Any], rules: Rules) -> dict[str, int]:
    """Bytes one process playing the solver with ``params`` under ``rules`` allocates, keyed by the setting that
    sizes them (``"tt_mb=128.0"``); a stage that cannot run (a budget of 0, rules it does not apply to) counts 0."""
    piles = rules.columns
    depth = int(params["depth"])
    use = {f"tt_mb={params['tt_mb']:g}": table_slots(params["tt_mb"]) * BYTES_PER_SLOT,
           f"depth={depth}": depth * (FRAME_FIELDS + 48 + 1 + 2) * WORD}
    relax = int(params["relax_states"])
    if relax > 0:
        words = _words(np.full(piles, MAX_PILE_CAP, dtype=np.int64)) + 1
        use[f"relax_states={relax}"] = (slots_for(KEPT_CALLS * relax) + MEMO_SLOTS) * words * WORD
    capacity = int(params["capacity_states"])
    if capacity > 0 and applies_to.py_func(rule_params(rules)):
        words = _words(np.full(piles, rules.cards_per_column, dtype=np.int64))
        use[f"capacity_states={capacity}"] = slots_for(capacity) * words * WORD
    if params["prover_seconds"] > 0:
        use[f"prover_mb={params['prover_mb']}"] = int(params["prover_mb"]) * MIB
    if params["beam_width"] > 0:
        use[f"beam_width={params['beam_width']}, beam_nodes={params['beam_nodes']}"] = beam_bytes(
            int(params["beam_width"]), int(params["beam_nodes"]), rule_params(rules))
    return use
