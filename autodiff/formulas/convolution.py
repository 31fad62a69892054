"""Gradient formulas of convolutions, and of their backward (double backward).

A convolution ``y = conv(x, w) + b`` is linear in ``x`` and in ``w``
separately, so each gradient is another convolution, which one backward
kernel computes: ``convolution_backward(g, x, w, ...)`` returns ``dx`` (the
transposed convolution of ``g`` with ``w``), ``dw`` (``g`` correlated with
``x``) and ``db = sum(g)``, each only where ``output_mask`` asks for it, so
nothing is computed for an input that needs no gradient.

* ``_slow_conv2d_forward`` is the form PyTorch's JIT differentiates; its
  formula is TorchScript's: ``_slow_conv2d_backward(g, x, w, kernel_size,
  stride, padding, mask)``.
* ``convolution`` and ``_convolution`` (what tracing records) use
  ``convolution_backward`` with the same stride, padding, dilation,
  transposed, output_padding and groups.
* ``conv1d``/``conv2d`` (numeric or ``'same'``/``'valid'`` padding, unbatched
  inputs) and ``_convolution_mode`` use ``gradview::conv_backward``, which
  settles both cases at run time.

**Double backward.** ``convolution_backward`` is bilinear too. Writing ``F``
for the forward convolution, its outputs are ``dx = dF/dx^T g`` and
``dw = dF/dw^T g``; given gradients ``ggx``, ``ggw``, ``ggb`` for them::

    d g = F(ggx, w) + F(x, ggw) + ggb        (ggb as F's bias)
    d x = convolution_backward(g, x, ggw)[0]
    d w = convolution_backward(g, ggx, w)[1]

(``<ggx, dF/dx^T g> = <F(ggx, w), g>``, and the same for ``w``.)
"""

from __future__ import annotations

from gradview.ir import Node, Value
from gradview.ops.registry import Emitter, formula
from gradview.ops.static_info import input_at, is_none, needs_grad

Saved = dict[str, Value]
Grads = list[Value]


def _optional(value: Value | None) -> Value | None:
    return None if value is None or is_none(value) else value


def _mask(node: Node, bias_index: int | None) -> list[bool]:
    """output_mask: which of input, weight, bias want a gradient."""
    bias = _optional(input_at(node, bias_index)) if bias_index is not None else None
    return [needs_grad(node.inputs()[0]), needs_grad(node.inputs()[1]), bias is not None and needs_grad(bias)]


def _place(node: Node, mask: list[bool], grads: tuple[Value, Value, Value], positions: tuple[int, ...]) -> list[Value | None]:
    """The backward kernel's (input, weight, bias) gradients at the node's input positions."""
    result: list[Value | None] = [None] * len(node.inputs())
    for wanted, grad, position in zip(mask, grads, positions, strict=True):
        if wanted:
            result[position] = grad
    return result


def _absent(grad: Value) -> bool:
    """No gradient flows into this output (statically)."""
    return grad.node.kind() == "prim::AutogradZero"


def _arg(node: Node, index: int, default: object) -> Value | object:
    """Input ``index``, or the schema default where hand-written IR left it out."""
    value = input_at(node, index)
    return default if value is None else value


# -- forward ops -------------------------------------------------------------------------------------
@formula("aten::_slow_conv2d_forward")
def slow_conv2d_forward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    """_slow_conv2d_forward(self, weight, kernel_size, bias, stride, padding)."""
    mask = _mask(node, 3)
    if not any(mask) or _absent(grads[0]):
        return [None] * len(node.inputs())
    x, w, kernel, _, stride, padding = node.inputs()
    result = emit.op("aten::_slow_conv2d_backward", grads[0], x, w, kernel, stride, padding, mask)
    return _place(node, mask, result, (0, 1, 3))


@formula("aten::convolution", "aten::_convolution", "aten::_convolution.deprecated")
def convolution(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    """(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups, ...)."""
    mask = _mask(node, 2)
    if not any(mask) or _absent(grads[0]):
        return [None] * len(node.inputs())
    x, w, _, *params = node.inputs()[:9]
    result = emit.op("aten::convolution_backward", grads[0], x, w, None, *params, mask)
    return _place(node, mask, result, (0, 1, 2))


@formula(
    "aten::conv1d", "aten::conv1d.padding", "aten::conv2d", "aten::conv2d.padding", "aten::_convolution_mode",
    "gradview::conv", "gradview::conv.padding",
)
def conv(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    """conv*d(input, weight, bias=None, stride=1, padding=0 or 'valid', dilation=1, groups=1)."""
    mask = _mask(node, 2)
    if not any(mask) or _absent(grads[0]):
        return [None] * len(node.inputs())
    x, w = node.inputs()[:2]
    string_padding = node.kind() == "aten::_convolution_mode" or node.schema().overload_name == "padding"
    padding = _arg(node, 4, "valid" if string_padding else [0])
    stride, dilation, groups = _arg(node, 3, [1]), _arg(node, 5, [1]), _arg(node, 6, 1)
    result = emit.op("gradview::conv_backward", grads[0], x, w, stride, padding, dilation, groups, mask)
    return _place(node, mask, result, (0, 1, 2))


# -- double backward ---------------------------------------------------------------------------------
def _double_backward(
    emit: Emitter, node: Node, grads: Grads, forward: str, backward: str, params: list[Value | object]
) -> list[Value | None]:
    """For a backward node (grad_output, input, weight, ...) of the convolution ``forward(input,
    weight, bias, *params)`` whose backward kernel is ``backward(g, x, w, [bias_sizes,] *params, mask)``
    (``aten::convolution_backward`` takes bias_sizes, gradview's does not)."""
    sizes: list[Value | object] = [None] if backward == "aten::convolution_backward" else []
    g, x, w = node.inputs()[:3]
    ggx, ggw, ggb = (None if _absent(grad) else grad for grad in grads)
    result: list[Value | None] = [None] * len(node.inputs())
    if needs_grad(g):
        terms = []
        if ggx is not None:
            terms.append(emit.op(forward, ggx, w, None, *params))
        if ggw is not None or ggb is not None:
            weight = ggw if ggw is not None else emit.op("aten::zeros_like", w, None, None, None, None, None)
            terms.append(emit.op(forward, x, weight, ggb, *params))
        if terms:
            result[0] = terms[0] if len(terms) == 1 else emit.op("aten::add", terms[0], terms[1], 1)
    if needs_grad(x) and ggw is not None:
        result[1] = emit.op(backward, g, x, ggw, *sizes, *params, [True, False, False])[0]
    if needs_grad(w) and ggx is not None:
        result[2] = emit.op(backward, g, ggx, w, *sizes, *params, [False, True, False])[1]
    return result


@formula("aten::convolution_backward")
def convolution_backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    """(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed, output_padding, groups, mask)."""
    params = list(node.inputs()[4:10])
    return _double_backward(emit, node, grads, "aten::convolution", "aten::convolution_backward", params)


@formula("aten::_slow_conv2d_backward.output_mask")
def slow_conv2d_backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    """(grad_output, self, weight, kernel_size, stride, padding, output_mask): no dilation, no groups."""
    stride, padding = node.inputs()[4:6]
    params = [stride, padding, [1, 1], False, [0, 0], 1]
    return _double_backward(emit, node, grads, "aten::convolution", "aten::convolution_backward", params)


@formula("gradview::conv_backward", "gradview::conv_backward.padding")
def conv_backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    """(grad_output, input, weight, stride, padding, dilation, groups, output_mask)."""
    params = list(node.inputs()[3:7])
    return _double_backward(emit, node, grads, "gradview::conv", "gradview::conv_backward", params)
