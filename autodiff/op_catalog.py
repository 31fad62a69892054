"""What gradview knows about each operator overload, in one table.

An op's facts live beside its family in four registries: its schema (the
IR), its kernel (kernels/), its shape rule (ir/passes/shape_rules_*) and its
gradient (autodiff/formulas/: a formula, or an explicit no-gradient entry with
PyTorch's reason). This module reads them all for every registered overload,
so a test, or a person adding an op, can list what each op has and lacks.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from gradview.ir import FunctionSchema
from gradview.ir.operators import all_schemas
from gradview.ops import KERNELS
from gradview.ops.registry import shape_rule_for as rule_for

from .formulas import FORMULAS, NO_GRADIENT
from .torch_differentiable import TORCH_DIFFERENTIABLE

__all__ = ["Gradient", "OpFacts", "op_catalog", "op_facts"]


class Gradient(StrEnum):
    FORMULA = "formula"  # a gradient formula (autodiff/formulas)
    NONE_DECLARED = "no gradient"  # an explicit no-gradient entry, with its reason
    NOT_APPLICABLE = "not a tensor op"  # takes or returns no tensor: nothing to differentiate
    MISSING = "missing"


@dataclass(frozen=True, slots=True)
class OpFacts:
    """One overload's facts."""

    name: str  # the qualified name, ``aten::add.Tensor``
    schema: FunctionSchema
    has_kernel: bool
    has_shape_rule: bool
    gradient: Gradient
    no_gradient_reason: str | None
    torch_differentiates: bool  # in PyTorch's JIT autodiff set (isDifferentiable)

    @property
    def returns_tensor(self) -> bool:
        return any(r.type.contains_tensor() for r in self.schema.returns)


def _takes_tensor(schema: FunctionSchema) -> bool:
    return any(a.type.is_tensor() or a.type.contains_tensor() for a in schema.arguments)


def op_facts(schema: FunctionSchema) -> OpFacts:
    name = schema.qualified_name
    returns_tensor = any(r.type.contains_tensor() for r in schema.returns)
    if name in FORMULAS:
        gradient = Gradient.FORMULA
    elif name in NO_GRADIENT:
        gradient = Gradient.NONE_DECLARED
    elif not (returns_tensor and _takes_tensor(schema)):
        gradient = Gradient.NOT_APPLICABLE
    else:
        gradient = Gradient.MISSING
    return OpFacts(
        name=name,
        schema=schema,
        has_kernel=name in KERNELS,
        has_shape_rule=rule_for(schema.name) is not None,
        gradient=gradient,
        no_gradient_reason=NO_GRADIENT.get(name),
        torch_differentiates=name in TORCH_DIFFERENTIABLE,
    )


def op_catalog() -> list[OpFacts]:
    """The facts of every registered overload."""
    return [op_facts(schema) for schema in all_schemas()]
