"""A 2-layer LSTM with a linear head for ``gradview view examples/lstm.py:build``.

``nn.LSTM(16, 32, num_layers=2, batch_first=True)`` reads a batch of 2
sequences of 8 steps; ``head`` maps the last step's hidden state to 4 outputs.
PyTorch traces the LSTM as one ``aten::lstm`` node whose eight weights and
biases (``lstm.weight_ih_l0`` ... ``lstm.bias_hh_l1``) become graph inputs.
Nothing here updates state, so train and eval mode trace the same graph (the
LSTM has no dropout).
"""

from __future__ import annotations

import torch
from torch import nn


class LSTMHead(nn.Module):
    """2-layer LSTM over a sequence, then a linear layer on the last step."""

    def __init__(self, features: int = 16, hidden: int = 32, classes: int = 4) -> None:
        super().__init__()
        self.lstm = nn.LSTM(features, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


def build():
    torch.manual_seed(0)
    model = LSTMHead().eval()
    x = torch.randn(2, 8, 16)
    return model, (x,)
