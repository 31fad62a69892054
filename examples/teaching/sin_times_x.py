"""``sin(x) * x``: the smallest function whose backward needs the product rule.

``gradview view examples/teaching/sin_times_x.py:f`` runs one training step:
the DifferentiableGraph's forward f saves ``x`` and ``sin(x)``, and its
backward df computes ``grad_x = grad * sin(x) + grad * x * cos(x)``.

Like every file here it is in gradview's script subset (tensor methods and
operators): gradview compiles it without PyTorch, and the same function runs
on torch tensors, which the tests use to check gradview's gradients.
"""

import numpy as np


def f(x):
    sin_x = x.sin()
    return sin_x * x


def example_inputs():
    return [np.random.default_rng(0).standard_normal((3, 4))]
