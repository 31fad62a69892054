"""Acceptance 2 for the reduction and selection formulas (sum, mean, prod,
norm, max/min, topk, kthvalue, max_pool2d): each graph is checked against
torch.autograd (and torch's Gradient lists where torch 2.13 differentiates
the op: mean, max_pool2d) and against finite differences in float64, with
dims None / single / several / negative / known only at run time, keepdim
True and False."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gradview.autodiff import DifferentiationError, differentiate
from gradview.ir import parse_ir
from tests.autodiff.formula_case_tools import check_formula
from tests.autodiff.ir_builder import T, const, graph
from tests.autodiff.oracle import check_gradient, run_gradient

X = (2, 3, 4)
DIMS = [[1], [-1], [0, 2], [-1, 0], None]


def _long(*sizes: int) -> str:
    return T(*sizes, grad=False, dtype="Long")


def _reduce(op: str, dims: list[int] | None, keepdim: bool, out: tuple[int, ...], x: str = T(*X)) -> str:
    body = [const("d", dims), const("k", keepdim), const("n", None), f"%y : {T(*out)} = aten::{op}(%x, %d, %k, %n)"]
    return graph({"x": x}, body, ["y"])


def _sum_shape(dims: list[int] | None, keepdim: bool) -> tuple[int, ...]:
    return tuple(torch.zeros(X).sum(dims, keepdim=keepdim).shape)


# -- sum, mean ------------------------------------------------------------------------------
@pytest.mark.parametrize("dims", DIMS, ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum_dims(dims: list[int] | None, keepdim: bool) -> None:
    grad = check_formula(_reduce("sum", dims, keepdim, _sum_shape(dims, keepdim)), torch_lists=False)
    assert grad.captured_count == 0  # the input's size is a constant


@pytest.mark.parametrize("dims", DIMS, ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_mean_dims(dims: list[int] | None, keepdim: bool) -> None:
    grad = check_formula(_reduce("mean", dims, keepdim, _sum_shape(dims, keepdim)), torch_lists=dims is not None)
    assert grad.captured_count == 0


@pytest.mark.parametrize("op", ["sum", "mean"])
def test_full_reduction(op: str) -> None:
    text = graph({"x": T(*X)}, [const("n", None), f"%y : {T()} = aten::{op}(%x, %n)"], ["y"])
    assert check_formula(text, torch_lists=op == "mean").captured_count == 0


@pytest.mark.parametrize("op", ["sum", "mean"])
@pytest.mark.parametrize("keepdim", [False, True])
def test_empty_dim_list_reduces_everything(op: str, keepdim: bool) -> None:
    out = (1, 1, 1) if keepdim else ()
    body = ["%d : int[] = prim::ListConstruct()", const("k", keepdim), const("n", None)]
    text = graph({"x": T(*X)}, body + [f"%y : {T(*out)} = aten::{op}(%x, %d, %k, %n)"], ["y"])
    check_formula(text, torch_lists=False)


@pytest.mark.parametrize("op", ["sum", "mean"])
@pytest.mark.parametrize(("dims", "keepdim"), [([1], False), ([-1, -3], False), ([0, 2], False), ([0, 2], True), (None, False), ([-1], False)])
def test_untyped_input(op: str, dims: list[int] | None, keepdim: bool) -> None:
    """Unknown shape: sizes are captured, never x. Dims dropped from an input of unknown rank
    are put back by a reshape to the run-time keepdim size (a 0-d input reduced over
    [-1] has no dim to unsqueeze); kept or every dim need only the input's size."""
    rng = np.random.default_rng(0)
    body = [const("d", dims), const("k", keepdim), const("n", None), f"%y : Tensor = aten::{op}(%x, %d, %k, %n)"]
    text = graph({"x": "Tensor"}, body, ["y"])
    grad = check_formula(text, torch_lists=False, inputs=[rng.uniform(0.5, 1.5, X)])
    assert not grad.df_input_captured_inputs
    assert grad.captured_count == (1 if keepdim or dims is None else 2 if op == "sum" else 3)
    if dims in ([-1], [0]):
        check_formula(text, torch_lists=False, inputs=[np.array(1.25)])


