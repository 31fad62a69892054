"""Shape rules for views, reshapes, joins and splits of tensors.

Views (``t``, ``transpose``, ``permute``, ``expand``, ``select``, ``slice``,
``squeeze``/``unsqueeze``, ``view``) share their input's memory, so their
strides are the input's rearranged; ``cat`` and ``stack`` allocate fresh
contiguous results; ``chunk``/``split``/``unbind`` return lists of views whose
element types are known one by one when the split dimension's size is.
"""

from __future__ import annotations

from gradview.ops.dtype_rules import Operand, result_type
from gradview.ops.registry import shape_rule
from gradview.ops.shape_toolkit import (
    ElementList,
    NodeArgs,
    RuleResult,
    Sizes,
    all_known,
    broadcast,
    device_of,
    fresh,
    join_all,
    layout_of,
    make_tensor,
    numel,
    wrap_dim,
)
from gradview.ops.tensor_layout import contiguous_strides, view_strides

from ..types import ListType, TensorType, Type

__all__: list[str] = []

_INT64_MAX = (1 << 63) - 1


def _view_result(self: TensorType, sizes: Sizes | None, reshape: bool) -> TensorType:
    """``self`` seen with new ``sizes``: view strides if memory allows (else a contiguous copy)."""
    layout = layout_of(self)
    strides = None
    if layout is not None and all_known(sizes):
        strides = view_strides(layout[0], layout[1], sizes)  # type: ignore[arg-type]
        if strides is None and reshape:
            strides = contiguous_strides(sizes)  # type: ignore[arg-type]
    return make_tensor(self.scalar_type, sizes, strides, self.device)


def _resolve_sizes(self: TensorType, requested: list[int | None]) -> Sizes:
    """A view's sizes: fill in the ``-1`` (or a single unknown size) from the element count."""
    sizes = list(requested)
    if sizes.count(-1) + sizes.count(None) == 1:
        index = sizes.index(-1) if -1 in sizes else sizes.index(None)
        total = numel(self.sizes)
        rest = numel(tuple(s for i, s in enumerate(sizes) if i != index))
        sizes[index] = total // rest if total is not None and rest else None
    return tuple(None if s == -1 else s for s in sizes)


