"""A training step's loss written for gradview's Python frontend (and torch.jit.script)."""

import torch


def mlp_loss(x: torch.Tensor, target: torch.Tensor, w1: torch.Tensor, b1: torch.Tensor,
             w2: torch.Tensor, b2: torch.Tensor) -> torch.Tensor:
    h = torch.tanh(torch.matmul(x, w1) + b1)
    y = torch.matmul(h, w2) + b2
    d = y - target
    return torch.mean(d * d)
