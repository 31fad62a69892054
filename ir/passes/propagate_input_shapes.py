"""PropagateInputShapes: work out the dtype, shape and layout of every tensor.

A graph's inputs often carry complete types (``Double(4, 3, strides=[3, 1],
device=cpu)``) while the values computed inside it are plain ``Tensor``.
This pass walks the graph once, from the inputs forward, and asks a *shape
rule* per op (see :mod:`gradview.ops.shape_toolkit`) what each result must be: its
dtype by PyTorch's promotion rules, its sizes (broadcasting, reductions,
matmul...), its strides (contiguous for new tensors, rearranged for views)
and its device. When every input is complete, every result becomes complete.

The executor runs it after specializing a graph to the inputs it was called
with: fusers, the interpreter's fast paths and autodiff all make better
choices when they know that ``%y`` is a ``Double(4, 5)`` rather than some
tensor, and a type that does not fit the real data exposes a bug early.

Control flow: a ``prim::If`` result gets what both branches agree on (sizes
that differ become ``*``, different ranks give an unknown rank); a
``prim::Loop`` body is re-run with the carried types merged with what the
body returns until they stop changing, which ends because every merge can
only forget information. Ops without a rule keep their declared types, and
so does any value the pass can say nothing about; ``requires_grad`` is left
as it was (:func:`propagate_requires_grad` sets it). An input whose strides
are not given is taken to be contiguous.

Before::

    graph(%x : Double(4, 3, strides=[3, 1], device=cpu),
          %w : Double(3, 5, strides=[5, 1], device=cpu)):
      %zero : int = prim::Constant[value=0]()
      %y : Tensor = aten::mm(%x, %w)
      %t : Tensor = aten::t(%y)
      %z : Tensor = aten::relu(%t)
      %m : Tensor = aten::gt(%z, %zero)
      return (%m)

After (``t`` is a view: its sizes and strides swap, no data moves; ``relu`` and
``gt`` keep their input's memory order; a comparison gives ``Bool``)::

      %y : Double(4, 5, strides=[5, 1], device=cpu) = aten::mm(%x, %w)
      %t : Double(5, 4, strides=[1, 5], device=cpu) = aten::t(%y)
      %z : Double(5, 4, strides=[1, 5], device=cpu) = aten::relu(%t)
      %m : Bool(5, 4, strides=[1, 5], device=cpu) = aten::gt(%z, %zero)
"""

from __future__ import annotations

from gradview.ops.registry import shape_rule_for
from gradview.ops.shape_toolkit import (
    ElementList,
    NodeArgs,
    ShapeFacts,
    fresh,
    join_all,
    join_types,
)

from ..attributes import TensorConstant
from ..constants import NOT_CONSTANT, constant_value
from ..graph import Block, Graph
from ..node import Node, Value
from ..types import TENSOR, IntType, ListType, OptionalType, TensorType, TupleType, Type
from .known_values import known_result, list_is_stable

__all__ = ["propagate_input_shapes"]


def propagate_input_shapes(graph: Graph) -> bool:
    """Refine every node output's type from the graph inputs' types.

    Returns True if any type changed.
    """
    propagation = _Propagation()
    propagation.run_block(graph.block)
    return propagation.changed()


