"""Statistics kernels against PyTorch where its CPU kernels' rules decide the numbers:
searchsorted's NaNs, mode's tie rule, median's NaN, histc's bins, cov's float32 weights."""

from __future__ import annotations

import numpy as np
import torch

from gradview.kernels import statistics as kernels


def test_searchsorted_puts_nan_values_past_the_end_as_atens_binary_search() -> None:
    seq = np.array([[0.0, 1.0, np.nan, 3.0], [-1.0, 0.5, 0.5, 2.0]])
    values = np.array([[np.nan, 1.0, 2.5], [0.5, np.nan, -3.0]])
    for right in (False, True):
        ours = kernels.searchsorted(np, seq, values, False, right)
        theirs = torch.searchsorted(torch.tensor(seq), torch.tensor(values), right=right).numpy()
        np.testing.assert_array_equal(ours, theirs)


def test_mode_is_the_smallest_most_frequent_value_at_its_last_occurrence() -> None:
    x = np.array([[1.0, 2.0, 2.0, 1.0, 3.0], [5.0, 5.0, 4.0, 4.0, 6.0], [3.0, 1.0, 3.0, 1.0, 1.0]])
    values, indices = kernels_mode(x)
    t = torch.mode(torch.tensor(x), 1)
    np.testing.assert_array_equal(values, t.values.numpy())
    np.testing.assert_array_equal(indices, t.indices.numpy())


def kernels_mode(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    from gradview.kernels import reductions

    return reductions.mode(np, x, 1, False)


def test_median_of_a_slice_with_nan_is_its_first_nan_and_nanmedian_skips_them() -> None:
    from gradview.kernels import reductions

    x = np.array([[1.0, 3.0, 3.0, 0.5], [2.0, np.nan, 1.0, np.nan], [np.nan, 4.0, np.nan, -1.0]])
    for ours, theirs in ((reductions.median_dim(np, x, 1), torch.median(torch.tensor(x), 1)),
                         (reductions.nanmedian_dim(np, x, 1), torch.nanmedian(torch.tensor(x), 1))):
        np.testing.assert_array_equal(ours[0], theirs.values.numpy())
        np.testing.assert_array_equal(ours[1], theirs.indices.numpy())


def test_histc_bins_values_on_the_edges_as_atens_linear_interpolation() -> None:
    x = np.concatenate([np.linspace(-1, 1, 41), [np.nan, 2.0, -1.5, 1.0]])
    ours = kernels.histc(np, x, 7, -1, 1)
    np.testing.assert_array_equal(ours, torch.histc(torch.tensor(x), 7, -1, 1).numpy())


def test_cov_float32_aweights_with_fweights_gradient_equals_eager_bit_for_bit() -> None:
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 6))
    aweights = rng.uniform(0.1, 1.0, 6).astype(np.float32)
    fweights = np.array([1, 3, 2, 1, 4, 2], dtype=np.int32)
    grad = rng.standard_normal((3, 3))
    for fw in (fweights,):
        for correction in (0, 1):
            leaf = torch.tensor(aweights, requires_grad=True)
            out = torch.cov(torch.tensor(x), correction=correction,
                            fweights=None if fw is None else torch.tensor(fw), aweights=leaf)
            (theirs,) = torch.autograd.grad(out, leaf, torch.tensor(grad))
            ours = kernels.cov_backward(np, grad, x, correction, fw, aweights)[1]
            np.testing.assert_array_equal(ours, theirs.numpy())


def test_mode_follows_std_sort_for_long_slices_with_ties_and_nans() -> None:
    from gradview.kernels import reductions

    rng = np.random.default_rng(3)
    x = rng.integers(0, 5, (6, 40)).astype(float)
    x[rng.random(x.shape) < 0.15] = np.nan
    values, indices = reductions.mode(np, x, 1, False)
    t = torch.mode(torch.tensor(x), 1)
    np.testing.assert_array_equal(values, t.values.numpy())
    np.testing.assert_array_equal(indices, t.indices.numpy())


def test_nanmedian_of_only_nans_points_where_std_nth_element_leaves_them() -> None:
    from gradview.kernels import reductions

    for n in range(1, 20):
        x = np.full((1, n), np.nan)
        np.testing.assert_array_equal(reductions.nanmedian_dim(np, x, 1)[1],
                                      torch.nanmedian(torch.tensor(x), 1).indices.numpy())


def test_a_float_scalar_searched_in_integer_boundaries_is_not_truncated() -> None:
    boundaries = np.array([1, 3, 5, 7])
    assert kernels.bucketize_scalar(np, 3.5, boundaries) == torch.bucketize(3.5, torch.tensor(boundaries)).item()
    assert kernels.searchsorted_scalar(np, boundaries, 3.5) == torch.searchsorted(torch.tensor(boundaries), 3.5).item()
