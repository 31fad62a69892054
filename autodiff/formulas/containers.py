"""Gradient formulas of lists, tuples, and the ops that join or split tensors.

**The gradient of a list is a list.** A ``Tensor[]`` value's gradient is a
``Tensor[]`` value holding one gradient per element, so lists flow through
reverse mode like tensors do:

* ``prim::ListConstruct(a, b, ...)``: the list's gradient is unpacked
  (``prim::ListUnpack``) into one gradient per element.
* ``prim::ListUnpack(l)``: the elements' gradients are packed back
  (``prim::ListConstruct``) into the list's gradient. An element nobody used
  has an undefined gradient (``AutogradZero``, None at run time), so such a
  list may hold Nones.
* ``prim::TupleConstruct``/``prim::TupleUnpack``: the same with tuples.

**Joining and splitting are each other's adjoints.** ``cat`` is undone by
``split`` at the inputs' lengths (saved in the forward: constants when the
types fix them) and ``stack`` by ``unbind``; ``meshgrid``'s grids, which
repeat each input along the other dims, are summed back. The other way round, ``chunk``,
``split`` and ``unbind`` join their pieces' gradients back with
``gradview::*_backward`` kernels, which count an undefined piece as zeros of
its size: that is why they take the input's size, and why an unused chunk
needs no special case here.
"""

from __future__ import annotations

from gradview.ir import (
    NOT_CONSTANT,
    ListType,
    Node,
    OptionalType,
    TensorType,
    TupleType,
    Value,
    constant_value,
)
from gradview.ops.emit_util import arg, grad_list, size_of, static_sizes
from gradview.ops.registry import Emitter, formula

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]


def _undefined(grad: Value) -> bool:
    """Is ``grad`` the AutogradZero of an output that received no gradient?"""
    return grad.node.kind() == "prim::AutogradZero"


def _unpack(emit: Emitter, kind: str, packed: Value, count: int) -> list[Value]:
    if count == 0:
        return []
    unpacked = emit.op(kind, packed, types=[TensorType()] * count)
    return list(unpacked) if isinstance(unpacked, tuple) else [unpacked]


def _as_list(emit: Emitter, grad: Value) -> Value:
    """``grad`` typed as a ``Tensor?[]``: a sum of two list gradients (``prim::AutogradAdd``)
    is typed ``Tensor``, which the list-taking kernels' schemas would not accept."""
    if isinstance(grad.type(), ListType):
        return grad
    return emit.op("prim::unchecked_cast", grad, types=[ListType(OptionalType(TensorType()))])


def _dim(node: Node, index: int) -> Value | int:
    """The ``dim`` input, 0 when hand-written IR leaves it out."""
    inputs = node.inputs()
    return inputs[index] if index < len(inputs) else 0


# -- lists and tuples -------------------------------------------------------------------------
def _holds_tensors(node: Node) -> bool:
    """Only lists and tuples of tensors carry gradients (a list of sizes does not)."""
    return node.output().type().contains_tensor()


