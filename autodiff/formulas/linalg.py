"""Gradient formulas of matrix products: mm, bmm, mv, dot, matmul, addmm, linear.

All of them rest on one identity. For ``C = A @ B`` with an incoming
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
"""

from __future__ import annotations

from collections.abc import Callable

from gradview.ir import Node, Value
from gradview.ops.registry import Emitter, formula
from gradview.ops.static_info import (
    const,
    full_size,
    input_at,
    int_list,
    is_none,
    needs_grad,
    none_grads,
    rank_of,
    size_of,
)

Saved = dict[str, Value]
Grads = list[Value]



def _t(emit: Emitter, x: Value, rank: int) -> Value:
    """The matrix transpose of the last two dims (``t`` for a plain matrix)."""
    return emit.op("aten::t", x) if rank == 2 else emit.op("aten::transpose", x, -1, -2)


def _if_needed(value: Value, build: Callable[[], Value]) -> Value | None:
    """``build()`` when ``value`` wants a gradient, else None (nothing emitted or captured)."""
    return build() if needs_grad(value) else None


# -- fixed-rank products ------------------------------------------------------------
@formula("aten::mm")
def mm(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    (g,) = grads
    self_, mat2 = node.inputs()
    return [
        _if_needed(self_, lambda: emit.op("aten::mm", g, emit.op("aten::t", mat2))),
        _if_needed(mat2, lambda: emit.op("aten::mm", emit.op("aten::t", self_), g)),
    ]


@formula("aten::bmm")
def bmm(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    (g,) = grads
    self_, mat2 = node.inputs()
    return [
        _if_needed(self_, lambda: emit.op("aten::bmm", g, emit.op("aten::transpose", mat2, 1, 2))),
        _if_needed(mat2, lambda: emit.op("aten::bmm", emit.op("aten::transpose", self_, 1, 2), g)),
    ]


@formula("aten::mv")
def mv(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    # y[i] = sum_j A[i, j] v[j]:  dA = outer(g, v),  dv = A^T g
    (g,) = grads
    self_, vec = node.inputs()
    return [
        _if_needed(self_, lambda: emit.op("aten::mul", emit.op("aten::unsqueeze", g, 1), vec)),
        _if_needed(vec, lambda: emit.op("aten::mv", emit.op("aten::t", self_), g)),
    ]


@formula("aten::dot")
def dot(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    (g,) = grads  # 0-d
    self_, other = node.inputs()
    return [
        _if_needed(self_, lambda: emit.op("aten::mul", g, other)),
        _if_needed(other, lambda: emit.op("aten::mul", g, self_)),
    ]


def _addmm_forward(emit: Emitter, node: Node) -> Saved:
    self_ = node.inputs()[0]
    return {"self_size": emit.size_if_not_equal(self_, node.output())} if needs_grad(self_) else {}


def _scaled(emit: Emitter, x: Value, scale: Value | None) -> Value:
    """``x * scale``, skipped for a scale of 1 (or a left-out default of 1)."""
    return x if scale is None or const(scale) == 1 else emit.op("aten::mul", x, scale)


@formula("aten::addmm", forward=_addmm_forward)
def addmm(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
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


# -- matmul -------------------------------------------------------------------------
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
def matmul(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
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


# -- linear -------------------------------------------------------------------------
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
def linear(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
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
