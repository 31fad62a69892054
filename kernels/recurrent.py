"""Recurrent layers: ``lstm_cell``, ``gru_cell``, ``lstm`` and ``gru``, and their backward kernels.

A cell op is one time step (kernels/recurrent_cells.py). A layer op runs
the step along the sequence, for each layer (the next layer reads the
previous one's outputs) and each direction (the reverse direction reads the
sequence from its end; the two directions' outputs are concatenated).

Arguments as PyTorch passes them (``aten/src/ATen/native/RNN.cpp``):

* ``params`` is flat: per layer, per direction, ``w_ih, w_hh`` then
  ``b_ih, b_hh`` when ``has_biases``, then ``w_hr`` for an LSTM with a
  projection (``proj_size``); how many there are per layer tells.
* ``hx``: the LSTM's ``[h0, c0]``, the GRU's ``h0``, each ``[layers *
  directions, batch, hidden]``.
* ``lstm.input``/``gru.input`` take a padded ``[seq, batch, features]``
  (``[batch, seq, features]`` when ``batch_first``). The ``.data`` overloads
  take a packed sequence: the rows of every sequence's step ``t`` stored
  one after another, ``batch_sizes[t]`` of them (non-increasing; the
  longest sequences come first). A sequence that has ended keeps its last
  state, which is its final ``hy``.
* ``dropout`` between layers in training (each layer's output but the last)
  draws gradview's seeded mask (kernels/dropout.py), the same on every run,
  not PyTorch's: the backward kernels draw it again.

The backward kernels (``lstm_backward``...) recompute the forward
steps from the inputs and run backpropagation through time: the steps in
reverse order, each adding its weights' gradients. Half precision is
computed in float32 and cast back.
"""

from __future__ import annotations

from typing import Any

from .protocol import KernelError
from .recurrent_cells import GRU, LSTM, Cell, CellGrads, CellWeights, cast, compute_dtype
from .recurrent_layers import run_backward, run_forward

__all__ = [
    "lstm_cell", "gru_cell", "lstm_cell_backward", "gru_cell_backward",
    "lstm", "lstm_packed", "gru", "gru_packed", "lstm_backward", "gru_backward",
]


# -- checks ---------------------------------------------------------------------------------
def _check_shape(op: str, name: str, tensor: Any, shape: tuple[int, ...]) -> None:
    if tuple(tensor.shape) != tuple(shape):
        raise KernelError(f"{op}: {name} must have shape {list(shape)}, got {list(tensor.shape)}")


def _check_cell(op: str, cell: Cell, input: Any, state: list[Any], w: CellWeights) -> None:
    """PyTorch's checks of a cell's arguments (check_rnn_cell_forward_input/_hidden)."""
    if input.ndim != 2:
        raise KernelError(f"{op}: expected a 2-D input [batch, input_size], got {input.ndim}-D")
    if w.w_ih.ndim != 2 or w.w_hh.ndim != 2:
        raise KernelError(f"{op}: w_ih and w_hh must be 2-D")
    hidden = w.w_hh.shape[1]
    rows = cell.gates * hidden
    if input.shape[1] != w.w_ih.shape[1]:
        raise KernelError(
            f"{op}: input has inconsistent input_size: got {input.shape[1]} "
            f"expected {w.w_ih.shape[1]}"
        )
    _check_shape(op, "w_ih", w.w_ih, (rows, input.shape[1]))
    _check_shape(op, "w_hh", w.w_hh, (rows, hidden))
    for name, bias in (("b_ih", w.b_ih), ("b_hh", w.b_hh)):
        if bias is not None:
            _check_shape(op, name, bias, (rows,))
    for index, tensor in enumerate(state):
        _check_shape(op, f"hx[{index}]", tensor, (input.shape[0], hidden))


