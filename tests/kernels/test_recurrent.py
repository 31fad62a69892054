"""Recurrent kernels (kernels/recurrent.py) against PyTorch: lstm_cell, gru_cell, lstm and
gru (padded and packed; one and two layers; one and two directions; batch_first; with and
without biases; LSTM projections) and their backward kernels against torch.autograd.

Values agree to 1e-6 relative in float64 (1e-5 in float32), dtypes and shapes exactly; the
backward kernels to 1e-9 in float64.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from gradview.ir import node_summary
from gradview.runtime import GraphRuntimeError, run_graph
from tests.kernels import oracle
from tests.kernels.oracle import check_op, op_graph

IN, H, B, T = 4, 5, 3, 6
PACKED_SIZES = [[3, 3, 2, 1, 1], [2, 2], [1], [3, 1]]


def _rand(rng: np.random.Generator, *shape: int, dtype: type = np.float64) -> np.ndarray:
    return np.asarray(rng.standard_normal(shape), dtype=dtype)


def _check(op: str, args: list) -> list:
    f32 = any(getattr(a, "dtype", None) == np.float32 for a in args)
    return check_op(op, args, rtol=1e-5 if f32 else 1e-6, atol=1e-6 if f32 else 1e-12)


def _params(
    rng: np.random.Generator,
    gates: int,
    layers: int,
    directions: int,
    bias: bool,
    proj: int = 0,
    hidden: int = H,
    features: int = IN,
    dtype: type = np.float64,
) -> list[np.ndarray]:
    """PyTorch's flat weight list: per layer and direction w_ih, w_hh[, b_ih, b_hh][, w_hr]."""
    out = proj or hidden
    params = []
    for layer in range(layers):
        for _ in range(directions):
            width = features if layer == 0 else out * directions
            params += [
                _rand(rng, gates * hidden, width, dtype=dtype),
                _rand(rng, gates * hidden, out, dtype=dtype),
            ]
            if bias:
                params += [
                    _rand(rng, gates * hidden, dtype=dtype),
                    _rand(rng, gates * hidden, dtype=dtype),
                ]
            if proj:
                params.append(_rand(rng, proj, hidden, dtype=dtype))
    return params


def _run(op: str, args: list) -> list:
    graph, inputs = op_graph(op, args)
    return run_graph(graph, inputs, backend=oracle.BACKEND)


def _expect_error(op: str, args: list, message: str) -> None:
    graph, inputs = op_graph(op, args)
    with pytest.raises(GraphRuntimeError, match=message) as info:
        run_graph(graph, inputs, backend=oracle.BACKEND)
    assert node_summary(list(graph.nodes())[-1]) in str(info.value)


