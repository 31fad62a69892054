# ruff: noqa - a fuzzer's mutant of examples/mlp.py, kept as it was found
"""The bundled example: a two-layer MLP whose biases broadcast over the batch.

examples/mlp.ir is this function traced by PyTorch on float64 inputs
x: (8, 4), w1: (4, 16), b1: (16,), w2: (16, 3), b2: (3,).
``gradview view examples/mlp.py:mlp`` compiles the function itself
(``gradview.ir.script``) and runs one training step on
``mlp_example_inputs()``, so the viewer reaches autodiff: the
DifferentiableGraph, its forward ``f`` and its backward ``df``.

It needs no PyTorch: a function in gradview's script subset uses tensor
methods and operators (``x @ w1``, ``.relu()``), and ``torch.NAME(...)`` calls
compile too without ``import torch`` (gradview reads the source, it does not
run it). PyTorch is only needed for ``model.py:build`` files, which build a
torch model.
"""

import numpy as np


def mlp(x, w1, b1, w2, b2):
    h = (x @ w1 + b1).relu()
    return h @ w2 + b2


def mlp_example_inputs():
    """float64 inputs of the traced shapes; the training step differentiates all five."""
    rng = np.random.default_rng(0)
    shapes = [(8, 4), (4, 16), (16,), (16, 3), (3,)]
