"""How PyTorch's CPU kernels round on this machine, for tests of ports of them."""

from __future__ import annotations

import torch

__all__ = ["FUSED_TOLERANCE"]

# PyTorch's AVX2/AVX512 kernels fuse each a * b + c into one multiply-add, as gradview's
# ports of them do (kernels/c_math.py): float64 results are equal to the last bit. Its
# default build (no AVX2) rounds twice: within 1e-12 then.
FUSED_TOLERANCE = 0.0 if torch.backends.cpu.get_cpu_capability() in ("AVX2", "AVX512") else 1e-12
