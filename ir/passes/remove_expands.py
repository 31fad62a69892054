"""RemoveExpands: drop the broadcasts that were only written down for autodiff.

When the tracer or autodiff needs a broadcast spelled out (to know which
gradient must later be summed back to a smaller shape), it inserts
``aten::expand(x, size, implicit=True)``. The ``implicit`` flag says nobody
asked for this expand in the program: the operation that consumes it would
broadcast ``x`` by itself. Keeping the node would cost a copy-free view in
the best case and block fusion in the worst, so the executor removes these
nodes in runRequiredPasses, before a graph runs: every use of the expand's
output is pointed at ``x`` itself.

An expand whose ``implicit`` input is ``False`` or not a constant was written
by the user and is kept. The now unused ``size`` list and flag constant are
left for dead code elimination, which runRequiredPasses runs next.

Before::

    %e : Tensor = aten::expand(%x, %size, %true)
    %r : Tensor = aten::add(%e, %y, %one)

After::

    %r : Tensor = aten::add(%x, %y, %one)
"""

from __future__ import annotations

from ..constants import constant_value
from ..graph import Graph

__all__ = ["remove_expands"]


def remove_expands(graph: Graph) -> bool:
    """Replace each ``aten::expand(x, size, True)`` by ``x``; True if any was removed."""
    changed = False
    # An expand has no blocks, so destroying one leaves the rest of the list valid.
    for node in list(graph.all_nodes()):
        if node.kind() != "aten::expand" or len(node.inputs()) != 3 or len(node.outputs()) != 1:
            continue
        if constant_value(node.inputs()[2]) is not True:
            continue
        node.output().replace_all_uses_with(node.inputs()[0])
        node.destroy()
        changed = True
    return changed
