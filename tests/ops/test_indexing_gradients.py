"""The formulas of advanced indexing (repeated indices, a gap, a mask) and of the
integer-valued nonzero/_dim_arange: against torch.autograd and finite differences,
in float64 (moved from the shape ops' formula tests)."""

from __future__ import annotations

import numpy as np

from tests.autodiff.formula_case_tools import check_formula, tensor_type
from tests.ops.test_views_gradients import const


# -- advanced indexing ---------------------------------------------------------------------------------
def _index_text(shape: tuple[int, ...], indices: list[str | None], out: tuple[int, ...]) -> str:
    params = [f"%x : {tensor_type(*shape)}"]
    items = []
    for position, index in enumerate(indices):
        if index is None:
            items.append("%none")
        else:
            params.append(f"%i{position} : {index}")
            items.append(f"%i{position}")
    return (
        f"graph({', '.join(params)}):\n  %none : NoneType = prim::Constant()\n"
        f"  %l : Tensor?[] = prim::ListConstruct({', '.join(items)})\n"
        f"  %y : {tensor_type(*out)} = aten::index(%x, %l)\n  return (%y)\n"
    )


def test_index_with_repeated_indices_and_a_gap() -> None:
    long3 = tensor_type(3, dtype="Long", grad=False)
    text = _index_text((4, 3, 5), [long3, None, long3], (3, 3))
    inputs = [np.random.default_rng(5).uniform(size=(4, 3, 5)), np.array([1, 1, 3]), np.array([-1, 0, 4])]
    grad = check_formula(text, inputs=inputs, torch_lists=False)
    assert grad.captured_count == 1 and not grad.df_input_captured_inputs  # the index list, not x


def test_index_with_a_mask() -> None:
    mask = tensor_type(4, 3, dtype="Bool", grad=False)
    x = np.random.default_rng(6).uniform(size=(4, 3, 5))
    chosen = x[:, :, 0] > 0.5
    text = _index_text((4, 3, 5), [mask], (int(chosen.sum()), 5))
    check_formula(text, inputs=[x, chosen], torch_lists=False)


# -- integer results ----------------------------------------------------------------------------------
def test_nonzero_and_dim_arange_pass_no_gradient() -> None:
    """y = x * _dim_arange(x, 1) + sum(nonzero(x)): both ops sit in the differentiable graph
    (as in TorchScript) and give x no gradient of their own."""
    text = (
        f"graph(%x : {tensor_type(3, 4)}):\n" + const("d", "int", "1") + const("n", "NoneType")
        + f"  %r : {tensor_type(4, dtype='Long', grad=False)} = aten::_dim_arange(%x, %d)\n"
        + "  %z : Tensor = aten::nonzero(%x)\n  %s : Tensor = aten::sum(%z, %n)\n"
        + f"  %p : {tensor_type(3, 4)} = aten::mul(%x, %r)\n  %y : {tensor_type(3, 4)} = aten::add(%p, %s, %d)\n"
        + "  return (%y)\n"
    )
    check_formula(text, torch_lists=False)
