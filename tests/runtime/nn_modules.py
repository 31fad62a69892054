"""The common torch.nn modules of issue 10 with example inputs, in float64.

Each entry builds a fresh module (seeded) and its example inputs; the
training-step test runs it through from_torch + GraphExecutor and compares
with eager PyTorch. ``SCRIPTS`` says whether torch.jit.script takes it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn


@dataclass(frozen=True)
class ModuleCase:
    build: Callable[[], nn.Module]
    inputs: Callable[[], tuple[Any, ...]]
    scripts: bool = True


def _randn(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, dtype=torch.float64)


def _seq(*layers: nn.Module) -> nn.Module:
    return nn.Sequential(*layers)


CASES: dict[str, ModuleCase] = {
    "Linear": ModuleCase(lambda: nn.Linear(4, 3), lambda: (_randn(2, 4),)),
    "Bilinear": ModuleCase(lambda: nn.Bilinear(4, 5, 3), lambda: (_randn(2, 4), _randn(2, 5))),
    "LayerNorm": ModuleCase(lambda: nn.LayerNorm(4), lambda: (_randn(2, 3, 4),)),
    "GroupNorm": ModuleCase(lambda: nn.GroupNorm(2, 4), lambda: (_randn(2, 4, 3),)),
    "BatchNorm1d-train": ModuleCase(lambda: nn.BatchNorm1d(4), lambda: (_randn(5, 4),)),
    "BatchNorm2d-train": ModuleCase(lambda: nn.BatchNorm2d(3), lambda: (_randn(2, 3, 4, 4),)),
    "BatchNorm2d-eval": ModuleCase(lambda: nn.BatchNorm2d(3).eval(), lambda: (_randn(2, 3, 4, 4),)),
    "Dropout-eval": ModuleCase(lambda: _seq(nn.Linear(4, 4), nn.Dropout(0.5)).eval(), lambda: (_randn(2, 4),)),
    "ReLU": ModuleCase(lambda: _seq(nn.Linear(4, 4), nn.ReLU()), lambda: (_randn(3, 4),)),
    "ReLU-inplace": ModuleCase(lambda: _seq(nn.Linear(4, 4), nn.ReLU(inplace=True)), lambda: (_randn(3, 4),)),
    "GELU": ModuleCase(lambda: _seq(nn.Linear(4, 4), nn.GELU()), lambda: (_randn(3, 4),)),
    "GELU-tanh": ModuleCase(lambda: _seq(nn.Linear(4, 4), nn.GELU("tanh")), lambda: (_randn(3, 4),)),
    "SiLU": ModuleCase(lambda: _seq(nn.Linear(4, 4), nn.SiLU()), lambda: (_randn(3, 4),)),
    "Hardswish": ModuleCase(lambda: _seq(nn.Linear(4, 4), nn.Hardswish()), lambda: (_randn(3, 4) * 3,)),
    "Softplus": ModuleCase(lambda: _seq(nn.Linear(4, 4), nn.Softplus()), lambda: (_randn(3, 4),)),
    "ELU": ModuleCase(lambda: _seq(nn.Linear(4, 4), nn.ELU()), lambda: (_randn(3, 4),)),
    "LeakyReLU": ModuleCase(lambda: _seq(nn.Linear(4, 4), nn.LeakyReLU(0.1)), lambda: (_randn(3, 4),)),
    "Conv1d": ModuleCase(lambda: nn.Conv1d(4, 6, 3, stride=2, padding=1, groups=2), lambda: (_randn(2, 4, 9),)),
    "Conv2d": ModuleCase(
        lambda: nn.Conv2d(4, 6, 3, stride=2, padding=1, dilation=2, groups=2), lambda: (_randn(2, 4, 9, 9),)
    ),
    "Conv2d-same-nobias": ModuleCase(
        lambda: nn.Conv2d(3, 4, (3, 2), padding="same", bias=False), lambda: (_randn(2, 3, 6, 5),)
    ),
    "MaxPool2d": ModuleCase(lambda: _seq(nn.Conv2d(2, 3, 1), nn.MaxPool2d(2)), lambda: (_randn(2, 2, 6, 6),)),
    "AvgPool2d": ModuleCase(lambda: _seq(nn.Conv2d(2, 3, 1), nn.AvgPool2d(2)), lambda: (_randn(2, 2, 6, 6),)),
    "AdaptiveAvgPool2d": ModuleCase(
        lambda: _seq(nn.Conv2d(2, 3, 1), nn.AdaptiveAvgPool2d((2, 3))), lambda: (_randn(2, 2, 6, 7),)
    ),
    "Conv2d+BatchNorm2d": ModuleCase(
        lambda: _seq(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU()), lambda: (_randn(2, 3, 5, 5),)
    ),
    "Embedding": ModuleCase(lambda: nn.Embedding(10, 4), lambda: (torch.tensor([[1, 2, 2], [3, 9, 0]]),)),
    "EmbeddingBag": ModuleCase(lambda: nn.EmbeddingBag(10, 4), lambda: (torch.tensor([[1, 2, 2], [3, 9, 0]]),)),
    "LSTMCell": ModuleCase(lambda: nn.LSTMCell(4, 5), lambda: (_randn(2, 4),)),
    "GRUCell": ModuleCase(lambda: nn.GRUCell(4, 5), lambda: (_randn(2, 4),)),
    "LSTM": ModuleCase(lambda: nn.LSTM(4, 5), lambda: (_randn(3, 2, 4),)),
    "LSTM-2layers": ModuleCase(lambda: nn.LSTM(4, 5, num_layers=2), lambda: (_randn(3, 2, 4),)),
    "GRU": ModuleCase(lambda: nn.GRU(4, 5), lambda: (_randn(3, 2, 4),)),
    "GRU-2layers-batch_first": ModuleCase(
        lambda: nn.GRU(4, 5, num_layers=2, batch_first=True), lambda: (_randn(2, 3, 4),)
    ),
    "MultiheadAttention": ModuleCase(
        lambda: nn.MultiheadAttention(8, 2), lambda: (_randn(3, 2, 8), _randn(3, 2, 8), _randn(3, 2, 8))
    ),
    "TransformerEncoderLayer": ModuleCase(
        lambda: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), lambda: (_randn(3, 2, 8),)
    ),
    "TransformerDecoderLayer": ModuleCase(
        lambda: nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0), lambda: (_randn(3, 2, 8), _randn(4, 2, 8))
    ),
    "Softmax": ModuleCase(lambda: _seq(nn.Linear(4, 4), nn.Softmax(dim=1)), lambda: (_randn(3, 4),)),
    "LogSoftmax": ModuleCase(lambda: _seq(nn.Linear(4, 4), nn.LogSoftmax(dim=1)), lambda: (_randn(3, 4),)),
    "CrossEntropyLoss": ModuleCase(lambda: nn.CrossEntropyLoss(), lambda: (_randn(3, 5), torch.tensor([1, 0, 4]))),
    "MSELoss": ModuleCase(lambda: nn.MSELoss(), lambda: (_randn(3, 5), _randn(3, 5))),
}


def build_case(name: str) -> tuple[nn.Module, tuple[Any, ...]]:
    """A fresh float64 module and its inputs, the same for every call (seeded)."""
    torch.manual_seed(0)
    case = CASES[name]
    module = case.build().double()
    return module, case.inputs()


def write_builder(path: Path, name: str) -> str:
    """Write ``model.py`` whose ``build()`` returns case ``name``; the ``model.py:build`` target."""
    root = Path(__file__).resolve().parents[2]
    path.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(root)!r})\n"
        "from tests.runtime.nn_modules import build_case\n\n\n"
        f"def build():\n    return build_case({name!r})\n"
    )
    return f"{path}:build"
