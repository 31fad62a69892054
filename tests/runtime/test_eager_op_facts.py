"""The eager Tensor and the tracer hold no op facts of their own: kernels and
gradients come from the op library (one place per op)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import gradview.runtime.tensor as tensor_module
import gradview.runtime.tracer as tracer_module
from gradview.ops import FORMULAS, KERNELS

MODULES = [tensor_module, tracer_module]
# What these modules may ask of an array module: making and describing arrays, no math.
ARRAY_FACTS = {"asarray", "ndarray", "generic", "dtype", "asnumpy"}


def _tree(module: object) -> ast.Module:
    return ast.parse(Path(module.__file__).read_text())


def aten_overloads(module: object) -> set[str]:
    """The ``aten::`` names a module's code mentions."""
    return {
        node.value for node in ast.walk(_tree(module))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("aten::")
    }


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_module_computes_nothing_itself(module) -> None:
    found = []
    for node in ast.walk(_tree(module)):
        if isinstance(node, ast.Lambda):
            found.append(f"line {node.lineno}: a lambda (a private rule)")
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id in ("np", "numpy", "xp", "cupy") and node.attr not in ARRAY_FACTS:
                found.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("FunctionNode", "attach"):
            found.append(f"line {node.lineno}: {node.func.id} (a backward node of its own)")
    assert not found, f"{module.__name__} computes outside the op library: {found}"


def test_every_tensor_op_has_a_kernel_and_a_formula() -> None:
    overloads = aten_overloads(tensor_module)
    assert overloads, "Tensor names no op"
    assert not overloads - set(KERNELS), "no kernel"
    assert not overloads - set(FORMULAS), "no gradient formula"
