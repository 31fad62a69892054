"""Distance kernels against PyTorch where its choice of arithmetic decides the numbers:
cdist's two paths and cosine_similarity's clamped norms."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gradview.kernels import distances as kernels


@pytest.mark.parametrize(("rows", "mode"), [(4, None), (30, None), (4, 1), (30, 2)])
def test_cdist_takes_atens_path_for_its_rows_and_compute_mode(rows: int, mode: int | None) -> None:
    rng = np.random.default_rng(rows)
    x1, x2 = rng.standard_normal((2, rows, 5)) * 10, rng.standard_normal((2, 3, 5)) * 10
    names = {None: "use_mm_for_euclid_dist_if_necessary", 1: "use_mm_for_euclid_dist",
             2: "donot_use_mm_for_euclid_dist"}
    a, b = torch.tensor(x1, requires_grad=True), torch.tensor(x2, requires_grad=True)
    out = torch.cdist(a, b, 2.0, names[mode])
    grad = rng.standard_normal(tuple(out.shape))
    ga, gb = torch.autograd.grad(out, (a, b), torch.tensor(grad))
    np.testing.assert_allclose(kernels.cdist(np, x1, x2, 2.0, mode), out.detach().numpy(), rtol=1e-13, atol=0)
    ours = kernels.cdist_backward(np, grad, x1, x2, 2.0, mode)
    np.testing.assert_allclose(ours[0], ga.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ours[1], gb.numpy(), rtol=1e-12, atol=1e-14)


def test_cosine_similarity_clamps_small_norms_but_differentiates_the_unclamped_one() -> None:
    x1 = np.array([[1e-9, -2e-9, 3e-10], [1.0, 2.0, 3.0]])
    x2 = np.array([[0.5, 0.25, -1.0], [2e-10, 1e-9, 0.0]])
    a, b = torch.tensor(x1, requires_grad=True), torch.tensor(x2, requires_grad=True)
    out = torch.cosine_similarity(a, b, 1, 1e-8)
    grad = np.array([0.7, -1.3])
    ga, gb = torch.autograd.grad(out, (a, b), torch.tensor(grad))
    np.testing.assert_allclose(kernels.cosine_similarity(np, x1, x2, 1, 1e-8), out.detach().numpy(), rtol=1e-13)
    ours = kernels.cosine_similarity_backward(np, grad, x1, x2, 1, 1e-8)
    np.testing.assert_allclose(ours[0], ga.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ours[1], gb.numpy(), rtol=1e-12, atol=1e-14)
