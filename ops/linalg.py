"""Matrix products: mm, bmm, mv, dot, matmul, addmm, linear, baddbmm and bilinear.

Kernels (``kernels/linalg.py``) follow PyTorch:
no dtype promotion between the operands, bool refused, integer products exact.

Shapes: ``matmul`` covers every rank combination the way ``torch.matmul`` does:
a 1-d operand is a vector (its dimension disappears from the result), 2-d
operands multiply as matrices and anything larger is a batch of matrices whose
batch dimensions broadcast. Products allocate contiguous results.

Gradients all rest on one identity. For ``C = A @ B`` with an incoming
gradient ``G`` (the shape of ``C``)::

    dA = G @ B^T        dB = A^T @ G

so the gradient of each operand needs the *other* operand, never the result.
A formula builds only the gradients its inputs want (``requires_grad``), so
it captures ``B`` only when ``A`` needs a gradient and vice versa.

``matmul`` is the general case and the only subtle one, because it accepts
operands of any rank:

* a 1-D operand is treated as a matrix (``[k]`` as a row ``[1, k]`` on the
  left, a column ``[k, 1]`` on the right) and the product's extra dim is
  dropped; the backward re-inserts that dim into ``G`` (``unsqueeze``),
  and the operand's gradient drops it again;
* leading (batch) dims broadcast, like an elementwise op: ``[2, 3, 4] @ [4, 5]``
  uses the same ``[4, 5]`` matrix for both batches, so its gradient is the
  sum of both batches' gradients (``_grad_sum_to_size`` back to ``[4, 5]``).

TorchScript decides those cases at run time (``AD_matmul_size``); here the
ranks in the input types decide them while the backward is built, so the
backward holds only the ops the case needs. Without ranks, matmul falls back
to two helper kernels (``gradview::matmul_grad_self``/``_other``) that decide
at run time, as TorchScript does.

``baddbmm: out = beta * self + alpha * (batch1 @ batch2)`` (batched): ``self``
gets ``beta * grad`` summed back to its (broadcast) size, ``batch1`` gets
``alpha * grad @ batch2^T`` and ``batch2`` gets ``alpha * batch1^T @ grad``
(PyTorch's derivatives.yaml; ``maybe_multiply`` skips a multiplication by 1).
``bilinear: out[o] = x1^T W[o] x2 + b[o]``: one backward kernel
(``gradview::bilinear_backward``) gives the four gradients; an ``output_mask``
from the inputs' ``requires_grad`` says which to compute.

The CUDA-only ``.dtype`` overloads (``mm.dtype``...) have kernels and shapes but
no gradient, as in PyTorch.
"""

from __future__ import annotations

from collections.abc import Callable

from gradview.ir import Node, Value
from gradview.ir.types import TensorType
from gradview.kernels import linalg as kernels

from .dtype_rules import DIM, Operand, result_type, scalar_type_name
from .gradients import BACKWARD_KERNEL
from .registry import Emitter, fast_path, formula, kernel, no_gradient, schema, shape_rule
from .shape_toolkit import NodeArgs, RuleResult, Sizes, broadcast, device_of, fresh, make_tensor
from .static_info import (
    NOT_CONSTANT,
    cast_back,
    const,
    dtype_index,
    full_size,
    input_at,
    int_list,
    is_none,
    needs_grad,
    none_grads,
    rank_of,
    size_of,
)

__all__ = ["matmul_sizes"]

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]

_CUDA_ONLY_OUT_DTYPE = (
    "a CUDA-only out_dtype overload: PyTorch implements no derivative for it "
    "(its autograd raises 'derivative for aten::mm is not implemented')"
)


# -- shared by the shape rules -----------------------------------------------------------------
def _product_dtype(*tensors: TensorType | None) -> str | None:
    return result_type([Operand(t.scalar_type, DIM) for t in tensors if t is not None])


