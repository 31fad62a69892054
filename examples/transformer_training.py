"""Training-mode transformer layers, as PyTorch builds them by default, for
``gradview view examples/transformer_training.py:build_encoder`` (and
``build_decoder``).

``nn.TransformerEncoderLayer`` and ``nn.TransformerDecoderLayer`` (d_model 32,
4 heads, feed-forward 64, dropout 0.1, float64) in train mode: every dropout
draws a mask, and so does attention (``scaled_dot_product_attention`` with
``dropout_p=0.1``). gradview draws those masks itself, from a fixed seed (the
same on every run, so the gradient check agrees with the backward), not from
PyTorch's generator: the values differ from PyTorch's, their shapes,
distributions and gradients do not.
"""

from __future__ import annotations

import torch
from torch import nn


def build_encoder():
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, batch_first=True)
    model = layer.double().train()
    return model, (torch.randn(2, 5, 32, dtype=torch.float64),)


def build_decoder():
    torch.manual_seed(0)
    layer = nn.TransformerDecoderLayer(d_model=32, nhead=4, dim_feedforward=64, batch_first=True)
    model = layer.double().train()
    target = torch.randn(2, 5, 32, dtype=torch.float64)
    memory = torch.randn(2, 7, 32, dtype=torch.float64)
    return model, (target, memory)