@formula("prim::ListConstruct", supports=_holds_tensors)
def list_construct(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    if _undefined(grads[0]):
        return grad_list(node)
    return list(_unpack(emit, "prim::ListUnpack", grads[0], len(node.inputs())))


@formula("prim::TupleConstruct", supports=_holds_tensors)
def tuple_construct(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    if _undefined(grads[0]):
        return grad_list(node)
    return list(_unpack(emit, "prim::TupleUnpack", grads[0], len(node.inputs())))


@formula("prim::ListUnpack")
def list_unpack(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    if all(_undefined(g) for g in grads):
        return [None]
    return [emit.op("prim::ListConstruct", *grads, types=[ListType(TensorType())])]


@formula("prim::TupleUnpack")
def tuple_unpack(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    if all(_undefined(g) for g in grads):
        return [None]
    packed_type = TupleType(tuple(TensorType() for _ in grads))
    return [emit.op("prim::TupleConstruct", *grads, types=[packed_type])]


# -- joining: cat and stack --------------------------------------------------------------------
def _cat_lengths(emit: Emitter, node: Node) -> Saved:
    """Each input's length along ``dim``: a constant when every input type fixes it."""
    tensors = node.inputs()[0]
    dim = arg(node, 1, 0)
    producer = tensors.node
    if producer.kind() == "prim::ListConstruct" and dim is not NOT_CONSTANT:
        sizes = [static_sizes(v) for v in producer.inputs()]
        if sizes and all(s == [0] or (s is not None and -len(s) <= dim < len(s)) for s in sizes):
            # -1: a 1-D tensor of size 0, which cat skips (see cat_backward)
            return {"lengths": emit.const([-1 if s == [0] else s[dim] for s in sizes])}  # type: ignore[index]
    return {"lengths": emit.op("gradview::sizes_along", tensors, _dim(node, 1))}


@formula("aten::cat", forward=_cat_lengths)
def cat(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``split`` at the inputs' lengths; ``gradview::cat_backward`` when a length is known
    only at run time or marks a skipped empty tensor, whose gradient is then an empty
    1-D tensor as in eager autograd."""
    lengths = saved["lengths"]
    known = constant_value(lengths)
    if known is not NOT_CONSTANT and -1 not in known:
        return grad_list(node, emit.op("aten::split", grads[0], lengths, _dim(node, 1)))
    return grad_list(node, emit.op("gradview::cat_backward", grads[0], lengths, _dim(node, 1)))


@formula("aten::stack")
def stack(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return grad_list(node, emit.op("aten::unbind", grads[0], _dim(node, 1)))


# -- splitting: chunk, split, unbind -----------------------------------------------------------
def _save_self_size(emit: Emitter, node: Node) -> Saved:
    return {"self_size": size_of(emit, node.inputs()[0])}


def _joined(kernel: str, *args_before_dim: int):  # noqa: ANN202 - a backward factory
    """Backward calling ``kernel(grads, <inputs at args_before_dim>, dim, self_size)``."""

    def backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
        if _undefined(grads[0]):
            return grad_list(node)
        extra = [node.inputs()[i] for i in args_before_dim]
        dim = _dim(node, 1 + len(args_before_dim))
        grad = emit.op(kernel, _as_list(emit, grads[0]), *extra, dim, saved["self_size"])
        return grad_list(node, grad)

    return backward


formula("aten::chunk", "aten::unsafe_chunk", forward=_save_self_size)(_joined("gradview::chunk_backward", 1))
formula("aten::split.Tensor", "aten::unsafe_split.Tensor", forward=_save_self_size)(
    _joined("gradview::split_backward", 1)
)
formula("aten::split.sizes", "aten::split", "aten::split_with_sizes", forward=_save_self_size)(
    _joined("gradview::split_with_sizes_backward", 1)
)
formula("aten::unbind.int", forward=_save_self_size)(_joined("gradview::unbind_backward"))


@formula("prim::ConstantChunk", forward=_save_self_size)
def constant_chunk(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``prim::ConstantChunk[chunks, dim]`` has one output per chunk; an unused chunk's
    gradient is undefined, so the pieces are joined with ``chunk_backward``, not ``cat``.
    (reverse.py still special-cases this kind with a plain ``cat``; see the module notes.)"""
    if all(_undefined(g) for g in grads):
        return [None]
    pieces = emit.op("prim::ListConstruct", *grads, types=[ListType(TensorType())])
    chunks, dim = node.i("chunks"), node.i("dim")
    return [emit.op("gradview::chunk_backward", pieces, chunks, dim, saved["self_size"])]


# -- meshgrid ---------------------------------------------------------------------------------
@formula("aten::meshgrid", "aten::meshgrid.indexing")
def meshgrid(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """Grid ``i`` repeats input ``i`` along every other dim: its gradient is summed over
    them (``gradview::meshgrid_backward``; a grid without a gradient gives None)."""
    if _undefined(grads[0]):
        return grad_list(node)
    indexing = node.inputs()[1] if len(node.inputs()) > 1 else "ij"
    tensors = node.inputs()[0]
    return grad_list(node, emit.op("gradview::meshgrid_backward", _as_list(emit, grads[0]), tensors, indexing))
