"""Resampling kernels (kernels/sampling.py) where the op_db sweep does not reach: nearest
upsampling's float32 scale, and the index conventions at the edges, against torch.ops.aten."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gradview.kernels.sampling import axis_taps
from tests.kernels.oracle import check_op

RNG = np.random.default_rng(22)


@pytest.mark.parametrize("mode", ["nearest", "_nearest_exact"])
@pytest.mark.parametrize(("size", "scale"), [(7, 1.3), (10, 0.3), (9, 2.9), (13, 1 / 3), (6, 0.7)])
def test_nearest_reads_what_atens_float32_scale_reads(mode: str, size: int, scale: float) -> None:
    # ATen computes nearest's scale in float32 (compute_scales_value<float>) and floors in float
    # (floorf): a float64 scale picks a different source element for some of these outputs.
    x = np.arange(size, dtype=np.float64).reshape(1, 1, size)
    op = "upsample_nearest1d" if mode == "nearest" else "_upsample_nearest_exact1d"
    (ours,) = check_op(f"aten::{op}.vec", [x, None, [scale]], rtol=0, atol=0)
    expected = getattr(torch.ops.aten, op).vec(torch.from_numpy(x), None, [scale]).numpy()
    np.testing.assert_array_equal(ours, expected)


def test_bicubic_reads_clamped_neighbours_with_keys_weights() -> None:
    indices, weights = axis_taps(np, "cubic", 4, 9, False, None)
    assert indices.min() == 0 and indices.max() == 3
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, rtol=1e-15)  # Keys' kernel sums to 1


@pytest.mark.parametrize("align_corners", [False, True])
def test_bicubic_upsampling_equals_torch(align_corners: bool) -> None:
    x = RNG.standard_normal((2, 3, 4, 5))
    check_op("aten::upsample_bicubic2d", [x, [7, 3], align_corners, None, None], rtol=1e-13, atol=1e-14)
    check_op("aten::upsample_bicubic2d", [x, [9, 11], align_corners, 2.5, 2.2], rtol=1e-13, atol=1e-14)


def _run_on_marker(qualified: str) -> None:
    """The catalogue's sample call on the marker backend, which refuses host arrays mid-graph
    (CuPy would copy them, or fail)."""
    from gradview.ir.operators import schemas_for
    from gradview.runtime import run_graph
    from tests.autodiff.op_gradient_samples import SAMPLES
    from tests.kernels.oracle import op_graph

    sample = SAMPLES[qualified]
    kind, _, overload = qualified.partition(".")
    schema = next(s for s in schemas_for(kind) if s.overload_name == overload)
    args = list(sample.args) + [a.default for a in schema.arguments[len(sample.args):]]
    graph, inputs = op_graph(qualified, args)
    run_graph(graph, inputs, backend="marker")


@pytest.mark.parametrize("qualified", [
    "aten::upsample_nearest2d", "aten::_upsample_nearest_exact1d.vec", "aten::upsample_bicubic2d",
    "aten::upsample_trilinear3d.vec", "gradview::upsample_bilinear2d_backward", "aten::_upsample_bilinear2d_aa",
    "gradview::_upsample_bilinear2d_aa_vec_backward", "aten::grid_sampler", "aten::grid_sampler_2d_backward",
    "aten::grid_sampler_3d_backward", "aten::im2col", "aten::col2im", "aten::ctc_loss.Tensor",
    "gradview::ctc_loss_backward",
])
def test_resampling_and_ctc_keep_their_arrays_on_the_backend(qualified: str) -> None:
    _run_on_marker(qualified)
