"""A loop with an ``if``: control flow that symbolic autodiff does not differentiate whole.

``prim::Loop`` and ``prim::If`` stay outside every DifferentiableGraph;
CreateAutodiffSubgraphs forms groups inside their blocks, and autograd
records the rest op by op: here one group in each branch of the ``if``.
``gradview view examples/teaching/loop_if.py:f``.
"""

import numpy as np


def f(x, w, steps: int):
    h = x
    i = 0
    while i < steps:  # a for loop would be unrolled by 8 (UnrollLoops): 18 groups on screen
        if i % 2 == 0:  # noqa: SIM108 - the lesson is an if statement (prim::If with two blocks)
            h = (h * w).tanh()
        else:
            h = h.sin() * w
        i += 1
    return h


def example_inputs():
    rng = np.random.default_rng(0)
    return [rng.standard_normal((3, 4)), rng.standard_normal((3, 4)), 3]
