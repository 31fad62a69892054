"""What the per-op shape rules behind ``propagate_input_shapes`` are, and their toolkit.

A *shape rule* looks at the types (and, where they are constants, the
values) of a node's inputs and returns the types of its outputs: for
``aten::mm(Double(3, 4), Double(4, 5))`` it returns ``[Double(3, 5)]``. Rules
are registered by node kind, since traced graphs call overloads by their
plain name (``aten::add`` covers ``add.Tensor`` and ``add.Scalar``); a rule
looks at its inputs to tell overloads apart and returns None when it cannot
say anything, which leaves the node's declared types alone.

Each rule is declared with its op, in the op family's module of
``gradview.ops`` (``ops/linalg.py`` for ``aten::mm``); this module holds what
they share:
:class:`NodeArgs` (the rule's view of its inputs), broadcasting, dimension
wrapping, joins of types, and helpers that build result types with strides.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gradview.ir.attributes import TensorConstant
from gradview.ir.constants import NOT_CONSTANT, constant_value
from gradview.ir.node import Node, Value
from gradview.ir.types import (
    BoolType,
    FloatType,
    IntType,
    ListType,
    NamedType,
    NoneType,
    OptionalType,
    TensorType,
    TupleType,
    Type,
)

from .dtype_rules import DIM, WRAPPED, ZERO_DIM, Operand, result_type
from .tensor_layout import Layout, contiguous_strides, elementwise_strides, preserve_strides

__all__ = [
    "ElementList",
    "NodeArgs",
    "ShapeFacts",
    "ShapeRule",
    "RuleResult",
    "Sizes",
    "all_known",
    "broadcast",
    "numel",
    "wrap_dim",
    "join_types",
    "join_all",
    "layout_of",
    "make_tensor",
    "fresh",
    "pointwise",
    "device_of",
]


@dataclass(frozen=True, slots=True)
class ElementList:
    """A list result whose element types are known one by one (``chunk``, ``split``)."""

    elements: tuple[Type, ...]


RuleResult = list[Type | ElementList | None] | None
ShapeRule = Callable[["NodeArgs"], RuleResult]

class ShapeFacts:
    """What the pass knows about values besides their types.

    ``known`` maps int, int-list, bool, float and string values to their Python
    value when it is known (a list may hold None for unknown entries: the
    result of ``aten::size`` on ``Double(*, 4)`` is ``[None, 4]``).
    ``elements`` holds the element types of lists built element by element.
    """

    __slots__ = ("known", "elements")

    def __init__(self) -> None:
        self.known: dict[Value, Any] = {}
        self.elements: dict[Value, tuple[Type, ...]] = {}

    def value_of(self, value: Value) -> Any:
        if value in self.known:
            return self.known[value]
        return constant_value(value)


class NodeArgs:
    """A shape rule's view of one node: input types, constants, promotion operands."""

    __slots__ = ("node", "inputs", "facts")

    def __init__(self, node: Node, facts: ShapeFacts) -> None:
        self.node = node
        self.inputs = node._inputs
        self.facts = facts

    def __len__(self) -> int:
        return len(self.inputs)

    def type(self, i: int) -> Type:
        return self.inputs[i].type()

    def tensor(self, i: int) -> TensorType | None:
        """Input ``i``'s tensor type, or None if it is not a tensor (or out of range)."""
        if i >= len(self.inputs):
            return None
        t = self.inputs[i].type()
        return t if isinstance(t, TensorType) else None

    def is_none(self, i: int) -> bool:
        return i < len(self.inputs) and self.inputs[i].type() == NoneType()

    def value(self, i: int, default: Any = NOT_CONSTANT) -> Any:
        """The Python value of input ``i`` when known, else ``default`` (missing inputs too)."""
        if i >= len(self.inputs):
            return default
        found = self.facts.value_of(self.inputs[i])
        return default if found is NOT_CONSTANT else found

    def int_value(self, i: int) -> int | None:
        v = self.value(i, None)
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    def int_list(self, i: int) -> list[int | None] | None:
        """An ``int[]`` input (a single int counts as a one-element list); None if unknown."""
        v = self.value(i, None)
        if isinstance(v, int) and not isinstance(v, bool):
            return [v]
        if isinstance(v, (list, tuple)) and all(x is None or isinstance(x, int) for x in v):
            return list(v)
        return None

    def elements(self, i: int) -> tuple[Type, ...] | None:
        return self.facts.elements.get(self.inputs[i]) if i < len(self.inputs) else None

    def operand(self, i: int) -> Operand | None:
        """Input ``i`` as a type-promotion operand; None for None/absent inputs."""
        if i >= len(self.inputs):
            return None
        value = self.inputs[i]
        t = value.type()
        if isinstance(t, OptionalType):
            return None if constant_value(value) is None else Operand(None, None)
        if isinstance(t, TensorType):
            if _is_wrapped_constant(value):
                return Operand(t.scalar_type, WRAPPED)
            if t.sizes is None:
                return Operand(t.scalar_type, None)
            return Operand(t.scalar_type, DIM if t.sizes else ZERO_DIM)
        if t == NoneType():
            return None
        # Anything else (Any, a union...) might be a number of any kind.
        return _SCALAR_OPERANDS.get(t, Operand(None, None))

    def operands(self, indices: Sequence[int]) -> list[Operand]:
        found = (self.operand(i) for i in indices)
        return [op for op in found if op is not None]

    def promoted(self, indices: Sequence[int]) -> str | None:
        return result_type(self.operands(indices))


