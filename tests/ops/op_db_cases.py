"""Every op of PyTorch's OpInfo database, as cases gradview must run like eager torch.

``torch.testing._internal.common_methods_invocations.op_db`` describes each op
of PyTorch's test suite by an OpInfo: how to call it and sample inputs. The
sweep takes every OpInfo with float64 CPU samples, except the ops that draw
random numbers (those are checked against their own seeded masks in
``test_random_ops``), and every sample of each, drawn as OpInfo draws them
(the generators reseeded before each sample, so every process gets the same
values).

A case is checked as a user's code runs: the call traced by
``torch.jit.trace``, the printed graph parsed by gradview, run by its
``GraphExecutor`` on Tensors that require grad, and differentiated by its
``autograd.grad`` with a fixed random gradient per output. Outputs, their
``requires_grad`` and every input's gradient must equal eager autograd's to
rtol 1e-12 (atol 1e-14) in float64.
"""

from __future__ import annotations

import functools
import signal
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch

from ..autodiff.opinfo_cases import Case, flatten, op_label, output_grads_like, to_numpy

__all__ = ["RANDOM_OPS", "SweepFailure", "sweep_ops", "sweep_cases", "check_case", "RTOL", "ATOL"]

RTOL, ATOL = 1e-12, 1e-14

# OpInfos whose result depends on torch's random generator: no two runs agree
# with torch, so they are checked against gradview's own seeded draws instead.
RANDOM_OPS = frozenset({
    "bernoulli", "cauchy", "exponential", "geometric", "log_normal", "multinomial", "normal",
    "normal.number_mean", "uniform", "rand_like", "randn_like", "randint_like", "randint",
    "randn", "rand", "nn.functional.dropout", "nn.functional.dropout2d", "nn.functional.dropout3d",
    "nn.functional.alpha_dropout", "nn.functional.feature_alpha_dropout.with_train",
    "nn.functional.feature_alpha_dropout.without_train", "nn.functional.rrelu",
    "nn.functional.fractional_max_pool2d", "nn.functional.fractional_max_pool3d",
    "nn.functional.scaled_dot_product_attention", "nn.functional.multi_head_attention_forward",
    "randint_like.low_high",
})


