"""Helpers of specializeAutogradZero: where the Zero/Nonzero facts about a
backward graph's inputs come from, and the guard of the guarded mode.

Two sources of facts:

* **types** (:func:`type_state`), which hold on every call: ``Tensor[Undefined]``
  is an undefined gradient, a complete tensor type (dtype, device, sizes and
  strides, as profiling records a tensor it saw) is a defined one, a
  ``NoneType`` value is None;
* **profiles**, which only describe the calls seen so far: the
  ``profiled_type`` of a ``prim::profile`` node reading a tensor input, and the
  ``none_counts`` attribute (``{"num_none": n, "num_present": m}``) of a
  ``prim::profile_ivalue`` node reading an optional input (the sizes given to
  ``aten::_grad_sum_to_size``).

A profile may be wrong next time, so :func:`guard_specializations` checks it
at run time: the graph becomes ::

    %ok = all profiled facts still hold      (AutogradAllNonZero, AutogradAllZero,
                                              aten::__is__ / __isnot__ None, joined by aten::__and__)
    %outs = prim::If(%ok)
      block0():  a copy of the graph, which the caller then specializes
      block1():  prim::FallbackGraph_0(inputs...)   # the original graph, unspecialized
"""

from __future__ import annotations

from collections.abc import Mapping

from gradview.ir import BoolType, Graph, Node, TensorType, Type, Value
from gradview.ir.graph import walk_blocks
from gradview.ir.passes.rewrite_helpers import is_none
from gradview.ir.types import NoneType

__all__ = [
    "ZERO",
    "NONZERO",
    "UNKNOWN",
    "type_state",
    "guard_specializations",
    "strip_profile_nodes",
]

ZERO = "Zero"  # known undefined (None at run time): a gradient that is all zeros
NONZERO = "Nonzero"  # known defined: a real tensor
UNKNOWN = "Unknown"  # could be either

COUNTS = "none_counts"
PROFILE_KINDS = ("prim::profile", "prim::profile_ivalue")


def type_state(type_: Type) -> str:
    """What a value's type alone says about it being defined."""
    if isinstance(type_, TensorType):
        if type_.undefined is True:
            return ZERO
        if type_.undefined is False or type_.is_complete():
            return NONZERO
        return UNKNOWN
    if type_ == NoneType():
        return ZERO
    return UNKNOWN


def _tensor_profile(value: Value) -> str | None:
    """Zero/Nonzero as the first ``prim::profile`` reading ``value`` recorded it."""
    for use in value.uses:
        user = use.user
        if user.kind() == "prim::profile" and user.has_attribute("profiled_type"):
            profiled = user.ty("profiled_type")
            if isinstance(profiled, TensorType):
                found = type_state(profiled)
                return None if found == UNKNOWN else found
            return None
    return None


def _count_profiles(value: Value) -> list[Node]:
    """The ``profile_ivalue`` nodes with ``none_counts`` reading ``value``,
    directly or through other ``profile_ivalue`` nodes."""
    found: list[Node] = []
    work = [value]
    while work:
        current = work.pop()
        for use in current.uses:
            user = use.user
            if user.kind() != "prim::profile_ivalue" or len(user.outputs()) != 1:
                continue
            if user.has_attribute(COUNTS):
                found.append(user)
            work.append(user.output())
    return found


def _optional_profile(nodes: list[Node]) -> str | None:
    """ZERO if the first profile saw only None, NONZERO if it never saw None."""
    counts = nodes[0].attribute(COUNTS) if nodes else None
    if not isinstance(counts, Mapping):
        return None
    none, present = int(counts.get("num_none", 0)), int(counts.get("num_present", 0))
    if none and not present:
        return ZERO
    if present and not none:
        return NONZERO
    return None


def bypass(node: Node) -> None:
    """Remove a one-input, one-output identity node (a profile), keeping its value."""
    node.output().replace_all_uses_with(node.input(0))
    node.destroy()


