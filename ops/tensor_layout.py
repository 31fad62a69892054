"""Strides of op results, computed the way PyTorch lays tensors out in memory.

Shape inference prints complete types (``Double(3, 4, strides=[1, 3])``), so
it has to know the layout an op gives its result, not only its sizes:

* fresh results (reductions, matmul, cat, softmax) are *contiguous*;
* views (``t``, ``transpose``, ``expand``, ``select``...) reuse the input's
  memory with rearranged strides;
* elementwise ops follow ``TensorIterator``: the result copies the memory
  order of the inputs, so ``tanh(x.t())`` is laid out like ``x.t()``;
* ``*_like`` ops, ``clone`` and dtype conversions keep a dense input's strides.

Everything here works on plain tuples of ints; sizes and strides must be fully
known (callers decide what to do otherwise).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "Layout",
    "contiguous_strides",
    "is_contiguous",
    "is_channels_last",
    "is_non_overlapping_and_dense",
    "elementwise_strides",
    "preserve_strides",
    "suggested_strides",
    "view_strides",
]

Layout = tuple[tuple[int, ...], tuple[int, ...]]  # (sizes, strides)


def contiguous_strides(sizes: Sequence[int]) -> tuple[int, ...]:
    """Row-major strides; a size-0 or size-1 dimension counts as 1 for the dims before it."""
    strides = [1] * len(sizes)
    for d in range(len(sizes) - 2, -1, -1):
        strides[d] = strides[d + 1] * max(sizes[d + 1], 1)
    return tuple(strides)


def _channels_last_strides(sizes: Sequence[int]) -> tuple[int, ...]:
    n, c, h, w = (max(s, 1) for s in sizes)
    del n
    return (h * w * c, 1, w * c, c)


def is_contiguous(sizes: Sequence[int], strides: Sequence[int]) -> bool:
    """PyTorch's test: size-1 dimensions may have any stride; empty tensors are contiguous."""
    if 0 in sizes:
        return True
    expected = 1
    for size, stride in zip(reversed(sizes), reversed(strides), strict=True):
        if size != 1:
            if stride != expected:
                return False
            expected *= size
    return True


def is_channels_last(sizes: Sequence[int], strides: Sequence[int]) -> bool:
    """Contiguous in NHWC order (4-d tensors only)."""
    if len(sizes) != 4:
        return False
    if 0 in sizes:
        return True
    expected = 1
    for d in (1, 3, 2, 0):
        if sizes[d] != 1:
            if strides[d] != expected:
                return False
            expected *= sizes[d]
    return True


def is_non_overlapping_and_dense(sizes: Sequence[int], strides: Sequence[int]) -> bool:
    """Every element stored exactly once, in some order of the dimensions."""
    if len(sizes) == 1:
        return sizes[0] < 2 or strides[0] == 1
    if is_contiguous(sizes, strides):
        return True
    # Order dimensions by stride, the size-0/1 ones last, then check they tile memory.
    order = sorted(range(len(sizes)), key=lambda d: (sizes[d] < 2, strides[d] if sizes[d] >= 2 else 0))
    required = 1
    for d in order:
        if sizes[d] < 2:
            return True
        if strides[d] != required:
            return False
        required *= sizes[d]
    return True


def suggested_strides(sizes: Sequence[int], strides: Sequence[int]) -> tuple[int, ...]:
    """The layout ops such as batch norm give their result: contiguous or channels-last
    inputs keep that format; others get channels-last only if their strides look
    like it (ATen's ``suggest_memory_format`` and ``is_channels_last_strides_2d``)."""
    if is_contiguous(sizes, strides):
        return contiguous_strides(sizes)
    if is_channels_last(sizes, strides) or (len(sizes) == 4 and _looks_channels_last(sizes, strides)):
        return _channels_last_strides(sizes)
    return contiguous_strides(sizes)


def _looks_channels_last(sizes: Sequence[int], strides: Sequence[int]) -> bool:
    if strides[1] == 0:
        return False
    smallest = 0
    for d in (1, 3, 2, 0):
        if sizes[d] == 0 or strides[d] < smallest:
            return False
        # N111 tensors and the like are ambiguous: NCHW wins.
        if d == 0 and smallest == strides[1]:
            return False
        smallest = strides[d] * (sizes[d] if sizes[d] > 1 else 1)
    return True


def preserve_strides(sizes: Sequence[int], strides: Sequence[int]) -> tuple[int, ...]:
    """``empty_like(x)`` with ``memory_format=preserve``: a dense input's own strides;
    otherwise dense strides that keep the order of its dimensions in memory
    (ATen's ``infer_dense_strides``, the same sort TensorIterator does)."""
    if is_non_overlapping_and_dense(sizes, strides):
        return tuple(strides)
    return _sorted_layout(sizes, [list(strides)], empty_as_one=True)


