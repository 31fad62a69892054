"""Whole recurrent layers over a sequence, forward and backward through time.

``run_forward`` and ``run_backward`` serve ``lstm``/``gru`` in both their
padded (``.input``) and packed (``.data``) forms. Both forms become a list
of steps, step ``t`` holding the rows of the sequences still running at
``t`` (every row for a padded input): a packed batch keeps its longest
sequences first, so those rows are always the first ``b_t`` of the batch.

A step updates the state of its first ``b_t`` rows and leaves the others,
so a sequence that has ended keeps its last state (the forward direction)
and one that has not started yet keeps its initial state (the reverse
direction, which walks the steps from the end). The backward walks the same
steps in the opposite order, routing each gradient to the rows that made it.
"""

from __future__ import annotations

from typing import Any

from .dropout import seeded_generator
from .protocol import KernelError
from .recurrent_cells import Cell, CellGrads, CellWeights, cast, compute_dtype

__all__ = ["run_forward", "run_backward"]


class _Layout:
    """How the sequence is stored: steps from the input, and the output from steps."""

    def __init__(self, op: str, xp: Any, input: Any, batch_sizes: Any, batch_first: bool) -> None:
        self.packed = batch_sizes is not None
        self.batch_first = batch_first and not self.packed
        if self.packed:
            if input.ndim != 2:
                raise KernelError(
                    f"{op}: packed data must be 2-D [rows, input_size], got {input.ndim}-D"
                )
            if batch_sizes.ndim != 1 or batch_sizes.dtype.kind not in "iu":
                raise KernelError(f"{op}: batch_sizes must be a 1-D integer tensor")
            self.sizes = [int(b) for b in batch_sizes.tolist()]
            if any(b <= 0 for b in self.sizes) or any(
                a < b for a, b in zip(self.sizes[:-1], self.sizes[1:], strict=True)
            ):
                raise KernelError(
                    f"{op}: batch_sizes must be positive and non-increasing, got {self.sizes}"
                )
            if sum(self.sizes) != input.shape[0]:
                raise KernelError(
                    f"{op}: batch_sizes sum to {sum(self.sizes)}, data has {input.shape[0]} rows"
                )
            self.batch = self.sizes[0] if self.sizes else 0
        else:
            if input.ndim != 3:
                raise KernelError(
                    f"{op}: expected a 3-D input [seq, batch, input_size], got {input.ndim}-D"
                )
            steps, self.batch = (
                (input.shape[1], input.shape[0]) if self.batch_first else input.shape[:2]
            )
            self.sizes = [self.batch] * steps
        self.features = input.shape[-1]

    def steps(self, xp: Any, tensor: Any) -> list[Any]:
        """The input (or a gradient of the output) as one array per step."""
        if self.packed:
            bounds, start = [], 0
            for size in self.sizes:
                bounds.append((start, start + size))
                start += size
            return [tensor[a:b] for a, b in bounds]
        if self.batch_first:
            return [tensor[:, t] for t in range(len(self.sizes))]
        return [tensor[t] for t in range(len(self.sizes))]

    def join(self, xp: Any, steps: list[Any], width: int, dtype: Any) -> Any:
        """One array per step back into the input's form (padded output is [seq, batch, ...] in
        memory, so batch_first gives a transposed view, as PyTorch's output is)."""
        if not steps:
            shape = (0, width) if self.packed else (0, self.batch, width)
            out = xp.zeros(shape, dtype=dtype)
        else:
            out = xp.concatenate(steps, axis=0) if self.packed else xp.stack(steps, axis=0)
        return out.transpose(1, 0, 2) if self.batch_first else out


def _layer_weights(
    op: str, cell: Cell, params: list[Any], has_biases: bool, layers: int, directions: int
) -> list[CellWeights]:
    """One CellWeights per (layer, direction), in ``params``' order."""
    if layers < 1:
        raise KernelError(f"{op}: num_layers must be at least 1, got {layers}")
    groups = layers * directions
    per = len(params) // groups
    plain, projected = (4, 5) if has_biases else (2, 3)
    if (
        len(params) % groups
        or per not in (plain, projected)
        or (per == projected and cell.states != 2)
    ):
        raise KernelError(
            f"{op}: {len(params)} params do not fit {layers} layer(s) x {directions} direction(s) "
            f"with has_biases={has_biases}"
        )
    weights = []
    for group in range(groups):
        chunk = params[group * per : (group + 1) * per]
        w_ih, w_hh = chunk[0], chunk[1]
        b_ih, b_hh = (chunk[2], chunk[3]) if has_biases else (None, None)
        weights.append(CellWeights(w_ih, w_hh, b_ih, b_hh, chunk[-1] if per == projected else None))
    return weights


