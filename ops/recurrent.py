"""The recurrent ops: ``lstm_cell``, ``gru_cell``, and whole ``lstm`` / ``gru`` layers.

A cell op is one time step: two matrix products, a split into gates,
sigmoids and tanhs, products and sums (kernels/recurrent_cells.py has the
lines). A layer op runs that step along the sequence, for each layer and
direction (kernels/recurrent_layers.py).

Shapes. A cell's new state has the batch of its input and the hidden size of
``w_hh`` (``[4*hidden, hidden]`` for the LSTM, ``[3*hidden, hidden]`` for the
GRU). A layer op returns:

* ``output``: ``[seq, batch, directions * out]`` with ``out`` the size of
  ``h`` (the projection size of an LSTM with ``proj_size``), read from
  ``hx``. PyTorch builds it step after step in ``[seq, batch, ...]`` order,
  so with ``batch_first`` it is that tensor transposed: ``[batch, seq, ...]``
  sizes with the seq dim's stride the smallest but one. The packed
  (``.data``) form gives ``[rows, directions * out]``.
* ``hy`` (and the LSTM's ``cy``): new tensors the sizes of ``hx``'s.

Gradients. PyTorch's autograd differentiates these by their decomposition on
the CPU, and a layer's gradient is backpropagation through time: the steps'
backwards in reverse order, each adding into the same weights' gradients.
Spelled out in IR, a layer's backward would be a copy of that loop per time
step and per layer, fixed to one sequence length. Each formula emits one
backward kernel instead (``gradview::lstm_backward``...), as the
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
unused, say) is passed as None: the kernel counts it as zeros. Each backward
kernel returns one gradient per input, each like its input.
"""

from __future__ import annotations

from gradview.ir import Node, Value
from gradview.ir.types import TensorType, Type
from gradview.kernels import recurrent as kernels

from .random_draws import ConstantInputs, is_constant_zero
from .registry import Emitter, formula, kernel, no_gradient, random, schema, shape_rule
from .shape_toolkit import (
    ElementList,
    NodeArgs,
    RuleResult,
    Sizes,
    all_known,
    fresh,
    make_tensor,
)
from .static_info import input_at, is_none, needs_grad, none_grads

__all__: list[str] = []

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]

_BACKWARD_HAS_NO_GRADIENT = (
    "a backward kernel of a recurrent op: gradview does not differentiate backward graphs again"
)


# -- shared by the shape rules -------------------------------------------------------------
def _size(t: TensorType | Type | None, dim: int) -> int | None:
    """Size ``dim`` of a tensor type, when known."""
    if not isinstance(t, TensorType) or t.sizes is None or not -len(t.sizes) <= dim < len(t.sizes):
        return None
    return t.sizes[dim]


def _like(t: TensorType | None) -> TensorType | None:
    return None if t is None else fresh(t.scalar_type, t.sizes, t.device)


def _list_like(args: NodeArgs, i: int) -> ElementList | None:
    """A list of gradients, one like each element of list input ``i`` (when their types are known)."""
    elements = args.elements(i)
    if elements is None or not all(isinstance(e, TensorType) for e in elements):
        return None
    return ElementList(tuple(_like(e) for e in elements))  # type: ignore[arg-type, misc]


# -- shared by the formulas ----------------------------------------------------------------
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


# -- aten::lstm_cell, gru_cell: one time step ------------------------------------------------
kernel("aten::lstm_cell")(kernels.lstm_cell)
kernel("aten::gru_cell")(kernels.gru_cell)


@shape_rule("aten::lstm_cell", "aten::gru_cell")
def _cell(args: NodeArgs) -> RuleResult:
    x, w_hh = args.tensor(0), args.tensor(3)
    if x is None:
        return None
    sizes: Sizes = (_size(x, 0), _size(w_hh, 1))
    state = fresh(x.scalar_type, sizes, x.device)
    return [state, state] if args.node.kind() == "aten::lstm_cell" else [state]


@formula("aten::lstm_cell")
def _lstm_cell_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
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
def _gru_cell_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
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