_SCALAR_OPERANDS: dict[Type, Operand] = {
    IntType(): Operand("Long", WRAPPED),
    FloatType(): Operand("Double", WRAPPED),
    BoolType(): Operand("Bool", WRAPPED),
    NamedType("complex"): Operand("ComplexDouble", WRAPPED),
    NamedType("Scalar"): Operand(None, WRAPPED),
}


def _is_wrapped_constant(value: Value) -> bool:
    """A 0-dim tensor constant: tracing records Python numbers this way (``{2}``),
    and PyTorch still promotes them as wrapped numbers."""
    if value.node._kind != "prim::Constant":
        return False
    v = constant_value(value)
    return isinstance(v, TensorConstant) and v.sizes == ()


# -- sizes ------------------------------------------------------------------------------------

Sizes = tuple[int | None, ...]


def wrap_dim(dim: int | None, rank: int | None) -> int | None:
    """A dimension index made non-negative (``-1`` is the last); None if unknown or out of range.

    Like ATen, a 0-dim tensor accepts dims 0 and -1.
    """
    if dim is None or rank is None:
        return None
    bound = max(rank, 1)
    if dim < -bound or dim >= bound:
        return None
    return dim + bound if dim < 0 else dim


def broadcast(*shapes: Sizes | None) -> Sizes | None:
    """Broadcast sizes; None (unknown rank) if any input's rank is unknown or they clash."""
    if any(s is None for s in shapes):
        return None
    rank = max((len(s) for s in shapes), default=0)  # type: ignore[arg-type]
    result: list[int | None] = []
    for d in range(rank):
        sizes = [s[len(s) - rank + d] for s in shapes if len(s) - rank + d >= 0]  # type: ignore[arg-type]
        known = {x for x in sizes if x is not None and x != 1}
        if len(known) > 1:
            return None
        if known:
            result.append(known.pop())
        elif any(x is None for x in sizes):
            result.append(None)
        else:
            result.append(1)
    return tuple(result)


def all_known(sizes: Sizes | None) -> bool:
    return sizes is not None and all(s is not None for s in sizes)


def numel(sizes: Sizes | None) -> int | None:
    if not all_known(sizes):
        return None
    n = 1
    for s in sizes:  # type: ignore[union-attr]
        n *= s  # type: ignore[operator]
    return n


# -- building result types --------------------------------------------------------------------


def layout_of(t: TensorType | None) -> Layout | None:
    """Sizes and strides of a tensor whose sizes are all known.

    A tensor whose strides are not given is taken to be contiguous, which is
    how PyTorch creates tensors unless a view rearranges them.
    """
    if t is None or not all_known(t.sizes):
        return None
    sizes = tuple(t.sizes)  # type: ignore[arg-type]
    if t.strides is not None and len(t.strides) == len(sizes) and all(s is not None for s in t.strides):
        return sizes, tuple(t.strides)  # type: ignore[return-value]
    return sizes, contiguous_strides(sizes)  # type: ignore[arg-type]


def device_of(*types: Type | None) -> str | None:
    """The device of the first tensor with a known one."""
    for t in types:
        if isinstance(t, TensorType) and t.device is not None:
            return t.device
    return None