def test_sum_of_a_0d_tensor() -> None:
    check_formula(_reduce("sum", [0], False, (), x=T()), torch_lists=False)


@pytest.mark.parametrize("op", ["sum", "mean", "prod"])
def test_dtype_argument_casts_the_gradient_back(op: str) -> None:
    """sum(x: float32, dtype=float64): the gradient of x is float32 again."""
    dim = "%d" if op != "prod" else "%p"
    body = [const("d", [1]), const("p", 1), const("k", False), const("t", 7)]
    text = graph({"x": T(2, 3, dtype="Float")}, body + [f"%y : {T(2)} = aten::{op}(%x, {dim}, %k, %t)"], ["y"])
    x = np.random.default_rng(0).uniform(0.5, 1.5, (2, 3)).astype(np.float32)
    check_gradient(text, [x], rtol=1e-6, compare_torch_lists=False)
    _, (vjp,) = run_gradient(differentiate(parse_ir(text), mode="extended"), [x], [np.ones(2)])
    assert vjp.dtype == np.float32


# -- prod -----------------------------------------------------------------------------------
def _with_zeros(count: int) -> np.ndarray:
    x = np.random.default_rng(5).uniform(0.5, 1.5, X)
    for index in [(0, 1, 2), (1, 1, 2), (0, 1, 3)][:count]:
        x[index] = 0.0
    return x


@pytest.mark.parametrize("zeros", [0, 1, 3])
@pytest.mark.parametrize(("dim", "keepdim"), [(None, False), (1, False), (-1, True), (0, False)])
def test_prod_with_zeros(zeros: int, dim: int | None, keepdim: bool) -> None:
    """No zero, one zero and several zeros in a slice (1 and 3 zeros put two in one row)."""
    if dim is None:
        text = graph({"x": T(*X)}, [const("n", None), f"%y : {T()} = aten::prod(%x, %n)"], ["y"])
    else:
        out = tuple(torch.zeros(X).prod(dim, keepdim=keepdim).shape)
        body = [const("d", dim), const("k", keepdim), const("n", None), f"%y : {T(*out)} = aten::prod(%x, %d, %k, %n)"]
        text = graph({"x": T(*X)}, body, ["y"])
    check_formula(text, torch_lists=False, inputs=[_with_zeros(zeros)])


# -- norm -----------------------------------------------------------------------------------
P_VALUES = [2.0, 1.0, 3.0, 1.5, 0.5, float("inf"), -float("inf"), 0.0]


@pytest.mark.parametrize("p", P_VALUES, ids=str)
def test_norm_of_everything(p: float) -> None:
    text = graph({"x": T(*X)}, [const("p", p), f"%y : {T()} = aten::norm(%x, %p)"], ["y"])
    check_formula(text, torch_lists=False, low=-1.5, high=1.5, away_from=(0.0,))