# -- gradview::lstm_cell_backward, gru_cell_backward: the cells' gradients --------------------
schema(
    "gradview::lstm_cell_backward(Tensor? grad_hy, Tensor? grad_cy, Tensor input, Tensor[] hx, Tensor w_ih, "
    "Tensor w_hh, Tensor? b_ih, Tensor? b_hh) -> (Tensor, Tensor[], Tensor, Tensor, Tensor?, Tensor?)",
    "gradview::gru_cell_backward(Tensor grad_hy, Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, "
    "Tensor? b_ih, Tensor? b_hh) -> (Tensor, Tensor, Tensor, Tensor, Tensor?, Tensor?)",
)
kernel("gradview::lstm_cell_backward")(kernels.lstm_cell_backward)
kernel("gradview::gru_cell_backward")(kernels.gru_cell_backward)


@shape_rule("gradview::lstm_cell_backward", "gradview::gru_cell_backward")
def _cell_backward(args: NodeArgs) -> RuleResult:
    """(d_input, d_hx, d_w_ih, d_w_hh, d_b_ih, d_b_hh); the LSTM's d_hx is a list."""
    lstm = args.node.kind() == "gradview::lstm_cell_backward"
    first = 2 if lstm else 1  # the input follows the output gradients
    d_hx = _list_like(args, first + 1) if lstm else _like(args.tensor(first + 1))
    weights = [_like(args.tensor(i)) for i in range(first + 2, first + 6)]
    return [_like(args.tensor(first)), d_hx, *weights]


no_gradient(
    "gradview::lstm_cell_backward", "gradview::gru_cell_backward", reason=_BACKWARD_HAS_NO_GRADIENT
)


# -- aten::lstm, gru: whole layers, padded (.input) or packed (.data) -------------------------
kernel("aten::lstm.input")(kernels.lstm)
kernel("aten::lstm.data")(kernels.lstm_packed)
kernel("aten::gru.input")(kernels.gru)
kernel("aten::gru.data")(kernels.gru_packed)


def _draws_between_layers(inputs: ConstantInputs) -> bool:
    """Dropout between layers in training: the float argument after num_layers and the
    bool after it, unless either is a constant 0, or num_layers a constant 1."""
    for at in (5, 6):  # .input: dropout is input 5; .data (with batch_sizes): input 6
        if at + 1 < len(inputs) and inputs.type_text(at) == "float":
            one_layer = inputs.constant(at - 1) == 1
            return not one_layer and not is_constant_zero(inputs.constant(at)) and not is_constant_zero(inputs.constant(at + 1))
    return False


random("aten::lstm", "aten::gru", "aten::rnn_tanh", "aten::rnn_relu", when=_draws_between_layers)


def _states(args: NodeArgs, lstm: bool, packed: bool) -> list[TensorType | None]:
    """The types of h0 (and c0): the list's elements for the LSTM, the tensor for the GRU."""
    position = 2 if packed else 1
    if not lstm:
        return [args.tensor(position)]
    elements = args.elements(position) or ()
    return [e if isinstance(e, TensorType) else None for e in elements][:2] or [None, None]


def _output(args: NodeArgs, x: TensorType, width: int | None, packed: bool) -> TensorType:
    if packed:
        return fresh(x.scalar_type, (_size(x, 0), width), x.device)
    batch_first = args.value(8, None)
    if batch_first is True:
        batch, steps = _size(x, 0), _size(x, 1)
        sizes: Sizes = (batch, steps, width)
        strides = None
        if all_known(sizes):
            strides = (width, batch * width, 1)  # type: ignore[operator]
        return make_tensor(x.scalar_type, sizes, strides, x.device)
    if batch_first is False:
        return fresh(x.scalar_type, (_size(x, 0), _size(x, 1), width), x.device)
    return fresh(x.scalar_type, (None, None, width), x.device)


