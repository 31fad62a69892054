"""Normalization kernels (kernels/normalization.py) against PyTorch: layer and batch
norm and their backward kernels on seeded inputs, group_norm / native_group_norm and
its backward, the _native_batch_norm_legit family (_functional returning the updated
running statistics without writing its inputs), and batch norm's in-place update of
the running statistics in training mode: after one training step the buffers equal those of
torch.nn.BatchNorm1d/2d, momentum and the unbiased variance included, and a
graph shaped like a traced BatchNorm2d (``add_`` on num_batches_tracked, then
``batch_norm``) leaves every buffer as the module does.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gradview.ir import parse_ir
from gradview.kernels.backend import get_backend
from gradview.runtime import GraphRuntimeError
from gradview.runtime import run_graph as _run_graph
from tests.kernels import oracle
from tests.kernels.oracle import check_op, op_graph, torch_call
from tests.kernels.seeded_checks import SEEDS, as_torch, check, expect_error, randn, run_graph


def _check(op: str, args: list) -> list:
    f32 = any(getattr(a, "dtype", None) == np.float32 for a in args)
    return check_op(op, args, rtol=1e-4 if f32 else 1e-9, atol=1e-5 if f32 else 1e-11)


def _x(seed: int, shape: tuple[int, ...], dtype: type = np.float64, scale: float = 1.0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(dtype)


def _refuses(op: str, args: list) -> None:
    with pytest.raises((RuntimeError, IndexError)):
        torch_call(op, args)
    graph, inputs = op_graph(op, args)
    with pytest.raises(GraphRuntimeError):
        _run_graph(graph, inputs, backend=oracle.BACKEND)


# -- group norm ---------------------------------------------------------------------------------------
GROUPS = [((3, 4, 5), 2), ((2, 6), 3), ((2, 6, 3, 3), 6), ((2, 6, 2, 1, 3), 1), ((1, 4, 7), 4), ((0, 4, 3), 2)]


@pytest.mark.parametrize(("shape", "groups"), GROUPS, ids=str)
@pytest.mark.parametrize("affine", ["weight+bias", "weight", "bias", "none"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_group_norm(shape: tuple[int, ...], groups: int, affine: str, dtype: type) -> None:
    x = _x(groups, shape, dtype, 3.0) + 1
    c = shape[1]
    w = _x(1, (c,), dtype) if "weight" in affine else None
    b = _x(2, (c,), dtype) if "bias" in affine else None
    _check("aten::group_norm", [x, groups, w, b, 1e-5, True])
    hxw = int(np.prod(shape[2:]))
    _, mean, rstd = _check("aten::native_group_norm", [x, w, b, shape[0], c, hxw, groups, 1e-5])
    grad = _x(3, shape, dtype)
    for mask in ([True, True, True], [True, False, False], [False, True, True]):
        if w is None and mask[1]:
            continue  # PyTorch asks for grad_weight only when there is a weight
        _check("aten::native_group_norm_backward", [grad, x, mean, rstd, w, shape[0], c, hxw, groups, mask])


def test_group_norm_half() -> None:
    x = _x(0, (2, 4, 5), np.float16)
    check_op("aten::native_group_norm", [x, None, None, 2, 4, 5, 2, 1e-5], rtol=1e-2, atol=1e-2)


def test_group_norm_refusals() -> None:
    x = _x(0, (3, 4, 5))
    _refuses("aten::group_norm", [x, 3, None, None, 1e-5, True])  # 4 channels, 3 groups
    _refuses("aten::group_norm", [x, 2, _x(0, (3,)), None, 1e-5, True])  # weight size
    _refuses("aten::group_norm", [x[0, :, 0], 2, None, None, 1e-5, True])  # 1-d input
    _refuses("aten::native_group_norm", [x, None, None, 2, 4, 5, 2, 1e-5])  # N does not match


# -- batch norm: the _legit forms -------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5), (2, 3, 2, 3)], ids=str)
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_native_batch_norm_legit(shape: tuple[int, ...], affine: bool, dtype: type) -> None:
    x = _x(0, shape, dtype, 2.0)
    w, b = (_x(1, (3,), dtype), _x(2, (3,), dtype)) if affine else (None, None)
    _check("aten::_native_batch_norm_legit.no_stats", [x, w, b, True, 0.1, 1e-5])
    rm, rv = _x(3, (3,), dtype), np.abs(_x(4, (3,), dtype)) + 0.5
    _check("aten::_native_batch_norm_legit_no_training", [x, w, b, rm, rv, 0.1, 1e-5])
    _check("aten::_native_batch_norm_legit", [x, w, b, rm.copy(), rv.copy(), False, 0.1, 1e-5])
    # In training the op writes the running statistics: each side gets its own copy.
    _check_running_update("aten::_native_batch_norm_legit", [x, w, b, rm, rv, True, 0.3, 1e-5], (3, 4))


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_native_batch_norm_legit_functional(training: bool, dtype: type) -> None:
    """AOTAutograd's form: the updated running statistics are outputs 3 and 4, the inputs stay."""
    x, w, b = _x(0, (2, 3, 4, 2), dtype, 2.0), _x(1, (3,), dtype), _x(2, (3,), dtype)
    rm, rv = _x(3, (3,), dtype), np.abs(_x(4, (3,), dtype)) + 0.5
    before = rm.copy(), rv.copy()
    outputs = _check("aten::_native_batch_norm_legit_functional", [x, w, b, rm, rv, training, 0.3, 1e-5])
    assert [o.shape for o in outputs] == [(2, 3, 4, 2), *[(3 if training else 0,)] * 2, (3,), (3,)]
    np.testing.assert_array_equal(rm, before[0])
    np.testing.assert_array_equal(rv, before[1])
    assert training != np.allclose(outputs[3], rm), "the running mean is updated in training only"


