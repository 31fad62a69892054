"""Reductions: sum, mean, prod, norm, max/min, amax/amin, argmax/argmin, sort, topk,
kthvalue and cumsum (var, std, logsumexp, nanmean, any and all are in statistics.py).

Kernels (``kernels/reductions.py``) follow PyTorch's rules rather than NumPy's:
dims wrap as PyTorch's, ``sum`` of integers gives int64, float16 accumulates in
float32, and a ``dtype`` argument casts the input before reducing.

Shapes: a reduction over constant dimensions drops them (or keeps them as size
1 with ``keepdim=True``); negative dimensions count from the end, and no
dimensions (``dim=None`` or ``[]``) means all of them. ``sum`` and ``prod`` of
integers or bools give ``Long``; an explicit ``dtype=`` wins. Results are
freshly allocated, so contiguous.

Gradients. A reduction maps many input elements to one output element, so its
backward maps each output gradient back onto every element it came from. Two
steps are common to all of them:

1. *Re-insert the reduced dims.* With ``keepdim=False`` the reduced dims
   are gone from the result and from its gradient: ``x.sum(1)`` of a
   ``[2, 3, 4]`` input has shape ``[2, 4]``. ``unsqueeze(1)`` turns the
   gradient into ``[2, 1, 4]``, which broadcasts against the input again.
   (Reducing every dim leaves a 0-d gradient, which broadcasts as it is.)
2. *Spread it.* ``sum``: every element contributed with weight 1, so the
   gradient is ``expand``ed to the input's size; ``mean``: the same divided
   by the number of elements averaged; ``prod`` and ``norm``: multiplied by
   the elementwise derivative, which broadcasting does for free.

The dims, ``keepdim`` and the input's size come from constants and types
(see static_info), so the backward holds only the unsqueezes it needs and
captures no size when the input's type is complete. An op called with a
``dtype=`` argument computes in that dtype; its gradient is cast back to the
input's dtype, as autograd does.

The reductions that pick elements follow the same idea: ``sort`` copies every
element to its sorted place, so its values' gradient is scattered back at the
returned indices (``value_selecting_reduction_backward`` with the dim kept);
``amax``/``amin`` split each output gradient *evenly* among the elements equal
to the result in the reduced slice (PyTorch's ``scale_grad_by_count``); output
``j`` of ``cumsum`` adds inputs ``0..j``, so input ``i`` gets the sum of the
gradients of outputs ``i..n-1``. Ops that return indices say which element
was selected: ``max.dim``, ``min.dim``, ``kthvalue`` and ``topk`` scatter the
gradient into a zero tensor of the input's size at those indices (PyTorch's
``value_selecting_reduction_backward``); the indices output carries no
gradient, and the backward captures the indices, not the input. ``max(x)`` and
``min(x)`` over the whole tensor return no index, and PyTorch splits the
gradient *evenly* among ties: each element equal to the result gets
``g / count`` (``evenly_distribute_backward``).
"""

from __future__ import annotations

import math

from gradview.ir import Node, Value
from gradview.ir.types import TensorType
from gradview.kernels import elementwise
from gradview.kernels import reductions as kernels

from .dtype_rules import is_integral, scalar_type_name
from .gradients import BACKWARD_KERNEL
from .kernel_backward import backward_schema, calls_backward, grads_like
from .pointwise import save_tensor_sizes
from .pointwise_math import extremum
from .registry import Emitter, fast_path, formula, kernel, no_gradient, schema, shape_rule
from .shape_toolkit import NodeArgs, RuleResult, fresh, layout_of, make_tensor, pointwise
from .shape_toolkit import wrap_dim as wrap_shape_dim
from .static_info import (
    NOT_CONSTANT,
    cast_back,
    const,
    dtype_index,
    dtype_of,
    fail,
    full_size,
    input_at,
    int_list,
    is_none,
    needs_grad,
    none_grads,
    rank_of,
    reduced_dims,
    reduction_supported,
    restore_reduced_dims,
    size_of,
    wrap_dim,
)
from .tensor_layout import preserve_strides

__all__ = [
    "dims_argument", "dtype_argument", "keepdim_argument", "keepdim_size", "reduced_type", "restore_dims",
    "restored_at_compile_time", "sum_shapes", "reduction_shapes",
]

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]