def _check_weights(
    op: str, cell: Cell, weights: list[CellWeights], features: int, directions: int
) -> list[int]:
    """Check every weight's shape; returns the sizes of the state tensors (h, then c)."""
    first = weights[0]
    hidden = first.w_ih.shape[0] // cell.gates
    out = first.w_hr.shape[0] if first.w_hr is not None else hidden
    for index, w in enumerate(weights):
        width = features if index < directions else out * directions
        expected = {
            "w_ih": (cell.gates * hidden, width),
            "w_hh": (cell.gates * hidden, out),
            "b_ih": (cell.gates * hidden,),
            "b_hh": (cell.gates * hidden,),
            "w_hr": (out, hidden),
        }
        for name, shape in expected.items():
            tensor = getattr(w, name)
            if tensor is not None and tuple(tensor.shape) != shape:
                raise KernelError(
                    f"{op}: {name} of layer {index // directions} must have shape {list(shape)}, "
                    f"got {list(tensor.shape)}"
                )
    return [out, hidden][: cell.states]


def _prepare(
    op: str,
    xp: Any,
    cell: Cell,
    input: Any,
    batch_sizes: Any,
    hx: list[Any],
    params: Any,
    has_biases: bool,
    layers: int,
    bidirectional: bool,
    batch_first: bool,
) -> tuple[Any, _Layout, list[CellWeights], list[Any], int]:
    params = list(params)
    dtype = compute_dtype(op, input, *hx, *params)
    directions = 2 if bidirectional else 1
    layout = _Layout(op, xp, input, batch_sizes, batch_first)
    weights = _layer_weights(
        op, cell, [cast(p, dtype) for p in params], has_biases, layers, directions
    )
    state_sizes = _check_weights(op, cell, weights, layout.features, directions)
    if len(hx) != cell.states:
        raise KernelError(f"{op}: hx must hold {cell.states} tensor(s), got {len(hx)}")
    for index, (h, size) in enumerate(zip(hx, state_sizes, strict=True)):
        expected = (layers * directions, layout.batch, size)
        if tuple(h.shape) != expected:
            raise KernelError(
                f"{op}: expected hidden[{index}] of size {list(expected)}, got {list(h.shape)}"
            )
    return dtype, layout, weights, [cast(h, dtype) for h in hx], directions


def _forward_direction(
    xp: Any, cell: Cell, steps: list[Any], init: list[Any], w: CellWeights, reverse: bool
) -> tuple[list[Any], list[Any], list[Any]]:
    """(outputs per step, final state, caches per step) of one layer in one direction."""
    state = list(init)
    outputs: list[Any] = [None] * len(steps)
    caches: list[Any] = [None] * len(steps)
    order = range(len(steps) - 1, -1, -1) if reverse else range(len(steps))
    for t in order:
        rows = steps[t].shape[0]
        new, caches[t] = cell.step(xp, steps[t], [s[:rows] for s in state], w)
        state = [
            n if rows == s.shape[0] else xp.concatenate([n, s[rows:]])
            for n, s in zip(new, state, strict=True)
        ]
        outputs[t] = new[0]
    return outputs, state, caches


def _backward_direction(
    xp: Any,
    cell: Cell,
    d_outputs: list[Any],
    d_final: list[Any],
    caches: list[Any],
    w: CellWeights,
    grads: CellGrads,
    reverse: bool,
) -> tuple[list[Any], list[Any]]:
    """(gradient of each step's input, gradient of the initial state): the steps in reverse."""
    d_state = list(d_final)
    d_steps: list[Any] = [None] * len(caches)
    order = range(len(caches)) if reverse else range(len(caches) - 1, -1, -1)
    for t in order:
        rows = d_outputs[t].shape[0]
        here = [d[:rows] for d in d_state]
        here[0] = here[0] + d_outputs[t]
        d_steps[t], d_prev = cell.step_backward(xp, here, caches[t], w, grads)
        d_state = [
            p if rows == d.shape[0] else xp.concatenate([p, d[rows:]])
            for p, d in zip(d_prev, d_state, strict=True)
        ]
    return d_steps, d_state


def between_layers_noise(xp: Any, step: Any, p: float, layer: int, t: int) -> Any:
    """The dropout noise (0 or 1 / (1 - p)) on step ``t`` of layer ``layer``'s output, fed to
    the next layer in training: gradview's seeded mask (kernels/dropout.py), the same on
    every run, so the backward draws it again."""
    if p >= 1:
        return xp.zeros((), dtype=step.dtype)
    shape = tuple(int(n) for n in step.shape)
    keep = xp.asarray(seeded_generator(f"rnn dropout {layer} {t}", shape).random(shape) >= p)
    return keep.astype(step.dtype) / xp.asarray(1.0 - p, dtype=step.dtype)


