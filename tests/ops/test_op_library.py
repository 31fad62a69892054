"""The op library, walked op by op (issue 10, acceptance 4 and point 7).

* Every op the library declares has a kernel, a shape rule when it returns a
  tensor, and a gradient: a formula, an explicit no-gradient with PyTorch's
  reason, or nothing to differentiate (no tensor in or out). None is missing.
* One place per op: all of an op's facts (kernel, fast path, shape rule,
  gradient or no-gradient, and the schema of gradview's own ops) are declared
  in one module of ``gradview.ops``.
* The IR knows every op the library declares: PyTorch's from its generated
  catalogue, gradview's own from ``schema(...)`` next to their kernels.

That each op runs as PyTorch's does under autograd is tests/ops/test_catalog.py.
"""

from __future__ import annotations

from gradview.ir.builtin_schemas import BUILTIN_SCHEMAS
from gradview.ir.operators import PRIM_OPS, is_known_op
from gradview.ops.catalog import Gradient, OpFacts, op_catalog
from gradview.ops.registry import DECLARED_IN, GRADVIEW_SCHEMAS, KERNELS
from gradview.runtime.interpreter import STRUCTURAL_HANDLERS

CATALOG: dict[str, OpFacts] = {facts.name: facts for facts in op_catalog()}

def test_the_library_is_not_empty() -> None:
    # A guard for the tests below: the families did register (about 600 overloads).
    assert len(CATALOG) > 500
    assert {"aten::mm", "aten::add.Tensor", "aten::lstm.input"} <= set(CATALOG)


def test_every_op_has_a_kernel_a_shape_rule_and_a_gradient_or_a_reason() -> None:
    problems = []
    for name, facts in CATALOG.items():
        # What the interpreter runs itself, with no kernel: structural prims
        # (prim::ListConstruct, prim::If...) and aten::is_grad_enabled (the grad mode).
        if not facts.has_kernel and name not in STRUCTURAL_HANDLERS:
            problems.append(f"{name}: no kernel")
        if facts.returns_tensor and not facts.has_shape_rule:
            problems.append(f"{name}: no shape rule")
        if facts.gradient == Gradient.MISSING:
            problems.append(f"{name}: no gradient formula and no declared no-gradient")
        if facts.gradient == Gradient.NONE_DECLARED and not (facts.no_gradient_reason or "").strip():
            problems.append(f"{name}: a no-gradient entry without a reason")
    assert not problems, "\n".join(problems)


def test_each_op_is_declared_in_one_module() -> None:
    spread = {name: sorted(f.modules) for name, f in CATALOG.items() if len(f.modules) > 1}
    assert not spread, "\n".join(f"{name}: {modules}" for name, modules in sorted(spread.items()))


def test_every_declaration_comes_from_an_op_family_module() -> None:
    outside = sorted(
        f"{fact} {name} in {module}"
        for fact, table in DECLARED_IN.items()
        for name, module in table.items()
        if not module.startswith("gradview.ops.")
    )
    assert not outside, "\n".join(outside)
    # Every kernel went through the library's declarations: none registered elsewhere.
    assert set(KERNELS) == set(DECLARED_IN["kernel"])


def test_the_ir_knows_every_op_of_the_library() -> None:
    unknown = sorted(
        name for name, facts in CATALOG.items()
        if facts.schema is None and not is_known_op(name.split(".", 1)[0]) and name not in PRIM_OPS
    )
    assert not unknown, unknown


def test_gradview_schemas_are_declared_with_their_op() -> None:
    """gradview's own ops (``gradview::conv_backward``) name their schema where their
    kernel is; PyTorch's come from the generated catalogue and are never repeated."""
    assert GRADVIEW_SCHEMAS, "the backward helpers of gradview's own declare their schemas"
    for text in GRADVIEW_SCHEMAS:
        name = text[: text.index("(")]
        assert name in CATALOG, f"{name}: a schema without a kernel"
        assert CATALOG[name].schema is not None
    assert not any(kind.startswith("gradview::") for kind in BUILTIN_SCHEMAS)


def test_each_ops_kernel_sits_in_the_kernels_module_of_its_family() -> None:
    """ops/F.py binds kernels defined in kernels/F.py, so an op's kernel and facts share a name."""
    split = {
        (DECLARED_IN["kernel"][key].rsplit(".", 1)[-1], fn.__module__.rsplit(".", 1)[-1])
        for key, fn in KERNELS.items()
    }
    assert {(ops, kernels) for ops, kernels in split if ops != kernels} == set()