# -- cells ----------------------------------------------------------------------------------------
CELL_SIZES = [(1, 1, 1), (3, 4, 5), (2, 6, 3), (0, 4, 5)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("sizes", CELL_SIZES)
def test_lstm_cell(sizes: tuple[int, int, int], bias: bool, dtype: type) -> None:
    batch, features, hidden = sizes
    rng = np.random.default_rng(batch * 100 + features * 10 + hidden)
    w = [_rand(rng, 4 * hidden, features, dtype=dtype), _rand(rng, 4 * hidden, hidden, dtype=dtype)]
    b = (
        [_rand(rng, 4 * hidden, dtype=dtype), _rand(rng, 4 * hidden, dtype=dtype)]
        if bias
        else [None, None]
    )
    hx = [_rand(rng, batch, hidden, dtype=dtype), _rand(rng, batch, hidden, dtype=dtype)]
    _check("aten::lstm_cell", [_rand(rng, batch, features, dtype=dtype) * 2, hx, *w, *b])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("sizes", CELL_SIZES)
def test_gru_cell(sizes: tuple[int, int, int], bias: bool, dtype: type) -> None:
    batch, features, hidden = sizes
    rng = np.random.default_rng(batch * 100 + features * 10 + hidden + 1)
    w = [_rand(rng, 3 * hidden, features, dtype=dtype), _rand(rng, 3 * hidden, hidden, dtype=dtype)]
    b = (
        [_rand(rng, 3 * hidden, dtype=dtype), _rand(rng, 3 * hidden, dtype=dtype)]
        if bias
        else [None, None]
    )
    x, hx = _rand(rng, batch, features, dtype=dtype) * 2, _rand(rng, batch, hidden, dtype=dtype)
    _check("aten::gru_cell", [x, hx, *w, *b])


def test_cells_saturate_without_overflow() -> None:
    """Gates far into the sigmoid's and tanh's flat ends (exp overflows to inf, the gate is 0)."""
    rng = np.random.default_rng(3)
    w = [_rand(rng, 4 * H, IN) * 300, _rand(rng, 4 * H, H) * 300]
    _check(
        "aten::lstm_cell", [_rand(rng, B, IN), [_rand(rng, B, H), _rand(rng, B, H)], *w, None, None]
    )
    _check(
        "aten::gru_cell",
        [_rand(rng, B, IN), _rand(rng, B, H), w[0][: 3 * H], w[1][: 3 * H], None, None],
    )


def test_cell_errors_name_the_node() -> None:
    rng = np.random.default_rng(4)
    w = [_rand(rng, 4 * H, IN), _rand(rng, 4 * H, H)]
    hx = [_rand(rng, B, H), _rand(rng, B, H)]
    # PyTorch refuses a 1-D input too (nn.LSTMCell unsqueezes an unbatched input first).
    _expect_error(
        "aten::lstm_cell",
        [_rand(rng, IN), [_rand(rng, H), _rand(rng, H)], *w, None, None],
        "2-D input",
    )
    _expect_error(
        "aten::lstm_cell", [_rand(rng, B, IN + 1), hx, *w, None, None], "inconsistent input_size"
    )
    _expect_error(
        "aten::lstm_cell", [_rand(rng, B + 1, IN), hx, *w, None, None], r"hx\[0\] must have shape"
    )
    _expect_error(
        "aten::gru_cell", [_rand(rng, B, IN), hx[0], *w, None, None], "w_ih must have shape"
    )


# -- layers ---------------------------------------------------------------------------------------
LAYER_CASES = list(itertools.product([1, 2], [False, True], [False, True], [True, False]))


def _case_id(case: tuple) -> str:
    layers, bidirectional, batch_first, bias = case
    return f"L{layers}-{'bi' if bidirectional else 'uni'}-{'bf' if batch_first else 'sf'}-{'b' if bias else 'nob'}"


@pytest.mark.parametrize("case", LAYER_CASES, ids=_case_id)
def test_lstm(case: tuple) -> None:
    layers, bidirectional, batch_first, bias = case
    rng = np.random.default_rng(hash(case) % 1000)
    directions = 2 if bidirectional else 1
    for proj in (0, 3):
        params = _params(rng, 4, layers, directions, bias, proj)
        x = _rand(rng, B, T, IN) if batch_first else _rand(rng, T, B, IN)
        hx = [_rand(rng, layers * directions, B, proj or H), _rand(rng, layers * directions, B, H)]
        _check(
            "aten::lstm.input", [x, hx, params, bias, layers, 0.0, True, bidirectional, batch_first]
        )


@pytest.mark.parametrize("case", LAYER_CASES, ids=_case_id)
def test_gru(case: tuple) -> None:
    layers, bidirectional, batch_first, bias = case
    rng = np.random.default_rng(hash(case) % 1000 + 1)
    directions = 2 if bidirectional else 1
    params = _params(rng, 3, layers, directions, bias)
    x = _rand(rng, B, T, IN) if batch_first else _rand(rng, T, B, IN)
    hx = _rand(rng, layers * directions, B, H)
    _check("aten::gru.input", [x, hx, params, bias, layers, 0.0, True, bidirectional, batch_first])


@pytest.mark.parametrize("sizes", PACKED_SIZES, ids=str)
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("layers", [1, 2])
def test_packed_lstm_and_gru(layers: int, bidirectional: bool, sizes: list[int]) -> None:
    rng = np.random.default_rng(sum(sizes) + layers)
    directions = 2 if bidirectional else 1
    batch_sizes = np.array(sizes, dtype=np.int64)
    data = _rand(rng, int(batch_sizes.sum()), IN)
    lstm_params = _params(rng, 4, layers, directions, True)
    hx = [_rand(rng, layers * directions, sizes[0], H) for _ in range(2)]
    _check(
        "aten::lstm.data",
        [data, batch_sizes, hx, lstm_params, True, layers, 0.0, False, bidirectional],
    )
    gru_params = _params(rng, 3, layers, directions, False)
    _check(
        "aten::gru.data",
        [data, batch_sizes, hx[0], gru_params, False, layers, 0.0, False, bidirectional],
    )


def test_float32_layers_and_evaluation_dropout() -> None:
    """dropout is ignored in evaluation mode and with one layer, as in PyTorch."""
    rng = np.random.default_rng(7)
    f32 = np.float32
    params = _params(rng, 4, 2, 1, True, dtype=f32)
    hx = [_rand(rng, 2, B, H, dtype=f32), _rand(rng, 2, B, H, dtype=f32)]
    _check(
        "aten::lstm.input",
        [_rand(rng, T, B, IN, dtype=f32), hx, params, True, 2, 0.5, False, False, False],
    )
    one = _params(rng, 3, 1, 1, True)
    _check(
        "aten::gru.input",
        [_rand(rng, T, B, IN), _rand(rng, 1, B, H), one, True, 1, 0.5, True, False, False],
    )


def test_layer_errors_name_the_node() -> None:
    rng = np.random.default_rng(8)
    params = _params(rng, 4, 2, 1, True)
    hx = [_rand(rng, 2, B, H), _rand(rng, 2, B, H)]
    x = _rand(rng, T, B, IN)
    _expect_error(
        "aten::lstm.input", [x, hx, params, True, 2, 1.5, True, False, False], "between 0 and 1"
    )
    _expect_error(
        "aten::lstm.input",
        [x, hx, params[:-1], True, 2, 0.0, True, False, False],
        "params do not fit",
    )
    _expect_error(
        "aten::lstm.input", [x[0], hx, params, True, 2, 0.0, True, False, False], "3-D input"
    )
    _expect_error(
        "aten::lstm.input",
        [x, [hx[0][:1], hx[1]], params, True, 2, 0.0, True, False, False],
        r"expected hidden\[0\] of size \[2, 3, 5\]",
    )
    _expect_error(
        "aten::lstm.input",
        [_rand(rng, T, B, IN + 1), hx, params, True, 2, 0.0, True, False, False],
        "w_ih of layer 0",
    )
    gru_params = _params(rng, 3, 1, 1, True)
    unsorted = np.array([1, 2], dtype=np.int64)
    _expect_error(
        "aten::gru.data",
        [_rand(rng, 3, IN), unsorted, _rand(rng, 1, 2, H), gru_params, True, 1, 0.0, False, False],
        "non-increasing",
    )


# -- backward kernels ------------------------------------------------------------------------------
def _torch_grads(outputs: list, wrt: list, grads: list) -> list:
    pairs = [(o, torch.from_numpy(g)) for o, g in zip(outputs, grads, strict=True) if g is not None]
    return list(
        torch.autograd.grad(
            [p[0] for p in pairs], wrt, [p[1] for p in pairs], allow_unused=True, retain_graph=True
        )
    )


def _compare(ours: list, theirs: list) -> None:
    assert len(ours) == len(theirs)
    for index, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        if b is None:
            assert a is None, f"gradient {index}: torch has none"
            continue
        np.testing.assert_allclose(
            np.asarray(a), b.numpy(), rtol=1e-9, atol=1e-12, err_msg=f"gradient {index}"
        )


def _leaves(*arrays: np.ndarray | None) -> list:
    return [None if a is None else torch.tensor(a, requires_grad=True) for a in arrays]


@pytest.mark.parametrize("unused", [None, 0, 1], ids=["both", "no-hy", "no-cy"])
@pytest.mark.parametrize("bias", [True, False])
def test_lstm_cell_backward(bias: bool, unused: int | None) -> None:
    rng = np.random.default_rng(11)
    x, h, c = _rand(rng, B, IN), _rand(rng, B, H), _rand(rng, B, H)
    w = [_rand(rng, 4 * H, IN), _rand(rng, 4 * H, H)]
    b = [_rand(rng, 4 * H), _rand(rng, 4 * H)] if bias else [None, None]
    grads = [None if unused == k else _rand(rng, B, H) for k in range(2)]
    leaves = _leaves(x, h, c, *w, *b)
    outputs = torch.ops.aten.lstm_cell(leaves[0], leaves[1:3], *leaves[3:])
    theirs = _torch_grads(list(outputs), [t for t in leaves if t is not None], grads)
    d_x, d_hx, *d_w = _run("gradview::lstm_cell_backward", [*grads, x, [h, c], *w, *b])
    _compare([d_x, *d_hx, *(d for d in d_w if d is not None)], theirs)
    assert (d_w[2] is None) == (not bias)


@pytest.mark.parametrize("bias", [True, False])
def test_gru_cell_backward(bias: bool) -> None:
    rng = np.random.default_rng(12)
    x, h = _rand(rng, B, IN), _rand(rng, B, H)
    w = [_rand(rng, 3 * H, IN), _rand(rng, 3 * H, H)]
    b = [_rand(rng, 3 * H), _rand(rng, 3 * H)] if bias else [None, None]
    grad = _rand(rng, B, H)
    leaves = _leaves(x, h, *w, *b)
    theirs = _torch_grads(
        [torch.ops.aten.gru_cell(*leaves)], [t for t in leaves if t is not None], [grad]
    )
    ours = _run("gradview::gru_cell_backward", [grad, x, h, *w, *b])
    _compare([d for d in ours if d is not None], theirs)


def _sequence(
    rng: np.random.Generator, packed: bool, batch_first: bool
) -> tuple[np.ndarray, np.ndarray | None]:
    if packed:
        sizes = np.array(PACKED_SIZES[0], dtype=np.int64)
        return _rand(rng, int(sizes.sum()), IN), sizes
    return (_rand(rng, B, T, IN) if batch_first else _rand(rng, T, B, IN)), None


BACKWARD_CASES = list(itertools.product([1, 2], [False, True], [False, True], [False, True]))


@pytest.mark.parametrize(
    "case", BACKWARD_CASES, ids=lambda c: "L{}-bi{:d}-bf{:d}-packed{:d}".format(*c)
)
def test_lstm_backward(case: tuple) -> None:
    layers, bidirectional, batch_first, packed = case
    rng = np.random.default_rng(hash(case) % 997)
    directions = 2 if bidirectional else 1
    x, sizes = _sequence(rng, packed, batch_first)
    batch = B if sizes is None else int(sizes[0])
    for bias, proj in ((True, 0), (False, 0), (True, 3)):
        params = _params(rng, 4, layers, directions, bias, proj)
        h0, c0 = (
            _rand(rng, layers * directions, batch, proj or H),
            _rand(rng, layers * directions, batch, H),
        )
        leaves = _leaves(x, h0, c0, *params)
        if packed:
            outputs = torch.ops.aten.lstm.data(
                leaves[0],
                torch.from_numpy(sizes),
                leaves[1:3],
                leaves[3:],
                bias,
                layers,
                0.0,
                True,
                bidirectional,
            )
        else:
            outputs = torch.ops.aten.lstm.input(
                leaves[0],
                leaves[1:3],
                leaves[3:],
                bias,
                layers,
                0.0,
                True,
                bidirectional,
                batch_first,
            )
        for unused in (None, 0, 2):
            grads = [None if k == unused else _rand(rng, *o.shape) for k, o in enumerate(outputs)]
            theirs = _torch_grads(list(outputs), leaves, grads)
            d_x, d_hx, d_params = _run(
                "gradview::lstm_backward",
                [*grads, x, sizes, [h0, c0], params, bias, layers, bidirectional, batch_first],
            )
            _compare([d_x, *d_hx, *d_params], theirs)


@pytest.mark.parametrize(
    "case", BACKWARD_CASES, ids=lambda c: "L{}-bi{:d}-bf{:d}-packed{:d}".format(*c)
)
def test_gru_backward(case: tuple) -> None:
    layers, bidirectional, batch_first, packed = case
    rng = np.random.default_rng(hash(case) % 991)
    directions = 2 if bidirectional else 1
    x, sizes = _sequence(rng, packed, batch_first)
    batch = B if sizes is None else int(sizes[0])
    for bias in (True, False):
        params = _params(rng, 3, layers, directions, bias)
        h0 = _rand(rng, layers * directions, batch, H)
        leaves = _leaves(x, h0, *params)
        if packed:
            outputs = torch.ops.aten.gru.data(
                leaves[0],
                torch.from_numpy(sizes),
                leaves[1],
                leaves[2:],
                bias,
                layers,
                0.0,
                True,
                bidirectional,
            )
        else:
            outputs = torch.ops.aten.gru.input(
                leaves[0],
                leaves[1],
                leaves[2:],
                bias,
                layers,
                0.0,
                True,
                bidirectional,
                batch_first,
            )
        for unused in (None, 1):
            grads = [None if k == unused else _rand(rng, *o.shape) for k, o in enumerate(outputs)]
            theirs = _torch_grads(list(outputs), leaves, grads)
            d_x, d_h0, d_params = _run(
                "gradview::gru_backward",
                [*grads, x, sizes, h0, params, bias, layers, bidirectional, batch_first],
            )
            _compare([d_x, d_h0, *d_params], theirs)
