"""Gradient formulas of the normalizations (gradview.ops.normalization) against torch and
finite differences in float64, with and without weight and bias, in training and evaluation
mode: layer_norm, native_layer_norm, batch_norm and native_batch_norm (torch's Gradient lists
and capture count where torch 2.13 differentiates the op: all but native_layer_norm, and
torch.autograd's numbers); group norm and batch norm's _native_batch_norm_legit forms; batch
norm with a training flag known only at run time. Batch norm in training updates its running
statistics once, in the forward: the backward's recomputation leaves them alone.
"""

from __future__ import annotations

import numpy as np
import pytest

from gradview.autodiff import differentiate
from gradview.ir import parse_ir
from tests.autodiff.finite_differences import check_finite_differences
from tests.autodiff.formula_case_tools import check_formula, make_inputs
from tests.autodiff.ir_builder import T, const, graph
from tests.autodiff.oracle import run_gradient

AFFINE = ["weight+bias", "weight", "bias", "none"]


def _affine(types: dict[str, str], affine: str, channels: int) -> tuple[str, str]:
    if "weight" in affine:
        types["w"] = T(channels)
    if "bias" in affine:
        types["b"] = T(channels)
    return ("%w" if "weight" in affine else "%none"), ("%b" if "bias" in affine else "%none")


@pytest.mark.parametrize(("shape", "groups"), [((2, 4, 3), 2), ((3, 6, 2, 2), 3), ((2, 4), 4), ((1, 4, 5), 1)], ids=str)
@pytest.mark.parametrize("affine", AFFINE)
@pytest.mark.parametrize("native", [False, True])
def test_group_norm(shape: tuple[int, ...], groups: int, affine: str, native: bool) -> None:
    types = {"x": T(*shape)}
    w, b = _affine(types, affine, shape[1])
    body = [const("G", groups), const("e", 1e-5), const("c", True), const("none", None)]
    if native:
        hxw = int(np.prod(shape[2:]))
        body += [const("N", shape[0]), const("C", shape[1]), const("H", hxw)]
        stat = T(shape[0], groups)
        body.append(f"%y : {T(*shape)}, %m : {stat}, %r : {stat} = aten::native_group_norm(%x, {w}, {b}, %N, %C, %H, %G, %e)")
    else:
        body.append(f"%y : {T(*shape)} = aten::group_norm(%x, %G, {w}, {b}, %e, %c)")
    text = graph(types, body, ["y"])
    if affine == "bias":
        # torch 2.13's own backward fails here ("tensor does not have a device": a bias
        # without a weight): finite differences are the oracle.
        inputs = make_inputs(text, 0, -2.0, 2.0)
        grad = check_finite_differences(text, inputs)
    else:
        grad = check_formula(text, torch_lists=False, low=-2.0, high=2.0)
    weight = "weight" in affine
    # group_norm recomputes mean/rstd from the input; native_group_norm captures them.
    assert grad.captured_count == (1 + weight + 2 * native)


def test_group_norm_of_an_untyped_input() -> None:
    """N, C and HxW are read from the input's size at run time."""
    body = [const("G", 2), const("e", 1e-5), const("c", True), const("none", None)]
    body.append("%y : Tensor = aten::group_norm(%x, %G, %w, %none, %e, %c)")
    text = graph({"x": "Tensor", "w": T(4)}, body, ["y"])
    rng = np.random.default_rng(0)
    check_formula(text, torch_lists=False, inputs=[rng.uniform(-2, 2, (2, 4, 3, 2)), rng.uniform(0.5, 1.5, 4)])


# -- batch norm: the _legit forms, and training decided at run time ------------------------------------------
@pytest.mark.parametrize("form", ["legit-train", "legit-eval", "no_stats", "no_training"])
@pytest.mark.parametrize("affine", ["weight+bias", "none"])
def test_native_batch_norm_legit(form: str, affine: str) -> None:
    shape = (4, 3, 2)
    types = {"x": T(*shape)}
    w, b = _affine(types, affine, 3)
    types |= {"rm_in": T(3, grad=False), "rv_in": T(3, grad=False)}
    body = [
        const("mo", 0.1), const("e", 1e-5), const("none", None), const("t", form != "legit-eval"),
        f"%rm : {T(3, grad=False)} = aten::clone(%rm_in, %none)",  # the op writes them: work on copies
        f"%rv : {T(3, grad=False)} = aten::clone(%rv_in, %none)",
    ]
    training = form in ("legit-train", "no_stats")
    stat = T(3 if training else 0)
    outputs = f"%y : {T(*shape)}, %m : {stat}, %s : {stat}"
    call = {
        "legit-train": f"aten::_native_batch_norm_legit(%x, {w}, {b}, %rm, %rv, %t, %mo, %e)",
        "legit-eval": f"aten::_native_batch_norm_legit(%x, {w}, {b}, %rm, %rv, %t, %mo, %e)",
        "no_stats": f"aten::_native_batch_norm_legit(%x, {w}, {b}, %t, %mo, %e)",
        "no_training": f"aten::_native_batch_norm_legit_no_training(%x, {w}, {b}, %rm, %rv, %mo, %e)",
    }[form]
    body.append(f"{outputs} = {call}")
    check_formula(graph(types, body, ["y"]), torch_lists=False, low=0.5, high=1.5)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("native", [False, True])
