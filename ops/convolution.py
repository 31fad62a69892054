"""Convolutions (1-d, 2-d and 3-d; strided, padded, dilated, grouped, transposed) and their backward.

A convolution slides a kernel over the input: output position ``o`` of output
channel ``co`` is ``sum over ci, k of w[co, ci, k] * x[ci, o * stride + k * dilation - padding]``
plus ``bias[co]``. The kernels (``kernels/convolution.py``) do it as im2col + one
matrix product.

**Shapes.** ``[N, C_out, *O]`` with ``O = (S + 2p - d(k - 1) - 1) // s + 1`` per
spatial dim, or for a transposed convolution ``(S - 1)s - 2p + d(k - 1) +
output_padding + 1``; ``padding='same'`` keeps ``S``, ``'valid'`` is ``p = 0``.
``conv1d``/``conv2d`` accept an unbatched ``[C, *S]`` input and return ``[C_out, *O]``.
Results are laid out as PyTorch's CPU kernels allocate them: channels-last when
the input is, contiguous otherwise (:func:`gradview.ops.nn.like_input`).

**Gradients.** ``y = conv(x, w) + b`` is linear in ``x`` and in ``w``
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

(``<ggx, dF/dx^T g> = <F(ggx, w), g>``, and the same for ``w``.) The forward
of ``gradview::conv_backward``'s own backward is ``gradview::conv``: conv1d,
conv2d or conv3d by the weight's rank.
"""

from __future__ import annotations

from gradview.ir import Node, Value
from gradview.ir.types import TensorType
from gradview.kernels import convolution as conv_kernels

from .nn import backward_results, dim_size, like_input
from .registry import Emitter, formula, kernel, schema, shape_rule
from .shape_toolkit import NodeArgs, RuleResult, Sizes, fresh
from .static_info import input_at, is_none, needs_grad

__all__: list[str] = []

Saved = dict[str, Value]
Grads = list[Value]


# -- shared by the shape rules ---------------------------------------------------------------------
def _expand(values: list[int | None] | None, dims: int) -> list[int | None] | None:
    if values is None:
        return None
    if len(values) == 1:
        return values * dims
    return values if len(values) == dims else None


