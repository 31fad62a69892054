"""UnrollLoops / UnrollConstantLoops: copy the body of small ``for`` loops.

A TorchScript ``for i in range(n)`` loop becomes a ``prim::Loop`` whose
start condition and continue condition are the constant ``True``. Running
such a loop costs a little per iteration (jump, counter, moving the carried
values); more importantly, the passes after unrolling only see one copy of
the body at a time while it stays a loop. Written out as straight-line code,
peephole rules and constant propagation can simplify across iterations (the
counter becomes a constant in each copy), and the fuser sees longer chains.

* ``unroll_constant_loops``: a loop with a constant trip count below
  ``MAX_BODY_REPEATS`` (64) whose body has at most ``MAX_BODY_SIZE`` (32)
  nodes and no loop inside is replaced by ``trip_count`` copies of its body;
  in copy ``k`` the iteration counter is the constant ``k``.
* ``unroll_loops`` does that too, and unrolls every other small ``for`` loop
  by ``UNROLL_FACTOR`` (8): a loop running ``n // 8`` times whose body is
  eight copies of the old body (copy ``k`` of iteration ``i`` sees the
  counter ``8 * i + k``), followed by the original loop as an epilogue for
  the ``n % 8`` iterations left (its counter starts at ``8 * (n // 8)``).
  The epilogue only starts when ``n > 0``, so a negative trip count still
  runs nothing.

Inner loops are handled before the loops around them, so a small inner loop
unrolled away can make its outer loop unrollable. The executor runs
``unroll_loops`` (or ``unroll_constant_loops``) in ``runOptimization`` after
constant pooling; when it changed something, peephole and constant
propagation run again to fold what the copies made constant. Nodes the
copies leave unused are removed at the end, as TorchScript does.

Before::

    %r : Tensor = prim::Loop(%three, %true, %x)
      block0(%i : int, %acc : Tensor):
        %y : Tensor = aten::mul(%acc, %i)
        -> (%true, %y)

After (``unroll_constant_loops``, ``%three`` = 3)::

    %7 : int = prim::Constant[value=0]()
    %y : Tensor = aten::mul(%x, %7)
    %9 : int = prim::Constant[value=1]()
    %y.1 : Tensor = aten::mul(%y, %9)
    %11 : int = prim::Constant[value=2]()
    %y.3 : Tensor = aten::mul(%y.1, %11)
"""

from __future__ import annotations

from ..constants import constant_value, insert_constant
from ..graph import Block, Graph, InsertPoint
from ..node import Node, Value
from ..types import IntType
from .dead_code_elimination import eliminate_dead_code
from .rewrite_helpers import constant_int, count_nodes, insert_op

__all__ = [
    "unroll_loops",
    "unroll_constant_loops",
    "UNROLL_FACTOR",
    "MAX_BODY_SIZE",
    "MAX_BODY_REPEATS",
]

UNROLL_FACTOR = 8
MAX_BODY_SIZE = 32  # nodes in the body, nested ones included
MAX_BODY_REPEATS = 64  # constant trip counts below this are unrolled completely


def unroll_loops(graph: Graph) -> bool:
    """Unroll small constant loops completely and other small for-loops by 8."""
    return _run(graph, constant_only=False)


def unroll_constant_loops(graph: Graph) -> bool:
    """Unroll only small loops with a constant trip count, completely."""
    return _run(graph, constant_only=True)


def _run(graph: Graph, constant_only: bool) -> bool:
    changed = False
    # Reversed program order visits nested loops before the loops around them.
    for node in reversed(list(graph.all_nodes())):
        if not node.is_alive or not _is_small_for_loop(node):
            continue
        trip = constant_int(node.inputs()[0])
        if trip is not None and trip < MAX_BODY_REPEATS:
            _unroll_completely(graph, node, max(trip, 0))
            changed = True
        elif not constant_only:
            _unroll_by_factor(graph, node, trip)
            changed = True
    if changed:
        eliminate_dead_code(graph)
    return changed


def _is_small_for_loop(node: Node) -> bool:
    """A loop that always starts and never stops early, with a small, loop-free body."""
    if node.kind() != "prim::Loop":
        return False
    body = node.blocks()[0]
    if constant_value(node.inputs()[1]) is not True or constant_value(body.outputs()[0]) is not True:
        return False
    if any(inner.kind() == "prim::Loop" for inner in node.walk()):
        return False
    return count_nodes(body) <= MAX_BODY_SIZE