class _Propagation:
    def __init__(self) -> None:
        self.facts = ShapeFacts()
        # The type each retyped value had before the pass: a loop body's
        # parameters may change and change back, which is no change.
        self.original: dict[Value, Type] = {}

    def changed(self) -> bool:
        return any(value.type() != old for value, old in self.original.items())

    # -- setting types --------------------------------------------------------------------------
    def set_type(self, value: Value, new: Type, force: bool = False) -> None:
        """Give ``value`` the inferred type ``new``, keeping its requires_grad (and kind).

        A plain ``Tensor`` says nothing, so it replaces a declared type only
        when ``force`` is set (for block parameters, which the pass owns).
        """
        old = value.type()
        if isinstance(new, TensorType):
            if not isinstance(old, TensorType) or (new == TENSOR and not force):
                return
            new = TensorType(new.scalar_type, new.sizes, new.strides, old.requires_grad,
                             new.device, old.undefined)
        elif type(new) is not type(old):
            return
        elif isinstance(new, TupleType) and isinstance(old, TupleType):
            if len(new.elems) != len(old.elems):
                return
            new = TupleType(new.elems, old.names)
        if new != old:
            self.original.setdefault(value, old)
            value.set_type(new)

    def set_output(self, value: Value, result: Type | ElementList) -> None:
        if isinstance(result, ElementList):
            if not list_is_stable(value):
                # Appended to or stored away: its elements may be anything later.
                self.facts.elements.pop(value, None)
                return
            self.facts.elements[value] = result.elements
            elem = join_all(result.elements) if result.elements else None
            result = ListType(elem if elem is not None else TENSOR)
        else:
            self.facts.elements.pop(value, None)
        self.set_type(value, result)

    # -- walking --------------------------------------------------------------------------------
    def run_block(self, block: Block) -> None:
        for node in block.nodes():
            self.run_node(node)

    def run_node(self, node: Node) -> None:
        kind = node.kind()
        handler = _PRIM_HANDLERS.get(kind)
        if handler is not None:
            handler(self, node)
            return
        if len(node._outputs) == 1:
            self.record_known(node)
        rule = shape_rule_for(kind) or (_in_place if _is_in_place(kind) else None)
        if rule is None:
            # Unknown op: its outputs keep their declared types, but values
            # inside its blocks (prim::GradOf...) can still be refined.
            for block in node._blocks:
                self.run_block(block)
            return
        try:
            results = rule(NodeArgs(node, self.facts))
        except (IndexError, KeyError, TypeError, ValueError, ZeroDivisionError):
            results = None  # a malformed call: leave it to lint and the runtime to report
        if results is None:
            return
        for value, result in zip(node._outputs, results, strict=False):
            if result is not None:
                self.set_output(value, result)

    def record_known(self, node: Node) -> None:
        value = known_result(node, self.facts)
        if isinstance(value, list) and not list_is_stable(node._outputs[0]):
            value = NOT_CONSTANT
        if value is NOT_CONSTANT:
            self.facts.known.pop(node._outputs[0], None)
        else:
            self.facts.known[node._outputs[0]] = value

    # -- control flow ---------------------------------------------------------------------------
    def run_if(self, node: Node) -> None:
        branches = node.blocks()
        for block in branches:
            self.run_block(block)
        if len(branches) != 2:
            return
        for index, value in enumerate(node.outputs()):
            merged = join_types(branches[0].outputs()[index].type(), branches[1].outputs()[index].type())
            if merged is not None:
                self.set_type(value, merged)

    def run_loop(self, node: Node) -> None:
        """Re-run the body with merged carried types until they are stable.

        Each round merges the carried types with what the body returns; a merge
        only ever forgets information, so this stops after a few rounds (the
        cap only guards against types that cannot be merged at all, which
        fall back to the declared ones).
        """
        body = node.blocks()[0]
        params = body.inputs()[1:]
        declared = [p.type() for p in params]
        carried = [v.type() for v in node.inputs()[2:]]
        self.set_type(body.inputs()[0], IntType())
        # Every round that changes something forgets at least one fact, so the
        # number of facts bounds the rounds.
        for _ in range(2 + sum(_facts_in(t) for t in carried)):
            for param, t in zip(params, carried, strict=False):
                self.set_type(param, t, force=True)
            self.run_block(body)
            returned = [v.type() for v in body.outputs()[1:]]
            merged = [
                join_types(c, r) or d
                for c, r, d in zip(carried, returned, declared, strict=False)
            ]
            if merged == carried:
                break
            carried = merged
        else:
            carried = declared
            for param, t in zip(params, carried, strict=False):
                self.set_type(param, t, force=True)
            self.run_block(body)
        for value, t in zip(node.outputs(), carried, strict=False):
            self.set_type(value, t)