def test_batch_norm_training_known_at_run_time(training: bool, native: bool) -> None:
    """``training`` is a graph input (a scripted module's ``self.training``)."""
    shape = (4, 3, 2)
    types = {"x": T(*shape), "w": T(3), "b": T(3), "rm_in": T(3, grad=False), "rv_in": T(3, grad=False), "t": "bool"}
    body = [
        const("mo", 0.1), const("e", 1e-5), const("none", None),
        f"%rm : {T(3, grad=False)} = aten::clone(%rm_in, %none)",
        f"%rv : {T(3, grad=False)} = aten::clone(%rv_in, %none)",
    ]
    if native:
        body.append(f"%y : {T(*shape)}, %m : Tensor, %s : Tensor = aten::native_batch_norm(%x, %w, %b, %rm, %rv, %t, %mo, %e)")
    else:
        body.append(f"%y : {T(*shape)} = aten::batch_norm(%x, %w, %b, %rm, %rv, %t, %mo, %e, %t)")
    rng = np.random.default_rng(0)
    inputs = [rng.uniform(-1, 2, shape), rng.uniform(0.5, 1.5, 3), rng.uniform(-1, 1, 3),
              rng.uniform(-1, 1, 3), rng.uniform(0.5, 1.5, 3), training]
    check_formula(graph(types, body, ["y"]), torch_lists=False, inputs=inputs)


