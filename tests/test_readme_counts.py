"""The counts the README states about the op library, the schema registry and the
OpInfo suites are the library's own: each sentence is found once and its number
computed from the code, so a new op or a torch upgrade that changes one fails here
until the README says it."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from gradview.autodiff.torch_differentiable import TORCH_DIFFERENTIABLE
from gradview.ir.builtin_schemas import BUILTIN_SCHEMAS
from gradview.ops import REFUSED
from gradview.ops.catalog import op_catalog
from gradview.ops.registry import DECLARED_IN

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def _stated(pattern: str) -> tuple[int, ...]:
    """The numbers of the one README passage ``pattern`` matches (``3,754`` is 3754)."""
    found = re.findall(pattern, " ".join(README.split()))  # sentences wrap anywhere
    assert len(found) == 1, f"the README should state this once: {pattern!r} (found {len(found)})"
    groups = found[0] if isinstance(found[0], tuple) else (found[0],)
    return tuple(int(group.replace(",", "")) for group in groups)


def _schema_counts() -> tuple[int, int]:
    return sum(len(overloads) for overloads in BUILTIN_SCHEMAS.values()), len(BUILTIN_SCHEMAS)


COUNTS: dict[str, tuple[str, Callable[[], tuple[int, ...]]]] = {
    "schema registry": (r"\(([\d,]+) overloads of ([\d,]+) operators", _schema_counts),
    "op families": (r"for `aten::mm`; ([\d,]+) families", lambda: (len(set(DECLARED_IN["kernel"].values())),)),
    "overloads the library declares": (r"the library declares \(([\d,]+)\)", lambda: (len(op_catalog()),)),
    "ops refused": (r"catalog --lacking` \(([\d,]+) ops", lambda: (len(REFUSED),)),
    "overloads torch's JIT differentiates": (
        r"gen_torch_differentiable\.py`, ([\d,]+) overloads", lambda: (len(TORCH_DIFFERENTIABLE),)
    ),
}


@pytest.mark.parametrize("what", list(COUNTS))
def test_the_readme_states_the_librarys_counts(what: str) -> None:
    pattern, count = COUNTS[what]
    assert _stated(pattern) == count(), what


def test_the_readme_states_the_opinfo_counts() -> None:
    """OpInfos of op_db with float64 CPU samples (tests/ops/test_op_db.py sweeps them)
    and those with ``assert_autodiffed`` (tests/autodiff/test_opinfo.py checks them)."""
    pytest.importorskip("torch")
    from tests.ops.op_db_cases import sweep_ops

    ops = sweep_ops()
    assert _stated(r"float64 CPU samples \(([\d,]+) of them") == (len(ops),)
    assert _stated(r"the ([\d,]+) OpInfos of `op_db` with `assert_autodiffed`") == (
        sum(1 for op in ops if op.assert_autodiffed),
    )
