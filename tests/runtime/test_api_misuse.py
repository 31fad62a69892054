"""Python API misuse answered as PyTorch answers it (issue 25): a gradient of another
dtype is cast to its output's, run_graph takes gradview Tensors' arrays (or refuses
one that requires grad by name), GraphExecutor names what it expected."""

from __future__ import annotations

from pathlib import Path

import numpy
import pytest

from gradview.ir import parse_ir
from gradview.runtime import GraphExecutor, Tensor, autograd
from gradview.runtime.interpreter import run_graph

torch = pytest.importorskip("torch")

MLP = parse_ir((Path(__file__).resolve().parents[2] / "examples" / "mlp.ir").read_text())
SHAPES = [(8, 4), (4, 16), (16,), (16, 3), (3,)]


def _values() -> list[numpy.ndarray]:
    rng = numpy.random.default_rng(0)
    return [rng.standard_normal(shape) for shape in SHAPES]


def _torch_mlp(x, w1, b1, w2, b2):  # examples/mlp.ir as PyTorch writes it
    return torch.relu(x @ w1 + b1) @ w2 + b2


@pytest.mark.parametrize("dtype", [numpy.int64, numpy.float32, numpy.bool_])
@pytest.mark.parametrize("how", ["backward", "grad"])
def test_a_gradient_of_another_dtype_is_cast_as_torch_casts_it(dtype: type, how: str) -> None:
    values = _values()
    gradient = numpy.arange(24).reshape(8, 3).astype(dtype)
    inputs = [Tensor(v, requires_grad=True) for v in values]
    (out,) = GraphExecutor(MLP).run(inputs)
    expected_inputs = [torch.tensor(v, requires_grad=True) for v in values]
    expected_out = _torch_mlp(*expected_inputs)
    if how == "backward":
        autograd.backward([out], [Tensor(gradient)])
        expected_out.backward(torch.from_numpy(gradient))
        got, expected = [t.grad for t in inputs], [t.grad for t in expected_inputs]
    else:
        got = autograd.grad([out], inputs, [Tensor(gradient)])
        expected = torch.autograd.grad(expected_out, expected_inputs, torch.from_numpy(gradient))
    for mine, theirs in zip(got, expected, strict=True):
        assert mine.dtype == numpy.float64 and str(theirs.dtype) == "torch.float64"
        numpy.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-12)


def test_run_graph_takes_the_arrays_of_gradview_tensors() -> None:
    values = _values()
    (from_tensors,) = run_graph(MLP, [Tensor(v) for v in values])
    expected = _torch_mlp(*[torch.from_numpy(v) for v in values])
    numpy.testing.assert_allclose(from_tensors, expected.numpy(), rtol=1e-12)


def test_run_graph_refuses_a_tensor_that_requires_grad_by_name() -> None:
    values = [Tensor(v, requires_grad=i == 1) for i, v in enumerate(_values())]
    with pytest.raises(TypeError, match=r"run_graph input 1 is a gradview Tensor that requires grad.*GraphExecutor"):
        run_graph(MLP, values)


@pytest.mark.parametrize(
    ("graph", "said"),
    [
        (None, "GraphExecutor expects a gradview.ir.Graph, but got NoneType"),
        ("graph(%x : Tensor):\n  return (%x)\n", "(parse_ir(text) makes one from IR text), but got str"),
    ],
)
def test_graph_executor_names_what_it_expected(graph: object, said: str) -> None:
    with pytest.raises(TypeError) as raised:
        GraphExecutor(graph)  # type: ignore[arg-type]
    assert said in str(raised.value)
    # PyTorch answers a wrong argument type with a TypeError too.
    with pytest.raises(TypeError):
        torch.jit.script(graph)


def test_graph_executor_checks_its_numbers() -> None:
    with pytest.raises(TypeError, match="inline_threshold expects an int or None, but got str"):
        GraphExecutor(MLP, inline_threshold="5")  # type: ignore[arg-type]