# -- cells ------------------------------------------------------------------------------
def lstm_cell(
    xp: Any, input: Any, hx: Any, w_ih: Any, w_hh: Any, b_ih: Any = None, b_hh: Any = None
) -> tuple[Any, Any]:
    """(hy, cy): one LSTM step from ``hx = [h, c]``."""
    state = _cell_state("lstm_cell", hx, 2)
    dtype = compute_dtype("lstm_cell", input, *state, w_ih, w_hh, b_ih, b_hh)
    w = CellWeights(*(cast(t, dtype) for t in (w_ih, w_hh, b_ih, b_hh)))
    _check_cell("lstm_cell", LSTM, input, state, w)
    (hy, cy), _ = LSTM.step(xp, cast(input, dtype), [cast(s, dtype) for s in state], w)
    return hy.astype(input.dtype, copy=False), cy.astype(input.dtype, copy=False)


def gru_cell(
    xp: Any, input: Any, hx: Any, w_ih: Any, w_hh: Any, b_ih: Any = None, b_hh: Any = None
) -> Any:
    """hy: one GRU step from ``hx``."""
    dtype = compute_dtype("gru_cell", input, hx, w_ih, w_hh, b_ih, b_hh)
    w = CellWeights(*(cast(t, dtype) for t in (w_ih, w_hh, b_ih, b_hh)))
    _check_cell("gru_cell", GRU, input, [hx], w)
    (hy,), _ = GRU.step(xp, cast(input, dtype), [cast(hx, dtype)], w)
    return hy.astype(input.dtype, copy=False)


def _cell_state(op: str, hx: Any, count: int) -> list[Any]:
    state = list(hx)
    if len(state) != count or any(s is None for s in state):
        raise KernelError(f"{op}: hx must hold {count} tensors, got {len(state)}")
    return state


def lstm_cell_backward(
    xp: Any,
    grad_hy: Any,
    grad_cy: Any,
    input: Any,
    hx: Any,
    w_ih: Any,
    w_hh: Any,
    b_ih: Any,
    b_hh: Any,
) -> tuple[Any, ...]:
    """(d_input, [d_h, d_c], d_w_ih, d_w_hh, d_b_ih, d_b_hh); an absent bias gets None."""
    h, c = _cell_state("lstm_cell_backward", hx, 2)
    return _cell_backward(
        xp, LSTM, [grad_hy, grad_cy], input, [h, c], (w_ih, w_hh, b_ih, b_hh), True
    )


def gru_cell_backward(
    xp: Any, grad_hy: Any, input: Any, hx: Any, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any
) -> tuple[Any, ...]:
    """(d_input, d_hx, d_w_ih, d_w_hh, d_b_ih, d_b_hh); an absent bias gets None."""
    return _cell_backward(xp, GRU, [grad_hy], input, [hx], (w_ih, w_hh, b_ih, b_hh), False)


def _cell_backward(
    xp: Any,
    cell: Cell,
    d_state: list[Any],
    input: Any,
    state: list[Any],
    weights: tuple[Any, ...],
    as_list: bool,
) -> tuple[Any, ...]:
    op = f"{cell.name}_cell_backward"
    dtype = compute_dtype(op, input, *state, *weights)
    w = CellWeights(*(cast(t, dtype) for t in weights))
    _check_cell(op, cell, input, state, w)
    state = [cast(s, dtype) for s in state]
    _, cache = cell.step(xp, cast(input, dtype), state, w)
    d_state = [
        xp.zeros_like(s) if d is None else cast(d, dtype)
        for d, s in zip(d_state, state, strict=True)
    ]
    grads = CellGrads(xp, w)
    d_input, d_prev = cell.step_backward(xp, d_state, cache, w, grads)

    def back(tensor: Any) -> Any:
        return None if tensor is None else tensor.astype(input.dtype, copy=False)

    d_hx = [back(d) for d in d_prev] if as_list else back(d_prev[0])
    return (
        back(d_input),
        d_hx,
        back(grads.w_ih),
        back(grads.w_hh),
        back(grads.b_ih),
        back(grads.b_hh),
    )


