"""A masked sigmoid: ``sigmoid(x)`` with the masked positions set to 0.

The mask is bool, so it never requires grad; the gradient of ``x`` is
``grad * s * (1 - s)`` where the mask is False and 0 where it is True.
``gradview view examples/teaching/masked_sigmoid.py:f``.
"""

import numpy as np


def f(x, w, mask):
    s = (x * w).sigmoid()
    return s.masked_fill(mask, 0.0)


def example_inputs():
    rng = np.random.default_rng(0)
    return [rng.standard_normal((3, 4)), rng.standard_normal((3, 4)), rng.random((3, 4)) < 0.3]
