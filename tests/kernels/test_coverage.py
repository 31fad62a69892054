"""Every operator schema gradview registers can run: it has a kernel.

ir/builtin_schemas.py (generated from PyTorch by
scripts/gen_builtin_schemas.py) lists the TorchScript schemas gradview's IR
knows. Each one either computes on tensors or is a scalar/list/string op the
interpreter runs (``aten::len.t``, ``aten::floordiv.int``); either way a graph
using it must run, so each needs a kernel registered under its qualified name
in ``gradview.kernels.KERNELS``. The only exceptions are the overloads listed
in ALLOW_LIST below, with the reason gradview deliberately does not run them.

When this test fails, it lists every schema without a kernel: add the kernel
(with oracle tests in tests/kernels/) or, if gradview must not run the op,
an ALLOW_LIST entry saying why.
"""

from __future__ import annotations

from gradview.ir import FunctionSchema, parse_schema
from gradview.ir.builtin_schemas import BUILTIN_SCHEMAS
from gradview.kernels import KERNELS

# Qualified name -> why gradview deliberately runs no kernel for it.
#
# Empty today: every schema in builtin_schemas.py has a kernel. The overloads
# gradview would refuse never reach the list: gen_builtin_schemas.py drops
# schemas taking a Generator (gradview draws from xp.random's global
# generator only), Dict, complex, Dimname, Storage, Stream or AnyEnum
# arguments, every in-place and out= variant, and none of the selected ops
# has a CUDA-only out_dtype overload. Add an entry here (with its reason)
# instead of a kernel only for an op gradview must not run.
ALLOW_LIST: dict[str, str] = {
    "aten::is_grad_enabled": "the interpreter answers it from the runtime's grad mode, which no kernel knows",
}


def _schemas() -> list[FunctionSchema]:
    return [parse_schema(text) for text in BUILTIN_SCHEMAS]


def test_every_builtin_schema_has_a_kernel() -> None:
    missing = [
        str(schema)
        for schema in _schemas()
        if schema.qualified_name not in KERNELS and schema.qualified_name not in ALLOW_LIST
    ]
    assert not missing, "builtin schemas without a kernel (add one, or an ALLOW_LIST entry with the reason):\n" + (
        "\n".join(missing)
    )


def test_allow_list_entries_are_real_gaps() -> None:
    """No stale entries: each names a builtin schema that still has no kernel."""
    names = {schema.qualified_name for schema in _schemas()}
    assert set(ALLOW_LIST) <= names, sorted(set(ALLOW_LIST) - names)
    assert not [name for name in ALLOW_LIST if name in KERNELS]
    assert all(reason.strip() for reason in ALLOW_LIST.values())


def test_builtin_schemas_are_unique_and_parse() -> None:
    names = [schema.qualified_name for schema in _schemas()]
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})
    assert len(names) == len(BUILTIN_SCHEMAS)


def test_schema_less_prims_with_kernels() -> None:
    # Prims the interpreter runs through a kernel keyed by their kind.
    assert "prim::TupleSlice" in KERNELS
