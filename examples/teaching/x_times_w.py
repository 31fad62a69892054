"""``x * w``: one op, so PyTorch forms no DifferentiableGraph for it.

PyTorch's smallest group has 2 ops (CreateAutodiffSubgraphs' minSubgraphSize),
so ``gradview view examples/teaching/x_times_w.py:f`` says why there is none;
``--min-group-size 1`` (beyond PyTorch: the header says so) shows its f and
df (``grad_x = grad * w``, ``grad_w = grad * x``). ``--inputs 3x4,3x4:nograd``
makes ``w`` a constant of the lesson: df then computes ``grad_x`` alone, and f,
smaller without ``w``'s size, is pasted back after differentiating unless
``--inline-threshold 0`` keeps it (then df's executor runs too).
"""

import numpy as np


def f(x, w):
    return x * w


def example_inputs():
    rng = np.random.default_rng(0)
    return [rng.standard_normal((3, 4)), rng.standard_normal((3, 4))]