# -- the layer ops -------------------------------------------------------------------------
def lstm(
    xp: Any,
    input: Any,
    hx: Any,
    params: Any,
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
    batch_first: bool,
) -> tuple[Any, Any, Any]:
    """(output, hy, cy) of a padded sequence."""
    p = _between_layers("lstm", dropout, train, num_layers)
    out, finals, _ = run_forward(
        "lstm",
        xp,
        LSTM,
        input,
        None,
        list(hx),
        params,
        has_biases,
        num_layers,
        bidirectional,
        batch_first,
        p,
    )
    return out, finals[0], finals[1]


def lstm_packed(
    xp: Any,
    data: Any,
    batch_sizes: Any,
    hx: Any,
    params: Any,
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
) -> tuple[Any, Any, Any]:
    """(output, hy, cy) of a packed sequence."""
    p = _between_layers("lstm", dropout, train, num_layers)
    out, finals, _ = run_forward(
        "lstm",
        xp,
        LSTM,
        data,
        batch_sizes,
        list(hx),
        params,
        has_biases,
        num_layers,
        bidirectional,
        False,
        p,
    )
    return out, finals[0], finals[1]


def gru(
    xp: Any,
    input: Any,
    hx: Any,
    params: Any,
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
    batch_first: bool,
) -> tuple[Any, Any]:
    """(output, hy) of a padded sequence."""
    p = _between_layers("gru", dropout, train, num_layers)
    out, finals, _ = run_forward(
        "gru",
        xp,
        GRU,
        input,
        None,
        [hx],
        params,
        has_biases,
        num_layers,
        bidirectional,
        batch_first,
        p,
    )
    return out, finals[0]


def gru_packed(
    xp: Any,
    data: Any,
    batch_sizes: Any,
    hx: Any,
    params: Any,
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
) -> tuple[Any, Any]:
    """(output, hy) of a packed sequence."""
    p = _between_layers("gru", dropout, train, num_layers)
    out, finals, _ = run_forward(
        "gru",
        xp,
        GRU,
        data,
        batch_sizes,
        [hx],
        params,
        has_biases,
        num_layers,
        bidirectional,
        False,
        p,
    )
    return out, finals[0]


def lstm_backward(
    xp: Any,
    grad_output: Any,
    grad_hy: Any,
    grad_cy: Any,
    input: Any,
    batch_sizes: Any,
    hx: Any,
    params: Any,
    has_biases: bool,
    num_layers: int,
    bidirectional: bool,
    batch_first: bool,
    dropout: float = 0.0,
    train: bool = False,
) -> tuple[Any, list[Any], list[Any]]:
    """(d_input, [d_h0, d_c0], d_params) of ``lstm`` (input or packed data)."""
    return run_backward(
        "lstm",
        xp,
        LSTM,
        [grad_output, grad_hy, grad_cy],
        input,
        batch_sizes,
        list(hx),
        params,
        has_biases,
        num_layers,
        bidirectional,
        batch_first,
        _between_layers("lstm_backward", dropout, train, num_layers),
    )


def gru_backward(
    xp: Any,
    grad_output: Any,
    grad_hy: Any,
    input: Any,
    batch_sizes: Any,
    hx: Any,
    params: Any,
    has_biases: bool,
    num_layers: int,
    bidirectional: bool,
    batch_first: bool,
    dropout: float = 0.0,
    train: bool = False,
) -> tuple[Any, Any, list[Any]]:
    """(d_input, d_h0, d_params) of ``gru`` (input or packed data)."""
    d_input, d_hx, d_params = run_backward(
        "gru",
        xp,
        GRU,
        [grad_output, grad_hy],
        input,
        batch_sizes,
        [hx],
        params,
        has_biases,
        num_layers,
        bidirectional,
        batch_first,
        _between_layers("gru_backward", dropout, train, num_layers),
    )
    return d_input, d_hx[0], d_params


def _between_layers(op: str, dropout: float, train: bool, num_layers: int) -> float:
    """The dropout probability between layers: ``dropout`` in training with two layers or
    more, else 0 (PyTorch's ``_rnn_impl``)."""
    if not 0 <= dropout <= 1:
        raise KernelError(f"{op}: dropout probability has to be between 0 and 1, but got {dropout}")
    return float(dropout) if train and num_layers > 1 else 0.0
