"""Issue 11, acceptance 2: GraphExecutor + gradview's autograd give eager autograd's
numbers on the conformance corpus and on PyTorch's OpInfo graphs.

Every program runs three times through one GraphExecutor:

1. the first run compiles the plan (and, at backward, df's executor compiles its own);
2. the second run takes both from their caches (checked: one miss, then hits);
3. the third runs ``grad(..., create_graph=True)``: first derivatives again, whose
   ``requires_grad`` must be torch's, then the gradient of a random weighting of
   them (second derivatives) against torch's double backward.

Outputs, their ``requires_grad`` and input gradients are compared with eager
PyTorch (float64, rtol 1e-7). Where gradview refuses a second derivative with
its clear NotDifferentiableError (a backward kernel without a gradient formula
of its own), the program is listed in ``SECOND_ORDER_REFUSED`` with the message,
and the table is checked to be exact, so it cannot go stale silently.

The programs:

* every case of the conformance corpus (``cases/*.ir``, the eager reference is
  the graph run by torch's interpreter with its optimizations off, so each op
  records eager autograd), and the scripted ``roundtrip/script_*.ir`` graphs
  (ifs, loops, tuples) against the Python functions they were printed from;
* the traced graph of every float64 sample (539) of every OpInfo PyTorch
  asserts its JIT differentiates (89, ``tests/autodiff/opinfo_cases``). The
  whole module takes about 40 s on a shared 2-core machine (25 s of it the
  OpInfo cases, 7 s loading op_db); ``GRADVIEW_CORPUS_SAMPLES=2`` keeps the
  first two samples of each OpInfo (every op family still; 158 cases, 17 s).
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import os
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from gradview.ir import parse_ir
from gradview.runtime import GraphExecutor, Tensor, autograd
from gradview.runtime.eager_ops import NotDifferentiableError

from ..ir.corpus import CASES_DIR, ROUNDTRIP_DIR, read_graph_text, scalars_of

RTOL, ATOL = 1e-7, 1e-10


@dataclass
class Program:
    """A graph, its inputs and the eager function it stands for.

    ``values``: the graph's inputs (arrays, lists of arrays, Python values);
    ``requires``: per input, whether its arrays are leaves that require grad;
    ``eager``: the same computation in torch, on torch values of the inputs.
    """

    text: str
    values: list[Any]
    requires: list[bool]
    eager: Callable[[list[Any]], Any]


def flatten(value: Any) -> list[Any]:
    if isinstance(value, list | tuple):
        return [leaf for item in value for leaf in flatten(item)]
    return [value]


def _inputs(
    program: Program, make: Callable[[np.ndarray, bool], Any]
) -> tuple[list[Any], list[Any]]:
    """The inputs with every array made by ``make``, and the leaves that require grad."""
    leaves: list[Any] = []

    def one(value: Any, wants: bool) -> Any:
        if isinstance(value, list):
            return [one(v, wants) for v in value]
        if not isinstance(value, np.ndarray):
            return value
        wants = wants and value.dtype.kind == "f"
        made = make(value.copy(), wants)
        if wants:
            leaves.append(made)
        return made

    values = [one(v, r) for v, r in zip(program.values, program.requires, strict=True)]
    return values, leaves


def _host(value: Any) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        return value.detach().numpy(force=True)  # (force: eager's zero tensors too)
    if isinstance(value, Tensor):
        return value.detach().numpy()
    return np.asarray(value)


def _assert_close(ours: Any, theirs: Any, what: str) -> None:
    ours, theirs = _host(ours), _host(theirs)
    assert ours.shape == theirs.shape, f"{what}: shape {ours.shape}, eager {theirs.shape}"
    np.testing.assert_allclose(ours, theirs, rtol=RTOL, atol=ATOL, equal_nan=True, err_msg=what)


def _assert_grads(ours: Sequence[Any], theirs: Sequence[Any], what: str) -> None:
    """Input gradients; an undefined gradient stands for zeros on either side."""
    for index, (mine, reference) in enumerate(zip(ours, theirs, strict=True)):
        label = f"{what} of leaf {index}"
        if reference is None:
            assert mine is None or not np.any(_host(mine)), f"{label}: eager has none"
        elif mine is None:
            assert not np.any(_host(reference)), f"{label}: lost, eager computes one"
        else:
            _assert_close(mine, reference, label)


class SecondOrderRefused(Exception):
    """gradview refused the second derivative with its clear error (the message)."""


def check_program(program: Program, seed: int = 0) -> None:
    """The three runs of the module docstring; raises SecondOrderRefused at the
    end when only the second derivative was refused."""
    executor = GraphExecutor(parse_ir(program.text))
    rng = np.random.default_rng(seed)
    refused: str | None = None
    for run in range(3):
        ours_in, ours_leaves = _inputs(program, lambda a, rg: Tensor(a, requires_grad=rg))
        theirs_in, theirs_leaves = _inputs(
            program, lambda a, rg: torch.tensor(a, requires_grad=rg)
        )
        outputs = flatten(executor.run(ours_in))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = flatten(program.eager(theirs_in))
        assert len(outputs) == len(expected), (
            f"run {run}: {len(outputs)} outputs, eager {len(expected)}"
        )
        for index, (mine, reference) in enumerate(zip(outputs, expected, strict=True)):
            where = f"run {run}, output {index}"
            if not isinstance(reference, torch.Tensor):
                assert mine == reference, f"{where}: {mine!r}, eager {reference!r}"
                continue
            assert isinstance(mine, Tensor), f"{where} is {type(mine).__name__}, not a Tensor"
            _assert_close(mine, reference, where)
            assert mine.requires_grad == reference.requires_grad, (
                f"{where}: requires_grad {mine.requires_grad}, eager {reference.requires_grad}"
            )
        pairs = [
            (o, e) for o, e in zip(outputs, expected, strict=True)
            if isinstance(e, torch.Tensor) and e.requires_grad
        ]
        if not pairs or not theirs_leaves:
            continue
        vectors = [rng.standard_normal(tuple(e.shape)) for _, e in pairs]
        create_graph = run == 2
        theirs = torch.autograd.grad(
            [e for _, e in pairs], theirs_leaves, [torch.tensor(v) for v in vectors],
            allow_unused=True, create_graph=create_graph,
        )
        ours = autograd.grad(
            [o for o, _ in pairs], ours_leaves, [Tensor(v) for v in vectors],
            allow_unused=True, create_graph=create_graph,
        )
        _assert_grads(ours, theirs, f"run {run}: gradient")
        if create_graph:
            refused = _check_second_order(ours, theirs, ours_leaves, theirs_leaves, rng)
    misses = executor.cache_misses
    assert misses == 1, f"{misses} plans compiled for one ArgumentSpec"
    if refused is not None:
        raise SecondOrderRefused(refused)


def _check_second_order(
    ours: Sequence[Any], theirs: Sequence[Any], ours_leaves: list[Any], theirs_leaves: list[Any],
    rng: np.random.Generator,
) -> str | None:
    """The gradient of sum_i <w_i, grad_i> with respect to the leaves, where torch's
    grad_i requires grad; returns gradview's refusal message, if it refuses."""
    chosen = []
    for index, (mine, reference) in enumerate(zip(ours, theirs, strict=True)):
        wants = reference is not None and reference.requires_grad
        has = mine is not None and mine.requires_grad
        if wants and not has:
            # torch's legacy executor cuts such a dependence too where its symbolic
            # formula goes through a comparison (relu's ``grad * (result > 0)``):
            # allowed only where eager's second derivative through it is zero.
            weights = torch.tensor(rng.standard_normal(tuple(reference.shape)))
            through = torch.autograd.grad(
                (reference * weights).sum(), theirs_leaves, allow_unused=True, retain_graph=True
            )
            assert not any(t is not None and torch.any(t != 0) for t in through), (
                f"gradient of leaf {index} does not require grad; eager's does, and its own "
                "gradient is not zero (a lost second derivative)"
            )
            continue
        if wants:
            chosen.append((mine, reference, rng.standard_normal(tuple(reference.shape))))
    if not chosen:
        return None
    t_total = sum((r * torch.tensor(w)).sum() for _, r, w in chosen)
    expected = torch.autograd.grad(t_total, theirs_leaves, allow_unused=True)
    total = functools.reduce(lambda a, b: a + b, [(m * Tensor(w)).sum() for m, _, w in chosen])
    try:
        found = autograd.grad(total, ours_leaves, allow_unused=True)
    except NotDifferentiableError as error:
        return str(error)
    _assert_grads(found, expected, "second derivative")
    return None


