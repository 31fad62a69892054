"""One time step of an LSTM and of a GRU, forward and backward, on arrays.

These are the building blocks of kernels/recurrent.py: ``lstm_cell`` and
``gru_cell`` are one step, ``lstm`` and ``gru`` run steps over a sequence,
layer after layer. The math is PyTorch's (``aten/src/ATen/native/RNN.cpp``):

LSTM, with gates ``i, f, g, o`` (input, forget, cell, output)::

    gates      = x @ W_ih^T + b_ih + h @ W_hh^T + b_hh        # [B, 4H], then split in 4
    i, f, o    = sigmoid(.), g = tanh(.)
    c'         = f * c + i * g
    h'         = o * tanh(c')          (then h' @ W_hr^T with a projection)

GRU, with gates ``r, z, n`` (reset, update, new)::

    gi = x @ W_ih^T + b_ih,  gh = h @ W_hh^T + b_hh        # [B, 3H] each, split in 3
    r  = sigmoid(gi_r + gh_r),  z = sigmoid(gi_z + gh_z)
    n  = tanh(gi_n + r * gh_n)
    h' = (h - n) * z + n

The backward of a step is the chain rule through those lines, last line
first: it takes the gradients of the new state and returns those of ``x``
and of the previous state, adding the weights' gradients into ``grads``.
It needs the gate values of the forward, kept in the step's ``cache``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .dtypes import is_floating, to_dtype
from .elementwise import _sigmoid
from .protocol import KernelError

__all__ = ["CellWeights", "CellGrads", "Cell", "LSTM", "GRU", "compute_dtype", "cast"]


def compute_dtype(op: str, *tensors: Any) -> Any:
    """The one floating dtype of every (non-None) tensor; float16 is computed in float32."""
    present = [t for t in tensors if t is not None]
    dtype = present[0].dtype
    for tensor in present:
        if not is_floating(tensor.dtype):
            raise KernelError(f"{op}: expected floating-point tensors, got {tensor.dtype}")
        if tensor.dtype != dtype:
            raise KernelError(
                f"{op}: expected tensors of one dtype, got {dtype} and {tensor.dtype}"
            )
    return to_dtype("Float") if dtype == to_dtype("Half") else dtype


def cast(tensor: Any, dtype: Any) -> Any:
    """``tensor`` in ``dtype`` (None stays None)."""
    return None if tensor is None else tensor.astype(dtype, copy=False)


@dataclass(frozen=True)
class CellWeights:
    """The weights of one layer and direction; biases and projection may be absent."""

    w_ih: Any
    w_hh: Any
    b_ih: Any = None
    b_hh: Any = None
    w_hr: Any = None


class CellGrads:
    """Gradient accumulators for one CellWeights, zeros to start with."""

    def __init__(self, xp: Any, weights: CellWeights) -> None:
        def zeros(w: Any) -> Any:
            return None if w is None else xp.zeros(w.shape, dtype=w.dtype)

        self.w_ih, self.w_hh = zeros(weights.w_ih), zeros(weights.w_hh)
        self.b_ih, self.b_hh = zeros(weights.b_ih), zeros(weights.b_hh)
        self.w_hr = zeros(weights.w_hr)

    def add_linear(self, xp: Any, which: str, d_out: Any, x: Any) -> None:
        """Accumulate the gradients of ``x @ W^T + b`` given ``d_out`` (W, b named by ``which``)."""
        weight = getattr(self, "w_" + which)
        weight += d_out.T @ x
        bias = getattr(self, "b_" + which, None)
        if bias is not None:
            bias += d_out.sum(axis=0)


def _linear(x: Any, w: Any, b: Any) -> Any:
    out = x @ w.T
    return out if b is None else out + b


class Cell:
    """The interface of a recurrent cell: how many state tensors, gates, and the step."""

    name = ""
    gates = 0
    states = 0  # 2 for the LSTM (h, c), 1 for the GRU (h)

    def step(
        self, xp: Any, x: Any, state: list[Any], w: CellWeights
    ) -> tuple[list[Any], tuple[Any, ...]]:
        raise NotImplementedError

    def step_backward(
        self, xp: Any, d_state: list[Any], cache: tuple[Any, ...], w: CellWeights, grads: CellGrads
    ) -> tuple[Any, list[Any]]:
        raise NotImplementedError


class _LSTM(Cell):
    name, gates, states = "lstm", 4, 2

    def step(
        self, xp: Any, x: Any, state: list[Any], w: CellWeights
    ) -> tuple[list[Any], tuple[Any, ...]]:
        h, c = state
        gates = _linear(h, w.w_hh, w.b_hh) + _linear(x, w.w_ih, w.b_ih)
        i, f, g, o = xp.split(gates, 4, axis=1)
        i, f, g, o = _sigmoid(xp, i), _sigmoid(xp, f), xp.tanh(g), _sigmoid(xp, o)
        c_new = f * c + i * g
        tanh_c = xp.tanh(c_new)
        h_full = o * tanh_c
        h_new = h_full if w.w_hr is None else h_full @ w.w_hr.T
        return [h_new, c_new], (x, h, c, i, f, g, o, tanh_c, h_full)

    def step_backward(
        self, xp: Any, d_state: list[Any], cache: tuple[Any, ...], w: CellWeights, grads: CellGrads
    ) -> tuple[Any, list[Any]]:
        x, h, c, i, f, g, o, tanh_c, h_full = cache
        dh, dc = d_state
        if w.w_hr is not None:  # h' = h_full @ W_hr^T
            grads.w_hr += dh.T @ h_full
            dh = dh @ w.w_hr
        d_o = dh * tanh_c
        dc = dc + dh * o * (1.0 - tanh_c * tanh_c)
        d_gates = xp.concatenate(
            [
                dc * g * i * (1.0 - i),
                dc * c * f * (1.0 - f),
                dc * i * (1.0 - g * g),
                d_o * o * (1.0 - o),
            ],
            axis=1,
        )
        grads.add_linear(xp, "ih", d_gates, x)
        grads.add_linear(xp, "hh", d_gates, h)
        return d_gates @ w.w_ih, [d_gates @ w.w_hh, dc * f]


class _GRU(Cell):
    name, gates, states = "gru", 3, 1

    def step(
        self, xp: Any, x: Any, state: list[Any], w: CellWeights
    ) -> tuple[list[Any], tuple[Any, ...]]:
        (h,) = state
        i_r, i_z, i_n = xp.split(_linear(x, w.w_ih, w.b_ih), 3, axis=1)
        h_r, h_z, h_n = xp.split(_linear(h, w.w_hh, w.b_hh), 3, axis=1)
        r = _sigmoid(xp, i_r + h_r)
        z = _sigmoid(xp, i_z + h_z)
        n = xp.tanh(i_n + r * h_n)
        return [(h - n) * z + n], (x, h, r, z, n, h_n)

    def step_backward(
        self, xp: Any, d_state: list[Any], cache: tuple[Any, ...], w: CellWeights, grads: CellGrads
    ) -> tuple[Any, list[Any]]:
        x, h, r, z, n, h_n = cache
        (dh,) = d_state
        d_n = dh * (1.0 - z) * (1.0 - n * n)  # through tanh
        d_z = dh * (h - n) * z * (1.0 - z)  # through sigmoid
        d_r = d_n * h_n * r * (1.0 - r)
        d_gi = xp.concatenate([d_r, d_z, d_n], axis=1)
        d_gh = xp.concatenate([d_r, d_z, d_n * r], axis=1)
        grads.add_linear(xp, "ih", d_gi, x)
        grads.add_linear(xp, "hh", d_gh, h)
        return d_gi @ w.w_ih, [dh * z + d_gh @ w.w_hh]


LSTM: Cell = _LSTM()
GRU: Cell = _GRU()