def _conv_sizes(
    x: TensorType, w: TensorType, stride: list | None, padding: list | str | None, dilation: list | None,
    transposed: bool | None, output_padding: list | None, groups: int | None, batched: bool = True,
) -> Sizes | None:
    """The output sizes of a convolution (unknown entries None); None if the rank is unknown."""
    if w.sizes is None or x.sizes is None:
        return None
    dims = len(w.sizes) - 2
    lead: Sizes
    if batched:
        if len(x.sizes) != dims + 2:
            return None
        lead, spatial = (x.sizes[0],), x.sizes[2:]
    else:
        lead, spatial = (), x.sizes[1:]
    if transposed is None:
        return (*lead, None, *([None] * dims))
    out_channels = w.sizes[1] * groups if transposed and w.sizes[1] is not None and groups is not None else (
        None if transposed else w.sizes[0]
    )
    s, d = _expand(stride, dims), _expand(dilation, dims)
    o = _expand(output_padding, dims) if transposed else [0] * dims
    sizes: list[int | None] = []
    for i in range(dims):
        size, k = spatial[i], w.sizes[2 + i]
        if padding == "same":
            sizes.append(size)
            continue
        p = [0] * dims if padding == "valid" else _expand(padding if isinstance(padding, list) else None, dims)
        if None in (size, k) or s is None or d is None or p is None or o is None or None in (s[i], d[i], p[i], o[i]):
            sizes.append(None)
        elif transposed:
            sizes.append((size - 1) * s[i] - 2 * p[i] + d[i] * (k - 1) + o[i] + 1)  # type: ignore[operator]
        else:
            sizes.append((size + 2 * p[i] - d[i] * (k - 1) - 1) // s[i] + 1)  # type: ignore[operator]
    return (*lead, out_channels, *sizes)


# -- shared by the formulas ------------------------------------------------------------------------
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


# -- aten::convolution, _convolution ---------------------------------------------------------------
kernel("aten::convolution")(conv_kernels.convolution)
kernel("aten::_convolution", "aten::_convolution.deprecated")(conv_kernels.traced_convolution)


@shape_rule("aten::convolution", "aten::_convolution")
def _convolution(args: NodeArgs) -> RuleResult:
    x, w = args.tensor(0), args.tensor(1)
    if x is None or w is None:
        return None
    transposed = args.value(6, None)
    sizes = _conv_sizes(
        x, w, args.int_list(3), args.int_list(4), args.int_list(5),
        transposed if isinstance(transposed, bool) else None, args.int_list(7), args.int_value(8),
    )
    return [like_input(x, sizes)]


@formula("aten::convolution", "aten::_convolution", "aten::_convolution.deprecated")
def convolution(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    """(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups, ...)."""
    mask = _mask(node, 2)
    if not any(mask) or _absent(grads[0]):
        return [None] * len(node.inputs())
    x, w, _, *params = node.inputs()[:9]
    result = emit.op("aten::convolution_backward", grads[0], x, w, None, *params, mask)
    return _place(node, mask, result, (0, 1, 2))


# -- aten::conv1d, conv2d, _convolution_mode, gradview::conv ---------------------------------------
kernel("aten::conv1d", "aten::conv1d.padding")(conv_kernels.conv1d)
kernel("aten::conv2d", "aten::conv2d.padding")(conv_kernels.conv2d)
kernel("aten::_convolution_mode")(conv_kernels.convolution_mode)
# conv1d/2d/3d by the weight's rank: the forward that conv_backward's own backward convolves with.
schema(
    "gradview::conv(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, "
    "SymInt[] dilation, SymInt groups) -> Tensor",
    "gradview::conv.padding(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, str padding, "
    "SymInt[] dilation, SymInt groups) -> Tensor",
)
kernel("gradview::conv", "gradview::conv.padding")(conv_kernels.conv)


@shape_rule("aten::conv1d", "aten::conv2d", "aten::_convolution_mode", "gradview::conv")
def _conv(args: NodeArgs) -> RuleResult:
    """conv*d(input, weight, bias, stride, padding (ints or 'same'/'valid'), dilation, groups);
    hand-written IR may leave out the trailing defaults."""
    x, w = args.tensor(0), args.tensor(1)
    if x is None or w is None:
        return None
    padding = args.value(4, [0])
    if not isinstance(padding, str):
        padding = args.int_list(4) if len(args) > 4 else [0]
    dims = len(w.sizes) - 2 if w.sizes is not None else None
    batched = not (dims is not None and x.sizes is not None and len(x.sizes) == dims + 1)
    stride = args.int_list(3) if len(args) > 3 else [1]
    dilation = args.int_list(5) if len(args) > 5 else [1]
    sizes = _conv_sizes(x, w, stride, padding, dilation, False, [0], 1, batched)
    return [like_input(x, sizes)]


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


# -- aten::_slow_conv2d_forward --------------------------------------------------------------------
kernel("aten::_slow_conv2d_forward")(conv_kernels.slow_conv2d_forward)


@shape_rule("aten::_slow_conv2d_forward")
def _slow_conv2d(args: NodeArgs) -> RuleResult:
    x, w = args.tensor(0), args.tensor(1)
    if x is None or w is None:
        return None
    sizes = _conv_sizes(x, w, args.int_list(4), args.int_list(5), [1], False, [0], 1)
    return [like_input(x, sizes)]


@formula("aten::_slow_conv2d_forward")
def slow_conv2d_forward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    """_slow_conv2d_forward(self, weight, kernel_size, bias, stride, padding)."""
    mask = _mask(node, 3)
    if not any(mask) or _absent(grads[0]):
        return [None] * len(node.inputs())
    x, w, kernel, _, stride, padding = node.inputs()
    result = emit.op("aten::_slow_conv2d_backward", grads[0], x, w, kernel, stride, padding, mask)
    return _place(node, mask, result, (0, 1, 3))


# -- the backward kernels, and their gradients (double backward) -----------------------------------
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


# -- aten::convolution_backward --------------------------------------------------------------------
kernel("aten::convolution_backward")(conv_kernels.convolution_backward)


@shape_rule("aten::convolution_backward")
def _convolution_backward(args: NodeArgs) -> RuleResult:
    """(grad_input, grad_weight, grad_bias): the input's, the weight's and [C_out] sizes."""
    grad, x, w = args.tensor(0), args.tensor(1), args.tensor(2)
    if x is None or w is None or grad is None:
        return None
    bias = fresh(grad.scalar_type, (dim_size(grad, 1),), grad.device)
    return backward_results(args, 10, like_input(x, x.sizes, grad.scalar_type), like_input(w, w.sizes), bias)


@formula("aten::convolution_backward")
def convolution_backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    """(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed, output_padding, groups, mask)."""
    params = list(node.inputs()[4:10])
    return _double_backward(emit, node, grads, "aten::convolution", "aten::convolution_backward", params)


# -- aten::_slow_conv2d_backward.output_mask -------------------------------------------------------
kernel("aten::_slow_conv2d_backward.output_mask")(conv_kernels.slow_conv2d_backward)


@shape_rule("aten::_slow_conv2d_backward")
def _slow_conv2d_backward(args: NodeArgs) -> RuleResult:
    grad, x, w = args.tensor(0), args.tensor(1), args.tensor(2)
    if x is None or w is None or grad is None:
        return None
    bias = fresh(grad.scalar_type, (dim_size(w, 0),), grad.device)
    return backward_results(args, 6, like_input(x, x.sizes, grad.scalar_type), like_input(w, w.sizes), bias)


@formula("aten::_slow_conv2d_backward.output_mask")
def slow_conv2d_backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    """(grad_output, self, weight, kernel_size, stride, padding, output_mask): no dilation, no groups."""
    stride, padding = node.inputs()[4:6]
    params = [stride, padding, [1, 1], False, [0, 0], 1]
    return _double_backward(emit, node, grads, "aten::convolution", "aten::convolution_backward", params)


# -- gradview::conv_backward -----------------------------------------------------------------------
# The backward of conv1d/conv2d/_convolution_mode (unbatched inputs, 'same' padding).
schema(
    "gradview::conv_backward(Tensor grad_output, Tensor input, Tensor weight, SymInt[] stride, "
    "SymInt[] padding, SymInt[] dilation, SymInt groups, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
    "gradview::conv_backward.padding(Tensor grad_output, Tensor input, Tensor weight, SymInt[] stride, "
    "str padding, SymInt[] dilation, SymInt groups, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
)
kernel("gradview::conv_backward", "gradview::conv_backward.padding")(conv_kernels.conv_backward)


@shape_rule("gradview::conv_backward")
def _conv_backward(args: NodeArgs) -> RuleResult:
    """(grad_output, input, weight, stride, padding, dilation, groups, output_mask)."""
    grad, x, w = args.tensor(0), args.tensor(1), args.tensor(2)
    if x is None or w is None or grad is None:
        return None
    bias = fresh(grad.scalar_type, (dim_size(w, 0),), grad.device)
    return backward_results(args, 7, like_input(x, x.sizes, grad.scalar_type), like_input(w, w.sizes), bias)


@formula("gradview::conv_backward", "gradview::conv_backward.padding")
def conv_backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    """(grad_output, input, weight, stride, padding, dilation, groups, output_mask)."""
    params = list(node.inputs()[3:7])
    return _double_backward(emit, node, grads, "gradview::conv", "gradview::conv_backward", params)