# -- shared by the shape rules -----------------------------------------------------------------
def reduced_type(self: TensorType, dims: list[int | None] | None, keepdim: bool | None,
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
    wrapped = [wrap_shape_dim(d, rank) for d in dims]
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


def keepdim_argument(args: NodeArgs, i: int) -> bool | None:
    v = args.value(i, None)
    return v if isinstance(v, bool) else None


def dims_argument(args: NodeArgs, i: int) -> list[int | None] | None:
    """A ``dim`` argument: None for "all dimensions", [None] when unknown."""
    if args.is_none(i):
        return None
    dims = args.int_list(i)
    return dims if dims is not None else [None]


def dtype_argument(args: NodeArgs, i: int, default: str | None) -> str | None:
    """A ``dtype`` argument (a ScalarType number) as a dtype name; ``default`` when absent."""
    if i >= len(args) or args.is_none(i):
        return default
    index = args.int_value(i)
    return scalar_type_name(index) if index is not None else None


def _sum_dtype(self: TensorType) -> str | None:
    dtype = self.scalar_type
    return "Long" if dtype is not None and is_integral(dtype) else dtype


def reduction_shapes(args: NodeArgs, dtype: str | None) -> RuleResult:
    """``op(self)`` or ``op(self, dim, keepdim, ...)``: self reduced, in ``dtype``."""
    self = args.tensor(0)
    assert self is not None
    if len(args) == 1:
        return [reduced_type(self, None, False, dtype)]
    return [reduced_type(self, dims_argument(args, 1), keepdim_argument(args, 2), dtype)]


def _values_and_indices(self: TensorType, dims: list[int | None], keepdim: bool | None) -> RuleResult:
    values = reduced_type(self, dims, keepdim, self.scalar_type)
    return [values, TensorType("Long", values.sizes, values.strides, None, values.device)]


# -- shared by the formulas --------------------------------------------------------------------
def _arg(node: Node, name: str) -> Value | None:
    """The input bound to the schema argument ``name`` (None when absent)."""
    node_schema = node.maybe_schema()
    index = node_schema.argument_index(name) if node_schema is not None else None
    return input_at(node, index) if index is not None else None


def _dims(node: Node) -> tuple[list[int] | None, bool]:
    """The reduction's constant dims (None: every dim) and keepdim."""
    return reduced_dims(node, _arg(node, "dim"), _arg(node, "keepdim"))


def _supported(node: Node) -> bool:
    """prod and norm need constant dims and keepdim (and a constant p for norms); sum and
    mean also take dims known only at run time (see ``_restore``)."""
    if node.kind() in ("aten::sum", "aten::mean"):
        return True
    if not reduction_supported(node, _arg(node, "dim"), _arg(node, "keepdim"), rank_of(node.inputs()[0])):
        return False
    if node.kind() == "aten::norm":
        p_value = _arg(node, "p")
        p = None if p_value is None or is_none(p_value) else const(p_value)
        return p is None or (isinstance(p, int | float) and not isinstance(p, bool))
    return True


def restored_at_compile_time(node: Node) -> bool:
    """Can the reduced dims be put back with constant ``unsqueeze``s (constant dims and
    keepdim, and the rank where negative and non-negative dims mix)?

    Not when dims are dropped from an input of unknown rank: a 0-d input reduced
    over ``dim=[-1]`` keeps no dim to put back (PyTorch's backward checks the rank
    at run time), so the run-time path, which reshapes to the saved size, is used."""
    rank = rank_of(node.inputs()[0])
    if not reduction_supported(node, _arg(node, "dim"), _arg(node, "keepdim"), rank):
        return False
    dims, keepdim = _dims(node)
    return not (rank is None and dims is not None and not keepdim)


def keepdim_size(emit: Emitter, node: Node, self_size: Value) -> Value:
    """In the forward: the result's size with ``keepdim=True``, computed at run time from
    the input's size and the ``dim`` input (``gradview::keepdim_size``)."""
    dim = _arg(node, "dim")
    return emit.op("gradview::keepdim_size", self_size, None if dim is None else dim)


def restore_dims(emit: Emitter, node: Node, grad: Value, saved: Saved | None = None) -> Value:
    """The gradient (or result) with the reduced dims back as size-1 dims.

    With constant dims these are ``unsqueeze``s chosen now; with dims known only at run
    time (a graph input, as in TorchScript's ``x.sum(dims)``) the gradient is reshaped to
    the saved keepdim size, which works whether ``keepdim`` was True or False: dropping or
    keeping size-1 dims does not move any element.
    """
    if saved is not None and "keep_size" in saved:
        return emit.op("aten::reshape", grad, saved["keep_size"])
    dims, keepdim = _dims(node)
    return restore_reduced_dims(emit, node, grad, dims, keepdim, rank_of(node.inputs()[0]))


def _input_dtype(emit: Emitter, node: Node) -> Value | None:
    """In the forward: the input's dtype, when a ``dtype=`` argument may have changed it
    (a constant when the type knows it, else ``prim::dtype``); None otherwise."""
    dtype = _arg(node, "dtype")
    if is_none(dtype):
        return None
    known = dtype_index(node.inputs()[0])
    if known is None:
        return dtype_of(emit, node.inputs()[0])
    return None if const(dtype) == known else emit.const(known)  # type: ignore[arg-type]


def _reduction_forward(emit: Emitter, node: Node) -> Saved:
    """Save the input's size and dtype (never the input itself)."""
    self_ = node.inputs()[0]
    if not needs_grad(self_):
        return {}
    saved = {"self_size": size_of(emit, self_), "self_dtype": _input_dtype(emit, node)}
    if not restored_at_compile_time(node):
        saved["keep_size"] = keepdim_size(emit, node, saved["self_size"])
        if node.kind() == "aten::mean":
            dim = _arg(node, "dim")
            saved["count"] = emit.op("gradview::reduced_numel", saved["self_size"], None if dim is None else dim)
    return saved


def _dtype_forward(emit: Emitter, node: Node) -> Saved:
    """Only the dtype: for formulas that broadcast instead of expanding."""
    return {"self_dtype": _input_dtype(emit, node)} if needs_grad(node.inputs()[0]) else {}


def _cast(emit: Emitter, saved: Saved, grad: Value) -> Value:
    return cast_back(emit, grad, saved["self_dtype"])


def _save_self_size(emit: Emitter, node: Node) -> Saved:
    self_ = node.inputs()[0]
    return {"self_size": size_of(emit, self_)} if needs_grad(self_) else {}


# -- gradview::keepdim_size, reduced_numel: the formulas' run-time helpers ---------------------
# (int lists and ints: no shape rule, no gradient)
schema("gradview::keepdim_size(int[] sizes, int[]? dim) -> int[]")
schema("gradview::reduced_numel(int[] sizes, int[]? dim) -> int")
kernel("gradview::keepdim_size")(kernels.keepdim_size)
kernel("gradview::reduced_numel")(kernels.reduced_numel)


# -- aten::sum, mean (and nansum's shape) ------------------------------------------------------
kernel("aten::sum")(kernels.sum_)
kernel("aten::sum.dim_IntList")(kernels.sum_dim)
kernel("aten::mean")(kernels.mean)
kernel("aten::mean.dim")(kernels.mean_dim)
fast_path("aten::mean")(kernels.fast_mean)


@shape_rule("aten::sum", "aten::nansum", "aten::prod", "aten::mean")
def sum_shapes(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None  # sum.int(int[]) and friends
    kind = args.node.kind()
    default = self.scalar_type if kind in ("aten::mean", "aten::nanmean") else _sum_dtype(self)
    if len(args) <= 2:  # sum(self, dtype)
        return [reduced_type(self, None, False, dtype_argument(args, 1, default))]
    # sum.dim_IntList(self, dim, keepdim, dtype), prod.dim_int(self, dim, keepdim, dtype)
    return [reduced_type(self, dims_argument(args, 1), keepdim_argument(args, 2), dtype_argument(args, 3, default))]


@formula("aten::sum", "aten::sum.dim_IntList", forward=_reduction_forward, supports=_supported)
def sum_(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """d(sum)/dx = 1 for every element: expand the gradient to the input's size."""
    if not saved:
        return none_grads(node)
    grad = emit.op("aten::expand", restore_dims(emit, node, grads[0], saved), saved["self_size"], False)
    return none_grads(node, _cast(emit, saved, grad))


def _count(node: Node) -> int | None:
    """How many elements each output of a mean averages, when the type and dims say."""
    if not restored_at_compile_time(node):
        return None
    sizes = full_size(node.inputs()[0])
    if sizes is None:
        return None
    dims, _ = _dims(node)
    if dims is None:
        return math.prod(sizes)
    return math.prod(sizes[wrap_dim(d, len(sizes))] for d in dims) if sizes else 1


@formula("aten::mean", "aten::mean.dim", forward=_reduction_forward, supports=_supported)
def mean(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """sum's gradient divided by the number of elements averaged."""
    if not saved:
        return none_grads(node)
    spread = emit.op("aten::expand", restore_dims(emit, node, grads[0], saved), saved["self_size"], False)
    count: int | Value | None = saved.get("count", _count(node))
    if count is None:  # at run time: the product of the reduced sizes (a 0 in another dim is fine)
        dim = _arg(node, "dim")
        count = emit.op("gradview::reduced_numel", saved["self_size"], None if dim is None else dim)
    grad = emit.op("aten::div", spread, count)
    return none_grads(node, _cast(emit, saved, grad))


# -- aten::prod (its shape rule is sum's) ------------------------------------------------------
kernel("aten::prod")(kernels.prod)
kernel("aten::prod.dim_int")(kernels.prod_dim)


@formula("aten::prod", "aten::prod.dim_int", forward=_dtype_forward, supports=_supported)
def prod(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """d(prod)/dx_i is the product of all the *other* elements.

    ``result / x_i`` computes it only when no element is zero. PyTorch's
    answer, which this follows without division by zero: count the zeros
    in each reduced slice; with none, it is ``prod / x_i``; with exactly
    one, only the zero element gets the product of the others (the product
    of the non-zero elements), the rest get 0; with two or more, all get 0.
    """
    if not saved:
        return none_grads(node)
    x = node.inputs()[0]
    dims, _ = _dims(node)
    is_zero = emit.op("aten::eq", x, 0)
    safe = emit.op("aten::where", is_zero, 1.0, x)  # the zeros replaced by ones
    if dims is None:
        nonzero_prod = emit.op("aten::prod", safe, None)
        zeros = emit.op("aten::sum", is_zero, None)
    else:
        nonzero_prod = emit.op("aten::prod", safe, dims[0], True, None)
        zeros = emit.op("aten::sum", is_zero, dims, True, None)
    one_zero = emit.op("aten::mul", nonzero_prod, emit.op("aten::eq", zeros, 1))
    no_zero = emit.op("aten::mul", nonzero_prod, emit.op("aten::eq", zeros, 0))
    others = emit.op("aten::where", is_zero, one_zero, emit.op("aten::div", no_zero, safe))
    grad = emit.op("aten::mul", restore_dims(emit, node, grads[0]), others)
    return none_grads(node, _cast(emit, saved, grad))


# -- aten::norm ---------------------------------------------------------------------------------
_NORMS = ("aten::norm.Scalar", "aten::norm.ScalarOpt_dim", "aten::norm.ScalarOpt_dim_dtype", "aten::norm.ScalarOpt_dtype")
kernel("aten::norm.Scalar")(kernels.norm)
kernel("aten::norm.ScalarOpt_dim")(kernels.norm_dim)
kernel("aten::norm.ScalarOpt_dim_dtype")(kernels.norm_dim_dtype)
kernel("aten::norm.ScalarOpt_dtype")(kernels.norm_dtype)


@shape_rule("aten::norm")
def _norm_shapes(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    if len(args) <= 3 and str(args.type(len(args) - 1)) != "int[]":
        # norm.Scalar(self, p), norm.ScalarOpt_dtype(self, p, dtype)
        return [reduced_type(self, None, False, dtype_argument(args, 2, self.scalar_type))]
    return [reduced_type(self, dims_argument(args, 2), keepdim_argument(args, 3),
                         dtype_argument(args, 4, self.scalar_type))]


@formula(*_NORMS, forward=_dtype_forward, supports=_supported)
def norm(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """The p-norm ``n = (sum |x|^p)^(1/p)`` has ``dn/dx = sign(x) |x|^(p-1) / n^(p-1)``.

    Special cases, as in PyTorch's ``norm_backward``: p=2 is ``x / n``
    (0 where n is 0); p=1 is ``sign(x)``; p=inf splits the gradient evenly
    among the elements whose ``|x|`` equals the norm (the maxima, and NaNs);
    p=0 counts non-zeros and has a zero gradient. ``p`` must be a constant.
    """
    if not saved:
        return none_grads(node)
    x, result = node.inputs()[0], node.output()
    p_value = _arg(node, "p")
    p = 2.0 if is_none(p_value) else const(p_value)  # type: ignore[arg-type]
    if not isinstance(p, (int, float)) or isinstance(p, bool):
        fail(node, "the gradient of norm needs a constant p")
    p = float(p)
    g = restore_dims(emit, node, grads[0])
    if p == 0.0:
        return none_grads(node, _cast(emit, saved, emit.op("aten::zeros_like", x)))
    if p == 1.0:
        return none_grads(node, _cast(emit, saved, emit.op("aten::mul", emit.op("aten::sign", x), g)))
    n = restore_dims(emit, node, result)
    if p == 2.0:
        unit = _zero_where(emit, emit.op("aten::div", x, n), n)
        grad = emit.op("aten::mul", g, unit)
    elif math.isinf(p):
        grad = _extreme_norm_grad(emit, node, x, n, g)
    else:
        abs_x = emit.op("aten::abs", x)
        if p < 1.0:
            scaled = emit.op("aten::mul", emit.op("aten::sign", x), emit.op("aten::pow", abs_x, p - 1))
            scaled = emit.op("aten::masked_fill", scaled, emit.op("aten::eq", x, 0), 0)
            grad = emit.op("aten::mul", emit.op("aten::mul", scaled, g), emit.op("aten::pow", n, 1 - p))
        else:
            if p < 2.0:
                scaled = emit.op("aten::mul", emit.op("aten::sign", x), emit.op("aten::pow", abs_x, p - 1))
            else:
                scaled = emit.op("aten::mul", x, emit.op("aten::pow", abs_x, p - 2))
            scale = _zero_where(emit, emit.op("aten::div", g, emit.op("aten::pow", n, p - 1)), n)
            grad = emit.op("aten::mul", scaled, scale)
    return none_grads(node, _cast(emit, saved, grad))


def _zero_where(emit: Emitter, value: Value, n: Value) -> Value:
    """``value`` with 0 where the norm is 0 (0/0 there means "no direction")."""
    return emit.op("aten::masked_fill", value, emit.op("aten::eq", n, 0), 0)


def _extreme_norm_grad(emit: Emitter, node: Node, x: Value, n: Value, g: Value) -> Value:
    """inf-norm: ``sign(x) * g / count * mask`` with mask = (|x| == n) or isnan(x)."""
    hits = emit.op("aten::type_as", emit.op("aten::eq", emit.op("aten::abs", x), n), x)
    nans = emit.op("aten::type_as", emit.op("aten::ne", x, x), x)
    mask = emit.op("aten::add", hits, nans, 1)
    dims, _ = _dims(node)
    count = emit.op("aten::sum", mask, dims, True, None)
    share = emit.op("aten::mul", emit.op("aten::div", g, count), mask)
    return emit.op("aten::mul", emit.op("aten::sign", x), share)


# -- aten::max, min, max.dim, min.dim (max.other and min.other, elementwise, share the kind) ----
kernel("aten::max")(kernels.max_)
kernel("aten::min")(kernels.min_)
kernel("aten::max.dim")(kernels.max_dim)
kernel("aten::min.dim")(kernels.min_dim)
# max.other and min.other are elementwise (maximum and minimum under another name).
kernel("aten::max.other")(kernels.max_other)
kernel("aten::min.other")(kernels.min_other)
fast_path("aten::max.other")(elementwise.same_dtype_fast_path("maximum"))
fast_path("aten::min.other")(elementwise.same_dtype_fast_path("minimum"))
formula("aten::max.other", forward=save_tensor_sizes("self_size", "other_size"))(extremum("lt", "gt"))
formula("aten::min.other", forward=save_tensor_sizes("self_size", "other_size"))(extremum("gt", "lt"))


@shape_rule("aten::max", "aten::min")
def _max_shapes(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None  # prim-style max of numbers or lists
    if len(args) == 1:
        return [reduced_type(self, None, False, self.scalar_type)]
    if args.tensor(1) is not None:  # max.other: elementwise
        return [pointwise(args, [0, 1], args.promoted([0, 1]))]
    return _values_and_indices(self, [args.int_value(1)], keepdim_argument(args, 2))


def _save_self_size_for_selection(emit: Emitter, node: Node) -> dict[str, Value]:
    self_ = node.inputs()[0]
    return {"self_size": size_of(emit, self_)} if needs_grad(self_) else {}


def _scatter_back(emit: Emitter, node: Node, saved: Saved, grad: Value, dim: Value | int, keepdim: Value | bool) -> list[Value | None]:
    if not saved:
        return none_grads(node)
    indices = node.outputs()[1]
    return none_grads(
        node, emit.op("aten::value_selecting_reduction_backward", grad, dim, indices, saved["self_size"], keepdim)
    )


@formula("aten::max.dim", "aten::min.dim", forward=_save_self_size_for_selection)
def max_dim(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    keepdim = input_at(node, 2)
    return _scatter_back(emit, node, saved, grads[0], node.inputs()[1], False if keepdim is None else keepdim)


@formula("aten::kthvalue", forward=_save_self_size_for_selection)
def kthvalue(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    # kthvalue(self, k, dim=-1, keepdim=False)
    dim, keepdim = input_at(node, 2), input_at(node, 3)
    return _scatter_back(
        emit, node, saved, grads[0], -1 if dim is None else dim, False if keepdim is None else keepdim
    )


@formula("aten::topk", forward=_save_self_size_for_selection)
def topk(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    # topk(self, k, dim=-1, largest=True, sorted=True): the k values keep the dim.
    dim = input_at(node, 2)
    return _scatter_back(emit, node, saved, grads[0], -1 if dim is None else dim, True)


@formula("aten::max", "aten::min")
def max_all(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    """``g / count`` to each element equal to the result (NaN counts as equal to a NaN result)."""
    x, result = node.inputs()[0], node.output()
    if not needs_grad(x):
        return none_grads(node)
    hits = emit.op("aten::eq", x, result)
    # A NaN result: the NaNs are the maxima. isnan(v) is v != v.
    nan_result = emit.op("aten::ne", result, result)
    nans = emit.op("aten::mul", emit.op("aten::ne", x, x), nan_result)
    mask = emit.op("aten::add", emit.op("aten::type_as", hits, x), emit.op("aten::type_as", nans, x), 1)
    share = emit.op("aten::div", grads[0], emit.op("aten::sum", mask, None))
    return none_grads(node, emit.op("aten::mul", mask, share))


# -- aten::amax, amin --------------------------------------------------------------------------
kernel("aten::amax")(kernels.amax)
kernel("aten::amin")(kernels.amin)


@shape_rule("aten::amax", "aten::amin")
def _amax_shapes(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    return None if self is None else reduction_shapes(args, self.scalar_type)


def _constant_dims(node: Node) -> bool:
    rank = rank_of(node.inputs()[0])
    return reduction_supported(node, _arg(node, "dim"), _arg(node, "keepdim"), rank)


def _extreme_forward(emit: Emitter, node: Node) -> Saved:
    """With dims known only at run time (a ``ListConstruct`` or a graph input): the result's
    size with ``keepdim=True``, to reshape the result and the gradient to."""
    x = node.inputs()[0]
    if not needs_grad(x) or _constant_dims(node):
        return {}
    dim = _arg(node, "dim")
    dims = dim if dim is not None else []
    return {"keep_size": emit.op("gradview::keepdim_size", size_of(emit, x), dims)}


@formula("aten::amax", "aten::amin", forward=_extreme_forward)
def amax(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``g / count`` to every element equal to its slice's result (a NaN result matches
    nothing, so its slice gets NaN, as in PyTorch)."""
    x = node.inputs()[0]
    if not needs_grad(x):
        return none_grads(node)
    dim = _arg(node, "dim")
    if "keep_size" in saved:
        result = emit.op("aten::reshape", node.output(), saved["keep_size"])
        g = emit.op("aten::reshape", grads[0], saved["keep_size"])
        count_dims: list[int] | Value | None = dim
    else:
        dims, keepdim = reduced_dims(node, dim, _arg(node, "keepdim"))
        rank = rank_of(x)
        result = restore_reduced_dims(emit, node, node.output(), dims, keepdim, rank)
        g = restore_reduced_dims(emit, node, grads[0], dims, keepdim, rank)
        count_dims = dims
    mask = emit.op("aten::type_as", emit.op("aten::eq", x, result), x)
    if count_dims is None:
        count = emit.op("aten::sum", mask, None)
    else:
        count = emit.op("aten::sum", mask, count_dims, True, None)
    return none_grads(node, emit.op("aten::mul", emit.op("aten::div", g, count), mask))


# -- aten::argmax, argmin ----------------------------------------------------------------------
kernel("aten::argmax")(kernels.argmax)
kernel("aten::argmin")(kernels.argmin)
no_gradient(
    "aten::argmax", "aten::argmin",
    reason="it returns indices (integers), which carry no gradient",
)


@shape_rule("aten::argmax", "aten::argmin")
def _argmax_shapes(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    dims = None if len(args) < 2 or args.is_none(1) else [args.int_value(1)]
    keepdim = keepdim_argument(args, 2) if len(args) > 2 else False
    return [reduced_type(self, dims, keepdim, "Long")]


# -- aten::kthvalue (and median, nanmedian, mode's shapes), topk -------------------------------
kernel("aten::kthvalue")(kernels.kthvalue)
kernel("aten::topk")(kernels.topk)


@shape_rule("aten::kthvalue", "aten::median", "aten::nanmedian", "aten::mode")
def _kthvalue_shapes(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    if len(args) == 1:  # median(self): one 0-dim value
        return [reduced_type(self, None, False, self.scalar_type)]
    first = 2 if args.node.kind() == "aten::kthvalue" else 1
    return _values_and_indices(self, [args.int_value(first)], keepdim_argument(args, first + 1))


@shape_rule("aten::topk")
def _topk_shapes(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    k = args.int_value(1)
    sizes = None
    if self.sizes is not None:
        dim = wrap_shape_dim(args.int_value(2), len(self.sizes))
        sizes = (None,) * len(self.sizes)
        if dim is not None and self.sizes:
            sizes = self.sizes[:dim] + (k,) + self.sizes[dim + 1:]
        elif not self.sizes:
            sizes = ()
    return [fresh(self.scalar_type, sizes, self.device), fresh("Long", sizes, self.device)]


# -- aten::sort --------------------------------------------------------------------------------
kernel("aten::sort")(kernels.sort)
kernel("aten::sort.stable")(kernels.sort_stable)


@shape_rule("aten::sort")
def _sort_shapes(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    # Both results are laid out like empty_like(self): dense, in self's order.
    layout = layout_of(self)
    strides = preserve_strides(*layout) if layout is not None else None
    return [make_tensor(self.scalar_type, self.sizes, strides, self.device),
            make_tensor("Long", self.sizes, strides, self.device)]


@formula("aten::sort", "aten::sort.stable", forward=_save_self_size)
def sort(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """Each sorted value came from the input position its index names."""
    if not saved:
        return none_grads(node)
    dim = _arg(node, "dim")
    grad = emit.op(
        "aten::value_selecting_reduction_backward",
        grads[0], -1 if dim is None else dim, node.outputs()[1], saved["self_size"], True,
    )
    return none_grads(node, grad)


# -- aten::value_selecting_reduction_backward --------------------------------------------------
# PyTorch's backward of the reductions that pick one element per slice (max.dim, topk,
# sort...): zeros of ``sizes`` with the gradient written at ``indices`` along ``dim``.
kernel("aten::value_selecting_reduction_backward")(kernels.value_selecting_reduction_backward)
no_gradient("aten::value_selecting_reduction_backward", reason=BACKWARD_KERNEL)


@shape_rule("aten::value_selecting_reduction_backward")
def _value_selecting_reduction_backward_shapes(args: NodeArgs) -> RuleResult:
    """The gradient's dtype and device, the sizes of the ``sizes`` argument."""
    grad = args.tensor(0)
    if grad is None:
        return None
    values = args.int_list(3)
    return [fresh(grad.scalar_type, tuple(values) if values is not None else None, grad.device)]


# -- aten::cumsum (and cumprod's shape) --------------------------------------------------------
kernel("aten::cumsum")(kernels.cumsum)


@shape_rule("aten::cumsum", "aten::cumprod")
def _cumsum_shapes(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    return [fresh(dtype_argument(args, 2, _sum_dtype(self)), self.sizes, self.device)]


def _dtype_change(emit: Emitter, node: Node) -> Saved:
    """The input's dtype when a ``dtype=`` argument may have changed the result's."""
    self_ = node.inputs()[0]
    if not needs_grad(self_):
        return {}
    dtype = _arg(node, "dtype")
    if dtype is None or const(dtype) is None:
        return {"self_dtype": None}  # type: ignore[dict-item]
    known = dtype_index(self_)
    if known is None:
        return {"self_dtype": dtype_of(emit, self_)}
    same = const(dtype) == known
    return {"self_dtype": None if same else emit.const(known)}  # type: ignore[dict-item]


@formula("aten::cumsum", forward=_dtype_change)
def cumsum(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """Input ``i`` gets ``g[i] + g[i+1] + ... + g[n-1]``: ``sum(g) - cumsum(g) + g``
    (no flip kernel). With a ``dtype=`` the gradient is first cast back to the input's dtype."""
    if not saved:
        return none_grads(node)
    g = cast_back(emit, grads[0], saved["self_dtype"])
    if rank_of(node.inputs()[0]) == 0:
        return none_grads(node, g)
    dim = node.inputs()[1]
    dims = int_list(emit, [dim if const(dim) is NOT_CONSTANT else const(dim)])
    total = emit.op("aten::sum", g, dims, True, None)
    after = emit.op("aten::sub", total, emit.op("aten::cumsum", g, dim, None), 1)
    return none_grads(node, emit.op("aten::add", after, g, 1))



# == Issue 22: argsort, msort, cummax, cummin, cumprod, logcumsumexp ===========================
# argsort's indices carry no gradient; msort's values go back to where argsort took them from.
# cummax/cummin scatter-add the gradient at their indices (PyTorch's cummaxmin_backward);
# cumprod and logcumsumexp have backward kernels in PyTorch's arithmetic (kernels/reductions.py).
kernel("aten::argsort")(kernels.argsort)
kernel("aten::argsort.stable")(kernels.argsort_stable)
kernel("aten::msort")(kernels.msort)
kernel("aten::cummax")(kernels.cummax)
kernel("aten::cummin")(kernels.cummin)
kernel("aten::cumprod")(kernels.cumprod)
kernel("aten::logcumsumexp")(kernels.logcumsumexp)
no_gradient("aten::argsort", "aten::argsort.stable",
            reason="argsort: its result holds indices (integers), which carry no gradient")


@shape_rule("aten::argsort")
def _argsort_shapes(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    return None if self is None else [fresh("Long", self.sizes, self.device)]


@shape_rule("aten::msort", "aten::logcumsumexp")
def _same_shapes(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    dtype = self.scalar_type
    if args.node.kind() == "aten::logcumsumexp" and dtype is not None and is_integral(dtype):
        dtype = "Float"
    return [fresh(dtype, self.sizes, self.device)]


@shape_rule("aten::cummax", "aten::cummin")
def _cum_extreme_shapes(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    return [fresh(self.scalar_type, self.sizes, self.device), fresh("Long", self.sizes, self.device)]


@formula("aten::msort", forward=_save_self_size)
def msort(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """Each sorted value came from where ``argsort`` along dim 0 found it."""
    if not saved:
        return none_grads(node)
    indices = emit.op("aten::argsort", node.inputs()[0], 0, False)
    return none_grads(node, emit.op("aten::value_selecting_reduction_backward", grads[0], 0, indices,
                                    saved["self_size"], True))


@formula("aten::cummax", "aten::cummin")
def cum_extreme(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    self_, dim = node.inputs()
    if not needs_grad(self_):
        return none_grads(node)
    return none_grads(node, emit.op("gradview::cummaxmin_backward", grads[0], self_, node.outputs()[1], dim))


schema("gradview::cummaxmin_backward(Tensor grad, Tensor self, Tensor indices, int dim) -> Tensor")
kernel("gradview::cummaxmin_backward")(kernels.cummaxmin_backward)
no_gradient("gradview::cummaxmin_backward", reason=BACKWARD_KERNEL)
shape_rule("gradview::cummaxmin_backward")(grads_like(0))

for _name, _signature, _fn in (
    ("cumprod_backward", "Tensor self, int dim, ScalarType? dtype", kernels.cumprod_backward),
    ("logcumsumexp_backward", "Tensor self, int dim", kernels.logcumsumexp_backward),
):
    schema(backward_schema(_name, _signature, 1))
    kernel(f"gradview::{_name}")(_fn)
    no_gradient(f"gradview::{_name}", reason=BACKWARD_KERNEL)
    shape_rule(f"gradview::{_name}")(grads_like(0))
formula("aten::cumprod")(calls_backward("gradview::cumprod_backward", (0,)))
formula("aten::logcumsumexp")(calls_backward("gradview::logcumsumexp_backward", (0,)))


# == Issue 22: nansum, aminmax, median, nanmedian, mode ========================================
# nansum is sum with NaNs as 0: its gradient is sum's, zeroed at the NaNs (nansum's shape rule
# is sum's). aminmax's two results split their gradients evenly among the elements equal to
# them, as amin's and amax's do. median/nanmedian over everything split evenly among the ties
# (evenly_distribute_backward, as max does); their dim forms and mode scatter back at the indices.
kernel("aten::nansum")(kernels.nansum)
kernel("aten::aminmax")(kernels.aminmax)
kernel("aten::median")(kernels.median)
kernel("aten::median.dim")(kernels.median_dim)
kernel("aten::nanmedian")(kernels.nanmedian)
kernel("aten::nanmedian.dim")(kernels.nanmedian_dim)
kernel("aten::mode")(kernels.mode)
formula("aten::median", "aten::nanmedian")(max_all)
formula("aten::median.dim", "aten::nanmedian.dim", "aten::mode", forward=_save_self_size_for_selection)(max_dim)


@formula("aten::nansum", forward=_reduction_forward, supports=_supported)
def nansum(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """sum's gradient times ``x == x`` (0 at the NaNs)."""
    if not saved:
        return none_grads(node)
    spread = emit.op("aten::expand", restore_dims(emit, node, grads[0], saved), saved["self_size"], False)
    x = node.inputs()[0]
    grad = emit.op("aten::mul", _cast(emit, saved, spread), emit.op("aten::eq", x, x))
    return none_grads(node, grad)


@shape_rule("aten::aminmax")
def _aminmax_shapes(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    dims = None if args.is_none(1) else [args.int_value(1)]
    result = reduced_type(self, dims, keepdim_argument(args, 2), self.scalar_type)
    return [result, result]


@formula("aten::aminmax")
def aminmax(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    self_, dim, keepdim = node.inputs()
    if not needs_grad(self_):
        return none_grads(node)
    low, high = node.outputs()
    return none_grads(node, emit.op("gradview::aminmax_backward", grads[0], grads[1], self_, low, high, dim, keepdim))


schema("gradview::aminmax_backward(Tensor? grad_min, Tensor? grad_max, Tensor self, Tensor min, Tensor max, "
       "int? dim, bool keepdim) -> Tensor")
kernel("gradview::aminmax_backward")(kernels.aminmax_backward)
no_gradient("gradview::aminmax_backward", reason=BACKWARD_KERNEL)


@shape_rule("gradview::aminmax_backward")
def _aminmax_backward_shapes(args: NodeArgs) -> RuleResult:
    self = args.tensor(2)
    return None if self is None else [fresh(self.scalar_type, self.sizes, self.device)]
