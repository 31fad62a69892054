"""The op library's catalogue, op by op, against PyTorch (issue 10, acceptance 4).

* Every op PyTorch's JIT differentiates is in the library, with a formula
  where its result can require grad. (That every op has a kernel, a shape rule
  and a gradient or a reason is tests/ops/test_op_library.py.)
* Every overload with a formula or a declared no-gradient that returns a
  tensor runs once (op_gradient_samples.py) through GraphExecutor with its float
  inputs requiring grad, and behaves as ``torch.ops.aten.<op>.<overload>`` under
  ``torch.autograd.grad``: the same outputs, the same ``requires_grad`` flags,
  and the same gradients (float64, 1e-7); where PyTorch refuses the backward
  ("derivative ... is not implemented"), gradview refuses it too, with
  NotDifferentiableError naming the node. The one kind of deviation allowed is
  listed: backward kernels, which PyTorch differentiates again (double
  backward) and gradview refuses, clearly, rather than get wrong.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from gradview.autodiff.torch_differentiable import TORCH_DIFFERENTIABLE
from gradview.ir import DeviceType, FunctionSchema, Graph, ListType, OptionalType, TensorType
from gradview.ir.schema import NO_DEFAULT
from gradview.ops import NO_GRADIENT
from gradview.ops.catalog import Gradient, OpFacts, op_catalog
from gradview.runtime import Tensor
from gradview.runtime.autograd import grad
from gradview.runtime.eager_ops import NotDifferentiableError
from gradview.runtime.executor import GraphExecutor

from ..autodiff.op_gradient_samples import SAMPLES, Sample

CATALOG: dict[str, OpFacts] = {facts.name: facts for facts in op_catalog()}
NEEDS_SAMPLE = sorted(
    name
    for name, facts in CATALOG.items()
    if facts.returns_tensor and facts.gradient in (Gradient.FORMULA, Gradient.NONE_DECLARED)
)
# PyTorch differentiates these again (double backward); gradview refuses, naming the node.
BACKWARD_KERNEL = "a backward kernel"
# Overloads no node resolves to: an earlier overload takes the same argument types
# (``int[]`` and ``SymInt[]`` are one type in the IR, as in TorchScript). The twin runs,
# and is compared with PyTorch's named overload.
RESOLVES_TO = {"aten::split": "aten::split.sizes"}
# Differences from PyTorch found by this test and reported, not yet fixed (their owners'
# files): strict, so each turns red once fixed, and its entry must then go. None now.
KNOWN_DIFFERENCES: dict[str, str] = {}
_TORCH_DTYPES = {
    7: torch.float64,
    6: torch.float32,
    5: torch.float16,
    15: torch.bfloat16,
    4: torch.int64,
}


# -- the catalogue (what each op has: tests/ops/test_op_library.py) -------------------------------
def test_ops_torch_differentiates_have_formulas_unless_their_results_cannot_require_grad() -> None:
    """Every overload PyTorch's JIT differentiates is in the library. The exceptions are
    checked against PyTorch by the sample test: their results never require grad there
    (``lt.Scalar`` and the other comparisons)."""
    # prim::AutogradZero is the undefined gradient itself, built into autodiff.
    assert sorted(set(TORCH_DIFFERENTIABLE) - set(CATALOG) - {"prim::AutogradZero"}) == []
    without = sorted(
        n for n in TORCH_DIFFERENTIABLE if n in CATALOG and CATALOG[n].gradient != Gradient.FORMULA
    )
    assert all(CATALOG[n].gradient == Gradient.NONE_DECLARED and n in SAMPLES for n in without), (
        without
    )


def test_the_sample_table_covers_every_op_with_a_gradient_or_a_declared_none() -> None:
    missing = [name for name in NEEDS_SAMPLE if name not in SAMPLES]
    stale = sorted(set(SAMPLES) - set(NEEDS_SAMPLE))
    assert not missing, f"add a sample call to tests/autodiff/op_gradient_samples.py for: {missing}"
    assert not stale, f"samples of overloads that need none (renamed? removed?): {stale}"


# -- one call per op, against PyTorch ---------------------------------------------------------
def _bind(schema: FunctionSchema, sample: Sample) -> list[Any]:
    """The sample's values for every argument of the schema (defaults where the sample gives
    none), as TorchScript's graphs pass them: all of them, keyword-only ones too."""
    given = {i: v for i, v in enumerate(sample.args)}
    for name, value in sample.kw.items():
        index = schema.argument_index(name)
        assert index is not None, f"{schema.qualified_name} has no argument {name}"
        given[index] = value
    values = []
    for index in range(len(schema.arguments)):
        if index in given:
            values.append(given[index])
        else:
            default = schema.arguments[index].default
            assert default is not NO_DEFAULT, (
                f"{schema.qualified_name}: argument {index} needs a value"
            )
            values.append(default)
    return values


