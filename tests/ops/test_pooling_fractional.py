"""fractional_max_pool2d/3d beyond the op_db sweep (whose samples draw the windows with
aten::rand, so it compares shapes only): given the same random_samples, gradview's output,
indices, gradient and second derivative are PyTorch's to the bit (ATen's interval
generation in the input's dtype, first maximum, last NaN); bad samples are refused."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gradview.ir import parse_ir
from gradview.runtime import GraphExecutor, GraphRuntimeError, Tensor, autograd


def _graph(dims: int, kernel: list[int], output: list[int]) -> str:
    return (
        "graph(%x : Tensor, %samples : Tensor):\n"
        f"  %kernel : int[] = prim::Constant[value={kernel}]()\n"
        f"  %output : int[] = prim::Constant[value={output}]()\n"
        f"  %y : Tensor, %indices : Tensor = aten::fractional_max_pool{dims}d(%x, %kernel, %output, %samples)\n"
        "  return (%y, %indices)\n"
    )


CASES = [  # (input shape, kernel, output size)
    ((2, 3, 7, 6), [2, 2], [4, 3]),
    ((3, 9, 9), [3, 3], [3, 3]),
    ((1, 2, 5, 5), [2, 3], [4, 3]),  # out + kernel - 1 == size: allowed in 2-d
    ((1, 1, 6, 5, 5), [2, 2, 2], [3, 3, 2]),
    ((2, 4, 5, 7), [1, 2, 3], [2, 3, 4]),
]


@pytest.mark.parametrize(("shape", "kernel", "output"), CASES, ids=str)
@pytest.mark.parametrize("ties", [False, True])
def test_output_indices_and_gradients_equal_torch(
    shape: tuple[int, ...], kernel: list[int], output: list[int], ties: bool
) -> None:
    dims = len(kernel)
    rng = np.random.default_rng(len(shape) + dims)
    x = rng.standard_normal(shape)
    if ties:
        x = np.round(x)
        x.flat[::7] = np.nan
    batch = shape[0] if len(shape) == dims + 2 else 1
    samples = rng.random((batch, shape[-dims - 1], dims))
    pool = getattr(torch.ops.aten, f"fractional_max_pool{dims}d")
    tx = torch.tensor(x, requires_grad=True)
    t_out, t_indices = pool(tx, kernel, output, torch.tensor(samples))
    v, w = rng.standard_normal(tuple(t_out.shape)), rng.standard_normal(shape)
    tv = torch.tensor(v, requires_grad=True)
    (t_first,) = torch.autograd.grad(t_out, tx, tv, create_graph=True)
    (t_second,) = torch.autograd.grad(t_first, tv, torch.tensor(w))

    gx, gv = Tensor(x.copy(), requires_grad=True), Tensor(v.copy(), requires_grad=True)
    out, indices = GraphExecutor(parse_ir(_graph(dims, kernel, output))).run([gx, Tensor(samples)])
    (first,) = autograd.grad([out], [gx], [gv], create_graph=True)
    (second,) = autograd.grad([first], [gv], [Tensor(w)])
    np.testing.assert_array_equal(out.detach().numpy(), t_out.detach().numpy())
    np.testing.assert_array_equal(indices.numpy(), t_indices.numpy())
    np.testing.assert_array_equal(first.detach().numpy(), t_first.detach().numpy())
    np.testing.assert_array_equal(second.detach().numpy(), t_second.numpy())


@pytest.mark.parametrize(("samples_shape", "message"), [
    ((1, 3, 2), "size\\(1\\) equals to input channel size"),
    ((1, 2, 3), "size\\(2\\) equals to 2"),
    ((2,), "to have 3 dimensions"),
])
def test_bad_samples_are_refused_naming_the_node(samples_shape: tuple[int, ...], message: str) -> None:
    executor = GraphExecutor(parse_ir(_graph(2, [2, 2], [3, 3])))
    with pytest.raises(GraphRuntimeError, match=f"aten::fractional_max_pool2d.*{message}"):
        executor.run([Tensor(np.ones((1, 2, 5, 5))), Tensor(np.full(samples_shape, 0.5))])


def test_a_3d_window_flush_with_the_input_is_refused_as_in_torch() -> None:
    """3-d requires out + kernel - 1 < size (2-d allows equality)."""
    executor = GraphExecutor(parse_ir(_graph(3, [2, 2, 2], [4, 4, 4])))
    with pytest.raises(GraphRuntimeError, match="pool time 2 too large relative to input time 5"):
        executor.run([Tensor(np.ones((1, 2, 5, 5, 5))), Tensor(np.full((1, 2, 3), 0.5))])
