"""Gradient formulas of the recurrent ops: lstm_cell, gru_cell, and whole lstm / gru layers.

PyTorch's autograd differentiates these by their decomposition on the CPU:
one step is two matrix products, a split into gates, sigmoids and tanhs,
products and sums (see kernels/recurrent_cells.py for the lines), and a
layer is that step repeated along the sequence. Its gradient is
backpropagation through time: the steps' backwards in reverse order, each
adding into the same weights' gradients.

Spelled out in IR, a layer's backward would be a copy of that loop per
time step and per layer, fixed to one sequence length. Each formula emits
one backward kernel instead (``gradview::lstm_backward``...), as the
normalizations do: the kernel recomputes the forward's gate values from the
inputs (cheaper than capturing them; they are not outputs of the op) and
returns the gradient of every input at once:

* the input (the packed ``data`` of the ``.data`` overloads; ``batch_sizes``
  gets none),
* ``hx``: the LSTM's ``[h0, c0]`` as a list (a ``Tensor[]`` input's gradient
  is a list, which ``prim::ListConstruct``'s formula unpacks), the GRU's ``h0``,
* ``params``: one gradient per weight and bias, in the list's order,
* a cell's weights and biases (None for an absent bias).

An output that receives no gradient (``hy`` of an LSTM whose ``cy`` is
unused, say) is passed as None: the kernel counts it as zeros.
"""

from __future__ import annotations

from gradview.ir import Node, Value
from gradview.ops.registry import Emitter, formula, no_gradient
from gradview.ops.static_info import input_at, is_none, needs_grad, none_grads

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]


def _defined(grad: Value) -> Value | None:
    """The gradient, or None when it is the AutogradZero of an output nobody used."""
    return None if grad.node.kind() == "prim::AutogradZero" else grad


def _place(node: Node, gradients: dict[int, Value | None]) -> Result:
    """One gradient per input: those in ``gradients`` (by position) where the input wants one."""
    result = none_grads(node)
    for position, grad in gradients.items():
        value = input_at(node, position)
        if grad is not None and value is not None and not is_none(value) and needs_grad(value):
            result[position] = grad
    return result


def _optional(node: Node, index: int) -> Value | None:
    value = input_at(node, index)
    return None if value is None or is_none(value) else value


# -- cells -----------------------------------------------------------------------------------
@formula("aten::lstm_cell")
def lstm_cell(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """lstm_cell(input, hx=[h, c], w_ih, w_hh, b_ih, b_hh) -> (hy, cy)."""
    grad_hy, grad_cy = (_defined(g) for g in grads)
    if grad_hy is None and grad_cy is None:
        return none_grads(node)
    x, hx, w_ih, w_hh = node.inputs()[:4]
    outs = emit.op(
        "gradview::lstm_cell_backward",
        grad_hy,
        grad_cy,
        x,
        hx,
        w_ih,
        w_hh,
        _optional(node, 4),
        _optional(node, 5),
    )
    return _place(node, dict(enumerate(outs)))


@formula("aten::gru_cell")
def gru_cell(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """gru_cell(input, hx, w_ih, w_hh, b_ih, b_hh) -> hy."""
    grad = _defined(grads[0])
    if grad is None:
        return none_grads(node)
    x, hx, w_ih, w_hh = node.inputs()[:4]
    outs = emit.op(
        "gradview::gru_cell_backward",
        grad,
        x,
        hx,
        w_ih,
        w_hh,
        _optional(node, 4),
        _optional(node, 5),
    )
    return _place(node, dict(enumerate(outs)))


# -- whole layers ------------------------------------------------------------------------------
def _layer(kernel: str, packed: bool):  # noqa: ANN202 - a backward factory
    """The backward of ``lstm``/``gru`` in their padded (``.input``) or packed (``.data``) form.

    .input: (input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)
    .data:  (data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional)
    """

    def backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
        defined = [_defined(g) for g in grads]
        if all(g is None for g in defined):
            return none_grads(node)
        inputs = node.inputs()
        if packed:
            x, batch_sizes, hx, params, has_biases, layers, _, _, bidirectional = inputs[:9]
            batch_first: Value | bool = False
        else:
            x, hx, params, has_biases, layers, _, _, bidirectional, batch_first = inputs[:9]
            batch_sizes = None
        d_input, d_hx, d_params = emit.op(
            kernel,
            *defined,
            x,
            batch_sizes,
            hx,
            params,
            has_biases,
            layers,
            bidirectional,
            batch_first,
        )
        first = 2 if packed else 1  # hx's position
        return _place(node, {0: d_input, first: d_hx, first + 1: d_params})

    return backward


formula("aten::lstm.input")(_layer("gradview::lstm_backward", packed=False))
formula("aten::lstm.data")(_layer("gradview::lstm_backward", packed=True))
formula("aten::gru.input")(_layer("gradview::gru_backward", packed=False))
formula("aten::gru.data")(_layer("gradview::gru_backward", packed=True))

no_gradient(
    "gradview::lstm_cell_backward",
    "gradview::gru_cell_backward",
    "gradview::lstm_backward",
    "gradview::gru_backward",
    reason="a backward kernel of a recurrent op: gradview does not differentiate backward "
    "graphs again",
)
