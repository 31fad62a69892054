"""torchvision's models on the CPU build of torch, for the real-model tests.

torchvision 0.28.0's PyPI wheel is built against CUDA torch: with torch
2.13.0+cpu its import stops at registering fake kernels for
``torchvision::nms`` and ``torchvision::qnms``, ops the CPU build lacks.
Defining the two schemas first (no kernels: nothing here calls them) lets the
import finish; models are built with ``weights=None``, so nothing is
downloaded.
"""

from __future__ import annotations

import functools
from typing import Any

import torch

_SCHEMAS = (
    "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
)
_LIBRARIES: list[Any] = []  # kept alive: a Library's definitions go when it is collected


@functools.cache
def torchvision() -> Any:
    try:
        import torchvision as found

        return found
    except RuntimeError:
        pass
    library = torch.library.Library("torchvision", "DEF")
    for schema in _SCHEMAS:
        library.define(schema)
    _LIBRARIES.append(library)
    import torchvision as found

    return found


def build(name: str, size: int = 64, seed: int = 0) -> tuple[torch.nn.Module, torch.Tensor]:
    """torchvision's ``name`` (random weights, eval mode, float64) and one input image."""
    torch.manual_seed(seed)
    model = getattr(torchvision().models, name)(weights=None).double().eval()
    with torch.no_grad():  # BatchNorm's running statistics away from 0 and 1
        for module in model.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.running_mean.uniform_(-0.1, 0.1)
                module.running_var.uniform_(0.5, 1.5)
    return model, torch.randn(1, 3, size, size, dtype=torch.float64)