@shape_rule("aten::view", "aten::reshape", "aten::_unsafe_view", "aten::_reshape_alias")
def _view(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None or args.tensor(1) is not None or str(args.type(1)) == "int":
        return None  # view.dtype changes the dtype, not the shape
    requested = args.int_list(1)
    if requested is None:
        return [make_tensor(self.scalar_type, None, None, self.device)]
    sizes = _resolve_sizes(self, requested)
    return [_view_result(self, sizes, args.node.kind() != "aten::view")]


@shape_rule("aten::view_as", "aten::reshape_as")
def _view_as(args: NodeArgs) -> RuleResult:
    self, other = args.tensor(0), args.tensor(1)
    if self is None or other is None:
        return None
    return [_view_result(self, other.sizes, args.node.kind() == "aten::reshape_as")]


@shape_rule("aten::flatten")
def _flatten(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None or self.sizes is None:
        return None if self is None else [make_tensor(self.scalar_type, None, None, self.device)]
    rank = len(self.sizes)
    if rank == 0:
        return [_view_result(self, (1,), True)]
    start, end = wrap_dim(args.int_value(1), rank), wrap_dim(args.int_value(2), rank)
    if start is None or end is None or start > end:
        return None
    if start == end:
        return [TensorType(self.scalar_type, self.sizes, self.strides, None, self.device)]
    middle = numel(self.sizes[start:end + 1])
    sizes = self.sizes[:start] + (middle,) + self.sizes[end + 1:]
    return [_view_result(self, sizes, True)]


def _permuted(self: TensorType, order: list[int]) -> TensorType:
    sizes = tuple(self.sizes[d] for d in order)  # type: ignore[index]
    layout = layout_of(self)
    strides = tuple(layout[1][d] for d in order) if layout is not None else None
    return make_tensor(self.scalar_type, sizes, strides, self.device)


@shape_rule("aten::t")
def _t(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None or self.sizes is None:
        return None if self is None else [make_tensor(self.scalar_type, None, None, self.device)]
    order = [1, 0] if len(self.sizes) == 2 else list(range(len(self.sizes)))
    return [_permuted(self, order)]


@shape_rule("aten::transpose", "aten::swapaxes", "aten::swapdims")
def _transpose(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None or self.sizes is None:
        return None if self is None else [make_tensor(self.scalar_type, None, None, self.device)]
    rank = len(self.sizes)
    d0, d1 = wrap_dim(args.int_value(1), rank), wrap_dim(args.int_value(2), rank)
    if rank == 0:
        return [_permuted(self, [])]
    if d0 is None or d1 is None:
        return [make_tensor(self.scalar_type, (None,) * rank, None, self.device)]
    order = list(range(rank))
    order[d0], order[d1] = d1, d0
    return [_permuted(self, order)]


@shape_rule("aten::permute")
def _permute(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    dims = args.int_list(1)
    rank = self.rank if self.rank is not None else (len(dims) if dims is not None else None)
    if dims is None or rank is None or len(dims) != rank:
        return [make_tensor(self.scalar_type, None if rank is None else (None,) * rank, None, self.device)]
    order = [wrap_dim(d, rank) for d in dims]
    if any(d is None for d in order) or self.sizes is None:
        return [make_tensor(self.scalar_type, (None,) * rank, None, self.device)]
    return [_permuted(self, order)]  # type: ignore[arg-type]


def _expanded(self: TensorType, target: list[int | None]) -> TensorType | None:
    """ATen's ``inferExpandGeometry``: new and stretched dimensions get stride 0.

    ``-1`` keeps a dimension; an unknown target size stays unknown unless the
    input's size is known and not 1 (only size-1 dimensions can stretch).
    """
    if self.sizes is None:
        return make_tensor(self.scalar_type, tuple(None if t == -1 else t for t in target), None, self.device)
    ndim, tdim = len(target), len(self.sizes)
    if ndim < tdim:
        return None
    layout = layout_of(self)
    sizes: list[int | None] = [None] * ndim
    strides: list[int | None] = [None] * ndim
    for i in range(ndim - 1, -1, -1):
        dim = tdim - ndim + i
        size = self.sizes[dim] if dim >= 0 else 1
        stride: int | None = None
        if layout is not None and dim >= 0:
            stride = layout[1][dim]
        elif layout is not None and tdim == 0:
            stride = 0  # a 0-dim tensor expands with stride 0 everywhere
        elif layout is not None and sizes[i + 1] is not None and strides[i + 1] is not None:
            stride = sizes[i + 1] * strides[i + 1]  # type: ignore[operator]
        wanted = target[i]
        if wanted == -1:
            wanted = size if dim >= 0 else None
        if wanted is None:
            if size is None or size == 1 or dim < 0:
                size = None
        elif size != wanted:
            size, stride = wanted, 0
        sizes[i], strides[i] = size, stride
    return make_tensor(self.scalar_type, tuple(sizes), tuple(strides) if all_known(tuple(strides)) else None, self.device)


@shape_rule("aten::expand")
def _expand(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    target = args.int_list(1)
    if target is None:
        return [make_tensor(self.scalar_type, None, None, self.device)]
    result = _expanded(self, target)
    return None if result is None else [result]


@shape_rule("aten::expand_as", "aten::broadcast_to")
def _expand_as(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    other = args.tensor(1)
    target = list(other.sizes) if other is not None and other.sizes is not None else args.int_list(1)
    if target is None:
        return [make_tensor(self.scalar_type, None, None, self.device)]
    result = _expanded(self, target)
    return None if result is None else [result]


def _drop_dims(self: TensorType, dims: set[int]) -> TensorType:
    sizes = tuple(s for d, s in enumerate(self.sizes) if d not in dims)  # type: ignore[arg-type]
    layout = layout_of(self)
    strides = tuple(s for d, s in enumerate(layout[1]) if d not in dims) if layout else None
    return make_tensor(self.scalar_type, sizes, strides, self.device)


@shape_rule("aten::squeeze")
def _squeeze(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    unknown = make_tensor(self.scalar_type, None, None, self.device)
    if self.sizes is None:
        return [unknown]
    rank = len(self.sizes)
    if len(args) == 1:
        candidates = list(range(rank))
    else:
        wanted = args.int_list(1)
        if wanted is None:
            return [unknown]
        candidates = [wrap_dim(d, rank) for d in wanted]  # type: ignore[misc]
        if any(d is None for d in candidates):
            return None
    if any(self.sizes[d] is None for d in candidates if d < rank):
        return [unknown]
    return [_drop_dims(self, {d for d in candidates if d < rank and self.sizes[d] == 1})]


@shape_rule("aten::unsqueeze")
def _unsqueeze(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None or self.sizes is None:
        return None if self is None else [make_tensor(self.scalar_type, None, None, self.device)]
    rank = len(self.sizes)
    dim = wrap_dim(args.int_value(1), rank + 1)
    if dim is None:
        return [make_tensor(self.scalar_type, (None,) * (rank + 1), None, self.device)]
    sizes = self.sizes[:dim] + (1,) + self.sizes[dim:]
    layout = layout_of(self)
    strides = None
    if layout is not None:
        inserted = 1 if dim >= rank else layout[0][dim] * layout[1][dim]
        strides = layout[1][:dim] + (inserted,) + layout[1][dim:]
    return [make_tensor(self.scalar_type, sizes, strides, self.device)]


@shape_rule("aten::select")
def _select(args: NodeArgs) -> RuleResult:
    if isinstance(args.type(0), ListType):
        return _list_item(args)
    self = args.tensor(0)
    if self is None or self.sizes is None:
        return None if self is None else [make_tensor(self.scalar_type, None, None, self.device)]
    dim = wrap_dim(args.int_value(1), len(self.sizes))
    if dim is None or not self.sizes:
        return [make_tensor(self.scalar_type, (None,) * max(len(self.sizes) - 1, 0), None, self.device)]
    return [_drop_dims(self, {dim})]


def _list_item(args: NodeArgs) -> RuleResult:
    elements = args.elements(0)
    index = args.int_value(1)
    if elements is not None and index is not None and -len(elements) <= index < len(elements):
        return [elements[index]]
    elem = args.type(0).elem  # type: ignore[attr-defined]
    return [elem] if isinstance(elem, TensorType) else None


@shape_rule("aten::__getitem__")
def _getitem(args: NodeArgs) -> RuleResult:
    return _list_item(args) if isinstance(args.type(0), ListType) else None


def _slice_length(size: int, start: int | None, end: int | None, step: int) -> int:
    start = 0 if start is None else start
    end = _INT64_MAX if end is None else end
    if start < 0:
        start += size
    if end < 0:
        end += size
    start = min(max(start, 0), size)
    end = min(max(end, start), size)
    return (end - start + step - 1) // step


_UNKNOWN = object()


@shape_rule("aten::slice", "aten::narrow")
def _slice(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None or self.sizes is None:
        return None if self is None else [make_tensor(self.scalar_type, None, None, self.device)]
    rank = len(self.sizes)
    dim = wrap_dim(args.int_value(1), rank)
    if dim is None or rank == 0:
        return [make_tensor(self.scalar_type, (None,) * rank, None, self.device)]
    size = self.sizes[dim]
    start, end = args.value(2, _UNKNOWN), args.value(3, _UNKNOWN)
    step = args.int_value(4) if args.node.kind() == "aten::slice" else 1
    if args.node.kind() == "aten::narrow":  # narrow(dim, start, length)
        if isinstance(start, int) and start < 0:
            start = start + size if size is not None else _UNKNOWN
        end = start + end if isinstance(start, int) and isinstance(end, int) else _UNKNOWN
    if _UNKNOWN in (start, end) or step is None or step <= 0:
        new_size = None
    elif start in (None, 0) and (end is None or end >= _INT64_MAX) and step == 1:
        new_size = size  # x[:] keeps the size, even an unknown one
    elif size is None:
        new_size = None
    else:
        new_size = _slice_length(size, start, end, step)
    sizes = self.sizes[:dim] + (new_size,) + self.sizes[dim + 1:]
    layout = layout_of(self)
    strides = None
    if layout is not None and step is not None:
        strides = layout[1][:dim] + (layout[1][dim] * step,) + layout[1][dim + 1:]
    return [make_tensor(self.scalar_type, sizes, strides, self.device)]


# -- joining and splitting ----------------------------------------------------------------------


def _tensor_elements(args: NodeArgs) -> list[TensorType] | None:
    elements = args.elements(0)
    if elements is None or not all(isinstance(e, TensorType) for e in elements):
        return None
    return list(elements)  # type: ignore[arg-type]


def _list_dtype(tensors: list[TensorType]) -> str | None:
    return result_type([Operand(t.scalar_type, 0) for t in tensors])


@shape_rule("aten::cat", "aten::concat", "aten::concatenate")
def _cat(args: NodeArgs) -> RuleResult:
    tensors = _tensor_elements(args)
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


@shape_rule("aten::stack")
def _stack(args: NodeArgs) -> RuleResult:
    tensors = _tensor_elements(args)
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
    piece = _drop_dims(self, {dim})
    return [ElementList((piece,) * self.sizes[dim])]  # type: ignore[operator]


@shape_rule("aten::broadcast_tensors")
def _broadcast_tensors(args: NodeArgs) -> RuleResult:
    tensors = _tensor_elements(args)
    if not tensors:
        return None
    sizes = broadcast(*(t.sizes for t in tensors))
    if sizes is None:
        return None
    expanded = [_expanded(t, list(sizes)) for t in tensors]
    if any(e is None for e in expanded):
        return None
    return [ElementList(tuple(expanded))]  # type: ignore[arg-type]


@shape_rule("aten::repeat")
def _repeat(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    repeats = args.int_list(1)
    if self is None or repeats is None or self.sizes is None or len(repeats) < len(self.sizes):
        return None
    padded = (1,) * (len(repeats) - len(self.sizes)) + self.sizes
    sizes = tuple(None if s is None or r is None else s * r for s, r in zip(padded, repeats, strict=True))
    return [fresh(self.scalar_type, sizes, self.device)]