def _op_db() -> list[Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from torch.testing._internal.common_methods_invocations import op_db
    return op_db


@functools.cache
def sweep_ops() -> tuple[Any, ...]:
    """Every OpInfo with float64 CPU samples that draws no random numbers."""
    return tuple(
        op for op in _op_db()
        if torch.float64 in op.supported_dtypes("cpu") and op_label(op) not in RANDOM_OPS
    )


def op_samples(op: Any, limit: int | None = None) -> list[Any]:
    """The op's float64 CPU samples (requires_grad set where OpInfo sets it)."""
    from torch.testing._internal.common_utils import set_rng_seed

    found: list[Any] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        samples = iter(op.sample_inputs_func(op, "cpu", torch.float64, op.supports_autograd))
        while limit is None or len(found) < limit:
            set_rng_seed()
            sample = next(samples, None)
            if sample is None:
                break
            found.append(sample)
    return found


def sweep_cases(limit: int | None = None) -> Iterator[Case]:
    for op in sweep_ops():
        for index, sample in enumerate(op_samples(op, limit)):
            yield Case(op, index, sample)


class SweepFailure(AssertionError):
    """A case gradview does not run like eager torch: ``stage`` says where."""

    def __init__(self, stage: str, message: str) -> None:
        super().__init__(f"{stage}: {message}")
        self.stage = stage
        self.message = message


@contextmanager
def _time_limit(seconds: int) -> Iterator[None]:
    def alarm(*_: Any) -> None:
        raise TimeoutError(f"no answer in {seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@contextmanager
def _stage(name: str) -> Iterator[None]:
    try:
        yield
    except SweepFailure:
        raise
    except Exception as error:  # noqa: BLE001 - every error is a finding of the sweep
        lines = [line for line in str(error).splitlines() if line.strip()]
        raise SweepFailure(name, f"{type(error).__name__}: {lines[0] if lines else ''}") from error


def _describe(ours: np.ndarray, theirs: np.ndarray) -> str:
    if ours.shape != theirs.shape:
        return f"shape {ours.shape}, eager {theirs.shape}"
    if ours.dtype != theirs.dtype:
        return f"dtype {ours.dtype}, eager {theirs.dtype}"
    with np.errstate(all="ignore"):
        diff = np.abs(ours.astype(np.float64) - theirs.astype(np.float64))
        worst = float(np.nanmax(diff)) if diff.size else 0.0
    return f"differs by up to {worst:.3g}"


def _equal(ours: np.ndarray, theirs: np.ndarray) -> bool:
    if ours.shape != theirs.shape or ours.dtype != theirs.dtype:
        return False
    if ours.dtype.kind in "fc":
        return bool(np.allclose(ours, theirs, rtol=RTOL, atol=ATOL, equal_nan=True))
    return bool(np.array_equal(ours, theirs))


def _eager(case: Case) -> tuple[list[Any], list[np.ndarray], list[bool], list[np.ndarray | None]]:
    inputs = case.leaf_inputs()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outputs = flatten(case.call(inputs))
    grads = output_grads_like(outputs, seed=1234 + case.index)
    pairs = [
        (o, torch.from_numpy(g).to(o.dtype)) for o, g in zip(outputs, grads, strict=True)
        if isinstance(o, torch.Tensor) and o.requires_grad
    ]
    wanted = [t for t in inputs if t.requires_grad]
    found: list[Any] = []
    if pairs and wanted:
        found = list(torch.autograd.grad(
            [p[0] for p in pairs], wanted, [p[1] for p in pairs], allow_unused=True
        ))
    supply = iter(found)
    input_grads = [
        (None if (g := next(supply, None)) is None else to_numpy(g)) if t.requires_grad else None
        for t in inputs
    ]
    requires = [isinstance(o, torch.Tensor) and o.requires_grad for o in outputs]
    return [to_numpy(o) if isinstance(o, torch.Tensor) else o for o in outputs], grads, requires, input_grads


def check_case(case: Case, seconds: int = 60) -> None:
    """The case through gradview as the module docstring says; raises SweepFailure."""
    from gradview.ir import parse_ir
    from gradview.runtime import GraphExecutor, Tensor, autograd

    with _time_limit(seconds):
        with _stage("eager"):
            outputs, output_grads, requires, input_grads = _eager(case)
        with _stage("trace"):
            text = case.traced_text()
        with _stage("parse"):
            graph = parse_ir(text)
        arrays = case.input_arrays()
        inputs = [
            Tensor(a.copy(), requires_grad=t.requires_grad and t.dtype.is_floating_point)
            for a, t in zip(arrays, case.tensors, strict=True)
        ]
        with _stage("run"):
            ours = flatten(GraphExecutor(graph).run(inputs))
        if len(ours) != len(outputs):
            raise SweepFailure("forward", f"{len(ours)} outputs, eager {len(outputs)}")
        for index, (mine, theirs, wants) in enumerate(zip(ours, outputs, requires, strict=True)):
            if not isinstance(theirs, np.ndarray):
                if mine != theirs:
                    raise SweepFailure("forward", f"output {index}: {mine!r}, eager {theirs!r}")
                continue
            if not isinstance(mine, Tensor):
                raise SweepFailure("forward", f"output {index} is a {type(mine).__name__}")
            got = mine.detach().numpy()
            if not _equal(got, theirs):
                raise SweepFailure("forward", f"output {index}: {_describe(got, theirs)}")
            if mine.requires_grad != wants:
                raise SweepFailure(
                    "forward", f"output {index}: requires_grad {mine.requires_grad}, eager {wants}"
                )
        pairs = [
            (o, Tensor(g.astype(o.detach().numpy().dtype)))
            for o, g, w in zip(ours, output_grads, requires, strict=True) if w
        ]
        wanted = [(i, t) for i, t in enumerate(inputs) if t.requires_grad]
        got_grads: dict[int, Any] = {}
        if pairs and wanted:
            with _stage("backward"):
                grads = autograd.grad(
                    [p[0] for p in pairs], [w[1] for w in wanted], [p[1] for p in pairs],
                    allow_unused=True,
                )
            got_grads = {i: g for (i, _), g in zip(wanted, grads, strict=True)}
        for index, theirs in enumerate(input_grads):
            mine = got_grads.get(index)
            if theirs is None:
                if mine is not None and np.any(mine.numpy()):
                    raise SweepFailure("gradient", f"input {index}: eager has none, gradview nonzero")
                continue
            if mine is None:
                if np.any(theirs):
                    raise SweepFailure("gradient", f"input {index} lost; eager computes one")
                continue
            if not _equal(mine.numpy(), theirs):
                raise SweepFailure("gradient", f"input {index}: {_describe(mine.numpy(), theirs)}")
