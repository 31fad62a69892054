"""The fuzzer in the suite (issue 25): seeded mutants of every input kind go through
check, trace, saved and export in process, and none ends in a traceback, a hang
or an error without a message. A failure names the folder its mutant was saved in;
`scripts/fuzz.py --minutes N` runs the same fuzzer for longer, and what it finds
becomes a fixture under tests/fuzz/regressions/ (run below)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .engine import FAILURES, KINDS, REGRESSIONS, commands_for, environment_ready, fuzz, run_command

pytestmark = pytest.mark.skipif(environment_ready() is not None, reason=str(environment_ready()))

# Mutants per kind in CI: together about a minute on one core (each command also
# has a time budget, a hang guard rather than a speed assertion).
CI_MUTANTS = 128
COMMAND_BUDGET_S = 30.0


@pytest.mark.parametrize("kind", list(KINDS))
def test_no_mutant_ends_in_a_traceback_a_hang_or_an_empty_message(kind: str, tmp_path: Path) -> None:
    report = fuzz(kind, seed=25, count=CI_MUTANTS, budget=COMMAND_BUDGET_S, keep=tmp_path / "mutants")
    assert report.runs >= CI_MUTANTS * 2
    assert not report.failures, "\n".join([report.line(), *report.failures])


def _regressions() -> list[Path]:
    return sorted(path for path in REGRESSIONS.iterdir() if path.is_dir())


@pytest.mark.parametrize("folder", _regressions(), ids=lambda path: path.name)
def test_what_the_fuzzer_found_stays_fixed(folder: Path, tmp_path: Path) -> None:
    kind = KINDS[next(name for name in sorted(KINDS, key=len, reverse=True) if folder.name.startswith(name + "-"))]
    for argv in commands_for(kind, folder / kind.file_name, tmp_path):
        outcome = run_command(argv, COMMAND_BUDGET_S)
        assert outcome.kind not in FAILURES, f"gradview {' '.join(argv)}: {outcome.kind}\n{outcome.detail}"
