"""Every overload of the reduction, view, indexing, softmax, linear-algebra and loss
ops below has a gradient formula or an explicit no-gradient entry (with its reason),
and the overloads PyTorch's JIT differentiates have a formula."""

from __future__ import annotations

import pytest

from gradview.autodiff.torch_differentiable import TORCH_DIFFERENTIABLE
from gradview.ir import schemas_for
from gradview.ops import FORMULAS, KERNELS, NO_GRADIENT

OPS = [
    "logsumexp", "std", "var", "nanmean", "mean", "sum", "any", "all",
    "unflatten", "unsafe_chunk", "unsafe_split", "meshgrid", "permute_copy", "squeeze_copy", "t_copy",
    "unsqueeze_copy", "pad", "_dim_arange", "nonzero", "index", "split", "split_with_sizes", "stack", "cat",
    "baddbmm", "bilinear", "_safe_softmax", "_softmax_backward_data", "_log_softmax_backward_data",
    "mse_loss", "mse_loss_backward", "nll_loss", "nll_loss_nd", "nll_loss2d", "nll_loss_backward",
    "nll_loss2d_backward", "nll_loss_forward", "nll_loss2d_forward", "cross_entropy_loss",
]


def _touches_tensors(op: str) -> list[str]:
    """Overloads with a tensor among their arguments or results (``sum.int`` and
    ``split.str`` are Python builtins on lists and strings)."""
    names = []
    for schema in schemas_for(f"aten::{op}"):
        if schema.qualified_name not in KERNELS:
            continue  # PyTorch's out= and named-dim overloads: gradview does not run them
        arguments = any(a.type.contains_tensor() for a in schema.arguments)
        results = any(r.type.contains_tensor() for r in schema.returns)
        if arguments or results or op in ("any", "all", "index"):
            names.append(schema.qualified_name)
    return names


@pytest.mark.parametrize("op", OPS)
def test_every_overload_has_a_formula_or_a_reason(op: str) -> None:
    overloads = _touches_tensors(op)
    assert overloads, f"aten::{op} has no registered overload"
    missing = [name for name in overloads if name not in FORMULAS and name not in NO_GRADIENT]
    assert not missing, f"neither a gradient formula nor a no-gradient reason for {missing}"
    both = [name for name in overloads if name in FORMULAS and name in NO_GRADIENT]
    assert not both


def test_what_torch_differentiates_has_a_formula() -> None:
    names = {n for op in OPS for n in _touches_tensors(op)}
    missing = sorted(n for n in names & TORCH_DIFFERENTIABLE if n not in FORMULAS)
    assert not missing, missing
