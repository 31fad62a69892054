"""Joining and splitting tensors: cat, stack, split, chunk, unbind, meshgrid and pad.

``cat`` and ``stack`` allocate fresh contiguous results; ``chunk``, ``split``
and ``unbind`` return lists of views whose element types are known one by one
when the split dimension's size is; ``meshgrid`` returns one expanded view per
input; ``pad`` returns a fresh tensor. The kernels, with those of the
NumPy-style stacks and splits, ``block_diag``, ``cartesian_prod``,
``combinations`` and ``_chunk_cat``, are in ``kernels/concat_split.py``.

**Gradients: joining and splitting are each other's adjoints.** ``cat`` is
undone by ``split`` at the inputs' lengths (saved in the forward: constants
when the types fix them) and ``stack`` by ``unbind``; ``meshgrid``'s grids,
which repeat each input along the other dims, are summed back. The other way
round, ``chunk``, ``split`` and ``unbind`` join their pieces' gradients back
with ``gradview::*_backward`` kernels, which count an undefined piece (a piece
nobody used: ``AutogradZero``, None at run time) as zeros of its size: that is
why they take the input's size, and why an unused chunk needs no special case.
``pad`` reads one input position (or none, for constant padding) per output
position, so its gradient is summed back per input position.
"""

from __future__ import annotations

from gradview.ir import (
    NOT_CONSTANT,
    IntType,
    ListType,
    Node,
    OptionalType,
    TensorType,
    Value,
    constant_value,
)
from gradview.ir.types import Type
from gradview.kernels import concat_split as kernels

from .containers import is_undefined
from .dtype_rules import Operand, result_type
from .emit_util import arg, grad_list, size_of, static_sizes
from .gradients import BACKWARD_KERNEL
from .registry import Emitter, formula, kernel, no_gradient, schema, shape_rule
from .shape_by_kernel import by_kernel
from .shape_toolkit import (
    ElementList,
    NodeArgs,
    RuleResult,
    device_of,
    fresh,
    join_all,
    layout_of,
    make_tensor,
    wrap_dim,
)
from .static_info import fail, needs_grad
from .tensor_layout import contiguous_strides
from .views import drop_dims, per_input, tensor_elements

__all__: list[str] = []

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]



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


def _save_self_size(emit: Emitter, node: Node) -> Saved:
    return {"self_size": size_of(emit, node.inputs()[0])}


# -- aten::cat, concat, concatenate ----------------------------------------------------------
kernel("aten::cat")(kernels.cat)


def _list_dtype(tensors: list[TensorType]) -> str | None:
    return result_type([Operand(t.scalar_type, 0) for t in tensors])


@shape_rule("aten::cat", "aten::concat", "aten::concatenate")
def _cat(args: NodeArgs) -> RuleResult:
    tensors = tensor_elements(args)
    if not tensors:
        return None
    dtype, device = _list_dtype(tensors), device_of(*tensors)
    # Legacy rule: 1-d empty tensors are skipped, whatever the others' rank.
    ranked = [t for t in tensors if not (t.sizes is not None and t.sizes == (0,))]
    if not ranked:
        return [fresh(dtype, (0,), device)]
    ranks = {t.rank for t in ranked}
    if None in ranks or len(ranks) != 1:
        return [fresh(dtype, None, device)]
    rank = ranks.pop()
    dim = wrap_dim(args.int_value(1), rank)
    if dim is None:
        return [fresh(dtype, (None,) * rank, device)]  # type: ignore[operator]
    sizes: list[int | None] = []
    for d in range(rank):  # type: ignore[arg-type]
        column = [t.sizes[d] for t in ranked]  # type: ignore[index]
        if d == dim:
            sizes.append(None if None in column else sum(column))  # type: ignore[arg-type]
        else:
            known = [s for s in column if s is not None]
            sizes.append(known[0] if known else None)
    return [fresh(dtype, tuple(sizes), device)]


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