def _out_dtype(args: NodeArgs, i: int, default: str | None) -> str | None:
    """The ``out_dtype`` argument of ``mm.dtype``-style overloads, when present."""
    if i < len(args) and str(args.type(i)) == "int":
        index = args.int_value(i)
        return scalar_type_name(index) if index is not None else None
    return default


def _ranked(t: TensorType, rank: int) -> bool:
    return t.sizes is not None and len(t.sizes) == rank


# -- shared by the formulas --------------------------------------------------------------------
def _t(emit: Emitter, x: Value, rank: int) -> Value:
    """The matrix transpose of the last two dims (``t`` for a plain matrix)."""
    return emit.op("aten::t", x) if rank == 2 else emit.op("aten::transpose", x, -1, -2)


def _if_needed(value: Value, build: Callable[[], Value]) -> Value | None:
    """``build()`` when ``value`` wants a gradient, else None (nothing emitted or captured)."""
    return build() if needs_grad(value) else None


# -- aten::mm, bmm, mv, dot (and vdot's shape) ------------------------------------------------
kernel("aten::mm")(kernels.mm)
kernel("aten::bmm")(kernels.bmm)
kernel("aten::mv")(kernels.mv)
kernel("aten::dot")(kernels.dot)
kernel("aten::vdot")(kernels.dot)  # vdot conjugates self: the same product for real tensors
kernel("aten::mm.dtype")(kernels.mm_dtype)
kernel("aten::bmm.dtype")(kernels.bmm_dtype)
no_gradient("aten::mm.dtype", "aten::bmm.dtype", reason=_CUDA_ONLY_OUT_DTYPE)


@shape_rule("aten::mm", "aten::bmm", "aten::mv", "aten::dot", "aten::vdot")
def _mm_shapes(args: NodeArgs) -> RuleResult:
    a, b = args.tensor(0), args.tensor(1)
    if a is None or b is None:
        return None
    kind = args.node.kind()
    dtype = _out_dtype(args, 2, _product_dtype(a, b))
    sizes: Sizes | None = None
    if kind == "aten::mm" and _ranked(a, 2) and _ranked(b, 2):
        sizes = (a.sizes[0], b.sizes[1])  # type: ignore[index]
    elif kind == "aten::bmm" and _ranked(a, 3) and _ranked(b, 3):
        batch = a.sizes[0] if a.sizes[0] is not None else b.sizes[0]  # type: ignore[index]
        sizes = (batch, a.sizes[1], b.sizes[2])  # type: ignore[index]
    elif kind == "aten::mv" and _ranked(a, 2):
        sizes = (a.sizes[0],)  # type: ignore[index]
    elif kind in ("aten::dot", "aten::vdot"):
        sizes = ()
    else:
        sizes = {"aten::mm": (None, None), "aten::bmm": (None,) * 3, "aten::mv": (None,)}[kind]
    return [fresh(dtype, sizes, device_of(a, b))]


