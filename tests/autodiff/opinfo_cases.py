"""PyTorch's own autodiff test data, as cases for gradview.

``torch.testing._internal.common_methods_invocations.op_db`` describes every
op of PyTorch's test suite by an OpInfo: how to call it and sample inputs. The
OpInfos with ``assert_autodiffed=True`` are the ops PyTorch's tests assert its
JIT differentiates symbolically. This module turns each of their float64 CPU
samples into a case:

* ``tensors``: every tensor of the sample (the input, the positional and
  keyword arguments, and the tensors inside lists), in that order;
* ``call(tensors)``: the op called on them, every other argument fixed;
* ``traced_text()``: the graph torch.jit.trace records for that call, as torch
  prints it (one graph input per tensor; scalars become constants);
* ``eager()``: the outputs and the gradients torch.autograd gives, for a fixed
  random gradient of each output (the oracle of every check).

Samples are drawn as OpInfo.sample_inputs draws them (the generators reseeded
before each sample), so every process (the test, the scripted-call
subprocess, the report) gets the same values.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

__all__ = [
    "Case", "EagerResult", "autodiffed_ops", "all_cases", "case_by_id", "op_label", "flatten",
    "to_numpy", "output_grads_like", "error_line",
]

GRAD_SEED = 1234


def _op_db() -> list[Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from torch.testing._internal.common_methods_invocations import op_db
    return op_db


@functools.cache
def autodiffed_ops() -> tuple[Any, ...]:
    """The OpInfos PyTorch asserts its JIT differentiates (89 in torch 2.13)."""
    return tuple(op for op in _op_db() if op.assert_autodiffed)


def op_label(op: Any) -> str:
    """``name`` or ``name.variant`` (``div.floor_rounding``): unique among the OpInfos."""
    name = op.name.replace(" ", "_")
    return f"{name}.{op.variant_test_name}" if op.variant_test_name else name


def _is_tensor_list(value: Any) -> bool:
    return (
        isinstance(value, list | tuple)
        and len(value) > 0
        and all(isinstance(item, torch.Tensor) for item in value)
    )


@dataclass(frozen=True)
class EagerResult:
    """What eager PyTorch computes for a case: outputs flattened to tensors, the
    random output gradients (same structure), and one gradient per tensor input
    (None where autograd gives none)."""

    outputs: list[np.ndarray]
    output_grads: list[np.ndarray]
    input_grads: list[np.ndarray | None]


@dataclass
class Case:
    op: Any
    index: int
    sample: Any

    @property
    def label(self) -> str:
        return op_label(self.op)

    @property
    def case_id(self) -> str:
        return f"{self.label}-sample{self.index}"

    # -- the tensors of the sample and the call on them ---------------------------------------
    @property
    def tensors(self) -> list[torch.Tensor]:
        found: list[torch.Tensor] = []
        for value in (self.sample.input, *self.sample.args, *self.sample.kwargs.values()):
            if isinstance(value, torch.Tensor):
                found.append(value)
            elif _is_tensor_list(value):
                found.extend(value)
        return found

    def call(self, tensors: Sequence[torch.Tensor]) -> Any:
        """The op on ``tensors`` in place of the sample's (same order as ``tensors``)."""
        supply = iter(tensors)

        def put(value: Any) -> Any:
            if isinstance(value, torch.Tensor):
                return next(supply)
            if _is_tensor_list(value):
                return type(value)(next(supply) for _ in value)
            return value

        first = put(self.sample.input)
        args = [put(a) for a in self.sample.args]
        kwargs = {k: put(v) for k, v in self.sample.kwargs.items()}
        return self.op.op(first, *args, **kwargs)

    def leaf_inputs(self) -> list[torch.Tensor]:
        """Fresh leaves with the sample's values; floating ones require grad."""
        return [
            t.detach().clone().requires_grad_(t.requires_grad and t.dtype.is_floating_point)
            for t in self.tensors
        ]

    def input_arrays(self) -> list[np.ndarray]:
        return [to_numpy(t) for t in self.tensors]

    # -- torch's two views of the call ---------------------------------------------------------
    def traced_text(self) -> str:
        """The graph of torch.jit.trace of the call, printed by torch."""
        inputs = self.leaf_inputs()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            traced = torch.jit.trace(lambda *ts: self.call(ts), tuple(inputs), check_trace=False)
        return str(traced.graph)

    def eager(self) -> EagerResult:
        """Outputs and gradients of eager PyTorch (the oracle)."""
        inputs = self.leaf_inputs()
        outputs = flatten(self.call(inputs))
        grads = output_grads_like(outputs, seed=GRAD_SEED + self.index)
        pairs = [(o, torch.from_numpy(g)) for o, g in zip(outputs, grads, strict=True) if o.requires_grad]
        wanted = [t for t in inputs if t.requires_grad]
        found: list[torch.Tensor | None] = []
        if pairs and wanted:
            found = list(
                torch.autograd.grad(
                    [p[0] for p in pairs], wanted, [p[1] for p in pairs], allow_unused=True
                )
            )
        supply = iter(found)
        input_grads = [
            (None if (g := next(supply)) is None else to_numpy(g)) if t.requires_grad else None
            for t in inputs
        ]
        return EagerResult([to_numpy(o) for o in outputs], grads, input_grads)


def error_line(error: BaseException) -> str:
    """The line of an error message that says what went wrong: the first, or for
    an error inside TorchScript code (a traceback of TorchScript), the last."""
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    if not lines:
        return type(error).__name__
    if lines[0].startswith("The following operation failed in the TorchScript interpreter"):
        return lines[-1]
    return lines[0]


def flatten(value: Any) -> list[Any]:
    """The tensors of a (nested) tuple or list of outputs, in order."""
    if isinstance(value, list | tuple):
        return [leaf for item in value for leaf in flatten(item)]
    return [value]


def to_numpy(value: Any) -> np.ndarray:
    return value.detach().numpy().copy() if isinstance(value, torch.Tensor) else np.asarray(value)


def output_grads_like(outputs: Sequence[Any], seed: int) -> list[np.ndarray]:
    """A standard-normal gradient for each (flattened) output, of its shape and dtype."""
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(tuple(o.shape)) for o in outputs]


@functools.cache
def _samples(label: str) -> tuple[Any, ...]:
    """``op.sample_inputs("cpu", torch.float64, requires_grad=True)``, without its
    bookkeeping: OpInfo.sample_inputs looks for the calling unittest method with
    inspect.stack(), which reads the source of every frame (seconds per op under
    pytest). Like it, the generator is reseeded before each sample."""
    from torch.testing._internal.common_utils import set_rng_seed

    (op,) = [op for op in autodiffed_ops() if op_label(op) == label]
    samples = iter(op.sample_inputs_func(op, "cpu", torch.float64, True))
    found = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        while True:
            set_rng_seed()
            sample = next(samples, None)
            if sample is None:
                return tuple(found)
            found.append(sample)


def all_cases() -> list[Case]:
    """Every float64 CPU sample of every autodiffed OpInfo (539 in torch 2.13)."""
    return [
        Case(op, index, sample)
        for op in autodiffed_ops()
        for index, sample in enumerate(_samples(op_label(op)))
    ]


@functools.cache
def _case_table() -> dict[str, Case]:
    return {case.case_id: case for case in all_cases()}


def case_by_id(case_id: str) -> Case:
    """The case named ``label-sampleN``."""
    return _case_table()[case_id]


def cases_of(label_filter: Callable[[str], bool]) -> list[Case]:
    return [case for case in all_cases() if label_filter(case.label)]