def _is_float(array: np.ndarray) -> bool:
    return array.dtype.kind == "f"


class _Call:
    """The sample as a one-node graph (plus a clone of ``self`` for an in-place op) and its
    run-time inputs, and the same call's arguments for PyTorch."""

    def __init__(self, facts: OpFacts, sample: Sample) -> None:
        schema = facts.schema
        self.schema = schema
        self.values = _bind(schema, sample)
        self.graph = Graph()
        self.arrays: list[np.ndarray] = []
        self.requires: list[bool] = []
        inputs = []
        for index, (arg, value) in enumerate(zip(schema.arguments, self.values, strict=False)):
            frozen = index in sample.frozen
            if isinstance(value, np.ndarray):
                inputs.append(self._input(value, frozen))
            elif (
                isinstance(value, list) and value and any(isinstance(v, np.ndarray) for v in value)
            ):
                optional = isinstance(arg.type, ListType) and isinstance(
                    arg.type.elem, OptionalType
                )
                elements = [
                    self.graph.insert_constant(None) if v is None else self._input(v, frozen)
                    for v in value
                ]
                elem = OptionalType(TensorType()) if optional else TensorType()
                inputs.append(
                    self.graph.insert(
                        "prim::ListConstruct", elements, output_types=[ListType(elem)]
                    )
                )
            elif arg.type_text.startswith("Device") and value is not None:
                inputs.append(self.graph.insert_constant(value, DeviceType()))
            else:
                inputs.append(self.graph.insert_constant(value))
        if schema.is_mutable:  # PyTorch refuses to write into a leaf that requires grad
            inputs[0] = self.graph.insert("aten::clone", [inputs[0], None])
        outputs = self.graph.insert(schema.name, inputs)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        resolved = outputs[0].node.maybe_schema()
        expected = RESOLVES_TO.get(facts.name, facts.name)
        assert resolved is not None and resolved.qualified_name == expected, (
            f"the sample resolves to {resolved and resolved.qualified_name}, not {expected}"
        )
        for value in outputs:
            self.graph.register_output(value)

    def _input(self, array: np.ndarray, frozen: bool) -> Any:
        self.arrays.append(array)
        self.requires.append(_is_float(array) and not frozen)
        return self.graph.add_input()

    def gradview(self) -> tuple[list[Any], list[Any]]:
        inputs = [
            Tensor(a.copy(), requires_grad=r)
            for a, r in zip(self.arrays, self.requires, strict=True)
        ]
        return inputs, _flatten(GraphExecutor(self.graph).run(inputs))

    def torch_args(self) -> tuple[list[Any], list[Any], dict[str, Any]]:
        leaves: list[torch.Tensor] = []
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        arrays = iter(zip(self.arrays, self.requires, strict=True))

        def convert(arg: Any, value: Any) -> Any:
            if isinstance(value, np.ndarray):
                array, requires = next(arrays)
                tensor = torch.tensor(array, requires_grad=requires)
                if requires:
                    leaves.append(tensor)
                return tensor
            if isinstance(value, list) and any(isinstance(v, np.ndarray) for v in value):
                return [convert(arg, v) for v in value]
            is_dtype = "ScalarType" in arg.type_text or arg.name.endswith("dtype")
            if is_dtype and isinstance(value, int) and not isinstance(value, bool):
                return _TORCH_DTYPES[value]
            return value

        for arg, value in zip(self.schema.arguments, self.values, strict=False):
            converted = convert(arg, value)
            if arg.kwarg_only:
                kwargs[arg.name] = converted
            else:
                args.append(converted)
        return leaves, args, kwargs


