"""A graph gradview can draw but not run: ``aten::cudnn_grid_sampler`` (a cuDNN-only
op) has no kernel here (shared by the tests of a target that cannot run, in the
runtime and the viewer)."""

from __future__ import annotations

from pathlib import Path

NO_KERNEL = """graph(%x : Float(4, 4), %w : Float(4, 4)):
  %a : Tensor = aten::mm(%x, %w)
  %b : Tensor = aten::cudnn_grid_sampler(%a, %w)
  %c : Tensor = aten::tanh(%b)
  return (%c)
"""


def write_no_kernel_graph(folder: Path) -> str:
    """``NO_KERNEL`` written to ``folder/grid_sampler.ir``; its path."""
    path = folder / "grid_sampler.ir"
    path.write_text(NO_KERNEL)
    return str(path)