# -- batch norm: running statistics -----------------------------------------------------------------
def _check_running_update(op: str, args: list, stats: tuple[int, int]) -> None:
    """Run ``op`` in gradview and torch on copies of the running statistics
    (positions ``stats`` of ``args``) and compare the outputs and the buffers after."""
    backend = get_backend(oracle.BACKEND)
    ours_args, torch_args = list(args), list(args)
    for position in stats:
        ours_args[position] = backend.to_device(np.array(args[position]))  # the kernel writes these
        torch_args[position] = np.array(args[position])
    graph, _ = op_graph(op, ours_args)
    arrays = [a for a in ours_args if isinstance(a, np.ndarray) or type(a).__module__.startswith("cupy")]
    ours = _run_graph(graph, arrays, backend=oracle.BACKEND)
    tensors = [torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in torch_args]
    name, _, overload = op.partition(".")
    theirs = getattr(getattr(torch.ops.aten, name.split("::")[1]), overload or "default")(*tensors)
    theirs = (theirs,) if isinstance(theirs, torch.Tensor) else theirs
    f32 = any(getattr(a, "dtype", None) == np.float32 for a in args)
    rtol = 1e-5 if f32 else 1e-10
    for a, t in zip(ours, theirs, strict=True):
        # float32: PyTorch computes x * invstd - mean * invstd, off by ~1e-5 where x == mean.
        np.testing.assert_allclose(np.asarray(a), t.numpy(), rtol=rtol, atol=5e-5 if f32 else 1e-12)
    for position in stats:
        updated = backend.to_host(ours_args[position])
        assert not np.array_equal(updated, args[position]), "the running statistics were not updated"
        np.testing.assert_allclose(updated, tensors[position].numpy(), rtol=rtol, equal_nan=True)


@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5), (2, 3, 2, 3), (1, 3, 1)], ids=str)
@pytest.mark.parametrize("op", ["aten::native_batch_norm", "aten::batch_norm"])
@pytest.mark.parametrize("momentum", [0.1, 0.5, 1.0])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_batch_norm_updates_running_statistics(shape: tuple[int, ...], op: str, momentum: float, dtype: type) -> None:
    """running = momentum * batch + (1 - momentum) * running, the variance unbiased
    (NaN for a single value per channel, as in PyTorch)."""
    x = _x(0, shape, dtype, 2.0) + 1
    rm, rv = _x(1, (3,), dtype), np.abs(_x(2, (3,), dtype)) + 0.5
    args = [x, _x(3, (3,), dtype), None, rm, rv, True, momentum, 1e-5]
    _check_running_update(op, args + ([True] if op == "aten::batch_norm" else []), (3, 4))


def test_batch_norm_evaluation_leaves_running_statistics() -> None:
    x, rm, rv = _x(0, (4, 3)), _x(1, (3,)), np.abs(_x(2, (3,))) + 0.5
    before = (rm.copy(), rv.copy())
    graph, inputs = op_graph("aten::native_batch_norm", [x, None, None, rm, rv, False, 0.1, 1e-5])
    _run_graph(graph, inputs, backend=oracle.BACKEND)
    np.testing.assert_array_equal(rm, before[0])
    np.testing.assert_array_equal(rv, before[1])


def test_batch_norm_half_input_float_parameters() -> None:
    """The one mixed-dtype case PyTorch's CPU kernel accepts: float16 input, float32
    parameters (the statistics come back in float32)."""
    x = _x(0, (4, 3, 2), np.float16)
    check_op("aten::native_batch_norm", [x, np.ones(3, np.float32), None, None, None, True, 0.1, 1e-5], rtol=1e-2, atol=1e-2)
    _refuses("aten::native_batch_norm", [x.astype(np.float32), None, None, np.zeros(3), np.ones(3), True, 0.1, 1e-5])