@shape_rule("aten::lstm", "aten::gru")
def _layer(args: NodeArgs) -> RuleResult:
    x = args.tensor(0)
    if x is None:
        return None
    lstm = args.node.kind() == "aten::lstm"
    resolved = args.node.maybe_schema()
    if resolved is None:
        return None
    # .data(data, batch_sizes, hx, ...) or .input(input, hx, ...)
    packed = resolved.overload_name == "data"
    states = _states(args, lstm, packed)
    bidirectional = args.value(8 if packed else 7, None)
    out = _size(states[0], 2)
    width = (
        out * (2 if bidirectional else 1)
        if out is not None and isinstance(bidirectional, bool)
        else None
    )
    results: list[Type | None] = [_output(args, x, width, packed)]
    for state in states:
        results.append(None if state is None else fresh(x.scalar_type, state.sizes, x.device))
    return results  # type: ignore[return-value]


def _layer_gradient(backward_kernel: str, packed: bool):  # a backward factory
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
            x, batch_sizes, hx, params, has_biases, layers, dropout, train, bidirectional = inputs[:9]
            batch_first: Value | bool = False
        else:
            x, hx, params, has_biases, layers, dropout, train, bidirectional, batch_first = inputs[:9]
            batch_sizes = None
        d_input, d_hx, d_params = emit.op(
            backward_kernel,
            *defined,
            x,
            batch_sizes,
            hx,
            params,
            has_biases,
            layers,
            bidirectional,
            batch_first,
            dropout,  # between layers in training: the forward's seeded masks, drawn again
            train,
        )
        first = 2 if packed else 1  # hx's position
        return _place(node, {0: d_input, first: d_hx, first + 1: d_params})

    return backward


formula("aten::lstm.input")(_layer_gradient("gradview::lstm_backward", packed=False))
formula("aten::lstm.data")(_layer_gradient("gradview::lstm_backward", packed=True))
formula("aten::gru.input")(_layer_gradient("gradview::gru_backward", packed=False))
formula("aten::gru.data")(_layer_gradient("gradview::gru_backward", packed=True))


# -- gradview::lstm_backward, gru_backward: backpropagation through time ----------------------
schema(
    "gradview::lstm_backward(Tensor? grad_output, Tensor? grad_hy, Tensor? grad_cy, Tensor input, "
    "Tensor? batch_sizes, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers, bool bidirectional, "
    "bool batch_first, float dropout=0., bool train=False) -> (Tensor, Tensor[], Tensor[])",
    "gradview::gru_backward(Tensor? grad_output, Tensor? grad_hy, Tensor input, Tensor? batch_sizes, "
    "Tensor hx, Tensor[] params, bool has_biases, int num_layers, bool bidirectional, bool batch_first, "
    "float dropout=0., bool train=False) -> (Tensor, Tensor, Tensor[])",
)
kernel("gradview::lstm_backward")(kernels.lstm_backward)
kernel("gradview::gru_backward")(kernels.gru_backward)


@shape_rule("gradview::lstm_backward", "gradview::gru_backward")
def _layer_backward(args: NodeArgs) -> RuleResult:
    """(d_input, d_hx, d_params): d_input laid out like the layer's output (a transposed
    [seq, batch, ...] buffer with batch_first), d_params one per weight."""
    lstm = args.node.kind() == "gradview::lstm_backward"
    first = 3 if lstm else 2
    x = args.tensor(first)
    d_input = _like(x)
    if x is not None and args.value(first + 7, None) is True and args.is_none(first + 1):
        sizes = x.sizes
        if all_known(sizes) and len(sizes) == 3:  # type: ignore[arg-type]
            batch, _, width = sizes  # type: ignore[misc]
            d_input = make_tensor(x.scalar_type, sizes, (width, batch * width, 1), x.device)
        else:
            d_input = make_tensor(x.scalar_type, sizes, None, x.device)
    d_hx = _list_like(args, first + 2) if lstm else _like(args.tensor(first + 2))
    return [d_input, d_hx, _list_like(args, first + 3)]


no_gradient("gradview::lstm_backward", "gradview::gru_backward", reason=_BACKWARD_HAS_NO_GRADIENT)
