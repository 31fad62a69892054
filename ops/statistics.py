"""The statistics reductions: var, std, var_mean, logsumexp and nanmean; any and all
(whose results are bools, so they have no gradient).

Kernels (``kernels/statistics.py``): ``std``/``var``
need floating inputs and divide by ``max(0, N - correction)``; ``logsumexp``
shifts by each slice's maximum so that ``exp`` never overflows; ``nanmean`` is
``nansum / (number of non-NaN elements)``; ``any``/``all`` count NaN as true.

Shapes are the reductions' (reductions.py): the reduced dims dropped, or kept as
size 1 with ``keepdim=True``. ``logsumexp`` of integers gives the default float
dtype, ``any``/``all`` give bool (uint8 for uint8 inputs).

Gradients put the reduced dims back into the gradient first, as the reductions
do (``restore_dims``: constant ``unsqueeze``s, or a reshape to the run-time
keepdim size when the dims are a graph input), then multiply by the
elementwise derivative, which broadcasting spreads:

* ``var``: ``d var / d x_i = 2 (x_i - mean) / (N - correction)``, with ``N`` the
  number of elements per result element. PyTorch's eager ``var_backward`` has
  two cases, followed exactly: over every element (no ``dim``, or a 0-d input)
  with ``N - correction <= 0`` the gradient is ``grad * (NaN where x == mean,
  else inf)``; otherwise ``2 / (N - correction)`` (inf when it is 0, negative
  when it is below), where an *empty* dim list counts ``N = 1``, as PyTorch's
  ``_safe_size`` does although the forward reduces every dim.
* ``var_mean``: var's gradient of its first result plus mean's of its second,
  each only when its gradient is defined at run time (an unused result's is not).
* ``std = sqrt(var)``: ``grad / (2 std)`` is var's incoming gradient, with 0
  where ``std`` is 0 (PyTorch's ``masked_fill_(result == 0, 0)``).
* ``logsumexp``: ``d/dx_i log(sum exp x) = exp(x_i - result)``.
* ``nanmean = nansum(x) / count`` (count: the non-NaN elements): the gradient
  is ``grad / count`` spread over the slice and zeroed at the NaNs by a
  multiplication (so a slice of NaNs only gives NaN, ``inf * 0``, as in PyTorch).

``unbiased`` and ``correction`` must be constants (TorchScript writes them so);
a gradient needing a run-time one is refused with a message naming the node.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from gradview.ir import BoolType, Node, OptionalType, TensorType, Value
from gradview.kernels import statistics as kernels

from .dtype_rules import to_float
from .emit_util import emit_if
from .gradients import BACKWARD_KERNEL
from .kernel_backward import backward_schema, calls_backward, grads_like
from .reductions import _count as mean_count
from .reductions import (
    dims_argument,
    keepdim_argument,
    keepdim_size,
    reduced_type,
    reduction_shapes,
    restore_dims,
    restored_at_compile_time,
    sum_shapes,
)
from .registry import Emitter, formula, kernel, no_gradient, schema, shape_rule
from .shape_by_kernel import by_kernel, by_kernel_outputs
from .shape_toolkit import NodeArgs, RuleResult, ShapeRule, fresh
from .static_info import (
    NOT_CONSTANT,
    cast_back,
    const,
    dtype_index,
    dtype_of,
    fail,
    full_size,
    input_at,
    is_none,
    needs_grad,
    none_grads,
    rank_of,
    size_of,
    wrap_dim,
)

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]

__all__ = ["var", "std", "logsumexp", "nanmean"]


def _arg(node: Node, name: str) -> Value | None:
    """The input bound to the schema argument ``name`` (None when absent)."""
    node_schema = node.maybe_schema()
    index = node_schema.argument_index(name) if node_schema is not None else None
    return input_at(node, index) if index is not None else None


def _dims_forward(emit: Emitter, node: Node) -> Saved:
    """The run-time keepdim size, when the dims are not constants."""
    if not needs_grad(node.inputs()[0]) or restored_at_compile_time(node):
        return {}
    return {"keep_size": keepdim_size(emit, node, emit.size(node.inputs()[0]))}


# -- aten::var, std ---------------------------------------------------------------------------
_VAR = ("aten::var", "aten::var.dim", "aten::var.correction")
_STD = ("aten::std", "aten::std.dim", "aten::std.correction")
kernel("aten::var")(kernels.var)
kernel("aten::var.dim")(kernels.var_dim)
kernel("aten::var.correction")(kernels.var_correction)
kernel("aten::std")(kernels.std)
kernel("aten::std.dim")(kernels.std_dim)
kernel("aten::std.correction")(kernels.std_correction)


@shape_rule("aten::var", "aten::std")
def _var_shapes(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    if len(args) <= 2:  # var(self, unbiased)
        return [reduced_type(self, None, False, self.scalar_type)]
    # var.dim(self, dim, unbiased, keepdim), var.correction(self, dim, *, correction, keepdim)
    return [reduced_type(self, dims_argument(args, 1), keepdim_argument(args, 3), self.scalar_type)]


def _correction(node: Node) -> float | int | None:
    """The constant correction (``unbiased`` is 1 or 0, a None correction 1); None when
    it is known only at run time."""
    unbiased = _arg(node, "unbiased")
    if unbiased is not None:  # var(self, unbiased), var.dim
        value = const(unbiased)
        return None if value is NOT_CONSTANT else int(bool(value))
    correction = _arg(node, "correction")
    if correction is None or is_none(correction):
        return 1
    value = const(correction)
    if value is NOT_CONSTANT:
        return None
    return 1 if value is None else value


def _over_everything(node: Node) -> bool:
    """PyTorch's first case: no ``dim`` argument (or None), or a 0-d input. (An input of
    unknown rank with dims takes the second case; for a 0-d one the two agree unless
    the correction exceeds 1.)"""
    dim = _arg(node, "dim")
    return dim is None or is_none(dim) or rank_of(node.inputs()[0]) == 0


def _var_supported(node: Node) -> bool:
    """A constant correction, and dims that are not an ``int[]?`` known only at run time
    (None and [] take different cases, which would need a run-time branch)."""
    dim = _arg(node, "dim")
    optional_at_run_time = (
        dim is not None and isinstance(dim.type(), OptionalType) and const(dim) is NOT_CONSTANT
    )
    return _correction(node) is not None and not optional_at_run_time


def _safe_count(node: Node) -> int | None:
    """``N`` as PyTorch's backward counts it (an empty dim list counts 1), when the type
    and the dims say."""
    sizes = full_size(node.inputs()[0])
    if sizes is None:
        return None
    if _over_everything(node):
        return math.prod(sizes)
    dim = const(_arg(node, "dim"))  # type: ignore[arg-type]
    if dim is NOT_CONSTANT:
        return None
    dims = [dim] if isinstance(dim, int) else list(dim)
    return math.prod(sizes[wrap_dim(d, len(sizes))] for d in dims)


def _var_forward(emit: Emitter, node: Node) -> Saved:
    """Nothing to save (the backward needs the input itself, so it takes sizes from it);
    this only refuses a run-time correction early."""
    if needs_grad(node.inputs()[0]) and _correction(node) is None:
        fail(node, f"the gradient of {node.kind()} needs a constant unbiased/correction")
    return {}


def _run_time_facts(emit: Emitter, node: Node) -> Saved:
    """In the backward: the keepdim size and the count, from the input's size, when the
    dims or sizes are known only at run time."""
    x = node.inputs()[0]
    facts: Saved = {}
    need_keep_size = not _over_everything(node) and not restored_at_compile_time(node)
    need_count = _safe_count(node) is None
    if need_keep_size or need_count:
        self_size = size_of(emit, x)
        if need_keep_size:
            facts["keep_size"] = keepdim_size(emit, node, self_size)
        if need_count:
            dim = None if _over_everything(node) else _arg(node, "dim")
            facts["count"] = emit.op("gradview::reduced_numel", self_size, dim)
    return facts


def _var_grad(emit: Emitter, node: Node, grad: Value) -> Value:
    """``var_backward(grad, self, dim, correction, keepdim)`` of PyTorch's FunctionsManual."""
    x = node.inputs()[0]
    correction = _correction(node)
    assert correction is not None  # the forward refused it otherwise
    count = _safe_count(node)
    facts = _run_time_facts(emit, node)
    if _over_everything(node):
        centered = emit.op("aten::sub", x, emit.op("aten::mean", x, None))
        if count is None:  # N - correction <= 0 is decided at run time
            dof = emit.op("aten::sub", facts["count"], float(correction))
            return emit_if(
                emit,
                emit.op("aten::gt", dof, 0.0),
                lambda: emit.op("aten::mul", emit.op("aten::mul", grad, emit.op("aten::div", 2.0, dof)), centered),
                lambda: emit.op("aten::mul", grad, _nan_or_inf(emit, centered)),
                TensorType(),
            )
        if count - correction <= 0:
            return emit.op("aten::mul", grad, _nan_or_inf(emit, centered))
        return emit.op("aten::mul", emit.op("aten::mul", grad, 2.0 / (count - correction)), centered)
    g = restore_dims(emit, node, grad, facts)
    centered = emit.op("aten::sub", x, emit.op("aten::mean", x, _arg(node, "dim"), True, None))
    if count is None:  # a tensor divided by 0.0 is inf, as 2.0 / 0.0 is in C++
        dof = emit.op("aten::sub", facts["count"], float(correction))
        return emit.op("aten::mul", emit.op("aten::div", emit.op("aten::mul", g, 2.0), dof), centered)
    dof = count - correction
    scale = 2.0 / dof if dof != 0 else math.inf
    return emit.op("aten::mul", emit.op("aten::mul", g, scale), centered)