TRACED_BATCH_NORM = """graph(%input : Double(3, 2, 4, 4, strides=[32, 16, 4, 1], requires_grad=0, device=cpu),
      %weight : Double(2, strides=[1], requires_grad=1, device=cpu),
      %bias : Double(2, strides=[1], requires_grad=1, device=cpu),
      %running_mean : Double(2, strides=[1], requires_grad=0, device=cpu),
      %running_var : Double(2, strides=[1], requires_grad=0, device=cpu),
      %num_batches_tracked : Long(requires_grad=0, device=cpu)):
  %7 : Long(requires_grad=0, device=cpu) = prim::Constant[value={1}]()
  %8 : int = prim::Constant[value=1]()
  %9 : Long(requires_grad=0, device=cpu) = aten::add_(%num_batches_tracked, %7, %8)
  %10 : bool = prim::Constant[value=1]()
  %11 : float = prim::Constant[value=0.10000000000000001]()
  %12 : float = prim::Constant[value=1.0000000000000001e-05]()
  %14 : Double(3, 2, 4, 4, strides=[32, 16, 4, 1], requires_grad=1, device=cpu) = aten::batch_norm(%input, %weight, %bias, %running_mean, %running_var, %10, %11, %12, %10)
  return (%14)
"""


@pytest.mark.parametrize("module", ["BatchNorm1d", "BatchNorm2d"])
def test_training_step_leaves_the_module_buffers(module: str) -> None:
    """The traced graph of nn.BatchNorm*d in training mode (parameters and buffers
    lifted to inputs) run twice: every buffer equals the module's after two forwards."""
    shape = (3, 2, 4, 4) if module == "BatchNorm2d" else (3, 2, 4)
    text = TRACED_BATCH_NORM
    if module == "BatchNorm1d":
        text = text.replace("Double(3, 2, 4, 4, strides=[32, 16, 4, 1]", "Double(3, 2, 4, strides=[8, 4, 1]")
    torch_module = getattr(torch.nn, module)(2).double().train()
    with torch.no_grad():
        torch_module.weight.uniform_(0.5, 1.5)
        torch_module.bias.uniform_(-1, 1)
    backend = get_backend(oracle.BACKEND)
    buffers = [backend.to_device(b.detach().numpy().copy()) for b in torch_module.buffers()]
    params = [p.detach().numpy().copy() for p in torch_module.parameters()]
    graph = parse_ir(text)
    for step in range(2):
        x = _x(step, shape) * 2 + 1
        (ours,) = _run_graph(graph, [x, *params, *buffers], backend=oracle.BACKEND)
        theirs = torch_module(torch.from_numpy(x))
        np.testing.assert_allclose(backend.to_host(ours), theirs.detach().numpy(), rtol=1e-10, atol=1e-12)
    for name, ours_buffer, (_, theirs_buffer) in zip(
        ["running_mean", "running_var", "num_batches_tracked"], buffers, torch_module.named_buffers(), strict=True
    ):
        np.testing.assert_allclose(backend.to_host(ours_buffer), theirs_buffer.numpy(), rtol=1e-12, err_msg=name)


# -- layer norm ----------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("seed", SEEDS)
def test_layer_norm(seed: int, dtype: type) -> None:
    rng = np.random.default_rng(seed)
    shape = [(6,), (3, 5), (2, 3, 4), (2, 3, 4, 5)][seed % 4]
    x = randn(rng, *shape, dtype=dtype) * 3 + 1
    for k in range(1, len(shape) + 1):
        normalized = list(shape[-k:])
        w = randn(rng, *normalized, dtype=dtype)
        b = randn(rng, *normalized, dtype=dtype)
        eps = float(rng.choice([1e-5, 1e-3]))
        for weight, bias in ((None, None), (w, None), (None, b), (w, b)):
            check("aten::native_layer_norm", [x, normalized, weight, bias, eps])
            check("aten::layer_norm", [x, normalized, weight, bias, eps, True])


def test_layer_norm_shape_errors() -> None:
    x = np.ones((2, 3, 4))
    expect_error("aten::native_layer_norm", [x, [3], None, None, 1e-5], r"normalized_shape=\[3\]")
    expect_error("aten::layer_norm", [x, [4], np.ones(3), None, 1e-5, True], "weight must have shape")
    expect_error("aten::native_layer_norm", [x.astype(np.int64), [4], None, None, 1e-5], "floating-point")


