"""What the op library declares for each op, in one table.

Every overload the library names (it has a kernel, a gradient formula or a
declared "no gradient") gets one row: its schema, the module that declares
it, whether it has a kernel and a shape rule, and its gradient. A test walks
the table to check that nothing is missing and that each op's facts sit in
one module; a person adding an op can print it to see what is still lacking.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from gradview.ir import FunctionSchema
from gradview.ir.operators import schemas_for
from gradview.kernels.dtypes import unsupported_dtypes

from .registry import DECLARED_IN, FORMULAS, KERNELS, NO_GRADIENT, REFUSED, SHAPE_RULES

__all__ = ["Gradient", "OpFacts", "library_ops", "op_catalog", "op_facts", "refusals"]


class Gradient(StrEnum):
    FORMULA = "formula"  # a gradient formula
    NONE_DECLARED = "no gradient"  # an explicit no-gradient entry, with its reason
    NOT_APPLICABLE = "not a tensor op"  # takes or returns no tensor: nothing to differentiate
    MISSING = "missing"


@dataclass(frozen=True, slots=True)
class OpFacts:
    """One overload's facts."""

    name: str  # the qualified name, ``aten::add.Tensor``
    schema: FunctionSchema | None  # None for a schema-less prim run by kind (prim::TupleSlice)
    modules: frozenset[str]  # every module declaring one of its facts: one, for one place per op
    has_kernel: bool
    has_shape_rule: bool
    gradient: Gradient
    no_gradient_reason: str | None

    @property
    def returns_tensor(self) -> bool:
        return self.schema is not None and any(r.type.contains_tensor() for r in self.schema.returns)


def library_ops() -> list[str]:
    """Every overload (or schema-less kind) the library declares something for."""
    return sorted(set(KERNELS) | set(FORMULAS) | set(NO_GRADIENT))


def _schema(name: str) -> FunctionSchema | None:
    kind = name.split(".", 1)[0]
    return next((s for s in schemas_for(kind) if s.qualified_name == name), None)


def _takes_tensor(schema: FunctionSchema) -> bool:
    return any(a.type.is_tensor() or a.type.contains_tensor() for a in schema.arguments)


def op_facts(name: str) -> OpFacts:
    schema = _schema(name)
    kind = schema.name if schema is not None else name
    returns_tensor = schema is not None and any(r.type.contains_tensor() for r in schema.returns)
    if name in FORMULAS:
        gradient = Gradient.FORMULA
    elif name in NO_GRADIENT:
        gradient = Gradient.NONE_DECLARED
    elif schema is None or not (_takes_tensor(schema) and returns_tensor):
        gradient = Gradient.NOT_APPLICABLE
    else:
        gradient = Gradient.MISSING
    facts = [("kernel", name), ("fast_path", name), ("formula", name), ("no_gradient", name), ("schema", name)]
    if returns_tensor:  # a kind's shape rule speaks for its tensor overloads only (not ``acos.int``)
        facts.append(("shape_rule", kind))
    facts.append(("random", kind))
    modules = {DECLARED_IN[fact][key] for fact, key in facts if key in DECLARED_IN[fact]}
    return OpFacts(
        name=name,
        schema=schema,
        modules=frozenset(modules),
        has_kernel=name in KERNELS,
        has_shape_rule=kind in SHAPE_RULES,
        gradient=gradient,
        no_gradient_reason=NO_GRADIENT.get(name),
    )


def op_catalog() -> list[OpFacts]:
    """The facts of every overload the library declares."""
    return [op_facts(name) for name in library_ops()]


def refusals() -> list[tuple[str, str, str]]:
    """(op, declaring module, reason) for every op gradview declines to run."""
    return sorted(
        (name, DECLARED_IN["refused"].get(name, "?").removeprefix("gradview.ops."), reason)
        for name, reason in REFUSED.items()
    )


def _print_refusals() -> None:
    print(f"# {len(REFUSED)} ops PyTorch has that gradview refuses to run, with the reason")
    for name, module, reason in refusals():
        print(f"{name:48} {module:16} {reason}")
    print("# and whatever the op, tensors gradview's arrays cannot hold:")
    print(f"{'dtypes ' + ', '.join(unsupported_dtypes()):65} NumPy and CuPy have no such dtype")
    print(f"{'sparse layouts (from_torch inputs)':65} gradview's tensors are dense (strided)")


def _print_table(only_lacking: bool) -> None:
    for facts in op_catalog():
        # Schema-less prims without a kernel (prim::ListConstruct...) the interpreter runs itself.
        runs = facts.has_kernel or facts.schema is None
        lacking = not runs or (facts.returns_tensor and not facts.has_shape_rule) or (
            facts.gradient == Gradient.MISSING
        )
        if only_lacking and not lacking:
            continue
        module = ", ".join(sorted(m.removeprefix("gradview.ops.") for m in facts.modules)) or "-"
        print(
            f"{facts.name:48} {module:16} kernel={'yes' if facts.has_kernel else ('-' if runs else 'NO'):3} "
            f"shape={'yes' if facts.has_shape_rule else ('NO' if facts.returns_tensor else '-'):3} "
            f"gradient={facts.gradient.value}"
        )


if __name__ == "__main__":  # python -m gradview.ops.catalog [--lacking]
    import sys

    import gradview.ops  # noqa: F401 - fills the tables

    lacking = "--lacking" in sys.argv[1:]
    if lacking:
        _print_refusals()
        print("# overloads the library names that lack a kernel, a shape rule or a gradient")
    _print_table(lacking)
