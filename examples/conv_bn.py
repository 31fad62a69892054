"""A PyTorch model for ``gradview view examples/conv_bn.py:build``.

``build()`` returns the model and its example inputs (torch tensors);
gradview converts it with ``gradview.ir.from_torch``: PyTorch traces it, the
convolution's and batch norm's parameters and the batch norm's running
statistics become graph inputs, and the viewer runs one training step.
Return a third item, ``"script"``, to compile it with ``torch.jit.script``
instead of tracing it.
"""

import torch
from torch import nn


class ConvBN(nn.Module):
    """conv 3x3 -> batch norm -> ReLU -> linear classifier over the flattened features."""

    def __init__(self, channels: int = 4, classes: int = 3) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, channels, kernel_size=3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(channels)
        self.head = nn.Linear(channels * 5 * 5, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.bn(self.conv(x)))
        return self.head(torch.flatten(h, 1))


def build():
    torch.manual_seed(0)
    model = ConvBN().double().eval()  # eval: the batch norm uses its running statistics
    x = torch.randn(2, 3, 5, 5, dtype=torch.float64)
    return model, (x,)
