"""Shape rules for reductions, softmax and sorting ops.

A reduction over constant dimensions drops them (or keeps them as size 1
with ``keepdim=True``); negative dimensions count from the end, and no
dimensions (``dim=None`` or ``[]``) means all of them. ``sum`` and ``prod``
of integers or bools give ``Long``; an explicit ``dtype=`` wins. Results are
freshly allocated, so contiguous.
"""

from __future__ import annotations

from gradview.ops.dtype_rules import is_integral, scalar_type_name, to_float
from gradview.ops.registry import shape_rule
from gradview.ops.shape_toolkit import (
    NodeArgs,
    RuleResult,
    fresh,
    layout_of,
    make_tensor,
    pointwise,
    wrap_dim,
)
from gradview.ops.tensor_layout import preserve_strides

from ..types import TensorType

__all__: list[str] = []


def _reduced(self: TensorType, dims: list[int | None] | None, keepdim: bool | None,
             dtype: str | None) -> TensorType:
    """``self`` reduced over ``dims`` (None or empty: all dimensions)."""
    device = self.device
    if not dims:
        if keepdim is False:
            return fresh(dtype, (), device)
        if keepdim is None or self.sizes is None:
            return fresh(dtype, None, device)
        return fresh(dtype, (1,) * len(self.sizes), device)
    if self.sizes is None or keepdim is None:
        return fresh(dtype, None, device)
    rank = len(self.sizes)
    wrapped = [wrap_dim(d, rank) for d in dims]
    if any(d is None for d in wrapped):
        if keepdim:
            return fresh(dtype, tuple(1 if s == 1 else None for s in self.sizes), device)
        return fresh(dtype, (None,) * max(rank - len(dims), 0), device)
    reduced = set(wrapped)
    if keepdim:
        sizes = tuple(1 if d in reduced else s for d, s in enumerate(self.sizes))
    else:
        sizes = tuple(s for d, s in enumerate(self.sizes) if d not in reduced)
    return fresh(dtype, sizes, device)


def _keepdim(args: NodeArgs, i: int) -> bool | None:
    v = args.value(i, None)
    return v if isinstance(v, bool) else None


def _dims(args: NodeArgs, i: int) -> list[int | None] | None:
    """A ``dim`` argument: None for "all dimensions", [None] when unknown."""
    if args.is_none(i):
        return None
    dims = args.int_list(i)
    return dims if dims is not None else [None]


def _dtype_or(args: NodeArgs, i: int, default: str | None) -> str | None:
    if i >= len(args) or args.is_none(i):
        return default
    index = args.int_value(i)
    return scalar_type_name(index) if index is not None else None


def _sum_dtype(self: TensorType) -> str | None:
    dtype = self.scalar_type
    return "Long" if dtype is not None and is_integral(dtype) else dtype


