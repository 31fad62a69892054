"""The catalogue's sample calls for issue 22's reductions, scans, sorts, statistics,
searches, histograms and products: see op_gradient_samples.py, which imports this
module at its end to add them to SAMPLES."""

from __future__ import annotations

import numpy as np

from .op_gradient_samples import S, add, f

__all__: list[str] = []

_sorted = np.sort(f(6))
add("count_nonzero", S(f(3, 4), 1))
add("count_nonzero.dim_IntList", S(f(3, 4), [0, 1]))
add("searchsorted.Tensor", S(_sorted, f(3, 4), frozen=(0, 1)))
add("searchsorted.Scalar", S(_sorted, 0.25, frozen=(0,)))
add("bucketize.Tensor", S(f(3, 4), _sorted, frozen=(0, 1)))
add("bucketize.Scalar", S(0.25, _sorted, frozen=(1,)))
add("histc", S(f(3, 4), 5, -1.0, 1.0, frozen=(0,)))
add("histogram.bin_ct", S(f(3, 4), 5, frozen=(0,)))
add("histogram.bins_tensor", S(f(3, 4), _sorted, frozen=(0, 1)))
add("histogramdd", S(f(5, 2), [3, 4], frozen=(0,)))
add("histogramdd.int_bins", S(f(5, 2), 3, frozen=(0,)))
add("histogramdd.TensorList_bins", S(f(5, 2), [np.sort(f(4)), np.sort(f(3))], frozen=(0,)))
add("_unique2", S(np.round(f(3, 4)), True, True, True, frozen=(0,)))
add("unique_consecutive", S(np.round(f(3, 4)), True, True, 1, frozen=(0,)))
add("unique_dim", S(np.round(f(3, 4)), 0, True, True, True, frozen=(0,)))
