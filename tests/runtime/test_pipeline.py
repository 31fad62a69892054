"""The pipeline table: every step a run records has one record, and pass names are written only there."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import gradview.runtime
from gradview.loaders.targets import load_target
from gradview.runtime import PIPELINE_TABLE, PassTrace, Phase, normalize_pass_name, steps_named

ROOT = Path(gradview.runtime.__file__).resolve().parents[1]
EXAMPLES = sorted([*ROOT.glob("examples/*.ir"), *ROOT.glob("examples/teaching/*.py")])
# The package's layers (tests, scripts, benchmarks and examples are not the package).
PACKAGES = ("ir", "kernels", "ops", "autodiff", "runtime", "loaders", "viewer", "cli")


def _trace_with_differentiate_steps(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[PassTrace, set[int]]:
    """The trace of ``path``'s run, and the indices of the steps differentiate recorded."""
    original = PassTrace.autodiff_recorder
    from_differentiate: set[int] = set()

    def autodiff_recorder(self: PassTrace, k: int = 0):  # type: ignore[no-untyped-def]
        inner = original(self, k)
        if inner is None:
            return None

        def record(*args):  # type: ignore[no-untyped-def]
            before = len(self)
            inner(*args)
            from_differentiate.update(range(before, len(self)))

        return record

    monkeypatch.setattr(PassTrace, "autodiff_recorder", autodiff_recorder)
    target = f"{path}:f" if path.suffix == ".py" else str(path)
    return load_target(target, None).trace, from_differentiate


def test_the_table_has_one_record_per_name_and_phase() -> None:
    keys = [(normalize_pass_name(info.name), info.phase) for info in PIPELINE_TABLE]
    assert len(keys) == len(set(keys))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_step_a_run_records_has_exactly_one_record(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trace, from_differentiate = _trace_with_differentiate_steps(path, monkeypatch)
    assert len(trace) > 1
    if path.stem in ("mlp_mse", "sin_times_x"):  # with inputs and DifferentiableGraphs: differentiate ran
        assert from_differentiate
    for step in trace:
        in_differentiate = step.index in from_differentiate
        records = [info for info in steps_named(step.pass_name) if (info.phase is Phase.DIFFERENTIATE) == in_differentiate]
        assert len(records) == 1, (step.pass_name, str(step.which), records)


def _table_names() -> set[str]:
    """Names of gradview's own steps; a name that is also a function's (differentiate) is left out."""
    own = (Phase.PASS, Phase.PIPELINE, Phase.EXECUTOR, Phase.DIFFERENTIATE)
    return {info.name for info in PIPELINE_TABLE if info.phase in own and info.name != info.name.lower()}


def _written_outside_records(path: Path, names: set[str]) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    allowed = {
        id(call.args[0])
        for call in ast.walk(tree)
        if isinstance(call, ast.Call) and getattr(call.func, "id", None) == "PassInfo" and call.args
    }
    return [
        f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value in names and id(node) not in allowed
    ]


def test_pass_names_are_written_only_in_their_records() -> None:
    names = _table_names()
    assert "LowerSimpleTuples" in names and "lambdaLiftReverse" in names
    found = [
        place
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        for place in _written_outside_records(path, names)
    ]
    assert found == []
