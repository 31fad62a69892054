"""``gradview trace --changes`` and the timeline tell the truth (issue 12, acceptance 2).

On a PyTorch JIT log of each executor (profiling, torch's default, and the
legacy one) and on ``examples/mlp.py:mlp`` without inputs: every step whose
graph text equals the previous dump of the same graph is ``+0 -0 unchanged``,
in ``gradview trace --changes`` and in the timeline's model; each log graph
carries its own name, the same in ``--changes`` as in the step's ``==`` header.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gradview.cli.main import main
from gradview.loaders.jit_log import load_jit_log
from gradview.loaders.targets import load_target
from gradview.runtime.pass_trace import PassTrace
from gradview.viewer.timeline import summarize_steps

ROOT = Path(__file__).resolve().parents[2]
MLP = ROOT / "examples" / "mlp.py"
LINE = re.compile(r"^(\d+) (.+) \[([^\]]+)\] (changed|unchanged) \+(\d+) -(\d+)$")
HEADER = re.compile(r"^== (\d+) (.+) \[([^\]]+)\] (changed|unchanged) \(\d+\.\d+ ms\)$")

# examples/mlp.py's function, scripted by torch and trained for two steps with
# the JIT log of the executor's own source file on.
TRAIN = """
import sys, torch
if sys.argv[1] == "legacy":
    torch._C._jit_set_profiling_executor(False)
sys.path.insert(0, sys.argv[2])
from mlp import mlp
scripted = torch.jit.script(mlp)
torch.manual_seed(0)
for _ in range(2):
    args = [torch.randn(s, dtype=torch.float64, requires_grad=True) for s in [(8, 4), (4, 16), (16,), (16, 3), (3,)]]
    scripted(*args).sum().backward()
"""
LEVELS = {"profiling": ">>profiling_graph_executor_impl", "legacy": ">>graph_executor"}


@pytest.fixture(scope="module")
def jit_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A JIT log per executor, written side by side by two Python processes."""
    folder = tmp_path_factory.mktemp("jit_logs")
    runs = {}
    for executor, level in LEVELS.items():
        env = {**os.environ, "PYTORCH_JIT_LOG_LEVEL": level}
        command = [sys.executable, "-c", TRAIN, executor, str(MLP.parent)]
        runs[executor] = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    logs = {}
    for executor, run in runs.items():
        _, stderr = run.communicate(timeout=600)
        assert run.returncode == 0, stderr[-2000:]
        logs[executor] = folder / f"{executor}.log"
        logs[executor].write_text(stderr)
    return logs


def changes_lines(capsys: pytest.CaptureFixture[str], *argv: str) -> list[tuple[int, str, str, bool, int, int]]:
    assert main(["trace", *argv, "--changes"]) == 0
    rows = []
    for line in capsys.readouterr().out.splitlines():
        match = LINE.match(line)
        assert match, line
        rows.append((int(match[1]), match[2], match[3], match[4] == "changed", int(match[5]), int(match[6])))
    return rows


def header_names(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    assert main(["trace", *argv]) == 0
    names = []
    for line in capsys.readouterr().out.splitlines():
        if line.startswith("== "):
            match = HEADER.match(line)
            assert match, line
            names.append(match[3])
    return names


def check_unchanged_steps_read_unchanged(trace: PassTrace, rows: list[tuple[int, str, str, bool, int, int]]) -> int:
    """Every step whose text equals its graph's previous dump is '+0 -0 unchanged', in the
    --changes rows and in the timeline's summaries; returns how many such steps there are."""
    assert len(rows) == len(trace)
    summaries = summarize_steps(trace)
    same = 0
    for step, row, summary in zip(trace, rows, summaries, strict=True):
        assert row[:3] == (step.index, step.pass_name, str(step.which))
        assert (summary.changed, summary.added, summary.removed) == row[3:], step.index
        previous = trace.previous(step)
        if previous is not None and previous.text() == step.text():
            same += 1
            assert row[3:] == (False, 0, 0), (step.index, step.pass_name, str(step.which), row)
        elif previous is not None:
            assert row[3], (step.index, step.pass_name, "the text changed, the line says unchanged")
    return same


@pytest.mark.parametrize("executor", ["profiling", "legacy"])
def test_jit_log_steps_that_change_nothing_read_unchanged(
    executor: str, jit_logs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(jit_logs[executor])
    trace = load_jit_log(path)
    rows = changes_lines(capsys, path)
    assert check_unchanged_steps_read_unchanged(trace, rows) >= 10
    # Each compilation's graphs carry their own name: one name never spans two compilations.
    compilations: dict[str, int] = {}
    for step in trace:
        number = step.annotations["compilation"]
        assert compilations.setdefault(str(step.which), number) == number, str(step.which)
    assert len(set(compilations.values())) >= 2 and "main" in compilations
    assert any(name.startswith("main (compilation ") for name in compilations)
    assert any(name.startswith(("forward ", "backward ")) for name in compilations)
    # The same [<graph>] as the step's == header.
    assert header_names(capsys, path) == [row[2] for row in rows]


def test_mlp_without_inputs(capsys: pytest.CaptureFixture[str]) -> None:
    target = f"{MLP}:mlp"
    rows = changes_lines(capsys, target, "--inputs", "none")
    trace = load_target(target, "none").trace
    assert check_unchanged_steps_read_unchanged(trace, rows) >= 5
    remove_expands = [row for row in rows if row[1] == "RemoveExpands"]
    assert remove_expands == [(1, "RemoveExpands", "main", False, 0, 0)]
    assert header_names(capsys, target, "--inputs", "none") == [row[2] for row in rows]


def test_mlp_trace_is_the_executor_trace_view_shows(capsys: pytest.CaptureFixture[str]) -> None:
    """`trace model.py:fn` gives the executor's steps, as `view` loads them (same loader)."""
    target = f"{MLP}:mlp"
    rows = changes_lines(capsys, target)
    trace = load_target(target).trace
    assert [(s.index, s.pass_name, str(s.which)) for s in trace] == [row[:3] for row in rows]
    names = {row[2] for row in rows}
    assert {"main", "forward 0", "backward 0", "backward executor 0"} <= names
    check_unchanged_steps_read_unchanged(trace, rows)
