"""Gradient formulas of group norm and of batch norm's ``_native_batch_norm_legit`` forms.

**group_norm** normalizes each (sample, group) slice of an (N, C, *) input,
``xhat = (x - mean[n, g]) * rstd[n, g]``, then ``y = xhat * weight[c] +
bias[c]``. ``native_group_norm_backward(g, x, mean, rstd, weight, N, C, HxW,
group, mask)`` gives the input, weight and bias gradients (layer norm's
formula, per group). ``native_group_norm`` returns ``mean`` and ``rstd``;
``group_norm`` does not, so its backward recomputes them from the input (one
cheap reduction) rather than capturing two more tensors, as nn.py does for
layer_norm. N, C and HxW come from the input's type, or from its size at run
time.

**_native_batch_norm_legit** is ``native_batch_norm`` under another name
(same inputs, same outputs), so it shares nn.py's formula; ``.no_stats``
normalizes with the batch statistics it returns, ``_no_training`` with the
running ones. All end in ``native_batch_norm_backward``.

``mean``/``rstd`` and ``save_mean``/``save_invstd`` are not differentiable
outputs (PyTorch's rule): gradients reaching them are ignored. The backward
kernel ``native_group_norm_backward`` has no derivative in PyTorch (its
autograd raises), and neither here.
"""

from __future__ import annotations

from gradview.ir import Node, Value
from gradview.ir.types import IntType
from gradview.ops.registry import Emitter, formula, no_gradient
from gradview.ops.static_info import full_size, input_at, none_grads

from .nn import _batch_norm, _mask, _no_output_gradient, _optional, _results

Saved = dict[str, Value]
Grads = list[Value]


# -- group norm --------------------------------------------------------------------------------------
def _group_sizes(emit: Emitter, x: Value) -> tuple[int | Value, int | Value, int | Value]:
    """(N, C, HxW) of an (N, C, *) input: constants from its type, else computed from its size."""
    sizes = full_size(x)
    if sizes is not None and len(sizes) >= 2:
        hxw = 1
        for size in sizes[2:]:
            hxw *= size
        return sizes[0], sizes[1], hxw
    shape = emit.size(x)
    n, c = emit.op("aten::__getitem__", shape, 0), emit.op("aten::__getitem__", shape, 1)
    per_sample = emit.op("aten::mul", n, c)
    # numel / (N * C), with N * C = 0 (an empty input) read as 1.
    divisor = emit.op("prim::max", per_sample, 1, types=[IntType()])
    return n, c, emit.op("aten::floordiv", emit.op("aten::numel", x), divisor)


@formula("aten::group_norm")
def group_norm(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    """group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True)."""
    x, groups = node.inputs()[:2]
    weight, bias = _optional(input_at(node, 2)), _optional(input_at(node, 3))
    mask = _mask(x, weight, bias)
    if not any(mask) or _no_output_gradient(grads[0]):
        return none_grads(node)
    eps = input_at(node, 4)
    n, c, hxw = _group_sizes(emit, x)
    _, mean, rstd = emit.op("aten::native_group_norm", x, None, None, n, c, hxw, groups, 1e-5 if eps is None else eps)
    result = emit.op(
        "aten::native_group_norm_backward", grads[0], x, mean, rstd, weight if mask[0] else None, n, c, hxw, groups,
        mask,
    )
    return _results(node, mask, result, (0, 2, 3))


@formula("aten::native_group_norm")
def native_group_norm(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    """native_group_norm(input, weight, bias, N, C, HxW, group, eps) -> (output, mean, rstd)."""
    x, weight, bias, n, c, hxw, groups = node.inputs()[:7]
    weight, bias = _optional(weight), _optional(bias)
    mask = _mask(x, weight, bias)
    if not any(mask) or _no_output_gradient(grads[0]):
        return none_grads(node)
    _, mean, rstd = node.outputs()
    result = emit.op(
        "aten::native_group_norm_backward", grads[0], x, mean, rstd, weight if mask[0] else None, n, c, hxw, groups,
        mask,
    )
    return _results(node, mask, result, (0, 1, 2))


# -- batch norm, the _legit forms ------------------------------------------------------------------------
@formula("aten::_native_batch_norm_legit")
def native_batch_norm_legit(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    """Inputs and outputs are native_batch_norm's."""
    _, mean, invstd = node.outputs()
    return _batch_norm(emit, node, grads[0], (mean, invstd))


@formula("aten::_native_batch_norm_legit.no_stats")
def native_batch_norm_legit_no_stats(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    """(input, weight, bias, training, momentum, eps): the batch statistics it returns."""
    x, weight, bias, training, _, eps = node.inputs()
    weight, bias = _optional(weight), _optional(bias)
    mask = _mask(x, weight, bias)
    if not any(mask) or _no_output_gradient(grads[0]):
        return none_grads(node)
    _, mean, invstd = node.outputs()
    result = emit.op(
        "aten::native_batch_norm_backward", grads[0], x, weight if mask[0] else None, None, None, mean, invstd,
        training, eps, mask,
    )
    return _results(node, mask, result, (0, 1, 2))


@formula("aten::_native_batch_norm_legit_no_training")
def native_batch_norm_legit_no_training(
    emit: Emitter, node: Node, saved: Saved, grads: Grads
) -> list[Value | None]:
    """(input, weight, bias, running_mean, running_var, momentum, eps): evaluation mode."""
    x, weight, bias, running_mean, running_var, _, eps = node.inputs()
    weight, bias = _optional(weight), _optional(bias)
    mask = _mask(x, weight, bias)
    if not any(mask) or _no_output_gradient(grads[0]):
        return none_grads(node)
    result = emit.op(
        "aten::native_batch_norm_backward", grads[0], x, weight if mask[0] else None, running_mean, running_var,
        None, None, False, eps, mask,
    )
    return _results(node, mask, result, (0, 1, 2))


no_gradient(
    "aten::native_group_norm_backward",
    reason="native_group_norm_backward: PyTorch implements no derivative for it (its autograd raises too)",
)