# gradview::sizes_along(tensors, dim): each tensor's length in dim, when the types don't say.
schema("gradview::sizes_along(Tensor[] tensors, int dim) -> int[]")
kernel("gradview::sizes_along")(kernels.sizes_along)

# gradview::cat_backward: the gradient split at the lengths (-1: a skipped empty 1-D tensor).
schema("gradview::cat_backward(Tensor grad, int[] lengths, int dim) -> Tensor[]")
kernel("gradview::cat_backward")(kernels.cat_backward)
no_gradient("gradview::cat_backward", reason=BACKWARD_KERNEL)


@shape_rule("gradview::cat_backward")
def _cat_backward(args: NodeArgs) -> RuleResult:
    """One piece of the gradient per length (``-1``: a skipped empty 1-D tensor, shape ``[0]``)."""
    grad, lengths, dim = args.tensor(0), args.int_list(1), args.int_value(2)
    if grad is None or lengths is None:
        return None
    sizes = grad.sizes
    axis = None if dim is None or sizes is None else dim + len(sizes) if dim < 0 else dim
    pieces: list[Type] = []
    for length in lengths:
        if length == -1:
            pieces.append(fresh(grad.scalar_type, (0,), grad.device))
        elif sizes is None or axis is None or not 0 <= axis < len(sizes):
            pieces.append(make_tensor(grad.scalar_type, None, None, grad.device))
        else:
            piece = tuple(length if i == axis else s for i, s in enumerate(sizes))
            pieces.append(make_tensor(grad.scalar_type, piece, None, grad.device))
    return [ElementList(tuple(pieces))]


# -- aten::stack -----------------------------------------------------------------------------
kernel("aten::stack")(kernels.stack)


@shape_rule("aten::stack")
def _stack(args: NodeArgs) -> RuleResult:
    tensors = tensor_elements(args)
    if not tensors:
        return None
    dtype, device = _list_dtype(tensors), device_of(*tensors)
    shape = join_all([TensorType(None, t.sizes) for t in tensors])
    sizes = shape.sizes if isinstance(shape, TensorType) else None
    if sizes is None:
        return [fresh(dtype, None, device)]
    dim = wrap_dim(args.int_value(1), len(sizes) + 1)
    if dim is None:
        return [fresh(dtype, (None,) * (len(sizes) + 1), device)]
    return [fresh(dtype, sizes[:dim] + (len(tensors),) + sizes[dim:], device)]


