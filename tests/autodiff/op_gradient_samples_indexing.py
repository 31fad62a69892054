"""The catalogue's sample calls for issue 22's indexing ops (gather/scatter, index_*, take/put,
masked_*, *_scatter, argwhere, nonzero_static/numpy): see op_gradient_samples.py, which imports
this module at its end to add them to SAMPLES."""

from __future__ import annotations

import numpy as np
import torch

from .op_gradient_samples import S, add, f, ints, mask

__all__: list[str] = []

_gather_index = np.array([[0, 2, 1], [2, 2, 0]], dtype=np.int64)  # a repeated position: gradients add

add("gather", S(f(3, 4), 0, _gather_index, False))
add("scatter_add", S(f(3, 4), 0, _gather_index, f(2, 3)))
add("scatter.src", S(f(3, 4), 1, np.array([[0, 2], [3, 1]], dtype=np.int64), f(2, 2)))
add("scatter.value", S(f(3, 4), 1, np.array([[0, 2], [3, 1]], dtype=np.int64), 1.5))
add("index_select", S(f(4, 3), 0, ints(2, 0, 2)))
add("index_add", S(f(4, 3), 0, ints(2, 0, 2), f(3, 3), 2.0))
add("index_copy", S(f(4, 3), 0, ints(3, 0), f(2, 3)))
add("index_fill.int_Scalar", S(f(4, 3), 1, ints(2, 0), -1.5))
add("take", S(f(3, 4), ints(5, 0, 5, 11)))
add("put", S(f(3, 4), ints(5, 0, 11), f(3), True))
add("select_scatter", S(f(3, 4), f(4), 0, 1))
add("diagonal_scatter", S(f(3, 4), f(3), 1, 0, 1))
add("argwhere", S(mask(3, 4)))
add("nonzero_static", S(mask(3, 4), 4, -1))
add("nonzero_numpy", S(mask(3, 4)))
add("index_fill.int_Tensor", S(f(4, 3), 1, ints(2, 0), f()))
add("masked_scatter", S(f(3, 4), mask(3, 4), f(12)))
add("masked_select", S(f(3, 4), mask(3, 4)))
add("take_along_dim", S(f(3, 4), np.array([[0, 3], [1, 1], [2, 0]], dtype=np.int64), 1))
add("scatter.reduce", S(f(3, 4), 1, np.array([[0, 2], [3, 1]], dtype=np.int64), f(2, 2), "add"))
add("scatter.value_reduce", S(f(3, 4), 1, np.array([[0, 2], [3, 1]], dtype=np.int64), 1.5, "add"))
add("scatter_reduce.two", S(f(3, 4), 1, np.array([[0, 2], [3, 1]], dtype=np.int64), f(2, 2), "sum", True))
add("as_strided_scatter", S(f(3, 3), f(2, 2), [2, 2], [1, 2], 0))
add("index_put", S(f(4, 3), [ints(2, 0, 2), None], f(3, 1), True))  # repeats add; values broadcast
add("index_put.hacked_twin", S(f(4, 3), [ints(2, 0), ints(1, 1)], f(2), False))
add("index_put_", S(f(4, 3), [ints(2, 0, 2), None], f(3, 1), True))  # x[idx] += v, in place
add("index_put_.hacked_twin", S(f(4, 3), [ints(2, 0), ints(1, 1)], f(2), False))
_masked_rows = np.array([[True], [False], [True]])  # hides the out-of-range index 7
add("_unsafe_masked_index", S(f(4, 3), _masked_rows, [ints(1, 7, 3), None], 0.5))
add("_unsafe_masked_index_put_accumulate", S(f(4, 3), _masked_rows, [ints(1, 7, 1), None], f(3, 3)))


def masked_scatter_backward(grad: torch.Tensor, mask_: torch.Tensor, sizes: list[int]) -> torch.Tensor:
    """masked_scatter's source vjp, as a differentiable PyTorch program."""
    source = torch.zeros(sizes, dtype=grad.dtype, requires_grad=True)
    out = torch.zeros(grad.shape, dtype=grad.dtype).masked_scatter(mask_, source)
    return torch.autograd.grad(out, source, grad, create_graph=True)[0]


def take_along_dim_backward(grad: torch.Tensor, self: torch.Tensor, indices: torch.Tensor, dim: int | None) -> torch.Tensor:
    """take_along_dim's vjp with respect to self, likewise."""
    leaf = self.detach().requires_grad_(True)
    return torch.autograd.grad(torch.take_along_dim(leaf, indices, dim), leaf, grad, create_graph=True)[0]


add("gradview::masked_scatter_backward", S(f(3, 4), mask(3, 4), [12], torch=masked_scatter_backward))
add("gradview::take_along_dim_backward", S(
    f(3, 2), f(3, 4), np.array([[0, 3], [1, 1], [2, 0]], dtype=np.int64), 1, torch=take_along_dim_backward
))


_ir_source = f(3, 2)
_ir_source[0, 1] = 0.0  # a single zero factor: prod's gradient takes the product of the others
add("index_reduce", S(f(3, 2), 0, ints(0, 2, 0), _ir_source, "prod"))
add("segment_reduce", S(f(6, 2), "max", lengths=ints(2, 0, 4), axis=0))
add("_segment_reduce_backward", S(f(3, 2), f(3, 2), f(6, 2), "sum", lengths=ints(2, 0, 4), axis=0))