@pytest.mark.parametrize("seed", SEEDS)
def test_native_layer_norm_backward(seed: int) -> None:
    rng = np.random.default_rng(seed)
    shape = [(4, 6), (2, 3, 5), (2, 3, 4, 2)][seed % 3]
    k = 1 + seed % (len(shape) - 1)
    normalized = list(shape[-k:])
    x, grad = randn(rng, *shape), randn(rng, *shape)
    w, b = randn(rng, *normalized), randn(rng, *normalized)
    _, mean, rstd = (t.numpy() for t in torch.ops.aten.native_layer_norm(as_torch(x), normalized, as_torch(w), as_torch(b), 1e-5))
    for mask in ([True, True, True], [True, False, False], [False, True, True], [False, False, True]):
        check("aten::native_layer_norm_backward", [grad, x, normalized, mean, rstd, w, b, mask])
    check("aten::native_layer_norm_backward", [grad, x, normalized, mean, rstd, None, None, [True, False, False]])


# -- batch norm ----------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("seed", SEEDS)
def test_native_batch_norm(seed: int, dtype: type) -> None:
    rng = np.random.default_rng(seed)
    shape = [(4, 3), (2, 3, 5), (2, 3, 4, 5), (1, 2, 3, 2, 2), (3, 2, 1)][seed]
    c = shape[1]
    x = randn(rng, *shape, dtype=dtype) * 2 + 0.5
    w, b = randn(rng, c, dtype=dtype), randn(rng, c, dtype=dtype)
    running_mean = randn(rng, c, dtype=dtype)
    running_var = np.asarray(rng.random(c) + 0.5, dtype=dtype)
    for weight, bias in ((None, None), (w, b), (w, None)):
        for stats in ((None, None), (running_mean, running_var)):
            args = [x, weight, bias, *stats, True, 0.1, 1e-5]
            check("aten::native_batch_norm", args)
            check("aten::batch_norm", [*args, True])
        args = [x, weight, bias, running_mean, running_var, False, 0.1, 1e-3]
        check("aten::native_batch_norm", args)
        check("aten::batch_norm", [*args, True])


def test_batch_norm_of_one_value_per_channel() -> None:
    x = randn(np.random.default_rng(1), 1, 3)  # zero variance: the output is the bias
    for training in (True, False):
        check("aten::native_batch_norm", [x, None, np.ones(3), np.zeros(3), np.ones(3), training, 0.1, 1e-5])


def test_batch_norm_updates_running_stats_in_place() -> None:
    """As PyTorch's: momentum 0.1, the unbiased variance (test_normalization.py compares with torch)."""
    if oracle.BACKEND != "numpy":
        pytest.skip("host arrays are copied to the device: the update lands on the copy")
    rng = np.random.default_rng(0)
    x = randn(rng, 4, 3, 2)
    running_mean, running_var = np.zeros(3), np.ones(3)
    graph, inputs = op_graph("aten::native_batch_norm", [x, None, None, running_mean, running_var, True, 0.1, 1e-5])
    out, save_mean, save_invstd = run_graph(graph, inputs)
    np.testing.assert_allclose(running_mean, 0.1 * x.mean(axis=(0, 2)), rtol=1e-12)
    np.testing.assert_allclose(running_var, 0.9 + 0.1 * x.var(axis=(0, 2), ddof=1), rtol=1e-12)
    np.testing.assert_allclose(save_mean, x.mean(axis=(0, 2)), rtol=1e-12)


def test_batch_norm_errors() -> None:
    x = np.ones((2, 3, 4))
    expect_error("aten::native_batch_norm", [x, None, None, None, None, False, 0.1, 1e-5], "running_mean")
    expect_error("aten::batch_norm", [x, np.ones(4), None, None, None, True, 0.1, 1e-5, True], r"weight must have shape \[3\]")
    expect_error("aten::native_batch_norm", [np.ones(3), None, None, None, None, True, 0.1, 1e-5], "at least 2 dims")


@pytest.mark.parametrize("seed", SEEDS)
def test_native_batch_norm_backward(seed: int) -> None:
    rng = np.random.default_rng(seed)
    shape = [(5, 3), (2, 3, 4), (2, 3, 4, 2)][seed % 3]
    c = shape[1]
    x, grad, w = randn(rng, *shape), randn(rng, *shape), randn(rng, c)
    running_mean, running_var = randn(rng, c), rng.random(c) + 0.5
    _, save_mean, save_invstd = (
        t.numpy() for t in torch.ops.aten.native_batch_norm(as_torch(x), as_torch(w), None, None, None, True, 0.1, 1e-5)
    )
    for mask in ([True, True, True], [True, False, False], [False, True, True]):
        for weight in (w, None):
            check("aten::native_batch_norm_backward",
                   [grad, x, weight, None, None, save_mean, save_invstd, True, 1e-5, mask])
            check("aten::native_batch_norm_backward",
                   [grad, x, weight, running_mean, running_var, None, None, False, 1e-5, mask])