@formula("aten::mm")
def mm(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    (g,) = grads
    self_, mat2 = node.inputs()
    return [
        _if_needed(self_, lambda: emit.op("aten::mm", g, emit.op("aten::t", mat2))),
        _if_needed(mat2, lambda: emit.op("aten::mm", emit.op("aten::t", self_), g)),
    ]


@formula("aten::bmm")
def bmm(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    (g,) = grads
    self_, mat2 = node.inputs()
    return [
        _if_needed(self_, lambda: emit.op("aten::bmm", g, emit.op("aten::transpose", mat2, 1, 2))),
        _if_needed(mat2, lambda: emit.op("aten::bmm", emit.op("aten::transpose", self_, 1, 2), g)),
    ]


@formula("aten::mv")
def mv(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    # y[i] = sum_j A[i, j] v[j]:  dA = outer(g, v),  dv = A^T g
    (g,) = grads
    self_, vec = node.inputs()
    return [
        _if_needed(self_, lambda: emit.op("aten::mul", emit.op("aten::unsqueeze", g, 1), vec)),
        _if_needed(vec, lambda: emit.op("aten::mv", emit.op("aten::t", self_), g)),
    ]


@formula("aten::dot", "aten::vdot")
def dot(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    (g,) = grads  # 0-d
    self_, other = node.inputs()
    return [
        _if_needed(self_, lambda: emit.op("aten::mul", g, other)),
        _if_needed(other, lambda: emit.op("aten::mul", g, self_)),
    ]


# -- aten::matmul -----------------------------------------------------------------------------
kernel("aten::matmul")(kernels.matmul)
fast_path("aten::matmul")(kernels.fast_matmul)


def matmul_sizes(a: Sizes | None, b: Sizes | None) -> Sizes | None:
    """``torch.matmul``'s result sizes; None when a rank is unknown or the ranks are invalid."""
    if a is None or b is None or not a or not b:
        return None
    if len(a) == 1 and len(b) == 1:
        return ()
    if len(a) == 2 and len(b) == 2:
        return (a[0], b[1])
    if len(a) == 1 and len(b) == 2:
        return (b[1],)
    if len(a) == 2 and len(b) == 1:
        return (a[0],)
    # Batched: a vector operand gets a dimension of 1 that the result drops again.
    left = (1,) + a if len(a) == 1 else a
    right = b + (1,) if len(b) == 1 else b
    batch = broadcast(left[:-2], right[:-2])
    if batch is None:
        return None
    rows = () if len(a) == 1 else (left[-2],)
    cols = () if len(b) == 1 else (right[-1],)
    return batch + rows + cols


@shape_rule("aten::matmul")
def _matmul_shapes(args: NodeArgs) -> RuleResult:
    a, b = args.tensor(0), args.tensor(1)
    if a is None or b is None:
        return None
    return [fresh(_product_dtype(a, b), matmul_sizes(a.sizes, b.sizes), device_of(a, b))]


def _batch_broadcasts(x: Value, other: Value) -> bool:
    """Does the other operand's batch broadcast ``x`` (both of rank >= 2)? True when unsure."""
    x_size, other_size = full_size(x), full_size(other)
    if x_size is None or other_size is None:
        return True
    x_batch, other_batch = x_size[:-2], other_size[:-2]
    if len(other_batch) > len(x_batch):
        return True
    aligned = x_batch[len(x_batch) - len(other_batch):]
    return any(a == 1 and b != 1 for a, b in zip(aligned, other_batch, strict=True))


def _needs_sum(x: Value, other: Value) -> bool:
    """Does x's gradient come out bigger than x (batch dims to sum away)?"""
    rx, ro = rank_of(x), rank_of(other)
    if rx is None or ro is None:
        return True
    if rx == 1:
        return ro > 2  # [batch..., 1, k] or [batch..., k, 1] back to [k]
    if ro == 1:
        return False  # the batch of the result is x's own batch
    return _batch_broadcasts(x, other)


def _matmul_forward(emit: Emitter, node: Node) -> Saved:
    self_, other = node.inputs()
    saved = {}
    if needs_grad(self_) and _needs_sum(self_, other):
        saved["self_size"] = size_of(emit, self_)
    if needs_grad(other) and _needs_sum(other, self_):
        saved["other_size"] = size_of(emit, other)
    return saved


def _matmul_grad_self(emit: Emitter, g: Value, b: Value, ra: int, rb: int) -> Value:
    """G @ B^T, with the 1-D cases spelled out (before summing batch dims)."""
    if ra == 1 and rb == 1:
        return emit.op("aten::mul", g, b)  # a dot product: g is 0-d
    if ra == 1 and rb == 2:
        return emit.op("aten::matmul", b, g)  # [k, n] @ [n]
    if ra == 1:
        return emit.op("aten::matmul", emit.op("aten::unsqueeze", g, -2), _t(emit, b, rb))  # [..., 1, k]
    if rb == 1:
        return emit.op("aten::mul", emit.op("aten::unsqueeze", g, -1), b)  # outer product [..., m, k]
    return emit.op("aten::matmul", g, _t(emit, b, rb))


def _matmul_grad_other(emit: Emitter, g: Value, a: Value, ra: int, rb: int) -> Value:
    """A^T @ G, likewise."""
    if ra == 1 and rb == 1:
        return emit.op("aten::mul", g, a)
    if rb == 1 and ra == 2:
        return emit.op("aten::matmul", g, a)  # [m] @ [m, k]
    if rb == 1:
        return emit.op("aten::matmul", emit.op("aten::unsqueeze", g, -2), a)  # [..., 1, k]
    if ra == 1:
        return emit.op("aten::mul", emit.op("aten::unsqueeze", a, -1), emit.op("aten::unsqueeze", g, -2))
    return emit.op("aten::matmul", _t(emit, a, ra), g)


@formula("aten::matmul", forward=_matmul_forward)
def matmul(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    (g,) = grads
    a, b = node.inputs()
    ra, rb = rank_of(a), rank_of(b)
    if ra is None or rb is None:  # decided at run time
        return [
            _if_needed(a, lambda: emit.op("gradview::matmul_grad_self", g, b, saved["self_size"])),
            _if_needed(b, lambda: emit.op("gradview::matmul_grad_other", g, a, saved["other_size"])),
        ]

    def summed(grad: Value, name: str) -> Value:
        return emit.sum_to(grad, saved[name]) if name in saved else grad

    return [
        _if_needed(a, lambda: summed(_matmul_grad_self(emit, g, b, ra, rb), "self_size")),
        _if_needed(b, lambda: summed(_matmul_grad_other(emit, g, a, ra, rb), "other_size")),
    ]


# gradview::matmul_grad_self/_other: matmul's gradients for operands of unknown rank,
# decided at run time (TorchScript's AD_matmul_size helpers, as kernels). The gradient
# has the operand's size (the int[] argument) and the incoming gradient's dtype.
schema("gradview::matmul_grad_self(Tensor grad, Tensor other, int[] self_size) -> Tensor")
schema("gradview::matmul_grad_other(Tensor grad, Tensor self, int[] other_size) -> Tensor")
kernel("gradview::matmul_grad_self")(kernels.matmul_grad_self)
kernel("gradview::matmul_grad_other")(kernels.matmul_grad_other)


# Their own gradients (double backward): each is bilinear, the vjp of ``a @ b`` for one
# operand, so by <v, vjp_a(g, b)> = <g, v @ b> the gradient for ``g`` is a matmul and the
# gradient for the other operand is the other helper (whatever the ranks).
def _save_operand_size(emit: Emitter, node: Node) -> Saved:
    operand = node.inputs()[1]
    return {"size": size_of(emit, operand)} if needs_grad(operand) else {}


@formula("gradview::matmul_grad_self", forward=_save_operand_size)
def matmul_grad_self(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    g, b, _ = node.inputs()
    (v,) = grads  # the size of self
    return [
        _if_needed(g, lambda: emit.op("aten::matmul", v, b)),
        _if_needed(b, lambda: emit.op("gradview::matmul_grad_other", g, v, saved["size"])),
        None,
    ]


@formula("gradview::matmul_grad_other", forward=_save_operand_size)
def matmul_grad_other(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    g, a, _ = node.inputs()
    (v,) = grads  # the size of other
    return [
        _if_needed(g, lambda: emit.op("aten::matmul", a, v)),
        _if_needed(a, lambda: emit.op("gradview::matmul_grad_self", g, v, saved["size"])),
        None,
    ]


@shape_rule("gradview::matmul_grad_self", "gradview::matmul_grad_other")
def _matmul_grad_shapes(args: NodeArgs) -> RuleResult:
    grad = args.tensor(0)
    if grad is None:
        return None
    values = args.int_list(2)
    sizes = tuple(values) if values is not None else None
    return [make_tensor(grad.scalar_type, sizes, None, grad.device)]


# -- aten::addmm ------------------------------------------------------------------------------
kernel("aten::addmm")(kernels.addmm)
kernel("aten::addmm.dtype")(kernels.addmm_dtype)
no_gradient("aten::addmm.dtype", reason=_CUDA_ONLY_OUT_DTYPE)


@shape_rule("aten::addmm")
def _addmm_shapes(args: NodeArgs) -> RuleResult:
    self, m1, m2 = args.tensor(0), args.tensor(1), args.tensor(2)
    if self is None or m1 is None or m2 is None:
        return None
    rows = m1.sizes[0] if _ranked(m1, 2) else None  # type: ignore[index]
    cols = m2.sizes[1] if _ranked(m2, 2) else None  # type: ignore[index]
    dtype = _product_dtype(self, m1, m2)
    if len(args) == 6:  # addmm.dtype(self, mat1, mat2, out_dtype, beta, alpha)
        dtype = _out_dtype(args, 3, dtype)
    return [fresh(dtype, (rows, cols), device_of(m1, m2, self))]


def _addmm_forward(emit: Emitter, node: Node) -> Saved:
    self_ = node.inputs()[0]
    return {"self_size": emit.size_if_not_equal(self_, node.output())} if needs_grad(self_) else {}


def _scaled(emit: Emitter, x: Value, scale: Value | None) -> Value:
    """``x * scale``, skipped for a scale of 1 (or a left-out default of 1)."""
    return x if scale is None or const(scale) == 1 else emit.op("aten::mul", x, scale)


@formula("aten::addmm", forward=_addmm_forward)
def addmm(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    # beta * self + alpha * (mat1 @ mat2); self broadcasts to the product's shape.
    (g,) = grads
    self_, mat1, mat2 = node.inputs()[:3]
    beta, alpha = input_at(node, 3), input_at(node, 4)
    return none_grads(
        node,
        _if_needed(self_, lambda: emit.sum_to(_scaled(emit, g, beta), saved["self_size"])),
        _if_needed(mat1, lambda: _scaled(emit, emit.op("aten::mm", g, emit.op("aten::t", mat2)), alpha)),
        _if_needed(mat2, lambda: _scaled(emit, emit.op("aten::mm", emit.op("aten::t", mat1), g), alpha)),
    )


# -- aten::linear -----------------------------------------------------------------------------
kernel("aten::linear")(kernels.linear)


@shape_rule("aten::linear")
def _linear_shapes(args: NodeArgs) -> RuleResult:
    x, weight, bias = args.tensor(0), args.tensor(1), args.tensor(2)
    if x is None or weight is None:
        return None
    dtype = _product_dtype(x, weight, bias)
    if x.sizes is None or weight.sizes is None or not x.sizes or len(weight.sizes) not in (1, 2):
        return [fresh(dtype, None, device_of(x, weight))]
    out = (weight.sizes[0],) if len(weight.sizes) == 2 else ()
    return [fresh(dtype, x.sizes[:-1] + out, device_of(x, weight))]


def _linear_forward(emit: Emitter, node: Node) -> Saved:
    weight, bias = node.inputs()[1], input_at(node, 2)
    saved: Saved = {}
    if rank_of(weight) == 1 and needs_grad(weight):
        saved["weight_size"] = size_of(emit, weight)
    # A bias of known rank but unknown sizes: capture its size (not the bias).
    if needs_grad(bias) and rank_of(bias) is not None and full_size(bias) is None:
        saved["bias_size"] = emit.size(bias)
    return saved


@formula("aten::linear", forward=_linear_forward)
def linear(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``input @ weight^T + bias``: weight is ``[out, in]`` (or ``[in]``), bias ``[out]``.

    d(input) = G @ W; d(weight) = G^T @ input with every leading dim of G and
    input flattened into rows (they all use the same weight); d(bias) sums G
    over every dim but the last. A weight of unknown rank is taken as 2-D.
    """
    (g,) = grads
    x, weight, bias = node.inputs()[0], node.inputs()[1], input_at(node, 2)
    if rank_of(weight) == 1:  # input @ w: the result is input's shape without its last dim
        g_col = emit.op("aten::unsqueeze", g, -1)
        grad_x = _if_needed(x, lambda: emit.op("aten::mul", g_col, weight))
        grad_w = _if_needed(weight, lambda: emit.sum_to(emit.op("aten::mul", g_col, x), saved["weight_size"]))
    else:
        grad_x = _if_needed(x, lambda: emit.op("aten::matmul", g, weight))
        grad_w = _if_needed(weight, lambda: _linear_grad_weight(emit, g, x, weight))
    grad_b: Value | None = None
    if needs_grad(bias) and not is_none(bias):
        assert bias is not None
        bias_size = saved.get("bias_size")
        if bias_size is None:
            known = full_size(bias)
            # A bias of unknown rank (Tensor, Tensor?) is taken as [out], the gradient's last dim.
            bias_size = emit.const(known) if known is not None else int_list(emit, [_size(emit, g, -1)])
        grad_b = emit.sum_to(g, bias_size)
    return none_grads(node, grad_x, grad_w, grad_b)


def _linear_grad_weight(emit: Emitter, g: Value, x: Value, weight: Value) -> Value:
    rank = rank_of(x)
    if rank == 1:
        return emit.op("aten::mul", emit.op("aten::unsqueeze", g, 1), x)  # outer(g, x)
    if rank == 2:
        return emit.op("aten::mm", emit.op("aten::t", g), x)
    known = full_size(weight)
    out_features = known[0] if known is not None else _size(emit, g, -1)
    in_features = known[1] if known is not None else _size(emit, x, -1)
    g_rows = emit.op("aten::reshape", g, int_list(emit, [-1, out_features]))
    x_rows = emit.op("aten::reshape", x, int_list(emit, [-1, in_features]))
    return emit.op("aten::mm", emit.op("aten::t", g_rows), x_rows)


def _size(emit: Emitter, x: Value, dim: int) -> Value:
    return emit.op("aten::size", x, dim)


# -- aten::baddbmm ----------------------------------------------------------------------------
kernel("aten::baddbmm")(kernels.baddbmm)
kernel("aten::baddbmm.dtype")(kernels.baddbmm_dtype)
no_gradient("aten::baddbmm.dtype", reason=_CUDA_ONLY_OUT_DTYPE)


@shape_rule("aten::baddbmm")
def _baddbmm_shapes(args: NodeArgs) -> RuleResult:
    self, batch1, batch2 = args.tensor(0), args.tensor(1), args.tensor(2)
    if self is None or batch1 is None or batch2 is None:
        return None
    sizes = None
    if batch1.sizes is not None and batch2.sizes is not None and len(batch1.sizes) == len(batch2.sizes) == 3:
        sizes = (batch1.sizes[0], batch1.sizes[1], batch2.sizes[2])
    dtype = batch1.scalar_type
    node_schema = args.node.maybe_schema()  # baddbmm.dtype(..., out_dtype, beta, alpha); an int beta is no dtype
    if node_schema is not None and node_schema.overload_name == "dtype":
        index = args.int_value(3)
        dtype = scalar_type_name(index) if index is not None else None
    return [fresh(dtype, sizes, batch1.device)]


def _scale(emit: Emitter, grad: Value, factor: Value | None) -> Value:
    """``grad * factor``, skipped for a constant 1 (``maybe_multiply``)."""
    if factor is None:
        return grad
    known = const(factor)
    return grad if known is not NOT_CONSTANT and known == 1 else emit.op("aten::mul", grad, factor)


def _baddbmm_forward(emit: Emitter, node: Node) -> Saved:
    self_ = node.inputs()[0]
    return {"self_size": emit.size_if_not_equal(self_, node.output())} if needs_grad(self_) else {}


@formula("aten::baddbmm", forward=_baddbmm_forward)
def baddbmm(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    node_schema = node.maybe_schema()
    assert node_schema is not None
    arguments = {arg.name: input_at(node, i) for i, arg in enumerate(node_schema.arguments)}
    self_, batch1, batch2 = arguments["self"], arguments["batch1"], arguments["batch2"]
    grad = grads[0]
    result: Result = [None] * len(node.inputs())
    if "self_size" in saved:
        result[0] = cast_back(emit, emit.sum_to(_scale(emit, grad, arguments.get("beta")), saved["self_size"]),
                              _changed_dtype(node, self_))
    alpha = arguments.get("alpha")
    if needs_grad(batch1):
        product = emit.op("aten::bmm", grad, emit.op("aten::transpose", batch2, 1, 2))
        result[1] = cast_back(emit, _scale(emit, product, alpha), _changed_dtype(node, batch1))
    if needs_grad(batch2):
        product = emit.op("aten::bmm", emit.op("aten::transpose", batch1, 1, 2), grad)
        result[2] = cast_back(emit, _scale(emit, product, alpha), _changed_dtype(node, batch2))
    return result


def _changed_dtype(node: Node, value: Value | None) -> int | None:
    """For baddbmm.dtype: the input's dtype when the result's differs (known from types)."""
    if node.kind() != "aten::baddbmm" or value is None:
        return None
    node_schema = node.maybe_schema()
    if node_schema is None or node_schema.overload_name != "dtype":
        return None
    mine, theirs = dtype_index(value), dtype_index(node.output())
    return mine if mine is not None and mine != theirs else None


# -- aten::bilinear and gradview::bilinear_backward -------------------------------------------
kernel("aten::bilinear")(kernels.bilinear)


@shape_rule("aten::bilinear")
def _bilinear_shapes(args: NodeArgs) -> RuleResult:
    input1, weight = args.tensor(0), args.tensor(2)
    if input1 is None or weight is None:
        return None
    sizes = None
    if input1.sizes is not None and weight.sizes is not None and len(weight.sizes) == 3:
        sizes = input1.sizes[:-1] + (weight.sizes[0],)
    return [fresh(weight.scalar_type, sizes, input1.device)]


@formula("aten::bilinear")
def bilinear(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    input1, input2, weight = node.inputs()[:3]
    bias = input_at(node, 3)
    has_bias = bias is not None and not is_none(bias) and needs_grad(bias)
    mask = [needs_grad(input1), needs_grad(input2), needs_grad(weight), has_bias]
    if not any(mask):
        return [None] * len(node.inputs())
    outputs = emit.op("gradview::bilinear_backward", grads[0], input1, input2, weight, mask)
    result: Result = [out if wanted else None for out, wanted in zip(outputs, mask, strict=True)]
    return result[: len(node.inputs())]


schema(
    "gradview::bilinear_backward(Tensor grad, Tensor input1, Tensor input2, Tensor weight, "
    "bool[4] output_mask) -> (Tensor, Tensor, Tensor, Tensor)"
)
kernel("gradview::bilinear_backward")(kernels.bilinear_backward)
no_gradient("gradview::bilinear_backward", reason=BACKWARD_KERNEL)


def _like(grad: TensorType, t: TensorType | None) -> TensorType:
    return fresh(grad.scalar_type, t.sizes if t is not None else None, grad.device)


@shape_rule("gradview::bilinear_backward")
def _bilinear_backward_shapes(args: NodeArgs) -> RuleResult:
    """(d input1, d input2, d weight, d bias): the bias has one entry per output feature."""
    grad, weight = args.tensor(0), args.tensor(3)
    if grad is None:
        return None
    out_features = weight.sizes[0] if weight is not None and weight.sizes else None
    bias = fresh(grad.scalar_type, (out_features,), grad.device)
    return [_like(grad, args.tensor(1)), _like(grad, args.tensor(2)), _like(grad, weight), bias]