def make_tensor(
    dtype: str | None, sizes: Sizes | None, strides: Sequence[int] | None, device: str | None
) -> TensorType:
    """A result type; strides are kept only when every size is known."""
    if sizes is not None:
        sizes = tuple(sizes)
    kept = tuple(strides) if strides is not None and all_known(sizes) else None
    return TensorType(dtype, sizes, kept, None, device)


def fresh(dtype: str | None, sizes: Sizes | None, device: str | None) -> TensorType:
    """A newly allocated (contiguous) result."""
    strides = contiguous_strides(sizes) if all_known(sizes) else None  # type: ignore[arg-type]
    return make_tensor(dtype, sizes, strides, device)


def pointwise(
    args: NodeArgs,
    tensor_indices: Sequence[int],
    dtype: str | None,
    number_operands: Sequence[int] = (),
    common: str | None = None,
    cast: Sequence[int] | None = None,
) -> TensorType:
    """An elementwise result: broadcast sizes of the tensor inputs, TensorIterator's layout.

    ``number_operands`` are inputs that ATen wraps into 0-dim tensors and
    iterates over (``other`` of ``add.Scalar``): they do not change the
    shape, but their presence changes how the layout is chosen. ``common`` is
    the dtype the kernel computes in: an input of another dtype (among
    ``cast``, by default all) is first copied to it, laid out like
    ``empty_like``, and that copy's layout counts.
    """
    present = [i for i in tensor_indices if args.tensor(i) is not None]
    tensors = [args.tensor(i) for i in present]
    sizes = broadcast(*(t.sizes for t in tensors))  # type: ignore[union-attr]
    strides = None
    if all_known(sizes):
        layouts = [
            _operand_layout(t, common if cast is None or i in cast else None)  # type: ignore[arg-type]
            for i, t in zip(present, tensors, strict=True)
        ]
        if all(lay is not None for lay in layouts):
            numbers = [((), ()) for i in number_operands if args.tensor(i) is None and not args.is_none(i)]
            strides = elementwise_strides(sizes, layouts + numbers)  # type: ignore[arg-type]
        else:
            strides = contiguous_strides(sizes)  # type: ignore[arg-type]
    return make_tensor(dtype, sizes, strides, device_of(*tensors))  # type: ignore[arg-type]


def _operand_layout(t: TensorType, common: str | None) -> Layout | None:
    layout = layout_of(t)
    if layout is not None and common is not None and t.scalar_type not in (None, common):
        return layout[0], preserve_strides(*layout)
    return layout


# -- joins (control flow) ---------------------------------------------------------------------


def join_types(a: Type, b: Type) -> Type | None:
    """The most precise type both ``a`` and ``b`` fit; None if they are not comparable.

    Tensors keep what they agree on: ``Double(2, 3)`` joined with
    ``Double(4, 3)`` is ``Double(*, 3)``; different ranks give unknown rank.
    """
    if a == b:
        return a
    if isinstance(a, TensorType) and isinstance(b, TensorType):
        return _join_tensors(a, b)
    if isinstance(a, ListType) and isinstance(b, ListType):
        elem = join_types(a.elem, b.elem)
        return ListType(elem) if elem is not None else None
    if isinstance(a, TupleType) and isinstance(b, TupleType) and len(a.elems) == len(b.elems):
        elems = [join_types(x, y) for x, y in zip(a.elems, b.elems, strict=True)]
        if any(e is None for e in elems):
            return None
        return TupleType(tuple(elems), a.names if a.names == b.names else None)  # type: ignore[arg-type]
    return None


def _join_tensors(a: TensorType, b: TensorType) -> TensorType:
    sizes: Sizes | None = None
    strides: Sizes | None = None
    if a.sizes is not None and b.sizes is not None and len(a.sizes) == len(b.sizes):
        sizes = tuple(x if x == y else None for x, y in zip(a.sizes, b.sizes, strict=True))
        if a.strides is not None and b.strides is not None and len(a.strides) == len(b.strides) == len(sizes):
            strides = tuple(x if x == y else None for x, y in zip(a.strides, b.strides, strict=True))
    return TensorType(
        a.scalar_type if a.scalar_type == b.scalar_type else None,
        sizes,
        strides,
        a.requires_grad if a.requires_grad == b.requires_grad else None,
        a.device if a.device == b.device else None,
        a.undefined if a.undefined == b.undefined else None,
    )


def join_all(types: Sequence[Type]) -> Type | None:
    if not types:
        return None
    result: Type | None = types[0]
    for t in types[1:]:
        if result is None:
            return None
        result = join_types(result, t)
    return result
