"""The runtime issue's MLP (256-256-256-1, tanh, tanh, sigmoid) with a mean
squared error, written for gradview's Python frontend (and torch.jit.script)."""

import torch


def mlp_loss(x: torch.Tensor, target: torch.Tensor, w1: torch.Tensor, b1: torch.Tensor,
             w2: torch.Tensor, b2: torch.Tensor, w3: torch.Tensor, b3: torch.Tensor) -> torch.Tensor:
    h1 = torch.tanh(torch.matmul(x, w1) + b1)
    h2 = torch.tanh(torch.matmul(h1, w2) + b2)
    y = torch.sigmoid(torch.matmul(h2, w3) + b3)
    d = y - target
    return torch.mean(d * d)


SHAPES = [(64, 256), (64, 1), (256, 256), (256,), (256, 256), (256,), (256, 1), (1,)]
