"""Gradient formulas of reductions: sum, mean, prod and norm.

A reduction maps many input elements to one output element, so its backward
maps each output gradient back onto every element it came from. Two steps
are common to all of them:

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
"""

from __future__ import annotations

import math

from gradview.ir import Node, Value
from gradview.ops.registry import Emitter, formula
from gradview.ops.static_info import (
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
    reduced_dims,
    reduction_supported,
    restore_reduced_dims,
    size_of,
    wrap_dim,
)

Saved = dict[str, Value]
Grads = list[Value]


def _arg(node: Node, name: str) -> Value | None:
    """The input bound to the schema argument ``name`` (None when absent)."""
    schema = node.maybe_schema()
    index = schema.argument_index(name) if schema is not None else None
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


# -- sum, mean --------------------------------------------------------------------------
@formula("aten::sum", "aten::sum.dim_IntList", forward=_reduction_forward, supports=_supported)
def sum_(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
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
def mean(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
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


# -- prod --------------------------------------------------------------------------------
@formula("aten::prod", "aten::prod.dim_int", forward=_dtype_forward, supports=_supported)
def prod(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
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


# -- norm --------------------------------------------------------------------------------
_NORMS = ("aten::norm.Scalar", "aten::norm.ScalarOpt_dim", "aten::norm.ScalarOpt_dim_dtype", "aten::norm.ScalarOpt_dtype")


@formula(*_NORMS, forward=_dtype_forward, supports=_supported)
def norm(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
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
