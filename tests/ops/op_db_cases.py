"""Every op of PyTorch's OpInfo database, as cases gradview must run like eager torch.

``torch.testing._internal.common_methods_invocations.op_db`` describes each op
of PyTorch's test suite by an OpInfo: how to call it and sample inputs. The
sweep takes every OpInfo with float64 CPU samples, except the ops that draw
random numbers (those are checked against their own seeded masks in
``test_random_ops``), and every sample of each, drawn as OpInfo draws them
(the generators reseeded before each sample, so every process gets the same
values).

A sample whose eager result changes with torch's seed (a random draw, or the
uninitialized memory of ``empty``) has no values to compare: gradview must
run it and give outputs and gradients of eager's shapes and dtypes (random
draws are gradview's own, seeded: see ``test_random_ops``).

A case is checked as a user's code runs: the call traced by
``torch.jit.trace``, the printed graph parsed by gradview, run by its
``GraphExecutor`` on Tensors that require grad, and differentiated by its
``autograd.grad`` with a fixed random gradient per output. Outputs, their
``requires_grad`` and every input's gradient must equal eager autograd's to
rtol 1e-12 (atol 1e-14) in float64.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import signal
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ..autodiff.opinfo_cases import Case, flatten

__all__ = [
    "SweepFailure", "Eager", "eager", "processed_call", "draws_random_values", "sweep_ops", "sweep_cases", "op_samples", "check_case",
    "RTOL", "ATOL",
]

RTOL, ATOL = 1e-12, 1e-14

def _op_db() -> list[Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from torch.testing._internal.common_methods_invocations import op_db
    return op_db


@functools.cache
def sweep_ops() -> tuple[Any, ...]:
    """Every OpInfo with float64 CPU samples."""
    return tuple(op for op in _op_db() if torch.float64 in op.supported_dtypes("cpu"))


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


# torch.jit.trace returns tensors only: the OpInfos whose result is a Python
# number or bool are scripted instead, as a user's TorchScript would call them.
_SCRIPTED_SOURCES = {
    "item": "def call(a: Tensor) -> float:\n    return a.item()\n",
    "equal": "def call(a: Tensor, b: Tensor) -> bool:\n    return torch.equal(a, b)\n",
    "allclose": (
        "def call(a: Tensor, b: Tensor) -> bool:\n"
        "    return torch.allclose(a, b, rtol={rtol!r}, atol={atol!r}, equal_nan={equal_nan!r})\n"
    ),
}


def processed_call(case: Case, tensors: Any) -> Any:
    """The op on ``tensors``, its result through the sample's ``output_process_fn_grad``:
    where a result is defined only up to sign (eigenvectors, singular vectors), OpInfo
    compares and differentiates what is defined (``abs(U)``, ``U @ Vh``), as its own
    gradient tests do. For every other op the function is the identity."""
    result = case.call(tensors)
    process = getattr(case.sample, "output_process_fn_grad", None)
    return result if process is None else process(result)


def user_graph(case: Case) -> Any:
    """The gradview graph a user gets for the call: ``from_torch`` of the call
    (traced; tensor constants keep their exact values, which torch's printed
    text rounds), or TorchScript's text where the result is a Python value
    (``_SCRIPTED_SOURCES``)."""
    from gradview.ir import from_torch, parse_ir

    source = _SCRIPTED_SOURCES.get(case.label)
    if source is None:
        graph, _ = from_torch(lambda *tensors: processed_call(case, tensors), tuple(case.leaf_inputs()))
        return graph
    kwargs = {"rtol": 1e-5, "atol": 1e-8, "equal_nan": False, **case.sample.kwargs}
    unit = torch.jit.CompilationUnit(source.format(**kwargs))
    return parse_ir(str(unit.call.graph))


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
    except Exception as error:  # every error is a finding of the sweep
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


def _equal(ours: np.ndarray, theirs: np.ndarray, atol: float = ATOL) -> bool:
    if ours.shape != theirs.shape or ours.dtype != theirs.dtype:
        return False
    if ours.dtype.kind in "fc":
        return bool(np.allclose(ours, theirs, rtol=RTOL, atol=atol, equal_nan=True))
    return bool(np.array_equal(ours, theirs))


def _host(value: Any) -> Any:
    """An eager output as numpy: sparse and lazily conjugated or zero tensors
    resolved; Python numbers and bools kept as they are."""
    if not isinstance(value, torch.Tensor):
        return value
    if value.layout != torch.strided:
        value = value.to_dense()
    if value.dtype in _NO_NUMPY_DTYPE:
        return value  # gradview must refuse it; compared by check_case
    return value.detach().numpy(force=True).copy()


# Dtypes NumPy has no type for: gradview refuses them (a cast to bfloat16...).
_NO_NUMPY_DTYPE = frozenset({torch.bfloat16, torch.complex32})


@dataclass(frozen=True)
class Eager:
    """What eager torch computes for a case. ``input_grads`` is None when eager's
    own backward refuses the sample (linalg.eig's phase-dependent loss): then
    only the forward is compared."""

    outputs: list[Any]
    output_grads: list[np.ndarray | None]
    requires: list[bool]
    input_grads: list[np.ndarray | None] | None
    random: bool = False  # the values change with torch's seed: compare shapes and dtypes


# Kinds that return uninitialized memory: their values differ run to run like a draw's.
UNINITIALIZED_KINDS = re.compile(r"= aten::(?:empty\w*|new_empty\w*)\(")


def draws_random_values(graph: Any) -> bool:
    """Whether the graph's values change with torch's seed: a node the op library says
    draws random values (dropout unless p or train is a constant 0, attention with a
    dropout_p...), or uninitialized memory; a small sample may give the same values
    under two seeds, so the graph decides. (OpInfo wraps random ops in
    ``wrapper_set_seed``, so eager's values repeat whatever the seed.) fractional_max_pool
    draws nothing itself (F.fractional_max_pool2d draws its samples with aten::rand)."""
    from gradview.ops import node_draws_random_values

    return bool(UNINITIALIZED_KINDS.search(str(graph))) or any(node_draws_random_values(n) for n in graph.all_nodes())


def _changes_with_seed(case: Case, outputs: list[Any]) -> bool:
    return any(_differs(case, outputs, seed) for seed in (1, 2))


def _differs(case: Case, outputs: list[Any], seed: int) -> bool:
    torch.manual_seed(seed)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = flatten(processed_call(case, case.leaf_inputs()))
    for first, second in zip(outputs, again, strict=True):
        if isinstance(first, torch.Tensor):
            a, b = first.detach(), second.detach()
            if a.layout != torch.strided:
                a, b = a.to_dense(), b.to_dense()
            a, b = a.resolve_conj().resolve_neg(), b.resolve_conj().resolve_neg()
            if a.dtype in _NO_NUMPY_DTYPE:  # (torch.equal has no ComplexHalf kernel)
                wide = torch.complex64 if a.is_complex() else torch.float32
                a, b = a.to(wide), b.to(wide)
            same = a.shape == b.shape and (torch.equal(a, b) or (
                a.is_floating_point() and torch.equal(a.isnan(), b.isnan())
                and torch.equal(a.nan_to_num(), b.nan_to_num())
            ))
            if not same:
                return True
        elif first != second and first == first:  # (NaN != NaN)
            return True
    return False


def eager(case: Case) -> Eager:
    inputs = case.leaf_inputs()
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outputs = flatten(processed_call(case, inputs))
    if _changes_with_seed(case, outputs):
        return Eager([_host(o) for o in outputs], [None] * len(outputs), [
            isinstance(o, torch.Tensor) and o.requires_grad for o in outputs
        ], None, random=True)
    rng = np.random.default_rng(1234 + case.index)
    grads = [
        rng.standard_normal(tuple(o.shape)) if isinstance(o, torch.Tensor) else None for o in outputs
    ]
    requires = [isinstance(o, torch.Tensor) and o.requires_grad for o in outputs]
    pairs = [
        (o, torch.from_numpy(g).to(o.dtype)) for o, g, r in zip(outputs, grads, requires, strict=True) if r
    ]
    wanted = [t for t in inputs if t.requires_grad]
    found: list[Any] = []
    if pairs and wanted:
        try:
            found = list(torch.autograd.grad(
                [p[0] for p in pairs], wanted, [p[1] for p in pairs], allow_unused=True
            ))
        except RuntimeError:
            return Eager([_host(o) for o in outputs], grads, requires, None)
    supply = iter(found)
    input_grads = [
        (None if (g := next(supply, None)) is None else _host(g)) if t.requires_grad else None
        for t in inputs
    ]
    return Eager([_host(o) for o in outputs], grads, requires, input_grads)


def _check_random_backward(ours: list[Any], inputs: list[Any], requires: list[bool]) -> None:
    """A random sample's backward runs and gives each input a gradient of its shape."""
    from gradview.runtime import Tensor, autograd

    pairs = [(o, Tensor(np.ones(o.shape, o.detach().numpy().dtype))) for o, r in zip(ours, requires, strict=True) if r]
    wanted = [t for t in inputs if t.requires_grad]
    if not pairs or not wanted:
        return
    with _stage("backward"):
        grads = autograd.grad([p[0] for p in pairs], wanted, [p[1] for p in pairs], allow_unused=True)
    for index, (grad, leaf) in enumerate(zip(grads, wanted, strict=True)):
        if grad is not None and tuple(grad.shape) != tuple(leaf.shape):
            raise SweepFailure("gradient", f"leaf {index} (random): shape {tuple(grad.shape)}, input {tuple(leaf.shape)}")


def check_case(case: Case, seconds: int = 60, gradient_atol: float = ATOL) -> None:
    """The case through gradview as the module docstring says; raises SweepFailure."""
    from gradview.runtime import GraphExecutor, Tensor, autograd

    with _time_limit(seconds):
        with _stage("eager"):
            reference = eager(case)
        with _stage("trace"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            graph = user_graph(case)
        if not reference.random and draws_random_values(graph):
            reference = dataclasses.replace(reference, random=True, input_grads=None)
        arrays = case.input_arrays()
        inputs = [
            Tensor(a.copy(), requires_grad=t.requires_grad and t.dtype.is_floating_point)
            for a, t in zip(arrays, case.tensors, strict=True)
        ]
        with _stage("run"):
            ours = flatten(GraphExecutor(graph).run(inputs))
        outputs = reference.outputs
        if len(ours) != len(outputs):
            raise SweepFailure("forward", f"{len(ours)} outputs, eager {len(outputs)}")
        for index, (mine, theirs, wants) in enumerate(zip(ours, outputs, reference.requires, strict=True)):
            if isinstance(theirs, torch.Tensor):
                raise SweepFailure("forward", f"output {index}: eager's {theirs.dtype} has no NumPy type, "
                                   "yet gradview ran it")
            if not isinstance(theirs, np.ndarray):
                if isinstance(mine, Tensor):
                    mine = mine.detach().numpy().item()
                if mine != theirs:
                    raise SweepFailure("forward", f"output {index}: {mine!r}, eager {theirs!r}")
                continue
            if not isinstance(mine, Tensor):
                raise SweepFailure("forward", f"output {index} is a {type(mine).__name__}")
            got = mine.detach().numpy()
            if reference.random:
                if got.shape != theirs.shape or got.dtype != theirs.dtype:
                    raise SweepFailure("forward", f"output {index} (random): {_describe(got, theirs)}")
            elif not _equal(got, theirs):
                raise SweepFailure("forward", f"output {index}: {_describe(got, theirs)}")
            if mine.requires_grad != wants:
                raise SweepFailure(
                    "forward", f"output {index}: requires_grad {mine.requires_grad}, eager {wants}"
                )
        if reference.random:
            _check_random_backward(ours, inputs, reference.requires)
            return
        if reference.input_grads is None:
            return
        pairs = [
            (o, Tensor(g.astype(o.detach().numpy().dtype)))
            for o, g, w in zip(ours, reference.output_grads, reference.requires, strict=True) if w
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
        for index, theirs in enumerate(reference.input_grads):
            mine = got_grads.get(index)
            if theirs is None:
                if mine is not None and np.any(mine.numpy()):
                    raise SweepFailure("gradient", f"input {index}: eager has none, gradview nonzero")
                continue
            if mine is None:
                if np.any(theirs):
                    raise SweepFailure("gradient", f"input {index} lost; eager computes one")
                continue
            if not _equal(mine.numpy(), theirs, gradient_atol):
                raise SweepFailure("gradient", f"input {index}: {_describe(mine.numpy(), theirs)}")