def elementwise_strides(shape: Sequence[int], operands: Sequence[Layout]) -> tuple[int, ...]:
    """The strides ``TensorIterator`` gives the result of an elementwise op.

    ``shape`` is the broadcast result shape, ``operands`` the inputs ATen
    iterates over (tensors, and Python numbers it wraps as 0-dim tensors, which
    are ``((), ())``). Mirrors ``compute_fast_setup_type`` and
    ``reorder_dimensions``: inputs of one shape that are all contiguous (or all
    channels-last, or all dense with equal strides) give that layout; otherwise
    the dimensions are sorted by the inputs' strides, ignoring broadcast ones.
    """
    ndim = len(shape)
    if not operands or ndim == 0:
        return contiguous_strides(shape)
    if all(tuple(sizes) == tuple(shape) for sizes, _ in operands):
        if all(is_contiguous(s, st) for s, st in operands):
            return contiguous_strides(shape)
        if all(is_channels_last(s, st) for s, st in operands):
            return _channels_last_strides(shape)
        if all(is_non_overlapping_and_dense(s, st) for s, st in operands):
            first = tuple(operands[-1][1])
            if all(tuple(st) == first for _, st in operands):
                return first
    if ndim == 1:
        return contiguous_strides(shape)
    return _sorted_layout(shape, [_broadcast_strides(shape, sizes, strides) for sizes, strides in operands])


def _sorted_layout(
    shape: Sequence[int], broadcast: list[list[int]], empty_as_one: bool = False
) -> tuple[int, ...]:
    """Dense strides for ``shape`` that order dimensions as the operands' strides do.

    ``reorder_dimensions``: an insertion sort of the dimensions, fastest first,
    where an operand with a 0 stride (broadcast) in either dimension abstains
    and equal strides put the smaller dimension first. TensorIterator then
    multiplies the sizes up as they are (a size-0 dimension zeroes the strides
    after it); ``infer_dense_strides`` counts a size 0 as 1 (``empty_as_one``).
    """
    ndim = len(shape)

    def should_swap(dim0: int, dim1: int) -> int:
        for strides in broadcast:
            stride0, stride1 = strides[dim0], strides[dim1]
            if stride0 == 0 or stride1 == 0:
                continue
            if stride0 != stride1:
                return -1 if stride0 < stride1 else 1
            if shape[dim0] > shape[dim1]:
                return 1
        return 0

    # perm[0] is the fastest-moving dimension; start from row-major order.
    perm = list(range(ndim - 1, -1, -1))
    for i in range(1, ndim):
        dim1 = i
        for dim0 in range(i - 1, -1, -1):
            comparison = should_swap(perm[dim0], perm[dim1])
            if comparison > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif comparison < 0:
                break
    if perm == list(range(ndim - 1, -1, -1)):
        return contiguous_strides(shape)
    result = [0] * ndim
    step = 1
    for d in perm:
        result[d] = step
        step *= max(shape[d], 1) if empty_as_one else shape[d]
    return tuple(result)


def _broadcast_strides(shape: Sequence[int], sizes: Sequence[int], strides: Sequence[int]) -> list[int]:
    """An operand's strides over the result shape: 0 where it is broadcast."""
    offset = len(shape) - len(sizes)
    result = [0] * len(shape)
    for d, (size, stride) in enumerate(zip(sizes, strides, strict=True)):
        if not (size == 1 and shape[offset + d] != 1):
            result[offset + d] = stride
    return result


def view_strides(
    old_sizes: Sequence[int], old_strides: Sequence[int], new_sizes: Sequence[int]
) -> tuple[int, ...] | None:
    """Strides of ``x.view(new_sizes)`` (ATen's ``computeStride``); None if no view exists.

    Dimensions are taken in chunks that are contiguous with each other in
    memory; each chunk of the old shape must be split exactly by the new one.
    """
    if not old_sizes:
        return tuple(1 for _ in new_sizes)
    numel = 1
    for s in old_sizes:
        numel *= s
    if numel == 0:
        if tuple(old_sizes) == tuple(new_sizes):
            return tuple(old_strides)
        return contiguous_strides(new_sizes)
    new_strides = [0] * len(new_sizes)
    view_d = len(new_sizes) - 1
    chunk_base_stride = old_strides[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(old_sizes) - 1, -1, -1):
        tensor_numel *= old_sizes[tensor_d]
        chunk_ends = tensor_d == 0 or (
            old_sizes[tensor_d - 1] != 1
            and old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride
        )
        if not chunk_ends:
            continue
        while view_d >= 0 and (view_numel < tensor_numel or new_sizes[view_d] == 1):
            new_strides[view_d] = view_numel * chunk_base_stride
            view_numel *= new_sizes[view_d]
            view_d -= 1
        if view_numel != tensor_numel:
            return None
        if tensor_d > 0:
            chunk_base_stride = old_strides[tensor_d - 1]
            tensor_numel = 1
            view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_strides)


