"""Gradient formulas of normalizations: softmax, log_softmax, layer_norm and batch_norm.

These backwards are long formulas, so each calls a backward kernel rather
than spelling the math out in IR, as TorchScript's own formulas do:

* **softmax** ``y = exp(x) / sum(exp(x))`` has ``dx = y * (g - sum(g * y))``
  (``_softmax_backward_data``) and **log_softmax** ``y = x - log(sum(exp(x)))``
  has ``dx = g - exp(y) * sum(g)`` (``_log_softmax_backward_data``), the sums
  along ``dim``. Both need only the *result* ``y``: the formula captures the
  result and not the input (TorchScript captures both; it reads the input's
  dtype at run time, gradview reads it from the type).
* **layer_norm** normalizes over the last dims: ``xhat = (x - mean) * rstd``,
  ``y = xhat * weight + bias``. ``native_layer_norm_backward`` needs the
  input, the weight and the forward's ``mean`` and ``rstd``. ``native_layer_norm``
  returns those; ``layer_norm`` does not, so its backward recomputes them from
  the input (one cheap reduction) instead of capturing two more tensors.
* **batch_norm** normalizes each channel over the batch and spatial dims.
  In training it uses the batch's statistics (``save_mean``/``save_invstd``,
  returned by ``native_batch_norm``, recomputed for ``batch_norm``), in
  evaluation the running ones; ``native_batch_norm_backward`` handles both.
  The backward never passes the running statistics in training mode (they
  are not needed, and the recomputation must not update them: in training
  the forward kernel writes them in place, as PyTorch's does).

The backward kernels take an ``output_mask``: which of (input, weight, bias)
need a gradient. It is decided from the inputs' ``requires_grad``, so nothing
is computed or captured for the others. ``mean``/``rstd`` and
``save_mean``/``save_invstd`` are not differentiable outputs (PyTorch's rule
too): gradients reaching them are ignored.
"""

from __future__ import annotations

from gradview.ir import Node, Value
from gradview.ops.registry import Emitter, formula
from gradview.ops.static_info import (
    NOT_CONSTANT,
    cast_back,
    const,
    dtype_index,
    dtype_of,
    input_at,
    is_none,
    needs_grad,
    none_grads,
)

Saved = dict[str, Value]
Grads = list[Value]


# -- softmax, log_softmax -------------------------------------------------------------
_HALF = 5  # ScalarType::Half


def _converts_dtype(node: Node) -> bool:
    """softmax.int(self, dim, dtype) with a dtype: the result's dtype may differ from self's."""
    return node.kind() in ("aten::softmax", "aten::log_softmax") and not is_none(input_at(node, 2))


def _half_to_float(node: Node) -> object:
    """_softmax(self, dim, half_to_float): True, False, or NOT_CONSTANT (False for softmax.int)."""
    return const(node.inputs()[2]) if node.kind().startswith("aten::_") else False


def _softmax_forward(emit: Emitter, node: Node) -> Saved:
    """Save self's dtype (an int) only when neither its type nor the result tells it."""
    x = node.inputs()[0]
    unknown = _converts_dtype(node) or _half_to_float(node) is NOT_CONSTANT
    if needs_grad(x) and dtype_index(x) is None and unknown:
        return {"self_dtype": dtype_of(emit, x)}
    return {}


def _softmax_grad(emit: Emitter, node: Node, saved: Saved, grad: Value, kernel: str) -> list[Value | None]:
    x, dim = node.inputs()[0], node.inputs()[1]
    if not needs_grad(x):
        return none_grads(node)
    result = node.output()
    # The backward kernels take self's dtype: from its type, from the forward,
    # Half for half_to_float, else the result's (which is then the same).
    x_dtype: int | Value | None = dtype_index(x)
    if x_dtype is None:
        x_dtype = saved.get("self_dtype")
    if x_dtype is None:
        x_dtype = _HALF if _half_to_float(node) is True else dtype_of(emit, result)
    grad = emit.op(kernel, grad, result, dim, x_dtype)
    if _converts_dtype(node):
        grad = cast_back(emit, grad, x_dtype)
    return none_grads(node, grad)