def check_or_refused(program: Program, refused: dict[str, str], key: str, seed: int = 0) -> None:
    """check_program; a refused second derivative must be the one listed for ``key``."""
    try:
        check_program(program, seed)
    except SecondOrderRefused as error:
        assert refused.get(key) == refused_kind(str(error)), (
            f"gradview refuses the second derivative: {error}\n(listed: {refused.get(key)})"
        )
        return
    assert key not in refused, (
        f"gradview now gives the second derivative: remove {key} from the table"
    )


def refused_kind(message: str) -> str:
    """The kind of the node a NotDifferentiableError names (``aten::tanh_backward``)."""
    found = re.search(r"= ([\w:.]+)\(", message)
    return found.group(1) if found else message


# -- the conformance corpus -----------------------------------------------------------------------
CORPUS_CASES = sorted(CASES_DIR.glob("*.ir"))


def _interpreted(text: str) -> Callable[[list[Any]], Any]:
    """The graph run by torch's interpreter with its optimizations off: every op
    records eager autograd (double backward included)."""
    graph = torch._C.parse_ir(text)
    graph.makeMultiOutputIntoTuple()
    fn = torch._C._create_function_from_graph("reference", graph)

    def run(values: list[Any]) -> Any:
        with torch.jit.optimized_execution(False):
            return fn(*values)

    return run