@shape_rule("aten::sum", "aten::nansum", "aten::prod", "aten::mean", "aten::nanmean")
def _sum(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None  # sum.int(int[]) and friends
    kind = args.node.kind()
    default = self.scalar_type if kind in ("aten::mean", "aten::nanmean") else _sum_dtype(self)
    if len(args) <= 2:  # sum(self, dtype)
        return [_reduced(self, None, False, _dtype_or(args, 1, default))]
    # sum.dim_IntList(self, dim, keepdim, dtype), prod.dim_int(self, dim, keepdim, dtype)
    return [_reduced(self, _dims(args, 1), _keepdim(args, 2), _dtype_or(args, 3, default))]


@shape_rule("aten::amax", "aten::amin", "aten::logsumexp", "aten::any", "aten::all")
def _amax(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    kind = args.node.kind()
    dtype = self.scalar_type
    if kind == "aten::logsumexp":
        dtype = dtype and to_float(dtype)
    elif kind in ("aten::any", "aten::all"):
        dtype = "Byte" if dtype == "Byte" else "Bool"
        if args.value(1, None) == []:  # any.dims(self, []) reduces nothing
            return [fresh(dtype, self.sizes, self.device)]
    if len(args) == 1:
        return [_reduced(self, None, False, dtype)]
    return [_reduced(self, _dims(args, 1), _keepdim(args, 2), dtype)]


@shape_rule("aten::var", "aten::std")
def _var(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    if len(args) <= 2:  # var(self, unbiased)
        return [_reduced(self, None, False, self.scalar_type)]
    # var.dim(self, dim, unbiased, keepdim), var.correction(self, dim, *, correction, keepdim)
    return [_reduced(self, _dims(args, 1), _keepdim(args, 3), self.scalar_type)]


@shape_rule("aten::norm", "aten::linalg_vector_norm")
def _norm(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    if args.node.kind() == "aten::linalg_vector_norm":  # (self, ord, dim?, keepdim, dtype?)
        return [_reduced(self, _dims(args, 2), _keepdim(args, 3), _dtype_or(args, 4, self.scalar_type))]
    if len(args) <= 3 and str(args.type(len(args) - 1)) != "int[]":
        # norm.Scalar(self, p), norm.ScalarOpt_dtype(self, p, dtype)
        return [_reduced(self, None, False, _dtype_or(args, 2, self.scalar_type))]
    return [_reduced(self, _dims(args, 2), _keepdim(args, 3), _dtype_or(args, 4, self.scalar_type))]


@shape_rule("aten::max", "aten::min")
def _max(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None  # prim-style max of numbers or lists
    if len(args) == 1:
        return [_reduced(self, None, False, self.scalar_type)]
    if args.tensor(1) is not None:  # max.other: elementwise
        return [pointwise(args, [0, 1], args.promoted([0, 1]))]
    return _values_and_indices(self, [args.int_value(1)], _keepdim(args, 2))


def _values_and_indices(self: TensorType, dims: list[int | None], keepdim: bool | None) -> RuleResult:
    values = _reduced(self, dims, keepdim, self.scalar_type)
    return [values, TensorType("Long", values.sizes, values.strides, None, values.device)]


@shape_rule("aten::argmax", "aten::argmin")
def _argmax(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    dims = None if len(args) < 2 or args.is_none(1) else [args.int_value(1)]
    keepdim = _keepdim(args, 2) if len(args) > 2 else False
    return [_reduced(self, dims, keepdim, "Long")]


@shape_rule("aten::kthvalue", "aten::median", "aten::nanmedian", "aten::mode")
def _kthvalue(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    if len(args) == 1:  # median(self): one 0-dim value
        return [_reduced(self, None, False, self.scalar_type)]
    first = 2 if args.node.kind() == "aten::kthvalue" else 1
    return _values_and_indices(self, [args.int_value(first)], _keepdim(args, first + 1))


@shape_rule("aten::topk")
def _topk(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    k = args.int_value(1)
    sizes = None
    if self.sizes is not None:
        dim = wrap_dim(args.int_value(2), len(self.sizes))
        sizes = (None,) * len(self.sizes)
        if dim is not None and self.sizes:
            sizes = self.sizes[:dim] + (k,) + self.sizes[dim + 1:]
        elif not self.sizes:
            sizes = ()
    return [fresh(self.scalar_type, sizes, self.device), fresh("Long", sizes, self.device)]


@shape_rule("aten::sort")
def _sort(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    # Both results are laid out like empty_like(self): dense, in self's order.
    layout = layout_of(self)
    strides = preserve_strides(*layout) if layout is not None else None
    return [make_tensor(self.scalar_type, self.sizes, strides, self.device),
            make_tensor("Long", self.sizes, strides, self.device)]


@shape_rule("aten::cumsum", "aten::cumprod")
def _cumsum(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    return [fresh(_dtype_or(args, 2, _sum_dtype(self)), self.sizes, self.device)]


@shape_rule("aten::softmax", "aten::log_softmax", "aten::_softmax", "aten::_log_softmax", "aten::_safe_softmax")
def _softmax(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    dtype = self.scalar_type
    if args.node.kind() in ("aten::_softmax", "aten::_log_softmax"):  # (self, dim, half_to_float)
        if args.value(2, None) is True and dtype == "Half":
            dtype = "Float"
    else:  # softmax.int(self, dim, dtype), _safe_softmax(self, dim, dtype)
        dtype = _dtype_or(args, 2, dtype)
    return [fresh(dtype, self.sizes, self.device)]


@shape_rule("aten::_softmax_backward_data", "aten::_log_softmax_backward_data")
def _softmax_backward(args: NodeArgs) -> RuleResult:
    grad = args.tensor(0)
    if grad is None:
        return None
    return [fresh(_dtype_or(args, 3, grad.scalar_type), grad.sizes, grad.device)]