def _forward(
    xp: Any,
    cell: Cell,
    steps: list[Any],
    hx: list[Any],
    weights: list[CellWeights],
    directions: int,
    dropout: float = 0.0,
) -> tuple[list[Any], list[list[Any]], list[list[Any]]]:
    """(last layer's outputs per step, final states per group, caches per group); ``dropout``
    (training only) applies to each layer's output but the last, as PyTorch's ``_rnn_impl``."""
    finals, caches = [], []
    layers = len(weights) // directions
    for layer in range(layers):
        outputs = []
        for direction in range(directions):
            group = layer * directions + direction
            ys, final, cache = _forward_direction(
                xp, cell, steps, [h[group] for h in hx], weights[group], reverse=direction == 1
            )
            outputs.append(ys)
            finals.append(final)
            caches.append(cache)
        steps = (
            outputs[0]
            if directions == 1
            else [xp.concatenate(pair, axis=1) for pair in zip(*outputs, strict=True)]
        )
        if dropout > 0 and layer < layers - 1:
            steps = [y * between_layers_noise(xp, y, dropout, layer, t) for t, y in enumerate(steps)]
    return steps, finals, caches


def run_forward(
    op: str,
    xp: Any,
    cell: Cell,
    input: Any,
    batch_sizes: Any,
    hx: list[Any],
    params: Any,
    has_biases: bool,
    layers: int,
    bidirectional: bool,
    batch_first: bool,
    dropout: float = 0.0,
) -> tuple[Any, list[Any], None]:
    """(output, [hy, cy] or [hy], None) of the layer op; ``dropout`` between layers (0 unless
    training)."""
    dtype, layout, weights, hx, directions = _prepare(
        op, xp, cell, input, batch_sizes, hx, params, has_biases, layers, bidirectional, batch_first
    )
    ys, finals, _ = _forward(
        xp, cell, layout.steps(xp, cast(input, dtype)), hx, weights, directions, dropout
    )
    width = hx[0].shape[2] * directions
    output = layout.join(xp, ys, width, dtype).astype(input.dtype, copy=False)
    stacked = [
        xp.stack([final[k] for final in finals], axis=0).astype(input.dtype, copy=False)
        for k in range(cell.states)
    ]
    return output, stacked, None


def run_backward(
    op: str,
    xp: Any,
    cell: Cell,
    grads: list[Any],
    input: Any,
    batch_sizes: Any,
    hx: list[Any],
    params: Any,
    has_biases: bool,
    layers: int,
    bidirectional: bool,
    batch_first: bool,
    dropout: float = 0.0,
) -> tuple[Any, list[Any], list[Any]]:
    """(d_input, d_hx per state, d_params in params' order); a None gradient counts as zeros.
    ``dropout`` between layers: the forward's seeded masks, drawn again."""
    op = f"{op}_backward"
    dtype, layout, weights, hx, directions = _prepare(
        op, xp, cell, input, batch_sizes, hx, params, has_biases, layers, bidirectional, batch_first
    )
    steps = layout.steps(xp, cast(input, dtype))
    _, _, caches = _forward(xp, cell, steps, hx, weights, directions, dropout)
    width = hx[0].shape[2]
    grad_output, grad_finals = grads[0], grads[1:]
    if grad_output is None:
        d_layer = [xp.zeros((rows, width * directions), dtype=dtype) for rows in layout.sizes]
    else:
        d_layer = layout.steps(xp, cast(grad_output, dtype))
    d_finals = [
        xp.zeros_like(h) if g is None else cast(g, dtype)
        for g, h in zip(grad_finals, hx, strict=True)
    ]
    d_hx: list[list[Any]] = [[None] * len(weights) for _ in hx]
    cell_grads = [CellGrads(xp, w) for w in weights]
    for layer in range(len(weights) // directions - 1, -1, -1):
        d_input = None
        for direction in range(directions):
            group = layer * directions + direction
            d_ys = [d[:, direction * width : (direction + 1) * width] for d in d_layer]
            d_steps, d_init = _backward_direction(
                xp,
                cell,
                d_ys,
                [d[group] for d in d_finals],
                caches[group],
                weights[group],
                cell_grads[group],
                reverse=direction == 1,
            )
            d_input = (
                d_steps
                if d_input is None
                else [a + b for a, b in zip(d_input, d_steps, strict=True)]
            )
            for k, d in enumerate(d_init):
                d_hx[k][group] = d
        d_layer = d_input
        if dropout > 0 and layer > 0:  # the layer's input was the previous layer's output, dropped
            d_layer = [d * between_layers_noise(xp, d, dropout, layer - 1, t) for t, d in enumerate(d_layer)]
    back = input.dtype
    d_params = []
    for g in cell_grads:
        present = (
            [g.w_ih, g.w_hh]
            + ([g.b_ih, g.b_hh] if has_biases else [])
            + ([g.w_hr] if g.w_hr is not None else [])
        )
        d_params.extend(p.astype(back, copy=False) for p in present)
    d_in = layout.join(xp, d_layer, layout.features, dtype).astype(back, copy=False)
    return d_in, [xp.stack(d, axis=0).astype(back, copy=False) for d in d_hx], d_params