def _copy_body(graph: Graph, body: Block, counter: Value | None, carried: list[Value]) -> list[Value]:
    """Insert one copy of ``body`` at the insert point, with its counter and
    carried parameters bound to the given values; returns the copy's results
    (condition first)."""
    params = body.inputs()
    mapping: dict[Value, Value] = dict(zip(params[1:], carried, strict=True))
    if counter is not None:
        mapping[params[0]] = counter

    def lookup(value: Value) -> Value:
        return mapping.get(value, value)

    for node in body.nodes():
        clone = graph.create_clone(node, lookup)
        graph.insert_node(clone)
        mapping.update(zip(node.outputs(), clone.outputs(), strict=True))
    return [lookup(v) for v in body.outputs()]


def _unroll_completely(graph: Graph, loop: Node, trip: int) -> None:
    body = loop.blocks()[0]
    counter_used = body.inputs()[0].has_uses()
    values = loop.inputs()[2:]
    with graph.insert_point(loop):
        for k in range(trip):
            counter = insert_constant(graph, k) if counter_used else None
            values = _copy_body(graph, body, counter, values)[1:]
    for output, value in zip(loop.outputs(), values, strict=True):
        output.replace_all_uses_with(value)
    loop.destroy()


def _unroll_by_factor(graph: Graph, loop: Node, trip: int | None) -> None:
    """Put a loop of ``n // 8`` eight-fold iterations before ``loop`` and turn
    ``loop`` itself into the epilogue for the remaining ``n % 8``."""
    body = loop.blocks()[0]
    counter_used = body.inputs()[0].has_uses()
    n = loop.inputs()[0]
    with graph.insert_point(loop):
        factor = insert_constant(graph, UNROLL_FACTOR)
        if trip is None:
            rounds = insert_op(graph, "aten::floordiv", [n, factor])
            done = insert_op(graph, "aten::mul", [rounds, factor])
            left = insert_op(graph, "aten::sub", [n, done])
            # floordiv rounds down: for n < 0 the remainder would be positive.
            starts = insert_op(graph, "aten::gt", [n, 0])
        else:
            rounds = insert_constant(graph, trip // UNROLL_FACTOR)
            done = insert_constant(graph, trip // UNROLL_FACTOR * UNROLL_FACTOR)
            left = insert_constant(graph, trip % UNROLL_FACTOR)
            starts = loop.inputs()[1]
        main = graph.create("prim::Loop", [rounds, loop.inputs()[1], *loop.inputs()[2:]], 0)
        for output in loop.outputs():
            main.add_output(output.type())
        graph.insert_node(main)
    new_body = main.add_block()
    index = new_body.add_input(type_=IntType())
    values = [new_body.add_input(type_=p.type()) for p in body.inputs()[1:]]
    with graph.insert_point(new_body):
        base = insert_op(graph, "aten::mul", [index, factor]) if counter_used else None
        results: list[Value] = []
        for k in range(UNROLL_FACTOR):
            counter = None
            if base is not None:
                counter = base if k == 0 else insert_op(graph, "aten::add", [base, k])
            results = _copy_body(graph, body, counter, values)
            values = results[1:]
    new_body.register_output(results[0])
    for value in values:
        new_body.register_output(value)
    if trip is not None and trip % UNROLL_FACTOR == 0:
        # Nothing is left over: the unrolled loop does all the work.
        for output, result in zip(loop.outputs(), main.outputs(), strict=True):
            output.replace_all_uses_with(result)
        loop.destroy()
        return
    # The original loop becomes the epilogue, fed by the unrolled loop.
    loop.replace_input(0, left)
    loop.replace_input(1, starts)
    for i, output in enumerate(main.outputs()):
        loop.replace_input(2 + i, output)
    if counter_used:
        _offset_counter(graph, body, done)


def _offset_counter(graph: Graph, body: Block, start: Value) -> None:
    """Make the epilogue body see ``start + j`` where it used the counter ``j``."""
    counter = body.inputs()[0]
    with graph.insert_point(InsertPoint.at_start(body)):
        shifted = insert_op(graph, "aten::add", [start, counter])
    for use in counter.uses:
        if use.user is not shifted.node:
            use.user.replace_input(use.offset, shifted)

