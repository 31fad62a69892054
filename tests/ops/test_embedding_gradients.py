"""Gradient formulas of the embedding lookups (gradview.ops.embedding): embedding (the
form PyTorch's JIT differentiates: torch's Gradient lists are compared too), embedding_bag in its
three overloads and modes with per_sample_weights, and the dense backward's own gradient, against
torch.autograd and finite differences in float64. The embedding_bag backward kernels have no
derivative (as in PyTorch): a backward reaching them raises, naming the node.
"""

from __future__ import annotations

import numpy as np
import pytest

from gradview.autodiff import differentiate
from gradview.ir import parse_ir
from gradview.ops import NO_GRADIENT
from tests.autodiff.formula_case_tools import check_formula
from tests.autodiff.ir_builder import T, const, graph

ROWS, DIM = 7, 3
INDICES = np.array([[1, 2, 4], [4, 6, 1]])


def _long(*sizes: int) -> str:
    return T(*sizes, grad=False, dtype="Long")


def _weight(seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, (ROWS, DIM))


@pytest.mark.parametrize("padding_idx", [-1, 4])
@pytest.mark.parametrize("scale", [False, True])
@pytest.mark.parametrize("weight_type", ["typed", "untyped"])
def test_embedding(padding_idx: int, scale: bool, weight_type: str) -> None:
    w = T(ROWS, DIM) if weight_type == "typed" else "Tensor"
    body = [const("p", padding_idx), const("s", scale), const("f", False)]
    body.append(f"%y : {T(2, 3, DIM)} = aten::embedding(%w, %i, %p, %s, %f)")
    text = graph({"w": w, "i": _long(2, 3)}, body, ["y"])
    # padding_idx and scale_grad_by_freq are conventions, not derivatives: finite differences
    # see the padding row used and no scaling, so only torch's numbers apply there.
    exact = padding_idx == -1 and not scale
    grad = check_formula(text, inputs=[_weight(), INDICES], torch_lists=weight_type == "typed", finite_differences=exact)
    # The indices, and the row count when the type does not tell it: never the table.
    assert grad.captured_count == (1 if weight_type == "typed" else 2)


def _bag(op: str, mode: int, weighted: bool, last: bool, padding: int | None) -> tuple[str, list]:
    indices = np.array([1, 2, 4, 5, 4, 3, 2, 6])
    offsets = np.array([0, 3, 3, 6] + ([8] if last else []))
    bags = len(offsets) - int(last)
    body = [const("s", False), const("m", mode), const("f", False), const("l", last), const("n", None)]
    args = f"%w, %i, %o, %s, %m, %f, {'%psw' if weighted else '%n'}, %l"
    if op == "_embedding_bag" or padding is not None:
        body.append(const("p", -1 if padding is None else padding))
        args += ", %p"
    index = "Tensor"  # sizes depend on the mode and the fast path
    body.append(f"%y : {T(bags, DIM)}, %a : {index}, %b : {index}, %c : {index} = aten::{op}({args})")
    types = {"w": T(ROWS, DIM), "i": _long(8), "o": _long(len(offsets))}
    inputs = [_weight(mode), indices, offsets]
    if weighted:
        types["psw"] = T(8)
        inputs.append(np.random.default_rng(1).uniform(0.5, 1.5, 8))
    return graph(types, body, ["y"]), inputs


@pytest.mark.parametrize("op", ["embedding_bag", "_embedding_bag"])
@pytest.mark.parametrize(("mode", "weighted"), [(0, False), (0, True), (1, False), (2, False)])
@pytest.mark.parametrize("last", [False, True])
@pytest.mark.parametrize("padding", [None, 2, -3])
def test_embedding_bag(op: str, mode: int, weighted: bool, last: bool, padding: int | None) -> None:
    text, inputs = _bag(op, mode, weighted, last, padding)
    # The padding row's zero gradient is a convention finite differences cannot see.
    check_formula(text, inputs=inputs, torch_lists=False, finite_differences=padding is None)


def test_embedding_dense_backward_double_backward() -> None:
    for padding in (-1, 2):
        body = [const("n", ROWS), const("p", padding), const("s", False)]
        body.append(f"%gw : {T(ROWS, DIM)} = aten::embedding_dense_backward(%g, %i, %n, %p, %s)")
        text = graph({"g": T(2, 3, DIM), "i": _long(2, 3)}, body, ["gw"])
        check_formula(text, inputs=[np.random.default_rng(0).uniform(-1, 1, (2, 3, DIM)), INDICES], torch_lists=False)


def test_embedding_bag_backward_has_no_gradient() -> None:
    """PyTorch's autograd raises for these; gradview declares them gradient-free, with the reason."""
    for name in ("aten::_embedding_bag_backward", "aten::_embedding_bag_dense_backward",
                 "aten::_embedding_bag_per_sample_weights_backward", "aten::native_group_norm_backward"):
        assert "no derivative" in NO_GRADIENT[name]
    text, _ = _bag("_embedding_bag", 0, False, False, None)
    assert differentiate(parse_ir(text), mode="extended").df is not None
