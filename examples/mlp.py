"""The bundled example: a two-layer MLP whose biases broadcast over the batch.

examples/mlp.ir is this function traced by PyTorch on float64 inputs
x: (8, 4), w1: (4, 16), b1: (16,), w2: (16, 3), b2: (3,).
"""

import torch


def mlp(x, w1, b1, w2, b2):
    h = torch.relu(torch.matmul(x, w1) + b1)
    return torch.matmul(h, w2) + b2