def _facts_in(t: Type) -> int:
    """How many times a type can lose information by merging (its lattice height)."""
    if isinstance(t, TensorType):
        return 6 + 2 * (t.rank or 0)
    if isinstance(t, TupleType):
        return 1 + sum(_facts_in(e) for e in t.elems)
    if isinstance(t, ListType):
        return 1 + _facts_in(t.elem)
    return 1


# -- in-place ops ---------------------------------------------------------------------------------

# In-place ops that change their input's shape or layout rather than its values.
_RESHAPING_IN_PLACE = frozenset({
    "aten::resize_", "aten::resize_as_", "aten::set_", "aten::as_strided_", "aten::squeeze_",
    "aten::unsqueeze_", "aten::transpose_", "aten::t_", "aten::swapaxes_", "aten::swapdims_",
    "aten::unsqueeze_copy_",
})


def _is_in_place(kind: str) -> bool:
    name = kind.partition("::")[2]
    return kind.startswith("aten::") and name.endswith("_") and not name.endswith("__") \
        and kind not in _RESHAPING_IN_PLACE


def _in_place(args: NodeArgs) -> list[Type | ElementList | None] | None:
    """``x.add_(y)`` returns ``x`` itself: same dtype, sizes and strides."""
    self = args.tensor(0)
    if self is None:
        return None
    return [TensorType(self.scalar_type, self.sizes, self.strides, None, self.device)]


# -- structural prims -------------------------------------------------------------------------


def _constant(p: _Propagation, node: Node) -> None:
    value = constant_value(node.output())
    if isinstance(value, TensorConstant):
        p.set_type(node.output(), fresh(value.scalar_type, tuple(value.sizes), value.device))


def _list_construct(p: _Propagation, node: Node) -> None:
    out = node.output()
    if isinstance(out.type(), ListType) and isinstance(out.type().elem, TensorType):  # type: ignore[attr-defined]
        p.set_output(out, ElementList(tuple(v.type() for v in node.inputs())))
        return
    elem = out.type().elem if isinstance(out.type(), ListType) else None  # type: ignore[attr-defined]
    if isinstance(elem, OptionalType) and isinstance(elem.elem, TensorType) and list_is_stable(out):
        # A Tensor?[] (index's indices): each element's type is remembered, the list keeps its type.
        p.facts.elements[out] = tuple(v.type() for v in node.inputs())
        return
    p.record_known(node)


def _list_unpack(p: _Propagation, node: Node) -> None:
    source = node.input()
    elements = p.facts.elements.get(source)
    if elements is None or len(elements) != len(node.outputs()):
        source_type = source.type()
        if not isinstance(source_type, ListType):
            return
        elements = (source_type.elem,) * len(node.outputs())
    known = p.facts.value_of(source)
    for index, (value, t) in enumerate(zip(node.outputs(), elements, strict=True)):
        p.set_type(value, t)
        if isinstance(known, list) and len(known) == len(node.outputs()) and known[index] is not None:
            p.facts.known[value] = known[index]


def _tuple_construct(p: _Propagation, node: Node) -> None:
    p.set_type(node.output(), TupleType(tuple(v.type() for v in node.inputs())))


def _tuple_unpack(p: _Propagation, node: Node) -> None:
    source = node.input().type()
    if isinstance(source, TupleType) and len(source.elems) == len(node.outputs()):
        for value, t in zip(node.outputs(), source.elems, strict=True):
            p.set_type(value, t)


def _tuple_index(p: _Propagation, node: Node) -> None:
    source = node.input(0).type()
    index = p.facts.value_of(node.input(1))
    if isinstance(source, TupleType) and isinstance(index, int) and -len(source.elems) <= index < len(source.elems):
        p.set_type(node.output(), source.elems[index])


_PRIM_HANDLERS = {
    "prim::Constant": _constant,
    "prim::ListConstruct": _list_construct,
    "prim::ListUnpack": _list_unpack,
    "prim::TupleConstruct": _tuple_construct,
    "prim::TupleUnpack": _tuple_unpack,
    "prim::TupleIndex": _tuple_index,
    "prim::If": _Propagation.run_if,
    "prim::Loop": _Propagation.run_loop,
}