@formula("aten::stack")
def stack(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return grad_list(node, emit.op("aten::unbind", grads[0], _dim(node, 1)))


# -- aten::split, chunk, unbind and the unsafe_ variants --------------------------------------
kernel("aten::split.Tensor")(kernels.split)
kernel("aten::split.sizes", "aten::split", "aten::split_with_sizes")(kernels.split_with_sizes)
kernel("aten::chunk")(kernels.chunk)
kernel("aten::unbind.int")(kernels.unbind)
kernel("aten::unsafe_chunk")(kernels.unsafe_chunk)
kernel("aten::unsafe_split.Tensor")(kernels.unsafe_split)


def _pieces(self: TensorType, dim: int, lengths: list[int]) -> ElementList:
    layout = layout_of(self)
    pieces: list[Type] = []
    for length in lengths:
        sizes = self.sizes[:dim] + (length,) + self.sizes[dim + 1:]  # type: ignore[index]
        pieces.append(make_tensor(self.scalar_type, sizes, layout[1] if layout else None, self.device))
    return ElementList(tuple(pieces))


def _split_unknown(self: TensorType, dim: int | None) -> RuleResult:
    """A list of pieces whose count is unknown: the element type keeps what is certain."""
    if self.sizes is None or dim is None:
        elem = make_tensor(self.scalar_type, None if self.sizes is None else (None,) * len(self.sizes), None, self.device)
    else:
        elem = make_tensor(self.scalar_type, self.sizes[:dim] + (None,) + self.sizes[dim + 1:], None, self.device)
    return [ListType(elem)]


@shape_rule("aten::chunk", "aten::unsafe_chunk")
def _chunk(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    dim = wrap_dim(args.int_value(2), self.rank)
    chunks = args.int_value(1)
    size = self.sizes[dim] if self.sizes is not None and dim is not None else None
    if size is None or chunks is None or chunks <= 0:
        return _split_unknown(self, dim)
    step = -(-size // chunks)
    return _split_by(self, dim, step, size)  # type: ignore[arg-type]


def _split_by(self: TensorType, dim: int, step: int, size: int) -> RuleResult:
    if step <= 0:
        return [ElementList((TensorType(self.scalar_type, self.sizes, self.strides, None, self.device),))]
    count = max(-(-size // step), 1)
    lengths = [step] * (count - 1) + [size - step * (count - 1)]
    return [_pieces(self, dim, lengths)]


@shape_rule("aten::split", "aten::split_with_sizes", "aten::unsafe_split",
               "aten::unsafe_split_with_sizes")
def _split(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    dim = wrap_dim(args.int_value(2), self.rank)
    size = self.sizes[dim] if self.sizes is not None and dim is not None else None
    if str(args.type(1)) == "int":
        step = args.int_value(1)
        if size is None or step is None:
            return _split_unknown(self, dim)
        return _split_by(self, dim, step, size)  # type: ignore[arg-type]
    lengths = args.int_list(1)
    if lengths is None or dim is None or None in lengths:
        return _split_unknown(self, dim)
    return [_pieces(self, dim, lengths)]  # type: ignore[arg-type]


@shape_rule("aten::unbind")
def _unbind(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    dim = wrap_dim(args.int_value(1), self.rank)
    if self.sizes is None or dim is None or self.sizes[dim] is None:
        elem = make_tensor(self.scalar_type, None if self.rank is None else (None,) * (self.rank - 1), None, self.device)
        return [ListType(elem)]
    piece = drop_dims(self, {dim})
    return [ElementList((piece,) * self.sizes[dim])]  # type: ignore[operator]


def _joined(kernel: str, *args_before_dim: int):  # a backward factory
    """Backward calling ``kernel(grads, <inputs at args_before_dim>, dim, self_size)``."""

    def backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
        if is_undefined(grads[0]):
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


kernel("prim::ConstantChunk")(kernels.constant_chunk)


@formula("prim::ConstantChunk", forward=_save_self_size)
def constant_chunk(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``prim::ConstantChunk[chunks, dim]`` has one output per chunk; an unused chunk's
    gradient is undefined, so the pieces are joined with ``chunk_backward``, not ``cat``.
    (reverse.py still special-cases this kind with a plain ``cat``; see the module notes.)"""
    if all(is_undefined(g) for g in grads):
        return [None]
    pieces = emit.op("prim::ListConstruct", *grads, types=[ListType(TensorType())])
    chunks, dim = node.i("chunks"), node.i("dim")
    return [emit.op("gradview::chunk_backward", pieces, chunks, dim, saved["self_size"])]


# The pieces' gradients joined back (cat, or stack for unbind) into a fresh tensor of ``sizes``.
schema(
    "gradview::split_with_sizes_backward(Tensor?[] grads, int[] split_sizes, int dim, int[] sizes) -> Tensor",
    "gradview::split_backward(Tensor?[] grads, int split_size, int dim, int[] sizes) -> Tensor",
    "gradview::chunk_backward(Tensor?[] grads, int chunks, int dim, int[] sizes) -> Tensor",
    "gradview::unbind_backward(Tensor?[] grads, int dim, int[] sizes) -> Tensor",
)
kernel("gradview::split_with_sizes_backward")(kernels.split_with_sizes_backward)
kernel("gradview::split_backward")(kernels.split_backward)
kernel("gradview::chunk_backward")(kernels.chunk_backward)
kernel("gradview::unbind_backward")(kernels.unbind_backward)
no_gradient(
    "gradview::split_with_sizes_backward", "gradview::split_backward", "gradview::chunk_backward",
    "gradview::unbind_backward",
    reason=BACKWARD_KERNEL,
)


def _first_tensor(types: tuple[Type, ...] | None) -> TensorType | None:
    for t in types or ():
        if isinstance(t, TensorType):
            return t
    return None


@shape_rule(
    "gradview::split_with_sizes_backward", "gradview::split_backward", "gradview::chunk_backward",
    "gradview::unbind_backward",
)
def _joined_pieces(args: NodeArgs) -> RuleResult:
    """The pieces' gradients joined into a fresh tensor of ``sizes`` (the last argument)."""
    piece = _first_tensor(args.elements(0))
    values = args.int_list(len(args) - 1)
    sizes = tuple(values) if values is not None else None
    if piece is None and sizes is None:
        return None
    return [fresh(piece.scalar_type if piece else None, sizes, piece.device if piece else None)]


# -- aten::meshgrid --------------------------------------------------------------------------
kernel("aten::meshgrid")(kernels.meshgrid)
kernel("aten::meshgrid.indexing")(kernels.meshgrid_indexing)


@shape_rule("aten::meshgrid")
def _meshgrid(args: NodeArgs) -> RuleResult:
    elements = args.elements(0)
    if elements is None or not all(isinstance(e, TensorType) and e.sizes is not None for e in elements):
        return None
    count = len(elements)
    indexing = args.value(1, "ij") if len(args) > 1 else "ij"
    if indexing not in ("ij", "xy"):
        return None
    position = list(range(count))
    if indexing == "xy" and count >= 2:
        position[0], position[1] = 1, 0
    lengths = [1 if not e.sizes else e.sizes[0] for e in elements]  # type: ignore[union-attr]
    shape: list[int | None] = [None] * count
    for index, length in enumerate(lengths):
        shape[position[index]] = length
    grids = []
    for index, element in enumerate(elements):
        assert isinstance(element, TensorType)
        layout = layout_of(element)
        strides = None
        if layout is not None and None not in shape:
            view = [1] * count
            view[position[index]] = lengths[index]  # type: ignore[call-overload]
            own = contiguous_strides(tuple(view))  # type: ignore[arg-type]
            if element.sizes:
                own = own[:position[index]] + (layout[1][0],) + own[position[index] + 1:]
            strides = tuple(s if view[d] == shape[d] else 0 for d, s in enumerate(own))
        grids.append(make_tensor(element.scalar_type, tuple(shape), strides, element.device))
    return [ElementList(tuple(grids))]


@formula("aten::meshgrid", "aten::meshgrid.indexing")
def meshgrid(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """Grid ``i`` repeats input ``i`` along every other dim: its gradient is summed over
    them (``gradview::meshgrid_backward``; a grid without a gradient gives None)."""
    if is_undefined(grads[0]):
        return grad_list(node)
    indexing = node.inputs()[1] if len(node.inputs()) > 1 else "ij"
    tensors = node.inputs()[0]
    return grad_list(node, emit.op("gradview::meshgrid_backward", _as_list(emit, grads[0]), tensors, indexing))


# gradview::meshgrid_backward: each grid's gradient summed over the other dims.
schema("gradview::meshgrid_backward(Tensor?[] grads, Tensor[] tensors, str indexing) -> Tensor?[]")
kernel("gradview::meshgrid_backward")(kernels.meshgrid_backward)
no_gradient("gradview::meshgrid_backward", reason=BACKWARD_KERNEL)


@shape_rule("gradview::meshgrid_backward")
def _meshgrid_backward(args: NodeArgs) -> RuleResult:
    return per_input(args.elements(0), args.elements(1))


# -- aten::pad -------------------------------------------------------------------------------
kernel("aten::pad")(kernels.pad)


@shape_rule("aten::pad")
def _pad(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    pad = args.int_list(1)
    if self.sizes is None or pad is None or len(pad) % 2 or len(pad) // 2 > len(self.sizes):
        rank = None if self.sizes is None else len(self.sizes)
        return [fresh(self.scalar_type, None if rank is None else (None,) * rank, self.device)]
    sizes = list(self.sizes)
    for pair in range(len(pad) // 2):
        axis = len(sizes) - 1 - pair
        before, after = pad[2 * pair], pad[2 * pair + 1]
        known = sizes[axis] is not None and before is not None and after is not None
        sizes[axis] = sizes[axis] + before + after if known else None  # type: ignore[operator]
    return [fresh(self.scalar_type, tuple(sizes), self.device)]


@formula("aten::pad", forward=_save_self_size)
def pad(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """Each output position read one input position (or none: constant padding), so the
    input gets the sum of the gradients that read it (``gradview::pad_backward``)."""
    inputs = node.inputs()
    mode = inputs[2] if len(inputs) > 2 else "constant"
    return grad_list(node, emit.op("gradview::pad_backward", grads[0], saved["self_size"], inputs[1], mode))


# gradview::pad_backward: the transposed index map of each padded dim (a sum per input position).
schema("gradview::pad_backward(Tensor grad, int[] self_size, int[] pad, str mode) -> Tensor")
kernel("gradview::pad_backward")(kernels.pad_backward)


@formula("gradview::pad_backward")
def pad_backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """Linear in the gradient, the transpose of pad: its own gradient pads again (zeros
    where constant padding read nothing), as derivatives.yaml's *_pad*d_backward."""
    _, _, pad_, mode = node.inputs()
    return grad_list(node, emit.op("aten::pad", grads[0], pad_, mode, None))


@shape_rule("gradview::pad_backward")
def _pad_backward(args: NodeArgs) -> RuleResult:
    grad = args.tensor(0)
    if grad is None:
        return None
    values = args.int_list(1)
    return [make_tensor(grad.scalar_type, tuple(values) if values is not None else None, None, grad.device)]


# == Issue 22: the NumPy-style stacks and splits, block_diag, cartesian_prod, combinations,
# _chunk_cat (kernels/concat_split.py). Shape rules run the kernel on stand-in inputs.
for _name, _fn in (
    ("aten::hstack", kernels.hstack), ("aten::vstack", kernels.vstack),
    ("aten::dstack", kernels.dstack), ("aten::column_stack", kernels.column_stack),
    ("aten::block_diag", kernels.block_diag), ("aten::cartesian_prod", kernels.cartesian_prod),
    ("aten::combinations", kernels.combinations), ("aten::_chunk_cat", kernels.chunk_cat),
    ("aten::split_with_sizes_copy", kernels.split_with_sizes_copy),
    ("aten::unbind_copy.int", kernels.unbind_copy),
):
    kernel(_name)(_fn)
    shape_rule(_name.split(".")[0])(by_kernel(_fn))

kernel("aten::hsplit.int", "aten::hsplit.array")(kernels.hsplit)
kernel("aten::vsplit.int", "aten::vsplit.array")(kernels.vsplit)
kernel("aten::dsplit.int", "aten::dsplit.array")(kernels.dsplit)
kernel(
    "aten::tensor_split.tensor_indices_or_sections", "aten::tensor_split.sections", "aten::tensor_split.indices"
)(kernels.tensor_split)
shape_rule("aten::hsplit")(by_kernel(kernels.hsplit, view=True))
shape_rule("aten::vsplit")(by_kernel(kernels.vsplit, view=True))
shape_rule("aten::dsplit")(by_kernel(kernels.dsplit, view=True))


@shape_rule("aten::tensor_split")
def _tensor_split(args: NodeArgs) -> RuleResult:
    """From the kernel, unless the pieces' lengths come from an index tensor's values."""
    self = args.tensor(0)
    if self is None:
        return None
    if args.tensor(1) is None:
        return _tensor_split_by_kernel(args)
    rank = self.rank
    return [ListType(make_tensor(self.scalar_type, None if rank is None else (None,) * rank, None, self.device))]


_tensor_split_by_kernel = by_kernel(kernels.tensor_split, view=True)


@formula("aten::hstack", "aten::vstack", "aten::dstack", "aten::column_stack")
def numpy_stack(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """Each tensor's part of the gradient, reshaped back (``gradview::stack_backward``)."""
    op = node.kind().split("::")[1]
    return grad_list(node, emit.op("gradview::stack_backward", grads[0], node.inputs()[0], op))


@formula("aten::block_diag")
def block_diag(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return grad_list(node, emit.op("gradview::block_diag_backward", grads[0], node.inputs()[0]))


@formula("aten::cartesian_prod")
def cartesian_prod(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return grad_list(node, emit.op("gradview::cartesian_prod_backward", grads[0], node.inputs()[0]))


schema(
    "gradview::stack_backward(Tensor grad, Tensor[] tensors, str op) -> Tensor[]",
    "gradview::block_diag_backward(Tensor grad, Tensor[] tensors) -> Tensor[]",
    "gradview::cartesian_prod_backward(Tensor grad, Tensor[] tensors) -> Tensor[]",
)
kernel("gradview::stack_backward")(kernels.stack_backward)
kernel("gradview::block_diag_backward")(kernels.block_diag_backward)
kernel("gradview::cartesian_prod_backward")(kernels.cartesian_prod_backward)


@formula("gradview::stack_backward", "gradview::block_diag_backward", "gradview::cartesian_prod_backward")
def join_backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """Linear in the gradient, each the transpose of its forward op: their own gradient is
    the forward op again, on the incoming gradients (undefined ones as zeros)."""
    if is_undefined(grads[0]) or not needs_grad(node.inputs()[0]):
        return grad_list(node)
    tensors = node.inputs()[1]
    filled = emit.op("gradview::fill_undefined", _as_list(emit, grads[0]), tensors)
    if node.kind() == "gradview::stack_backward":
        op = constant_value(node.inputs()[2])
        if op is NOT_CONSTANT:
            fail(node, "the gradient of gradview::stack_backward needs a constant op name")
        return grad_list(node, emit.op(f"aten::{op}", filled))
    forward = "aten::block_diag" if node.kind() == "gradview::block_diag_backward" else "aten::cartesian_prod"
    return grad_list(node, emit.op(forward, filled))


schema("gradview::fill_undefined(Tensor?[] grads, Tensor[] like) -> Tensor[]")
kernel("gradview::fill_undefined")(kernels.fill_undefined)


@formula("gradview::fill_undefined")
def fill_undefined(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """Zeros where a gradient was undefined, the gradient itself elsewhere: passes back unchanged."""
    return grad_list(node, None if is_undefined(grads[0]) else grads[0])


@shape_rule("gradview::fill_undefined")
def _fill_undefined(args: NodeArgs) -> RuleResult:
    grads, like = args.elements(0), args.elements(1)
    if like is None:
        return None
    dtype = next((g.scalar_type for g in grads or () if isinstance(g, TensorType)), None)
    return [ElementList(tuple(
        fresh(dtype, t.sizes if isinstance(t, TensorType) else None, t.device if isinstance(t, TensorType) else None)
        for t in like
    ))]


@shape_rule("gradview::stack_backward", "gradview::block_diag_backward", "gradview::cartesian_prod_backward")
def _per_tensor(args: NodeArgs) -> RuleResult:
    grad, tensors = args.tensor(0), args.elements(1)
    if grad is None or tensors is None:
        return None
    return [ElementList(tuple(
        fresh(grad.scalar_type, t.sizes if isinstance(t, TensorType) else None, grad.device) for t in tensors
    ))]


@formula("aten::combinations", forward=_save_self_size)
def combinations(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    _, r, with_replacement = node.inputs()
    return grad_list(
        node, emit.op("gradview::combinations_backward", grads[0], saved["self_size"], r, with_replacement)
    )


schema("gradview::combinations_backward(Tensor grad, int[] self_size, int r, bool with_replacement) -> Tensor")
kernel("gradview::combinations_backward")(kernels.combinations_backward)


@formula("gradview::combinations_backward")
def combinations_backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """Linear in the gradient, the transpose of combinations: its own gradient picks the
    combinations of the incoming one again (double backward)."""
    _, _, r, with_replacement = node.inputs()
    return grad_list(node, emit.op("aten::combinations", grads[0], r, with_replacement))


@shape_rule("gradview::combinations_backward")
def _combinations_backward(args: NodeArgs) -> RuleResult:
    grad = args.tensor(0)
    if grad is None:
        return None
    values = args.int_list(1)
    return [fresh(grad.scalar_type, tuple(values) if values is not None else None, grad.device)]


def _split_spec(emit: Emitter, node: Node) -> tuple[str, Value | list[int], Value | None]:
    """The split's overload name and its spec as ``split_pieces_backward`` takes them."""
    resolved = node.maybe_schema()
    op = resolved.qualified_name.split("::")[1] if resolved is not None else node.kind().split("::")[1]
    spec = node.inputs()[1]
    if op == "tensor_split.tensor_indices_or_sections":
        return op, [], spec
    if op.endswith((".int", ".sections")):
        count = constant_value(spec)
        if count is NOT_CONSTANT:
            return op, emit.op("prim::ListConstruct", spec, types=[ListType(IntType())]), None
        return op, [count], None
    return op, spec, None  # type: ignore[return-value]


@formula(
    "aten::hsplit.int", "aten::hsplit.array", "aten::vsplit.int", "aten::vsplit.array",
    "aten::dsplit.int", "aten::dsplit.array", "aten::tensor_split.tensor_indices_or_sections",
    "aten::tensor_split.sections", "aten::tensor_split.indices", forward=_save_self_size,
)
def split_pieces(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """The pieces' gradients added back where they were read: index pieces may overlap
    (``gradview::split_pieces_backward``)."""
    if is_undefined(grads[0]):
        return grad_list(node)
    op, spec, spec_tensor = _split_spec(emit, node)
    dim = node.inputs()[2] if op.startswith("tensor_split") and len(node.inputs()) > 2 else 0
    grad = emit.op(
        "gradview::split_pieces_backward", _as_list(emit, grads[0]), saved["self_size"], op, spec, dim, spec_tensor
    )
    return grad_list(node, grad)


schema(
    "gradview::split_pieces_backward(Tensor?[] grads, int[] self_size, str op, int[] spec, int dim, "
    "Tensor? spec_tensor=None) -> Tensor"
)
kernel("gradview::split_pieces_backward")(kernels.split_pieces_backward)


@formula("gradview::split_pieces_backward")
def split_pieces_backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """Linear in the pieces' gradients, the transpose of the split: its own gradient splits
    the incoming one again, with the same overload and spec (double backward)."""
    _, _, op_value, spec, dim, spec_tensor = node.inputs()
    op = constant_value(op_value)
    if not needs_grad(node.inputs()[0]):
        return grad_list(node)
    if op is NOT_CONSTANT:
        fail(node, "the gradient of gradview::split_pieces_backward needs a constant op name")
    name, _, overload = op.partition(".")
    if overload == "tensor_indices_or_sections":
        pieces = emit.op("aten::tensor_split", grads[0], spec_tensor, dim)
    else:
        by_count = overload in ("int", "sections")
        count = emit.op("aten::__getitem__", spec, 0, types=[IntType()]) if by_count else spec
        extra = [dim] if name == "tensor_split" else []
        pieces = emit.op(f"aten::{name}", grads[0], count, *extra)
    return grad_list(node, pieces)
shape_rule("gradview::split_pieces_backward")(_joined_pieces)

formula("aten::split_with_sizes_copy", forward=_save_self_size)(_joined("gradview::split_with_sizes_backward", 1))
formula("aten::unbind_copy.int", forward=_save_self_size)(_joined("gradview::unbind_backward"))
no_gradient("aten::_chunk_cat", reason="PyTorch has no derivative for it (the derivative for '_chunk_cat' is not implemented)")
