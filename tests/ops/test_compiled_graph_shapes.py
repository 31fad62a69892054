"""Shape rules of the ops AOTAutograd's graphs call, against what PyTorch's eager
ops return: dtype, sizes and strides (the flash attention's output laid out like a
permuted query, its logsumexp stored as [B, L, H]; copy keeps self's strides;
_to_copy and slice_scatter preserve the input's layout)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from gradview.ir import TensorType
from gradview.ir.passes.propagate_input_shapes import propagate_input_shapes
from gradview.kernels.dtypes import dtype_name
from tests.kernels.oracle import Typed, op_graph, torch_call

F64, F32, F16, I64 = 7, 6, 5, 4


def _typed_inputs(graph: Any, args: list[Any]) -> None:
    """Give each graph input the complete type of its array, strides included."""
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    for value, array in zip(graph.inputs(), arrays, strict=True):
        strides = tuple(s // array.itemsize for s in array.strides)
        value.set_type(TensorType(dtype_name(array.dtype), tuple(array.shape), strides, False, "cpu"))


def _check(op: str, args: list[Any]) -> None:
    graph, _ = op_graph(op, args)
    _typed_inputs(graph, args)
    propagate_input_shapes(graph)
    # The arrays as they are (oracle.torch_call would copy them to contiguous ones).
    strided = [Typed(torch.from_numpy(a), None) if isinstance(a, np.ndarray) else a for a in args]  # type: ignore[arg-type]
    expected = torch_call(op, strided)
    outputs = graph.outputs()
    assert len(outputs) == len(expected)
    for index, (value, tensor) in enumerate(zip(outputs, expected, strict=True)):
        got = value.type()
        assert isinstance(got, TensorType), f"output {index}: {got}"
        want = (dtype_name(tensor.numpy().dtype), tuple(tensor.shape), tuple(tensor.stride()))
        assert (got.scalar_type, got.sizes, got.strides) == want, f"output {index}: {got} vs torch {want}"


def _x(*shape: int, dtype: Any = np.float64) -> np.ndarray:
    return np.random.default_rng(0).standard_normal(shape).astype(dtype)


def _permuted(*shape: int, dtype: Any = np.float64) -> np.ndarray:
    """An array of ``shape`` stored as (dim 2, dim 0, dim 1, dim 3): MultiheadAttention's layout."""
    b, h, length, e = shape
    return _x(length, b, h, e, dtype=dtype).transpose(1, 2, 0, 3)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize("layout", [_x, _permuted])
def test_flash_attention(dtype: Any, layout: Any) -> None:
    q = layout(2, 3, 5, 4, dtype=dtype)
    k, v = _x(2, 3, 6, 4, dtype=dtype), _x(2, 3, 6, 4, dtype=dtype)
    _check("aten::_scaled_dot_product_flash_attention_for_cpu", [q, k, v, 0.0, False, None, None])


def test_flash_attention_backward() -> None:
    q, k, v = _x(2, 3, 5, 4), _x(2, 3, 6, 4), _x(2, 3, 6, 4)
    out, lse = (t.numpy() for t in torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
        torch.tensor(q), torch.tensor(k), torch.tensor(v)))
    _check("aten::_scaled_dot_product_flash_attention_for_cpu_backward",
           [_x(2, 3, 5, 4), q, k, v, out, lse, 0.0, False, None, None])


@pytest.mark.parametrize("target", [None, F32, F64, I64, F16])
@pytest.mark.parametrize("array", [_x(3, 4), _x(4, 3).T, _x(2, 3, 4).transpose(2, 0, 1)], ids=["c", "t", "p"])
def test_to_copy(target: int | None, array: np.ndarray) -> None:
    _check("aten::_to_copy", [array, target, None, None, None, False, None])


@pytest.mark.parametrize("self", [_x(4, 5)[:, :2], _x(3, 4), _x(4, 3).T], ids=["slice", "c", "t"])
def test_copy(self: np.ndarray) -> None:
    _check("aten::copy", [self, _x(self.shape[-1]), False])


@pytest.mark.parametrize("self", [_x(5, 4), _x(4, 5).T], ids=["c", "t"])
def test_slice_scatter(self: np.ndarray) -> None:
    _check("aten::slice_scatter", [self, _x(5, 2), 1, 1, 4, 2])


def test_new_empty_strided_and_scalar_tensor() -> None:
    _check("aten::new_empty_strided", [_x(3, 4, dtype=np.float32), [2, 3], [1, 2], None, None, None, None])
    _check("aten::new_empty_strided", [_x(3, 4), [2, 3], [3, 1], F32, None, None, None])
    _check("aten::scalar_tensor", [2.5, None, None, None, None])
    _check("aten::scalar_tensor", [2, I64, None, None, None])


@pytest.mark.parametrize(("dim", "keepdim"), [(None, False), ([0, 2], True), ([1], False)])
def test_var_mean(dim: Any, keepdim: bool) -> None:
    _check("aten::var_mean.correction", [_x(2, 3, 4), dim, 0, keepdim])


@pytest.mark.parametrize("train", [True, False, None])
def test_native_dropout_and_backward(train: Any) -> None:
    _check("aten::native_dropout", [_x(4, 5, dtype=np.float32), 0.3, train])
    mask = np.random.default_rng(1).random((4, 5)) > 0.5
    _check("aten::native_dropout_backward", [_x(4, 5), mask, 2.0])
