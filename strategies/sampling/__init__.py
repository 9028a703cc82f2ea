"""The sampling player: an honest player for face-down deals that imagines the hidden cards and solves them.

`strategy` is the strategy and its compiled policy (the move vote); `draw` the
completions of the hidden cards it draws; `plan` the plans it compares instead of first moves;
`bandit` their comparison by successive halving (``bandit=true``);
`keep` the completions it keeps from one decision to the next; `solve` one
small solve of a completion.
"""

from strategies.sampling.draw import draw_completion
from strategies.sampling.strategy import (
    COMPLETION_SEARCH,
    KEEP_BASE,
    PLAN_BASE,
    PRESETS,
    SEEN_SLOTS,
    SamplingStrategy,
    sampling_policy,
    scratch_size,
)

__all__ = ["COMPLETION_SEARCH", "KEEP_BASE", "PLAN_BASE", "PRESETS", "SEEN_SLOTS", "SamplingStrategy",
           "draw_completion", "sampling_policy", "scratch_size"]
