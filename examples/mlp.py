"""The bundled example: a two-layer MLP whose biases broadcast over the batch.

examples/mlp.ir is this function traced by PyTorch on float64 inputs
x: (8, 4), w1: (4, 16), b1: (16,), w2: (16, 3), b2: (3,).
``gradview view examples/mlp.py:mlp`` compiles the function itself
(``gradview.ir.script``) and runs one training step on
``mlp_example_inputs()``, so the viewer reaches autodiff: the
DifferentiableGraph, its forward ``f`` and its backward ``df``.
"""

import numpy as np
import torch


def mlp(x, w1, b1, w2, b2):
    h = torch.relu(torch.matmul(x, w1) + b1)
    return torch.matmul(h, w2) + b2


def mlp_example_inputs():
    """float64 inputs of the traced shapes; the training step differentiates all five."""
    rng = np.random.default_rng(0)
    shapes = [(8, 4), (4, 16), (16,), (16, 3), (3,)]
    return [rng.standard_normal(shape) for shape in shapes]
