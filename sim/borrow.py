"""Array views that hold no reference, for compiled loops that pass the same arrays to helpers millions of times.

Numba counts references to an array's memory: passing an array to a compiled helper, or using one inside a helper
it inlines, increments and decrements that count, atomically, wherever its pruning pass cannot prove the pair
useless (pairs split across branches, or around calls). In the solver's search those pairs took about a quarter
of its time on Baker's Dozen (docs/performance.md, "Where a node's time goes"). A view made by `borrowed` has no
memory owner, so every count on it is skipped at its first test.

The rule that keeps this safe: borrow only an array that something else keeps alive for as long as the view is
used (an argument of the compiled function, owned by its caller), never a local array, which numba frees after
its last use.
"""

from __future__ import annotations

from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic


@intrinsic
def borrowed(typingctx, arr):  # noqa: ANN001, ANN201 (numba)
    """A view of the array ``arr`` (same data, shape and type) that holds no reference to its memory."""
    if not isinstance(arr, types.Array):
        return None

    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202 (numba)
        # an array is a struct whose first field is its memory owner (the reference counted): set it to null
        value = args[0]
        return builder.insert_value(value, ir.Constant(value.type.elements[0], None), 0)

    return arr(arr), codegen