# == Op declarations: constant_pad_nd, pixel_shuffle/unshuffle, channel_shuffle (issue 22) ==
# Kernels in kernels/tensor_layout.py; results are fresh and contiguous. Their gradients
# (derivatives.yaml) are the same ops undoing themselves: the padding cropped (negated
# widths), pixel_shuffle by pixel_unshuffle and back, channel_shuffle by C/groups groups.
# (Imported here, not at the top: the helpers above are imported by shape_toolkit first.)
from gradview.ir import IntType, Node, TensorType, Value  # noqa: E402
from gradview.kernels import tensor_layout as layout_kernels  # noqa: E402

from .registry import Emitter, formula, kernel, shape_rule  # noqa: E402


def _fresh(dtype: str | None, sizes: tuple[int | None, ...] | None, device: str | None) -> TensorType:
    known = sizes is not None and None not in sizes
    return TensorType(dtype, sizes, contiguous_strides(sizes) if known else None, None, device)  # type: ignore[arg-type]


kernel("aten::constant_pad_nd")(layout_kernels.constant_pad_nd)
kernel("aten::pixel_shuffle")(layout_kernels.pixel_shuffle)
kernel("aten::pixel_unshuffle")(layout_kernels.pixel_unshuffle)
kernel("aten::channel_shuffle")(layout_kernels.channel_shuffle)


@shape_rule("aten::constant_pad_nd")
def _constant_pad_nd(args):  # NodeArgs -> RuleResult (shape_toolkit imports this module)
    self, pad = args.tensor(0), args.int_list(1)
    if self is None:
        return None
    if self.sizes is None or pad is None or len(pad) % 2 or len(pad) // 2 > len(self.sizes):
        return [_fresh(self.scalar_type, None if self.sizes is None else (None,) * len(self.sizes), self.device)]
    sizes = list(self.sizes)
    for pair in range(len(pad) // 2):
        axis = len(sizes) - 1 - pair
        widths = (sizes[axis], pad[2 * pair], pad[2 * pair + 1])
        sizes[axis] = None if None in widths else sum(widths)  # type: ignore[arg-type]
    return [_fresh(self.scalar_type, tuple(sizes), self.device)]


@shape_rule("aten::pixel_shuffle", "aten::pixel_unshuffle")
def _pixel_shuffle(args):  # NodeArgs -> RuleResult
    self, r = args.tensor(0), args.int_value(1)
    if self is None:
        return None
    if self.sizes is None or len(self.sizes) < 3 or r is None or r <= 0 or None in self.sizes[-3:]:
        return [_fresh(self.scalar_type, None if self.sizes is None else (None,) * len(self.sizes), self.device)]
    *batch, c, h, w = self.sizes
    if args.node.kind() == "aten::pixel_shuffle":
        sizes = (*batch, c // (r * r), h * r, w * r)
    else:
        sizes = (*batch, c * r * r, h // r, w // r)
    return [_fresh(self.scalar_type, tuple(sizes), self.device)]


@shape_rule("aten::channel_shuffle")
def _channel_shuffle(args):  # NodeArgs -> RuleResult
    self = args.tensor(0)
    return None if self is None else [_fresh(self.scalar_type, self.sizes, self.device)]


Saved = dict[str, Value]


@formula("aten::constant_pad_nd")
def constant_pad_nd(emit: Emitter, node: Node, saved: Saved, grads: list[Value]) -> list[Value | None]:
    """Padding cropped off again: ``constant_pad_nd(grad, -pad)`` (constant_pad_nd_backward)."""
    from .static_info import const

    pad = const(node.inputs()[1])
    back = [-p for p in pad] if isinstance(pad, list) else emit.op("gradview::negated", node.inputs()[1])
    return [emit.op("aten::constant_pad_nd", grads[0], back, 0), None, None]


@formula("aten::pixel_shuffle")
def pixel_shuffle(emit: Emitter, node: Node, saved: Saved, grads: list[Value]) -> list[Value | None]:
    return [emit.op("aten::pixel_unshuffle", grads[0], node.inputs()[1]), None]


@formula("aten::pixel_unshuffle")
def pixel_unshuffle(emit: Emitter, node: Node, saved: Saved, grads: list[Value]) -> list[Value | None]:
    return [emit.op("aten::pixel_shuffle", grads[0], node.inputs()[1]), None]


def _save_channels(emit: Emitter, node: Node) -> Saved:
    return {"channels": emit.op("aten::size", node.inputs()[0], 1, types=[IntType()])}


@formula("aten::channel_shuffle", forward=_save_channels)
def channel_shuffle(emit: Emitter, node: Node, saved: Saved, grads: list[Value]) -> list[Value | None]:
    """Undone by shuffling into C/groups groups."""
    back = emit.op("aten::floordiv", saved["channels"], node.inputs()[1], types=[IntType()])
    return [emit.op("aten::channel_shuffle", grads[0], back), None]