def strip_profile_nodes(graph: Graph) -> None:
    """Remove every profiling node, nested ones included (the fallback runs unprofiled)."""
    for node in list(graph.all_nodes()):
        if node.kind() in PROFILE_KINDS and len(node.inputs()) == len(node.outputs()) == 1:
            bypass(node)


def guard_specializations(graph: Graph, state: dict[Value, str], profiled_none: set[Value]) -> Node | None:
    """Version ``graph`` on its profiled inputs; returns the new ``prim::If``, or
    None (graph untouched) when no input is both Unknown by type and profiled.

    Fills ``state`` with the profiled facts and ``profiled_none`` with the
    optional inputs seen None only; the caller specializes ``blocks()[0]``.
    """
    zero: list[Value] = []
    nonzero: list[Value] = []
    none: list[Value] = []
    present: list[Value] = []
    for inp in graph.inputs():
        if state.get(inp, UNKNOWN) != UNKNOWN:
            continue  # the type already says it, on every call
        counts = _count_profiles(inp)
        if counts:
            found = _optional_profile(counts)
            (none if found == ZERO else present if found == NONZERO else []).append(inp)
        else:
            found = _tensor_profile(inp)
            (zero if found == ZERO else nonzero if found == NONZERO else []).append(inp)
    if not (zero or nonzero or none or present):
        return None

    fallback = graph.copy()
    strip_profile_nodes(fallback)
    outputs = graph.outputs()
    versioning_if = graph.create("prim::If", (), len(outputs))
    true_block = versioning_if.add_block()
    false_block = versioning_if.add_block()
    # Clone before anything is inserted: the copy must not see the checks.
    true_block.clone_body_from(graph.block, {v: v for v in graph.inputs()})
    for node in list(walk_blocks([true_block])):
        if node.kind() == "prim::profile_ivalue" and node.has_attribute(COUNTS):
            bypass(node)  # the guard now checks what these profiles recorded
    call = graph.create("prim::FallbackGraph", graph.inputs(), len(outputs))
    call.g_("Subgraph", fallback)
    false_block.append_node(call)
    for out, value in zip(call.outputs(), outputs, strict=True):
        out.set_type(value.type())
        false_block.register_output(out)

    first = next(graph.nodes())
    with graph.insert_point(first):
        checks: list[Value] = []
        if none or present:
            none_value = graph.insert_constant(None)
            checks += [_bool(graph, "aten::__is__", [v, none_value]) for v in none]
            checks += [_bool(graph, "aten::__isnot__", [v, none_value]) for v in present]
        if nonzero:
            checks.append(_bool(graph, "prim::AutogradAllNonZero", nonzero))
        if zero:
            checks.append(_bool(graph, "prim::AutogradAllZero", zero))
        condition = checks[0]
        for check in checks[1:]:
            condition = _bool(graph, "aten::__and__", [condition, check])
        versioning_if.add_input(condition)
        graph.insert_node(versioning_if)

    ret = graph.return_node()
    for index, (new, old) in enumerate(zip(versioning_if.outputs(), outputs, strict=True)):
        new.set_type(old.type())
        ret.replace_input(index, new)
    # What follows the If is the original graph, now unused: remove it.
    for node in list(graph.block.reverse_nodes()):
        if node is versioning_if:
            break
        node.destroy()

    for values, found in ((zero, ZERO), (nonzero, NONZERO), (none, ZERO), (present, NONZERO)):
        for v in values:
            state[v] = found
    profiled_none.update(none)
    return versioning_if


def _bool(graph: Graph, kind: str, inputs: list[Value]) -> Value:
    node = graph.insert_node(graph.create(kind, inputs))
    return node.output().set_type(BoolType())


def is_known_none(value: Value, profiled_none: set[Value]) -> bool:
    """None on every call (by type or constant), or guarded to be None, seen
    through profiling nodes."""
    while True:
        if is_none(value) or value in profiled_none:
            return True
        node = value.node
        if node.kind() not in PROFILE_KINDS or len(node.inputs()) != 1:
            return False
        value = node.input(0)