def _nan_or_inf(emit: Emitter, centered: Value) -> Value:
    """``where(x == mean, NaN, inf)``: PyTorch's answer when ``N - correction <= 0``."""
    return emit.op("aten::where", emit.op("aten::eq", centered, 0.0), math.nan, math.inf)


@formula(*_VAR, forward=_var_forward, supports=_var_supported)
def var(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    if not needs_grad(node.inputs()[0]):
        return none_grads(node)
    return none_grads(node, _var_grad(emit, node, grads[0]))


@formula(*_STD, forward=_var_forward, supports=_var_supported)
def std(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """var's gradient of ``grad / (2 std)``, which is 0 where std is 0."""
    if not needs_grad(node.inputs()[0]):
        return none_grads(node)
    result = node.output()
    scaled = emit.op("aten::div", grads[0], emit.op("aten::mul", result, 2))
    scaled = emit.op("aten::masked_fill", scaled, emit.op("aten::eq", result, 0), 0)
    return none_grads(node, _var_grad(emit, node, scaled))


# -- aten::var_mean (every overload) ------------------------------------------------------------
_VAR_MEAN = ("aten::var_mean", "aten::var_mean.dim", "aten::var_mean.correction")
kernel("aten::var_mean")(kernels.var_mean)
kernel("aten::var_mean.dim")(kernels.var_mean_dim)
kernel("aten::var_mean.correction")(kernels.var_mean_correction)


@shape_rule("aten::var_mean")
def _var_mean_shapes(args: NodeArgs) -> RuleResult:
    """var's result twice: the mean has the variance's sizes and dtype."""
    shapes = _var_shapes(args)
    return None if shapes is None else [shapes[0], shapes[0]]


def _mean_grad(emit: Emitter, node: Node, grad: Value) -> Value:
    """mean's gradient: the gradient spread over the reduced elements, divided by their
    count (PyTorch's ``mean_backward``: an empty dim list, like None, means every dim)."""
    x = node.inputs()[0]
    facts = {} if _over_everything(node) else _run_time_facts(emit, node)
    spread = emit.op("aten::expand", restore_dims(emit, node, grad, facts), emit.size(x), False)
    count: int | Value | None = None if _over_everything(node) else mean_count(node)
    if _over_everything(node):
        sizes = full_size(x)
        count = math.prod(sizes) if sizes is not None else None
    if count is None:
        count = emit.op("aten::numel", x)
        if not _over_everything(node):
            count = emit.op("aten::floordiv", count, emit.op("aten::numel", grad))
    return emit.op("aten::div", spread, count)


@formula(*_VAR_MEAN, forward=_var_forward, supports=_var_supported)
def var_mean(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """var's gradient of the first result plus mean's of the second (``var_mean_backward``);
    a result whose gradient is undefined adds nothing."""
    if not needs_grad(node.inputs()[0]):
        return none_grads(node)
    var_term = _if_defined(emit, grads[0], lambda: _var_grad(emit, node, grads[0]))
    mean_term = _if_defined(emit, grads[1], lambda: _mean_grad(emit, node, grads[1]))
    if var_term is None or mean_term is None:
        return none_grads(node, var_term if mean_term is None else mean_term)
    return none_grads(node, emit.op("prim::AutogradAdd", var_term, mean_term, types=[TensorType()]))


def _if_defined(emit: Emitter, grad: Value, build: Callable[[], Value]) -> Value | None:
    """``build()`` when ``grad`` is defined at run time, else an undefined gradient (None
    at once when it is statically undefined): an unused result's gradient is undefined."""
    if grad.node.kind() == "prim::AutogradZero":
        return None
    return emit_if(
        emit,
        emit.op("prim::AutogradAnyNonZero", grad, types=[BoolType()]),
        build,
        lambda: emit.op("prim::AutogradZero", types=[TensorType()]),
        TensorType(),
    )



# -- aten::std_mean (every overload) ------------------------------------------------------------
_STD_MEAN = ("aten::std_mean", "aten::std_mean.dim", "aten::std_mean.correction")
kernel("aten::std_mean")(kernels.std_mean)
kernel("aten::std_mean.dim")(kernels.std_mean_dim)
kernel("aten::std_mean.correction")(kernels.std_mean_correction)
shape_rule("aten::std_mean")(_var_mean_shapes)


def _std_grad(emit: Emitter, node: Node, grad: Value) -> Value:
    """std's gradient: var's of ``grad / (2 std)``, 0 where std is 0."""
    result = node.outputs()[0]
    scaled = emit.op("aten::div", grad, emit.op("aten::mul", result, 2))
    scaled = emit.op("aten::masked_fill", scaled, emit.op("aten::eq", result, 0), 0)
    return _var_grad(emit, node, scaled)


@formula(*_STD_MEAN, forward=_var_forward, supports=_var_supported)
def std_mean(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """std's gradient of the first result plus mean's of the second (``std_mean_backward``)."""
    if not needs_grad(node.inputs()[0]):
        return none_grads(node)
    std_term = _if_defined(emit, grads[0], lambda: _std_grad(emit, node, grads[0]))
    mean_term = _if_defined(emit, grads[1], lambda: _mean_grad(emit, node, grads[1]))
    if std_term is None or mean_term is None:
        return none_grads(node, std_term if mean_term is None else mean_term)
    return none_grads(node, emit.op("prim::AutogradAdd", std_term, mean_term, types=[TensorType()]))

# -- aten::logsumexp --------------------------------------------------------------------------
kernel("aten::logsumexp")(kernels.logsumexp)


@shape_rule("aten::logsumexp")
def _logsumexp_shapes(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    dtype = self.scalar_type
    return reduction_shapes(args, dtype and to_float(dtype))


@formula("aten::logsumexp", forward=_dims_forward)
def logsumexp(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``grad * exp(x - result)``, the reduced dims put back in both."""
    x = node.inputs()[0]
    if not needs_grad(x):
        return none_grads(node)
    g = restore_dims(emit, node, grads[0], saved)
    result = restore_dims(emit, node, node.output(), saved)
    return none_grads(node, emit.op("aten::mul", g, emit.op("aten::exp", emit.op("aten::sub", x, result))))


# -- aten::nanmean (its shape rule is sum's) ---------------------------------------------------
kernel("aten::nanmean")(kernels.nanmean)
shape_rule("aten::nanmean")(sum_shapes)


def _nanmean_forward(emit: Emitter, node: Node) -> Saved:
    x = node.inputs()[0]
    if not needs_grad(x):
        return {}
    dtype = _arg(node, "dtype")
    saved: Saved = {"self_size": size_of(emit, x)}
    if not is_none(dtype):
        known = dtype_index(x)
        saved["self_dtype"] = dtype_of(emit, x) if known is None else emit.const(known)
    return saved


@formula("aten::nanmean", forward=_nanmean_forward)
def nanmean(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``expand(grad / count) * (x is not NaN)``; count has the keepdim shape, so the
    gradient is reshaped to it (this puts the reduced dims back, constant or not)."""
    x = node.inputs()[0]
    if not needs_grad(x):
        return none_grads(node)
    present = emit.op("aten::eq", x, x)  # False exactly at the NaNs
    dim = _arg(node, "dim")
    count = emit.op("aten::sum", present, None if dim is None else dim, True, None)
    g = cast_back(emit, grads[0], saved.get("self_dtype"))
    share = emit.op("aten::div", emit.op("aten::reshape", g, emit.size(count)), count)
    spread = emit.op("aten::expand", share, saved["self_size"], False)
    return none_grads(node, emit.op("aten::mul", spread, present))


# -- aten::any, all (on tensors, and TorchScript's builtins on lists) --------------------------
kernel("aten::any")(kernels.any_)
kernel("aten::any.dim", "aten::any.dims")(kernels.any_dim)
kernel("aten::all")(kernels.all_)
kernel("aten::all.dim", "aten::all.dims")(kernels.all_dim)
kernel("aten::any.str", "aten::any.int", "aten::any.float", "aten::any.bool")(kernels.any_list)
kernel("aten::all.int", "aten::all.float", "aten::all.bool")(kernels.all_list)
no_gradient(
    "aten::any", "aten::any.dim", "aten::any.dims", "aten::all", "aten::all.dim", "aten::all.dims",
    "aten::any.str", "aten::any.int", "aten::any.float", "aten::any.bool",
    "aten::all.int", "aten::all.float", "aten::all.bool",
    reason="any/all: their results are booleans, which carry no gradient",
)


@shape_rule("aten::any", "aten::all")
def _any_shapes(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    dtype = "Byte" if self.scalar_type == "Byte" else "Bool"
    if args.value(1, None) == []:  # any.dims(self, []) reduces nothing
        return [fresh(dtype, self.sizes, self.device)]
    return reduction_shapes(args, dtype)



# == Issue 22: counts, searches, histograms and unique (kernels/statistics.py) ==================
# Their shape rules run the kernel on stand-in inputs (ops/shape_by_kernel.py). Their results are
# indices and counts, or (histc, histogram, histogramdd, unique's values) ones PyTorch gives no
# derivative for: its autograd raises "the derivative for ... is not implemented".
_INDICES = "its result holds indices or counts (integers), which carry no gradient"


def _not_implemented(op: str) -> str:
    return f"PyTorch has no derivative for it (the derivative for '{op}' is not implemented)"


def per_overload(table: dict[str, Callable[..., object]], multi: bool = False) -> ShapeRule:
    """A shape rule running the kernel of the node's overload on stand-ins (``multi``: one
    type per output)."""
    rules = {name: (by_kernel_outputs(fn) if multi else by_kernel(fn)) for name, fn in table.items()}

    def rule(args: NodeArgs) -> RuleResult:
        resolved = args.node.maybe_schema()
        chosen = rules.get(resolved.qualified_name) if resolved is not None else None
        return None if chosen is None else chosen(args)

    return rule


def declare_by_kernel(table: dict[str, Callable[..., object]], reason: str | None, multi: bool = False) -> None:
    """Kernels, shape rules per kind, and (``reason``) no gradient, for the overloads of ``table``."""
    kinds: dict[str, dict[str, Callable[..., object]]] = {}
    for name, fn in table.items():
        kernel(name)(fn)
        if reason is not None:
            no_gradient(name, reason=reason)
        kinds.setdefault(name.split(".")[0], {})[name] = fn
    for kind, fns in kinds.items():
        shape_rule(kind)(per_overload(fns, multi))


declare_by_kernel({
    "aten::count_nonzero": kernels.count_nonzero,
    "aten::count_nonzero.dim_IntList": kernels.count_nonzero_dims,
    "aten::searchsorted.Tensor": kernels.searchsorted,
    "aten::searchsorted.Scalar": kernels.searchsorted_scalar,
    "aten::bucketize.Tensor": kernels.bucketize,
    "aten::bucketize.Scalar": kernels.bucketize_scalar,
}, _INDICES)
declare_by_kernel({"aten::histc": kernels.histc}, _not_implemented("histc"))
declare_by_kernel({
    "aten::histogram.bin_ct": kernels.histogram_bin_ct,
    "aten::histogram.bins_tensor": kernels.histogram_bins_tensor,
}, _not_implemented("histogram"), multi=True)
declare_by_kernel({
    "aten::histogramdd": kernels.histogramdd,
    "aten::histogramdd.int_bins": kernels.histogramdd_int_bins,
    "aten::histogramdd.TensorList_bins": kernels.histogramdd_tensor_bins,
}, _not_implemented("histogramdd"), multi=True)
# The unique family's sizes depend on the values: their rules say only what the inputs fix.
for _name, _fn in (("aten::_unique2", kernels.unique2), ("aten::unique_consecutive", kernels.unique_consecutive),
                   ("aten::unique_dim", kernels.unique_dim)):
    kernel(_name)(_fn)
    no_gradient(_name, reason=_not_implemented(_name.split("::")[1]))


def _asked(args: NodeArgs, i: int) -> bool | None:
    value = args.value(i, None)
    return value if isinstance(value, bool) else None


@shape_rule("aten::_unique2", "aten::unique_consecutive", "aten::unique_dim")
def _unique_shapes(args: NodeArgs) -> RuleResult:
    """values: self's dtype, the unique count unknown; inverse: self's shape (or the dim's
    length) when asked for, else empty; counts: the unique count, or empty."""
    self = args.tensor(0)
    if self is None:
        return None
    kind, device = args.node.kind(), self.device
    rank = len(self.sizes) if self.sizes is not None else None
    if kind == "aten::unique_dim" or (kind == "aten::unique_consecutive" and not args.is_none(3)):
        dim = args.int_value(1 if kind == "aten::unique_dim" else 3)
        axis = None if dim is None or rank is None else dim % max(rank, 1)
        sizes = None if axis is None else tuple(None if a == axis else s for a, s in enumerate(self.sizes))
        length = None if axis is None else (self.sizes[axis],)
        return [fresh(self.scalar_type, sizes, device), fresh("Long", length or (None,), device),
                fresh("Long", (None,), device)]
    inverse_at, counts_at = (2, 3) if kind == "aten::_unique2" else (1, 2)
    inverse, counts = _asked(args, inverse_at), _asked(args, counts_at)
    return [
        fresh(self.scalar_type, (None,), device),
        fresh("Long", None if inverse is None else (self.sizes if inverse else (0,)), device),
        fresh("Long", None if counts is None else ((None,) if counts else (0,)), device),
    ]


# -- aten::quantile, nanquantile (q a tensor or a float) ------------------------------------------
# ATen sorts each reduced row, gathers the values at the ranks below and above each quantile and
# lerps between them; the gradient goes back through lerp, gather and sort (a backward kernel),
# to the input only: PyTorch's ranks and weights carry no gradient to q.
for _op in ("quantile", "nanquantile"):
    kernel(f"aten::{_op}", f"aten::{_op}.scalar")(getattr(kernels, _op))
    shape_rule(f"aten::{_op}")(per_overload({
        f"aten::{_op}": getattr(kernels, _op), f"aten::{_op}.scalar": getattr(kernels, _op)}))
    for _overload, _q, _inputs in (("", "Tensor q", (0, 1)), (".scalar", "float q", (0,))):
        _backward = f"{_op}{'_scalar' if _overload else ''}_backward"
        schema(backward_schema(_backward, f"Tensor self, {_q}, int? dim, bool keepdim, str interpolation",
                               len(_inputs)))
        kernel(f"gradview::{_backward}")(getattr(kernels, _backward))
        no_gradient(f"gradview::{_backward}", reason=BACKWARD_KERNEL)
        shape_rule(f"gradview::{_backward}")(grads_like(*_inputs))
        formula(f"aten::{_op}{_overload}")(calls_backward(f"gradview::{_backward}", _inputs))



# -- aten::cov, corrcoef ----------------------------------------------------------------------------
# Correlation.cpp's composites; their gradients reverse its steps in a backward kernel (cov's
# aweights get theirs too; fweights are integers).
kernel("aten::cov")(kernels.cov)
kernel("aten::corrcoef")(kernels.corrcoef)
shape_rule("aten::cov")(by_kernel(kernels.cov))
shape_rule("aten::corrcoef")(by_kernel(kernels.corrcoef))
schema(backward_schema("cov_backward", "Tensor self, int correction, Tensor? fweights, Tensor? aweights", 2))
schema(backward_schema("corrcoef_backward", "Tensor self", 1))
kernel("gradview::cov_backward")(kernels.cov_backward)
kernel("gradview::corrcoef_backward")(kernels.corrcoef_backward)
no_gradient("gradview::cov_backward", "gradview::corrcoef_backward", reason=BACKWARD_KERNEL)
shape_rule("gradview::cov_backward")(grads_like(0, 3))
shape_rule("gradview::corrcoef_backward")(grads_like(0))
formula("aten::cov")(calls_backward("gradview::cov_backward", (0, 3)))
formula("aten::corrcoef")(calls_backward("gradview::corrcoef_backward", (0,)))
