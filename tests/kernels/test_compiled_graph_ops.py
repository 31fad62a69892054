"""The kernels AOTAutograd's graphs (torch.compile) need, against ``torch.ops.aten``:
``_to_copy`` (bfloat16 refused, naming the node), the functional ``copy``,
``slice_scatter``, ``new_empty_strided``, ``scalar_tensor``, ``var_mean`` (every
overload), ``native_dropout`` and its backward (the mask is gradview's own, drawn
from a fixed seed: checked for what it must satisfy, and that every run draws the
same one), and ``_scaled_dot_product_flash_attention_for_cpu`` with its backward.
Gradients are checked by the catalogue (tests/ops/test_catalog.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gradview.runtime import GraphRuntimeError
from gradview.runtime import run_graph as _run_graph
from tests.kernels import oracle
from tests.kernels.oracle import check_op, op_graph, torch_call

F64, F32, F16, I64, BF16 = 7, 6, 5, 4, 15
DTYPES = [np.float64, np.float32]


def _x(seed: int, shape: tuple[int, ...], dtype: type = np.float64) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _tol(dtype: type) -> dict[str, float]:
    return {"rtol": 1e-5, "atol": 1e-6} if dtype == np.float32 else {"rtol": 1e-10, "atol": 1e-12}


def _run(op: str, args: list) -> list:
    graph, inputs = op_graph(op, args)
    return _run_graph(graph, inputs, backend=oracle.BACKEND)


def _refuses(op: str, args: list, *words: str) -> str:
    graph, inputs = op_graph(op, args)
    with pytest.raises(GraphRuntimeError) as info:
        _run_graph(graph, inputs, backend=oracle.BACKEND)
    message = str(info.value)
    assert "\n" not in message.strip() and all(w in message for w in words), message
    return message


# -- _to_copy, copy, slice_scatter, new_empty_strided, scalar_tensor ------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("target", [None, F64, F32, F16, I64])
@pytest.mark.parametrize("shape", [(3, 4), (2, 1, 5), ()])
def test_to_copy(dtype: type, target: int | None, shape: tuple[int, ...]) -> None:
    x = _x(1, shape, dtype) * 3
    (out,) = check_op("aten::_to_copy", [x, target, None, None, None, False, None], rtol=0, atol=0)
    assert not np.shares_memory(np.asarray(out), x)


def test_to_copy_refuses_bfloat16_naming_the_node() -> None:
    _refuses("aten::_to_copy", [_x(1, (3,)), BF16, None, None, None, False, None],
             "aten::_to_copy", "BFloat16")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    ("self_shape", "src_shape", "src_dtype"),
    [((3, 4), (4,), None), ((2, 3, 4), (1, 3, 1), None), ((4, 2), (4, 2), np.float64),
     ((4, 2), (), np.float32), ((3, 4), (3, 4), np.int64)],
)
def test_copy(dtype: type, self_shape: tuple, src_shape: tuple, src_dtype: type | None) -> None:
    self = _x(2, self_shape, dtype)
    src = (_x(3, src_shape) * 5).astype(src_dtype or dtype)
    check_op("aten::copy", [self, src, False], rtol=0, atol=0)


def test_copy_refuses_a_source_that_does_not_broadcast() -> None:
    _refuses("aten::copy", [_x(1, (3, 4)), _x(2, (3,)), False], "aten::copy", "expanded")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    ("shape", "dim", "start", "end", "step"),
    [((5, 4), 1, 1, 4, 2), ((5, 4), 0, None, None, 1), ((5, 4), -1, -3, None, 1),
     ((6, 3, 2), 0, 1, 100, 3), ((4, 5), 1, 0, 2, 1)],
)
def test_slice_scatter(dtype: type, shape: tuple, dim: int, start, end, step: int) -> None:
    self = _x(4, shape, dtype)
    part = torch.ops.aten.slice.Tensor(torch.from_numpy(self), dim, start, end, step).shape
    src = _x(5, tuple(part), dtype)
    check_op("aten::slice_scatter", [self, src, dim, start, end, step], rtol=0, atol=0)


def test_slice_scatter_refuses_a_source_of_another_shape() -> None:
    _refuses("aten::slice_scatter", [_x(1, (5, 4)), _x(2, (5, 1)), 1, 0, 2, 1], "slice_scatter", "src size")


@pytest.mark.parametrize("dtype", [None, F64, I64])
def test_new_empty_strided_has_the_asked_shape_and_dtype(dtype: int | None) -> None:
    args = [_x(1, (3, 4), np.float32), [2, 3], [3, 1], dtype, None, None, None]
    (ours,) = _run("aten::new_empty_strided", args)
    (theirs,) = torch_call("aten::new_empty_strided", args)
    assert np.asarray(ours).shape == tuple(theirs.shape)
    assert np.asarray(ours).dtype == theirs.numpy().dtype


@pytest.mark.parametrize(("value", "dtype"), [(2.5, None), (3, None), (-2, F32), (1.5, F64), (7, I64)])
def test_scalar_tensor(value: object, dtype: int | None) -> None:
    check_op("aten::scalar_tensor", [value, dtype, None, None, None], rtol=0, atol=0)


# -- var_mean -----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    ("dim", "correction", "keepdim"),
    [(None, None, False), ([1], 0, True), ([0, 2], 2, False), ([-1], 1, True), (None, 0, True)],
)
def test_var_mean_correction(dtype: type, dim, correction, keepdim: bool) -> None:
    check_op("aten::var_mean.correction", [_x(6, (3, 4, 5), dtype), dim, correction, keepdim], **_tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("unbiased", [True, False])
def test_var_mean_and_dim(dtype: type, unbiased: bool) -> None:
    x = _x(7, (4, 3, 2), dtype)
    check_op("aten::var_mean", [x, unbiased], **_tol(dtype))
    check_op("aten::var_mean.dim", [x, [0, 2], unbiased, True], **_tol(dtype))


def test_var_mean_refuses_integers() -> None:
    _refuses("aten::var_mean.correction", [np.arange(6).reshape(2, 3), None, None, False], "var_mean")


# -- native_dropout, native_dropout_backward ---------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("p", "train"), [(0.3, False), (0.0, True), (0.0, None)])
def test_native_dropout_without_randomness_is_pytorchs(dtype: type, p: float, train: bool | None) -> None:
    check_op("aten::native_dropout", [_x(8, (4, 5), dtype), p, train], rtol=0, atol=0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_native_dropout_with_p_one_drops_everything(dtype: type) -> None:
    x = _x(9, (3, 4), dtype)
    x[0, 0] = np.inf  # PyTorch multiplies by 0: NaN
    check_op("aten::native_dropout", [x, 1.0, True], rtol=0, atol=0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("p", "train"), [(0.3, True), (0.7, None)])
def test_native_dropout_in_training_scales_the_kept_elements_with_one_mask_per_shape(
    dtype: type, p: float, train: bool | None
) -> None:
    x = _x(10, (40, 50), dtype)
    out, mask = (np.asarray(a) for a in _run("aten::native_dropout", [x, p, train]))
    assert mask.dtype == np.bool_ and out.dtype == dtype and out.shape == x.shape
    expected = np.where(mask, x * np.asarray(1 / (1 - p), dtype=dtype), 0)
    np.testing.assert_allclose(out, expected, **_tol(dtype))
    assert abs(mask.mean() - (1 - p)) < 0.05  # 2000 draws from the fixed seed
    # Every run draws the same mask (the gradient check's finite differences need it).
    again, mask_again = (np.asarray(a) for a in _run("aten::native_dropout", [x * 2, p, train]))
    np.testing.assert_array_equal(mask_again, mask)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("scale", [1.0, 1 / 0.7, 0.0])
def test_native_dropout_backward(dtype: type, scale: float) -> None:
    mask = np.random.default_rng(11).random((3, 5)) > 0.4
    check_op("aten::native_dropout_backward", [_x(12, (3, 5), dtype), mask, scale], **_tol(dtype))


# -- _scaled_dot_product_flash_attention_for_cpu and its backward ------------------------------
_FLASH = "aten::_scaled_dot_product_flash_attention_for_cpu"
FLASH_CASES = [
    ((2, 3, 5, 4), 6, False, False, None),
    ((2, 3, 5, 4), 6, True, False, 0.3),
    ((1, 2, 4, 8), 4, False, True, None),
    ((2, 1, 3, 4), 7, False, True, 0.5),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("q_shape", "source", "causal", "masked", "scale"), FLASH_CASES)
def test_flash_attention_and_its_backward(
    dtype: type, q_shape: tuple, source: int, causal: bool, masked: bool, scale: float | None
) -> None:
    b, h, length, e = q_shape
    q, k, v = _x(13, q_shape, dtype), _x(14, (b, h, source, e), dtype), _x(15, (b, h, source, e), dtype)
    mask = _x(16, (length, source), dtype) if masked else None
    out, lse = check_op(_FLASH, [q, k, v, 0.0, causal, mask, scale], **_tol(dtype))
    grad = _x(17, np.asarray(out).shape, dtype)
    out, lse = np.asarray(out), np.asarray(lse)
    check_op(f"{_FLASH}_backward", [grad, q, k, v, out, lse, 0.0, causal, mask, scale], **_tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_flash_attention_with_a_row_masked_everywhere(dtype: type) -> None:
    """PyTorch's answer: zeros, a logsumexp of 0, and zero gradients for that row."""
    q, k, v = _x(19, (1, 2, 3, 4), dtype), _x(20, (1, 2, 5, 4), dtype), _x(21, (1, 2, 5, 4), dtype)
    mask = np.zeros((3, 5), dtype=dtype)
    mask[1] = -np.inf
    out, lse = (np.asarray(a) for a in check_op(_FLASH, [q, k, v, 0.0, False, mask, None], **_tol(dtype)))
    grad = _x(22, out.shape, dtype)
    check_op(f"{_FLASH}_backward", [grad, q, k, v, out, lse, 0.0, False, mask, None], **_tol(dtype))


def test_flash_attention_refuses_what_pytorchs_cpu_kernel_refuses() -> None:
    q = _x(18, (1, 2, 3, 4))
    _refuses(_FLASH, [q, q, q, 0.5, False, None, None], _FLASH, "dropout")
    _refuses(_FLASH, [q[0], q[0], q[0], 0.0, False, None, None], _FLASH, "4-D")
    _refuses(_FLASH, [q, q, q, 0.0, False, np.ones((3, 3), dtype=bool), None], _FLASH, "dtype")