@formula("aten::softmax.int", "aten::_softmax", forward=_softmax_forward)
def softmax(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    return _softmax_grad(emit, node, saved, grads[0], "aten::_softmax_backward_data")


@formula("aten::log_softmax.int", "aten::_log_softmax", forward=_softmax_forward)
def log_softmax(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    return _softmax_grad(emit, node, saved, grads[0], "aten::_log_softmax_backward_data")


# -- shared by the norms ---------------------------------------------------------------------
def _optional(value: Value | None) -> Value | None:
    """An optional tensor argument, None when absent or statically None."""
    return None if value is None or is_none(value) else value


def _mask(x: Value, weight: Value | None, bias: Value | None) -> list[bool]:
    """output_mask: which of input, weight, bias want a gradient."""
    return [needs_grad(x), weight is not None and needs_grad(weight), bias is not None and needs_grad(bias)]


def _no_output_gradient(grad: Value) -> bool:
    """Statically no gradient for the normalized output (only mean/rstd, which are
    not differentiable, have users): the backward kernel would get an undefined grad."""
    return grad.node.kind() == "prim::AutogradZero"


def _results(
    node: Node, mask: list[bool], grads: tuple[Value, Value, Value], positions: tuple[int, int, int]
) -> list[Value | None]:
    """The backward kernel's three gradients placed at the inputs they belong to."""
    result: list[Value | None] = [None] * len(node.inputs())
    for wanted, grad, position in zip(mask, grads, positions, strict=True):
        if wanted:
            result[position] = grad
    return result


# -- layer norm --------------------------------------------------------------------------
def _layer_norm(emit: Emitter, node: Node, grad: Value, stats: tuple[Value, Value] | None) -> list[Value | None]:
    """layer_norm(input, normalized_shape, weight, bias, eps, ...): stats = (mean, rstd), or recompute."""
    x, shape = node.inputs()[0], node.inputs()[1]
    weight, bias = _optional(input_at(node, 2)), _optional(input_at(node, 3))
    mask = _mask(x, weight, bias)
    if not any(mask) or _no_output_gradient(grad):
        return none_grads(node)
    if stats is None:
        eps = input_at(node, 4)
        _, mean, rstd = emit.op("aten::native_layer_norm", x, shape, None, None, 1e-5 if eps is None else eps)
        stats = (mean, rstd)
    grads = emit.op(
        "aten::native_layer_norm_backward", grad, x, shape, *stats, weight if mask[0] else None, None, mask
    )
    return _results(node, mask, grads, (0, 2, 3))


@formula("aten::layer_norm")
def layer_norm(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    return _layer_norm(emit, node, grads[0], None)


@formula("aten::native_layer_norm")
def native_layer_norm(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    _, mean, rstd = node.outputs()
    return _layer_norm(emit, node, grads[0], (mean, rstd))


# -- batch norm --------------------------------------------------------------------------
def _batch_norm(emit: Emitter, node: Node, grad: Value, saved_stats: tuple[Value, Value] | None) -> list[Value | None]:
    """(native_)batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, ...)."""
    x = node.inputs()[0]
    weight, bias = _optional(node.inputs()[1]), _optional(node.inputs()[2])
    running_mean, running_var = _optional(node.inputs()[3]), _optional(node.inputs()[4])
    training_value, momentum, eps = node.inputs()[5], node.inputs()[6], node.inputs()[7]
    mask = _mask(x, weight, bias)
    if not any(mask) or _no_output_gradient(grad):
        return none_grads(node)
    training = const(training_value)
    if training is True:
        # The batch statistics; the running ones are not needed (nor updated).
        running_mean = running_var = None
        if saved_stats is None:
            _, mean, invstd = emit.op("aten::native_batch_norm", x, None, None, None, None, True, momentum, eps)
            saved_stats = (mean, invstd)
    elif training is False:
        saved_stats = None  # evaluation normalizes with the running statistics
    elif saved_stats is None:  # decided at run time: the batch statistics, used only in training
        # (recomputed without the running statistics, which a second training call would update again)
        _, mean, invstd = emit.op("aten::native_batch_norm", x, None, None, None, None, True, momentum, eps)
        saved_stats = (mean, invstd)
    mean, invstd = saved_stats if saved_stats is not None else (None, None)
    train = training_value if training is NOT_CONSTANT else bool(training)
    grads = emit.op(
        "aten::native_batch_norm_backward",
        grad, x, weight if mask[0] else None, running_mean, running_var, mean, invstd, train, eps, mask,
    )
    return _results(node, mask, grads, (0, 1, 2))


@formula("aten::batch_norm")
def batch_norm(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    return _batch_norm(emit, node, grads[0], None)


@formula("aten::native_batch_norm")
def native_batch_norm(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    _, mean, invstd = node.outputs()
    return _batch_norm(emit, node, grads[0], (mean, invstd))
