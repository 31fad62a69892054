"""Small PyTorch modules and functions for the from_torch tests (torch.jit.script needs their source).

No ``from __future__ import annotations``: TorchScript resolves the interface
annotation below from the class object, not from a string.
"""

import warnings

import torch
from torch import nn


class Block(nn.Module):
    """A submodule with a buffer the forward never reads."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 3)
        self.register_buffer("unused", torch.arange(2.0))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.lin(x))


class Nested(nn.Module):
    """Two levels of submodules, a buffer that is read, and a float attribute (a constant)."""

    def __init__(self) -> None:
        super().__init__()
        self.block = Block()
        self.norm = nn.LayerNorm(3)
        self.register_buffer("shift", torch.linspace(-1.0, 1.0, 3))
        self.scale = 2.5

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.block(x)) * self.scale + self.shift


class Tied(nn.Module):
    """One Linear reached under two names: named_parameters() lists its tensors once."""

    def __init__(self) -> None:
        super().__init__()
        self.first = nn.Linear(3, 3)
        self.second = self.first

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.second(torch.tanh(self.first(x)))


class OddNames(nn.Sequential):
    """Parameter names TorchScript's parser would not read as written: ``0.weight``, ``conv-1``."""

    def __init__(self) -> None:
        super().__init__(nn.Linear(2, 2), nn.ModuleDict({"conv-1": nn.Linear(2, 2)}))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self[1]["conv-1"](self[0](x))


class WithDefault(nn.Module):
    """A forward with an argument left to its default: it becomes a constant."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(3, 2)

    def forward(self, x: torch.Tensor, alpha: float = 0.5) -> torch.Tensor:
        return self.lin(x) * alpha


class Training(nn.Module):
    """Reads ``self.training`` (scripted: a prim::GetAttr that becomes a constant)."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.lin(x)
        if self.training:
            return y * 2.0
        return y


class Assigns(nn.Module):
    """Assigns an attribute in forward: prim::SetAttr, which cannot be lifted."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.count = self.count + 1
        return x


class PlainTensor(nn.Module):
    """A tensor attribute that is neither a parameter nor a buffer."""

    def __init__(self) -> None:
        super().__init__()
        self.table = torch.ones(3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.table


with warnings.catch_warnings():  # torch.jit.interface warns that it is deprecated
    warnings.simplefilter("ignore", DeprecationWarning)

    @torch.jit.interface
    class Unary(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            pass


class Doubler(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2.0


class ThroughInterface(nn.Module):
    """Calls a submodule through an interface type: torch cannot inline the call."""

    inner: Unary

    def __init__(self) -> None:
        super().__init__()
        self.inner = Doubler()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inner.forward(x)


def gated(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """A plain function: no parameters, no buffers."""
    return torch.sigmoid(x) * y + torch.tanh(y)
