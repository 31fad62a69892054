"""The catalogue's sample calls for issue 22's indexing ops (gather/scatter, index_*, take/put,
masked_*, *_scatter, argwhere, nonzero_static/numpy): see op_gradient_samples.py, which imports
this module at its end to add them to SAMPLES."""

from __future__ import annotations

import numpy as np

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