def _flatten(result: Any) -> list[Any]:
    items = result if isinstance(result, (list, tuple)) else [result]
    flat: list[Any] = []
    for item in items:
        flat.extend(_flatten(item) if isinstance(item, (list, tuple)) else [item])
    return flat


def _array(value: Any) -> np.ndarray | None:
    if value is None:
        return None
    if isinstance(value, torch.Tensor):
        return value.detach().numpy()
    return np.asarray(value.detach().numpy() if isinstance(value, Tensor) else value)


def _requires(value: Any) -> bool:
    return bool(getattr(value, "requires_grad", False))


class _CudaOnlyOnCpu(TorchDispatchMode):
    """PyTorch runs the ``.dtype`` overloads of mm, bmm, addmm and baddbmm on CUDA only.
    Under this mode their CPU calls reach autograd as usual (which records their
    derivative, or the lack of one) and then compute with the plain overload."""

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = dict(kwargs or {})
        if (
            func.name().partition(".")[2] == "dtype"
            and func.name().split("::")[1].split(".")[0] in _CUDA_ONLY
        ):
            plain = getattr(torch.ops.aten, func.name().split("::")[1].split(".")[0]).default
            tensors = [a for a in args if isinstance(a, torch.Tensor)]
            return plain(*tensors, **kwargs)
        return func(*args, **kwargs)


_CUDA_ONLY = ("mm", "bmm", "addmm", "baddbmm")


def _torch_call(name: str, call: _Call, sample: Sample) -> tuple[list[Any], list[Any]]:
    leaves, args, kwargs = call.torch_args()
    if sample.torch is not None:
        return leaves, _flatten(sample.torch(*args, **kwargs))
    op, _, overload = name.partition("::")[2].partition(".")
    function = getattr(getattr(torch.ops.aten, op), overload or "default")
    if call.schema.is_mutable:
        args[0] = args[0].clone()
    if op in _CUDA_ONLY and overload == "dtype":
        with _CudaOnlyOnCpu():
            return leaves, _flatten(function(*args, **kwargs))
    return leaves, _flatten(function(*args, **kwargs))


def _backward(
    outputs: list[Any], inputs: list[Any], cotangents: list[np.ndarray], ours: bool
) -> Any:
    """The vjp of the outputs that require grad, or the exception the backward raised."""
    chosen = [o for o in outputs if _requires(o)]
    try:
        if ours:
            vectors = [Tensor(v) for v in cotangents]
            return grad(chosen, inputs, grad_outputs=vectors, allow_unused=True)
        vectors = [torch.tensor(v) for v in cotangents]
        return torch.autograd.grad(chosen, inputs, vectors, allow_unused=True)
    except (RuntimeError, NotDifferentiableError) as exc:
        return exc