@pytest.mark.parametrize("op", ["batch_norm", "native_batch_norm"])
@pytest.mark.parametrize("training", ["constant", "input"])
def test_running_statistics_update_once(op: str, training: str) -> None:
    """f updates the buffers in place (graph inputs, as a lifted module's); df does not touch them."""
    types = {"x": T(4, 3), "w": T(3), "rm": T(3, grad=False), "rv": T(3, grad=False)}
    body = [const("mo", 0.25), const("e", 1e-5), const("none", None)]
    if training == "input":
        types["t"] = "bool"
    else:
        body.append(const("t", True))
    if op == "native_batch_norm":
        body.append(f"%y : {T(4, 3)}, %m : Tensor, %s : Tensor = aten::native_batch_norm(%x, %w, %none, %rm, %rv, %t, %mo, %e)")
    else:
        body.append(f"%y : {T(4, 3)} = aten::batch_norm(%x, %w, %none, %rm, %rv, %t, %mo, %e, %t)")
    grad = differentiate(parse_ir(graph(types, body, ["y"])), mode="extended")
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((4, 3)), rng.uniform(0.5, 1.5, 3)
    rm, rv = np.zeros(3), np.ones(3)
    inputs = [x, w, rm, rv] + ([True] if training == "input" else [])
    run_gradient(grad, inputs, [np.ones((4, 3))])
    np.testing.assert_allclose(rm, 0.25 * x.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(rv, 0.75 + 0.25 * x.var(axis=0, ddof=1), rtol=1e-12)


# -- layer norm -----------------------------------------------------------------------------
LAYER_SHAPES = [((2, 3, 4), [4]), ((2, 3, 4), [3, 4]), ((5, 4), [4])]


def _layer_norm(shape: tuple[int, ...], normalized: list[int], affine: str, native: bool) -> str:
    types = {"x": T(*shape)}
    if "weight" in affine:
        types["w"] = T(*normalized)
    if "bias" in affine:
        types["b"] = T(*normalized)
    args = f"%x, %ns, {'%w' if 'weight' in affine else '%none'}, {'%b' if 'bias' in affine else '%none'}, %e"
    body = [const("ns", normalized), const("e", 1e-5), const("c", True), const("none", None)]
    if native:
        stat = T(*shape[: len(shape) - len(normalized)], *[1] * len(normalized))
        body.append(f"%y : {T(*shape)}, %m : {stat}, %r : {stat} = aten::native_layer_norm({args})")
    else:
        body.append(f"%y : {T(*shape)} = aten::layer_norm({args}, %c)")
    return graph(types, body, ["y"])


@pytest.mark.parametrize(("shape", "normalized"), LAYER_SHAPES, ids=str)
@pytest.mark.parametrize("affine", AFFINE)
def test_layer_norm(shape: tuple[int, ...], normalized: list[int], affine: str) -> None:
    grad = check_formula(_layer_norm(shape, normalized, affine, native=False))
    # mean and rstd are recomputed from the input: only the input (and weight) are captured.
    assert grad.captured_count == (2 if "weight" in affine else 1)


@pytest.mark.parametrize(("shape", "normalized"), LAYER_SHAPES, ids=str)
@pytest.mark.parametrize("affine", AFFINE)
def test_native_layer_norm(shape: tuple[int, ...], normalized: list[int], affine: str) -> None:
    grad = check_formula(_layer_norm(shape, normalized, affine, native=True), torch_lists=False)
    assert grad.captured_count == (4 if "weight" in affine else 3)  # input, weight, mean, rstd


def test_layer_norm_weight_gradient_only() -> None:
    text = _layer_norm((2, 3, 4), [4], "weight+bias", native=False).replace(
        "%x : Double(2, 3, 4, requires_grad=1", "%x : Double(2, 3, 4, requires_grad=0"
    )
    check_formula(text)


# -- batch norm -----------------------------------------------------------------------------
def _batch_norm(shape: tuple[int, ...], training: bool, affine: str, native: bool) -> str:
    channels = shape[1]
    types = {"x": T(*shape)}
    if "weight" in affine:
        types["w"] = T(channels)
    if "bias" in affine:
        types["b"] = T(channels)
    # torch.autograd refuses running statistics that require grad: detach them.
    types |= {"rm_in": T(channels, grad=False), "rv_in": T(channels, grad=False)}
    body = [
        f"%rm : {T(channels, grad=False)} = aten::detach(%rm_in)",
        f"%rv : {T(channels, grad=False)} = aten::detach(%rv_in)",
        const("t", training), const("mo", 0.1), const("e", 1e-5), const("none", None),
    ]
    args = f"%x, {'%w' if 'weight' in affine else '%none'}, {'%b' if 'bias' in affine else '%none'}, %rm, %rv, %t, %mo, %e"
    if native:
        stat = T(channels if training else 0)
        body.append(f"%y : {T(*shape)}, %m : {stat}, %s : {stat} = aten::native_batch_norm({args})")
    else:
        body.append(f"%y : {T(*shape)} = aten::batch_norm({args}, %t)")
    return graph(types, body, ["y"])


@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5), (2, 3, 2, 2)], ids=str)
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("affine", ["weight+bias", "weight", "none"])
@pytest.mark.parametrize("native", [False, True])
def test_batch_norm(shape: tuple[int, ...], training: bool, affine: str, native: bool) -> None:
    grad = check_formula(_batch_norm(shape, training, affine, native))
    weight = "weight" in affine
    if training:
        # batch_norm recomputes the batch statistics, native_batch_norm captures them.
        assert grad.captured_count == (1 + weight + 2 * native)
    else:
        assert grad.captured_count == 3 + weight  # input, (weight,) running mean and var


@pytest.mark.parametrize("native", ["layer", "batch"])
def test_statistics_outputs_are_not_differentiable(native: str) -> None:
    """Only mean/rstd (save_mean/save_invstd) used: no gradient reaches the input, as in PyTorch."""
    if native == "layer":
        stat = T(3, 1)
        body = [const("ns", [4]), const("e", 1e-5), const("n", None)]
        body.append(f"%y : {T(3, 4)}, %m : {stat}, %r : {stat} = aten::native_layer_norm(%x, %ns, %n, %n, %e)")
    else:
        stat = T(4)
        body = [const("t", True), const("mo", 0.1), const("e", 1e-5), const("n", None)]
        body.append(f"%y : {T(3, 4)}, %m : {stat}, %r : {stat} = aten::native_batch_norm(%x, %n, %n, %n, %n, %t, %mo, %e)")
    grad = differentiate(parse_ir(graph({"x": T(3, 4)}, body, ["m"])), mode="extended")
    stat_shape = (3, 1) if native == "layer" else (4,)
    _, vjps = run_gradient(grad, [np.ones((3, 4))], [np.ones(stat_shape)])
    assert all(v is None or not np.any(v) for v in vjps)
