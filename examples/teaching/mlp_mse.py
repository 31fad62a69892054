"""A two-layer MLP with a mean squared error loss: the training step of a lecture.

The data (``x``, ``y``) do not require grad, the weights and biases do, as
in a PyTorch training loop: gradview's own ``Tensor`` says which (no PyTorch
needed). ``gradview view examples/teaching/mlp_mse.py:f``; the biases
broadcast over the batch, so df sums their gradients back
(``_grad_sum_to_size``).
"""

import numpy as np

from gradview.runtime import Tensor


def f(x, w1, b1, w2, b2, y):
    h = (x @ w1 + b1).relu()
    out = h @ w2 + b2
    return ((out - y) ** 2).mean()


def example_inputs():
    rng = np.random.default_rng(0)
    data = [rng.standard_normal((8, 4)), rng.standard_normal((8, 3))]
    weights = [rng.standard_normal(shape) * 0.5 for shape in [(4, 16), (16,), (16, 3), (3,)]]
    x, y = (Tensor(array) for array in data)
    w1, b1, w2, b2 = (Tensor(array, requires_grad=True) for array in weights)
    return [x, w1, b1, w2, b2, y]