def _same_gradients(ours: Any, theirs: Any, arrays: list[np.ndarray]) -> None:
    for index, (mine, reference, array) in enumerate(zip(ours, theirs, arrays, strict=True)):
        expected = np.zeros_like(array) if reference is None else _array(reference)
        got = np.zeros_like(array) if mine is None else _array(mine)
        assert got.shape == expected.shape, (
            f"gradient {index}: shape {got.shape}, torch {expected.shape}"
        )
        np.testing.assert_allclose(
            got, expected, rtol=1e-7, atol=1e-9, err_msg=f"gradient of input {index}"
        )


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=KNOWN_DIFFERENCES[name]))
        if name in KNOWN_DIFFERENCES
        else name
        for name in NEEDS_SAMPLE
    ],
)
def test_the_op_differentiates_as_pytorch_does(name: str) -> None:
    facts, sample = CATALOG[name], SAMPLES.get(name)
    if sample is None:
        pytest.fail(f"no sample for {name} (see test_the_sample_table_covers_every_op...)")
    call = _Call(facts, sample)
    inputs, ours = call.gradview()
    has_oracle = name.startswith("aten::") or sample.torch is not None
    if not has_oracle:
        assert facts.gradient == Gradient.NONE_DECLARED, (
            f"{name}: a formula needs a torch oracle in its sample"
        )
        _refuses_backward(name, inputs, ours, [i for i, r in enumerate(call.requires) if r])
        return
    leaves, theirs = _torch_call(name, call, sample)
    assert len(ours) == len(theirs), f"{len(ours)} outputs, torch {len(theirs)}"
    for index, (mine, reference) in enumerate(zip(ours, theirs, strict=True)):
        if reference is None or not isinstance(reference, torch.Tensor):
            continue
        got, expected = _array(mine), _array(reference)
        assert got is not None and got.shape == expected.shape, (
            f"output {index}: {got and got.shape} vs torch"
        )
        if _is_float(expected) and not sample.random:
            np.testing.assert_allclose(
                got, expected, rtol=1e-7, atol=1e-9, err_msg=f"output {index}"
            )
        # Never a silently lost gradient; never one PyTorch does not have either.
        assert _requires(mine) == _requires(reference), (
            f"output {index}: requires_grad {_requires(mine)}, torch {_requires(reference)}"
        )
    differentiable = [o for o in theirs if _requires(o)]
    if not differentiable:
        return
    assert name not in TORCH_DIFFERENTIABLE or facts.gradient == Gradient.FORMULA, (
        f"{name}: PyTorch's JIT differentiates it, its result requires grad: it needs a formula"
    )
    rng = np.random.default_rng(7)
    cotangents = [
        rng.standard_normal(tuple(o.shape)).astype(_array(o).dtype) for o in differentiable
    ]
    reference_grads = _backward(theirs, leaves, cotangents, ours=False)
    ours_inputs = [t for t, r in zip(inputs, call.requires, strict=True) if r]
    our_grads = _backward(ours, ours_inputs, cotangents, ours=True)
    torch_refuses = isinstance(reference_grads, RuntimeError)
    if torch_refuses:
        assert "not implemented" in str(reference_grads), reference_grads
    if facts.gradient == Gradient.FORMULA:
        assert not torch_refuses, (
            f"gradview differentiates {name}, PyTorch refuses: {reference_grads}"
        )
        assert not isinstance(our_grads, Exception), f"gradview refuses: {our_grads}"
        _same_gradients(
            our_grads,
            reference_grads,
            [a for a, r in zip(call.arrays, call.requires, strict=True) if r],
        )
        return
    assert isinstance(our_grads, NotDifferentiableError), (
        f"{name} has no gradient, yet backward gave {our_grads}"
    )
    assert facts.schema.name in str(our_grads)
    if not torch_refuses:
        assert NO_GRADIENT[name].startswith(BACKWARD_KERNEL), (
            f"PyTorch differentiates {name}; gradview refuses it with: {NO_GRADIENT[name]}"
        )


def _refuses_backward(
    name: str, inputs: list[Any], outputs: list[Any], requiring: list[int]
) -> None:
    """A ``gradview::`` backward kernel (no PyTorch twin): its float outputs are connected
    to autograd, and a backward pass through them raises naming the node."""
    assert NO_GRADIENT[name].startswith(BACKWARD_KERNEL), NO_GRADIENT[name]
    floats = [o for o in outputs if o is not None and _is_float(_array(o))]
    assert floats and all(_requires(o) for o in floats), "its float outputs must require grad"
    cotangents = [np.ones(tuple(o.shape)) for o in floats]
    result = _backward(outputs, [inputs[i] for i in requiring], cotangents, ours=True)
    assert isinstance(result, NotDifferentiableError), result
    assert name.partition(".")[0] in str(result)