@pytest.mark.parametrize("p", P_VALUES, ids=str)
@pytest.mark.parametrize("dims", [[1], [-1, 0]], ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_norm_dims(p: float, dims: list[int], keepdim: bool) -> None:
    out = tuple(torch.zeros(X).norm(p, dims, keepdim=keepdim).shape)
    body = [const("p", p), const("d", dims), const("k", keepdim), f"%y : {T(*out)} = aten::norm(%x, %p, %d, %k)"]
    check_formula(graph({"x": T(*X)}, body, ["y"]), torch_lists=False, low=-1.5, high=1.5, away_from=(0.0,))


def test_norm_p_none_with_dtype() -> None:
    body = [const("p", None), const("d", [1]), const("k", False), const("t", 7)]
    text = graph({"x": T(*X)}, body + [f"%y : {T(2, 4)} = aten::norm(%x, %p, %d, %k, %t)"], ["y"])
    check_formula(text, torch_lists=False)


def test_norm_2_of_zeros_is_zero() -> None:
    """0/0 in x / norm: masked to 0, as PyTorch does."""
    text = graph({"x": T(2, 3)}, [const("p", 2.0), const("d", [1]), const("k", False), f"%y : {T(2)} = aten::norm(%x, %p, %d, %k)"], ["y"])
    x = np.array([[0.0, 0.0, 0.0], [1.0, -2.0, 0.5]])
    check_gradient(text, [x], compare_torch_lists=False)


# -- max, min -------------------------------------------------------------------------------
@pytest.mark.parametrize("op", ["max", "min"])
def test_full_max_min(op: str) -> None:
    grad = check_formula(graph({"x": T(*X)}, [f"%y : {T()} = aten::{op}(%x)"], ["y"]), torch_lists=False)
    assert grad.captured_count == 2  # input and result: the mask is x == result


@pytest.mark.parametrize("op", ["max", "min"])
def test_full_max_min_split_ties_evenly(op: str) -> None:
    x = np.array([[1.0, 3.0, 3.0], [0.5, 3.0, 2.0]]) * (1 if op == "max" else -1)
    check_gradient(graph({"x": T(2, 3)}, [f"%y : {T()} = aten::{op}(%x)"], ["y"]), [x], compare_torch_lists=False)


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dim", [1, -1, 0])
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_min_dim(op: str, dim: int, keepdim: bool) -> None:
    out = tuple(torch.zeros(X).max(dim, keepdim=keepdim).values.shape)
    body = [const("d", dim), const("k", keepdim), f"%y : {T(*out)}, %i : {_long(*out)} = aten::{op}(%x, %d, %k)"]
    grad = check_formula(graph({"x": T(*X)}, body, ["y"]), torch_lists=False)
    assert grad.df_input_captured_outputs and not grad.df_input_captured_inputs  # the indices only


# -- topk, kthvalue -------------------------------------------------------------------------
@pytest.mark.parametrize(("k", "dim"), [(2, -1), (1, 0), (3, 1)])
@pytest.mark.parametrize("largest", [True, False])
def test_topk(k: int, dim: int, largest: bool) -> None:
    out = tuple(torch.zeros(X).topk(k, dim).values.shape)
    body = [const("k", k), const("d", dim), const("l", largest), const("s", True)]
    body.append(f"%y : {T(*out)}, %i : {_long(*out)} = aten::topk(%x, %k, %d, %l, %s)")
    grad = check_formula(graph({"x": T(*X)}, body, ["y"]), torch_lists=False)
    assert grad.captured_count == 1  # the indices


@pytest.mark.parametrize(("k", "dim"), [(2, -1), (1, 0), (3, 1)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_kthvalue(k: int, dim: int, keepdim: bool) -> None:
    out = tuple(torch.zeros(X).kthvalue(k, dim, keepdim=keepdim).values.shape)
    body = [const("k", k), const("d", dim), const("kd", keepdim)]
    body.append(f"%y : {T(*out)}, %i : {_long(*out)} = aten::kthvalue(%x, %k, %d, %kd)")
    assert check_formula(graph({"x": T(*X)}, body, ["y"]), torch_lists=False).captured_count == 1


# -- max_pool2d -----------------------------------------------------------------------------
POOLS = [
    ((1, 2, 5, 5), [2, 2], [2, 2], [0, 0], [1, 1], False),
    ((2, 4, 4), [3, 3], [1, 1], [1, 1], [1, 1], False),
    ((1, 1, 6, 5), [2, 2], [], [0, 0], [1, 1], True),
    ((1, 1, 7, 7), [2, 2], [2, 2], [1, 1], [2, 2], False),
]


@pytest.mark.parametrize(("shape", "kernel", "stride", "padding", "dilation", "ceil"), POOLS)
@pytest.mark.parametrize("with_indices", [False, True])
def test_max_pool2d(shape, kernel, stride, padding, dilation, ceil, with_indices: bool) -> None:
    out = tuple(torch.nn.functional.max_pool2d(torch.zeros(shape), kernel, stride or None, padding, dilation, ceil).shape)
    body = [
        const("ks", kernel),
        const("st", stride) if stride else "%st : int[] = prim::ListConstruct()",
        const("pd", padding), const("dl", dilation), const("cm", ceil),
    ]
    args = "%x, %ks, %st, %pd, %dl, %cm"
    if with_indices:
        body.append(f"%y : {T(*out)}, %i : {_long(*out)} = aten::max_pool2d_with_indices({args})")
    else:
        body.append(f"%y : {T(*out)} = aten::max_pool2d({args})")
    grad = check_formula(graph({"x": T(*shape)}, body, ["y"]))
    # max_pool2d recomputes the indices from the input; the _with_indices variant captures them.
    assert grad.captured_count == (2 if with_indices else 1)


# -- what the formulas refuse -----------------------------------------------------------------
RUN_TIME_DIMS = [[1], [0, 2], [-1, 0], [], [-3]]


@pytest.mark.parametrize("op", ["sum", "mean"])
@pytest.mark.parametrize("dims", RUN_TIME_DIMS, ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_dims_known_at_run_time(op: str, dims: list[int], keepdim: bool) -> None:
    """``x.mean(dims)`` with dims a graph input, as TorchScript writes it: torch's
    symbolic formula handles it, and so does gradview's (keepdim_size, reduced_numel)."""
    out = "Tensor"
    body = [const("n", None), f"%y : {out} = aten::{op}(%x, %d, %k, %n)"]
    text = graph({"x": T(*X), "d": "int[]", "k": "bool"}, body, ["y"])
    grad = check_formula(text, scalars={"d": dims, "k": keepdim}, torch_lists=op == "mean")
    assert not any(n.kind() == "aten::unsqueeze" for n in grad.df.nodes())


@pytest.mark.parametrize("op", ["sum", "mean"])
def test_run_time_dims_of_an_untyped_input(op: str) -> None:
    body = [const("k", False), const("n", None), f"%y : Tensor = aten::{op}(%x, %d, %k, %n)"]
    text = graph({"x": "Tensor", "d": "int[]"}, body, ["y"])
    x = np.random.default_rng(0).uniform(0.5, 1.5, X)
    for dims in ([0, -1], [1], []):
        check_formula(text, inputs=[x, dims], torch_lists=False, seeds=(0,))


def test_mean_of_an_empty_tensor_at_run_time() -> None:
    """The count is the product of the reduced sizes: a 0 in a kept dim must not divide by 0."""
    body = [const("k", False), const("n", None), "%y : Tensor = aten::mean(%x, %d, %k, %n)"]
    text = graph({"x": "Tensor", "d": "int[]"}, body, ["y"])
    check_gradient(text, [np.zeros((0, 3)), [1]], compare_torch_lists=False)


def test_mixed_sign_dims_without_the_rank_go_through_run_time_sizes() -> None:
    body = [const("d", [0, -1]), const("k", False), const("n", None), "%y : Tensor = aten::sum(%x, %d, %k, %n)"]
    text = graph({"x": "Tensor"}, body, ["y"])
    x = np.random.default_rng(1).uniform(0.5, 1.5, X)
    check_formula(text, inputs=[x], torch_lists=False, seeds=(0,))


def test_norm_p_must_be_a_constant() -> None:
    text = graph({"x": T(*X), "p": "float"}, [f"%y : {T()} = aten::norm(%x, %p)"], ["y"])
    with pytest.raises(DifferentiationError, match="constant p"):
        differentiate(parse_ir(text), mode="extended")


def test_reductions_with_run_time_dims_are_differentiable() -> None:
    """sum with run-time dims is in gradview's extended set; PyTorch's JIT never
    differentiates ``sum`` symbolically, so the torch mode leaves it out; mean it does."""
    from gradview.autodiff import is_differentiable

    graph = parse_ir("""graph(%x : Double(3, 4, strides=[4, 1], requires_grad=1, device=cpu), %d : int[]):
  %keep : bool = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
  %a : Tensor = aten::sum(%x, %d, %keep, %none)
  %b : Tensor = aten::mean(%x, %d, %keep, %none)
  return (%a, %b)
""")
    run_time_sum, run_time_mean = list(graph.nodes())[2:4]
    assert is_differentiable(run_time_sum, "extended")
    assert not is_differentiable(run_time_sum, "torch")
    assert is_differentiable(run_time_mean, "torch")