def corpus_program(path: Path, seed: int = 0) -> Program:
    text = read_graph_text(path)
    scalars = scalars_of(path)
    rng = np.random.default_rng(seed)
    values: list[Any] = []
    requires: list[bool] = []
    for value in parse_ir(text).inputs():
        sizes = getattr(value.type(), "sizes", None)
        if sizes is not None:
            # uniform in [0.5, 1.5]: log, sqrt and division stay defined
            values.append(rng.uniform(0.5, 1.5, size=tuple(sizes)))
            requires.append(value.requires_grad())
        else:
            values.append(scalars[value.debug_name()])
            requires.append(False)
    return Program(text, values, requires, _interpreted(text))


# Programs whose second derivative gradview refuses (its NotDifferentiableError's message).
SECOND_ORDER_REFUSED: dict[str, str] = {}


@pytest.mark.parametrize("path", CORPUS_CASES, ids=lambda p: p.stem)
def test_corpus_case(path: Path) -> None:
    check_or_refused(corpus_program(path), SECOND_ORDER_REFUSED, path.stem)


def _public_models() -> Any:
    path = ROUNDTRIP_DIR / "public_models.py"
    spec = importlib.util.spec_from_file_location("public_models", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_RNG = np.random.default_rng(7)
# name -> (argument values, which require grad); each scripted graph against its function.
ROUNDTRIP_ARGS: dict[str, list[tuple[list[Any], list[bool]]]] = {
    "affine_relu": [([_RNG.standard_normal((3, 4)), _RNG.standard_normal((4, 5)),
                      _RNG.standard_normal(5)], [True, True, True])],
    "branchy": [([_RNG.standard_normal((3, 4)), flag], [True, False]) for flag in (True, False)],
    "loop_sum": [([_RNG.standard_normal((3, 4)), n], [True, False]) for n in (0, 3)],
    "pairs": [([_RNG.standard_normal((3, 4)), _RNG.standard_normal(4)], [True, True]),
              ([_RNG.standard_normal((3, 4)), _RNG.standard_normal(4)], [False, True])],
    "residual": [([_RNG.standard_normal((3, 3)), _RNG.standard_normal((3, 3))], [True, True])],
    "sizes": [([_RNG.standard_normal((3, 4))], [True])],
}
ROUNDTRIP = [(name, k) for name, runs in ROUNDTRIP_ARGS.items() for k in range(len(runs))]


@pytest.mark.parametrize("name, k", ROUNDTRIP, ids=[f"{n}-{k}" for n, k in ROUNDTRIP])
def test_roundtrip_scripted_graph(name: str, k: int) -> None:
    values, requires = ROUNDTRIP_ARGS[name][k]
    text = (ROUNDTRIP_DIR / f"script_{name}.ir").read_text()
    fn = getattr(_public_models(), name)
    check_or_refused(Program(text, values, requires, lambda v: fn(*v)), SECOND_ORDER_REFUSED, name)


# -- the OpInfo graphs --------------------------------------------------------------------------
_SAMPLES = os.environ.get("GRADVIEW_CORPUS_SAMPLES")
SAMPLES_PER_OP = int(_SAMPLES) if _SAMPLES else None  # None: every sample


@functools.cache
def opinfo_cases() -> dict[str, Any]:
    """case_id -> Case: every sample (or the first SAMPLES_PER_OP) of every autodiffed
    OpInfo, drawn as ``opinfo_cases`` draws them (generator reseeded before each)."""
    from torch.testing._internal.common_utils import set_rng_seed

    from ..autodiff.opinfo_cases import Case, autodiffed_ops

    found = {}
    for op in autodiffed_ops():
        samples = iter(op.sample_inputs_func(op, "cpu", torch.float64, True))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for index in itertools.count() if SAMPLES_PER_OP is None else range(SAMPLES_PER_OP):
                set_rng_seed()
                sample = next(samples, None)
                if sample is None:
                    break
                case = Case(op, index, sample)
                found[case.case_id] = case
    return found


def opinfo_program(case: Any) -> Program:
    tensors = case.tensors
    return Program(
        case.traced_text(),
        [t.detach().numpy().copy() for t in tensors],
        [t.requires_grad and t.dtype.is_floating_point for t in tensors],
        case.call,
    )


# OpInfo cases whose second derivative gradview refuses (none since silu's gradient is
# written with differentiable ops, as eager torch's under create_graph).
OPINFO_REFUSED: dict[str, str] = {}


@pytest.mark.parametrize("case_id", list(opinfo_cases()))  # (op_db loads at collection: ~7 s)
def test_opinfo_graph(case_id: str) -> None:
    case = opinfo_cases()[case_id]
    check_or_refused(opinfo_program(case), OPINFO_REFUSED, case_id)


# -- the check can fail --------------------------------------------------------------------------
def test_the_check_catches_a_wrong_value_a_wrong_gradient_and_a_wrong_second_derivative() -> None:
    """Eager references nudged by 1e-6 relative in the output, in the gradient only
    (through a custom function) and in the second derivative only: each is caught."""
    text = (ROUNDTRIP_DIR / "script_residual.ir").read_text()
    values, requires = ROUNDTRIP_ARGS["residual"][0]
    fn = _public_models().residual

    def nudged_output(v: list[Any]) -> Any:
        return fn(*v) * (1 + 1e-6)

    with pytest.raises(AssertionError, match="run 0, output 0"):
        check_program(Program(text, values, requires, nudged_output))

    class NudgedBackward(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, y: torch.Tensor) -> torch.Tensor:
            return y.view_as(y)

        @staticmethod
        def backward(ctx: Any, g: torch.Tensor) -> torch.Tensor:
            return g * (1 + 1e-6)

    with pytest.raises(AssertionError, match="run 0: gradient of leaf 0"):
        check_program(Program(text, values, requires, lambda v: NudgedBackward.apply(fn(*v))))

    def curved(v: list[Any]) -> Any:  # + 1e-6 (x - x0)^2: same value and first derivative at x0
        return fn(*v) + 1e-6 * (v[0] - v[0].detach()) ** 2

    with pytest.raises(AssertionError, match="second derivative of leaf 0"):
        check_program(Program(text, values, requires, curved))
