"""The formulas of the *_copy views, unflatten, the unsafe splits, meshgrid, pad,
cat of a skipped empty tensor and cat/stack/meshgrid of a list that is a graph input: against torch.autograd
(check_gradient, torch's Gradient lists where torch 2.13 differentiates the
op) and finite differences, in float64."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from gradview.autodiff import differentiate
from gradview.ir import parse_ir
from tests.autodiff.formula_case_tools import check_formula, tensor_type
from tests.autodiff.oracle import check_gradient, run_gradient
from tests.ops.test_views_gradients import _split_text, const, unary

# -- copies of views, unflatten ----------------------------------------------------------------
COPIES = {
    "permute_copy": ("aten::permute_copy(%x, %d)", (2, 3, 4), (4, 2, 3), const("d", "int[]", "[-1, 0, 1]")),
    "squeeze_copy": ("aten::squeeze_copy(%x)", (3, 1, 4, 1), (3, 4), ""),
    "squeeze_copy_dim": ("aten::squeeze_copy(%x, %d)", (3, 1, 4), (3, 4), const("d", "int", "-2")),
    "squeeze_copy_dims": ("aten::squeeze_copy(%x, %d)", (3, 1, 4, 1), (3, 4), const("d", "int[]", "[1, -1]")),
    "t_copy": ("aten::t_copy(%x)", (3, 4), (4, 3), ""),
    "t_copy_1d": ("aten::t_copy(%x)", (3,), (3,), ""),
    "unsqueeze_copy": ("aten::unsqueeze_copy(%x, %d)", (3, 4), (3, 4, 1), const("d", "int", "-1")),
    "unflatten": ("aten::unflatten(%x, %d, %s)", (2, 6), (2, 3, 2), const("d", "int", "1") + const("s", "int[]", "[3, -1]")),
}


@pytest.mark.parametrize("case", COPIES)
def test_copies_of_views_and_unflatten(case: str) -> None:
    expr, shape, out, consts = COPIES[case]
    grad = check_formula(unary(expr, shape, out, consts), torch_lists=False)
    assert grad.captured_count == 0


# -- unsafe splits ------------------------------------------------------------------------------
SPLITS = {
    "unsafe_chunk": ("aten::unsafe_chunk(%x, %n, %d)", (5, 4), [(2, 4), (2, 4), (1, 4)], [0, 2],
                     const("n", "int", "3") + const("d", "int", "0")),
    "unsafe_split": ("aten::unsafe_split(%x, %n, %d)", (3, 5), [(3, 2), (3, 2), (3, 1)], [1, 2],
                     const("n", "int", "2") + const("d", "int", "-1")),
}


@pytest.mark.parametrize("case", SPLITS)
def test_unsafe_splits(case: str) -> None:
    call, shape, pieces, used, consts = SPLITS[case]
    grad = check_formula(_split_text(call, shape, pieces, used, consts), torch_lists=False)
    assert grad.df_output_vjps == [0]


# -- meshgrid -----------------------------------------------------------------------------------
def _meshgrid_text(shapes: list[tuple[int, ...]], indexing: str | None, used: list[int]) -> str:
    params = ", ".join(f"%a{i} : {tensor_type(*s)}" for i, s in enumerate(shapes))
    items = ", ".join(f"%a{i}" for i in range(len(shapes)))
    grid = list(torch.meshgrid(*[torch.zeros(s) for s in shapes], indexing=indexing or "ij")[0].shape)
    names = ", ".join(f"%g{i} : {tensor_type(*grid)}" for i in range(len(shapes)))
    call = "aten::meshgrid(%l, %i)" if indexing else "aten::meshgrid(%l)"
    lines = [f"graph({params}):", f"  %l : Tensor[] = prim::ListConstruct({items})"]
    if indexing:
        lines.append(f'  %i : str = prim::Constant[value="{indexing}"]()')
    lines += [f"  %m : Tensor[] = {call}", f"  {names} = prim::ListUnpack(%m)"]
    lines += [f"  %q{i} : {tensor_type(*grid)} = aten::mul(%g{i}, %g{i})" for i in used]
    lines.append(f"  return ({', '.join(f'%q{i}' for i in used)})")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("indexing", [None, "ij", "xy"])
@pytest.mark.parametrize(
    ("shapes", "used"), [([(2,), (), (3,)], [0, 1, 2]), ([(2,), (3,)], [1]), ([(4,)], [0])], ids=str
)
def test_meshgrid(indexing: str | None, shapes: list[tuple[int, ...]], used: list[int]) -> None:
    grad = check_formula(_meshgrid_text(shapes, indexing, used), torch_lists=False)
    assert grad.df_output_vjps == list(range(len(shapes)))


# -- lists that are graph inputs (DifferentiableGraph sections) ----------------------------------
def _check_list_input(text: str, arrays: list[np.ndarray], call: Any) -> None:
    """The graph takes ``%l : Tensor[]`` and returns one tensor: its list gradient must be
    eager autograd's gradients of the list's elements."""
    grad = differentiate(parse_ir(text), mode="extended")
    leaves = [torch.tensor(a, requires_grad=True) for a in arrays]
    result = call(leaves)
    outputs = list(result) if isinstance(result, list | tuple) else [result]
    rng = np.random.default_rng(0)
    output_grads = [rng.standard_normal(o.shape) for o in outputs]
    forward, (vjp,) = run_gradient(grad, [arrays], output_grads if len(outputs) > 1 else output_grads)
    expected = torch.autograd.grad(outputs, leaves, [torch.tensor(g) for g in output_grads])
    assert grad.df_output_vjps == [0]
    for ours, theirs in zip(vjp, expected, strict=True):
        assert ours.shape == tuple(theirs.shape)
        np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-12)


def test_cat_of_a_list_input() -> None:
    text = "graph(%l : Tensor[]):\n" + const("d", "int", "1") + "  %y : Tensor = aten::cat(%l, %d)\n  return (%y)\n"
    rng = np.random.default_rng(1)
    arrays = [rng.uniform(size=(3, 2)), rng.uniform(size=(3, 4))]
    _check_list_input(text, arrays, lambda ts: torch.cat(ts, 1))


def test_stack_of_a_list_input() -> None:
    text = "graph(%l : Tensor[]):\n" + const("d", "int", "-1") + "  %y : Tensor = aten::stack(%l, %d)\n  return (%y)\n"
    rng = np.random.default_rng(2)
    arrays = [rng.uniform(size=(3, 2)) for _ in range(3)]
    _check_list_input(text, arrays, lambda ts: torch.stack(ts, -1))


def test_meshgrid_of_a_list_input() -> None:
    text = "graph(%l : Tensor[]):\n  %y : Tensor[] = aten::meshgrid(%l)\n  return (%y)\n"
    rng = np.random.default_rng(3)
    arrays = [rng.uniform(size=(2,)), np.array(1.5), rng.uniform(size=(3,))]
    grad = differentiate(parse_ir(text), mode="extended")
    leaves = [torch.tensor(a, requires_grad=True) for a in arrays]
    grids = torch.meshgrid(*leaves, indexing="ij")
    output_grads = [rng.standard_normal(g.shape) for g in grids]
    _, (vjp,) = run_gradient(grad, [arrays], [output_grads])
    expected = torch.autograd.grad(grids, leaves, [torch.tensor(g) for g in output_grads])
    for ours, theirs in zip(vjp, expected, strict=True):
        assert ours.shape == tuple(theirs.shape)
        np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-12)


def test_cat_skipping_an_empty_tensor_follows_eager_autograd() -> None:
    """cat([zeros(0), x], 1): the empty tensor's gradient is an empty 1-D tensor, as
    eager autograd gives (TorchScript's formula gives it shape (3, 0))."""
    text = (
        f"graph(%a : {tensor_type(0)}, %b : {tensor_type(3, 4)}):\n" + const("d", "int", "1")
        + f"  %l : Tensor[] = prim::ListConstruct(%a, %b)\n  %y : {tensor_type(3, 4)} = aten::cat(%l, %d)\n"
        + "  return (%y)\n"
    )
    b = np.random.default_rng(4).uniform(size=(3, 4))
    grad = check_gradient(text, [np.zeros(0), b], compare_torch_lists=False)
    _, (vjp_a, _) = run_gradient(grad, [np.zeros(0), b], [np.ones((3, 4))])
    assert vjp_a.shape == (0,)
    untyped = text.replace(tensor_type(0), "Tensor").replace(tensor_type(3, 4), "Tensor")
    grad = check_gradient(untyped, [np.zeros(0), b], compare_torch_lists=False)
    assert run_gradient(grad, [np.zeros(0), b], [np.ones((3, 4))])[1][0].shape == (0,)


# -- pad --------------------------------------------------------------------------------------------
PADS = [
    ("constant", [1, 2], None), ("constant", [1, 2, -1, 1], 0.5), ("reflect", [1, 2, 2, 1], None),
    ("reflect", [-1, 1], None), ("replicate", [2, 3, 1, 1], None), ("circular", [2, 1, 1, 2], None),
    ("circular", [1, -2], None),
]


@pytest.mark.parametrize(("mode", "pad", "value"), PADS)
def test_pad(mode: str, pad: list[int], value: float | None) -> None:
    x = (2, 3, 4)
    out = tuple(torch.ops.aten.pad(torch.zeros(x), pad, mode, value).shape)
    consts = const("p", "int[]", str(pad)) + f'  %m : str = prim::Constant[value="{mode}"]()\n'
    consts += const("v", "float", str(value)) if value is not None else const("v", "NoneType")
    grad = check_formula(unary("aten::pad(%x, %p, %m, %v)", x, out, consts), torch_lists=False)
    assert grad.captured_count == 0
