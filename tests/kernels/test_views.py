"""View-like kernels (kernels/views.py) where the op_db sweep cannot see the difference.

``as_strided`` reads a tensor's storage: gradview reads an array that owns its
row-major memory, which is PyTorch's storage for a graph input or a fresh
contiguous result, and refuses a view (whose storage is its base tensor's) or
another layout (a transposed input's elementwise result keeps the transposed
order in both, which the backward, given only sizes, could not undo).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gradview.kernels import views
from gradview.kernels.protocol import KernelError


def test_as_strided_reads_a_fresh_results_storage_as_pytorch_does() -> None:
    x = np.arange(12.0).reshape(3, 4)
    ours = views.as_strided(np, x * 2, [2, 3], [1, 2], 1)
    theirs = (torch.from_numpy(x) * 2).as_strided([2, 3], [1, 2], 1)
    np.testing.assert_array_equal(ours, theirs.numpy())


@pytest.mark.parametrize("make", [lambda x: x[1:], lambda x: x.T, lambda x: x.T * 2])
def test_as_strided_of_a_view_or_another_layout_is_refused_in_one_line(make) -> None:  # noqa: ANN001
    x = np.arange(12.0).reshape(3, 4)
    with pytest.raises(KernelError, match="view of another tensor or not laid out row-major"):
        views.as_strided(np, make(x), [2, 2], [1, 2], 0)


def test_as_strided_backward_adds_up_overlapping_reads() -> None:
    x = torch.zeros(5, dtype=torch.float64, requires_grad=True)
    grad = torch.arange(6.0, dtype=torch.float64).reshape(2, 3)
    (theirs,) = torch.autograd.grad(x.as_strided([2, 3], [1, 1]), x, grad)
    ours = views.as_strided_backward(np, grad.numpy(), [5], [2, 3], [1, 1], 0)
    np.testing.assert_array_equal(ours, theirs.numpy())
