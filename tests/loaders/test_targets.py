"""What ``load_target`` says about targets it cannot open as given."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradview.cli.main import main
from gradview.loaders.targets import TargetError, load_target

from ..runtime.no_kernel_graph import write_no_kernel_graph


def _file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "mlp.py"
    path.write_text(text)
    return str(path)


def test_a_python_file_without_a_function_says_it_needs_one_and_lists_them(tmp_path: Path) -> None:
    target = _file(
        tmp_path,
        "def mlp(x, w):\n    return x @ w\n\n\ndef _helper():\n    pass\n\n\n"
        "def mlp_example_inputs():\n    return []\n\n\nclass Model:\n    def forward(self):\n        pass\n\n\n"
        "def build():\n    raise SystemExit('never imported')\n",
    )
    with pytest.raises(TargetError) as caught:
        load_target(target)
    assert str(caught.value) == (
        f"{target}: a Python file needs a function: {target}:build or {target}:<fn> (it defines mlp, build)"
    )


def test_a_python_file_that_does_not_parse_still_gets_the_one_line(tmp_path: Path) -> None:
    target = _file(tmp_path, "def (:\n")
    with pytest.raises(TargetError, match=r"^.*mlp\.py: a Python file needs a function: .*:<fn>$"):
        load_target(target)


def test_a_python_file_without_functions_says_so(tmp_path: Path) -> None:
    target = _file(tmp_path, "X = 1\n")
    with pytest.raises(TargetError, match=r"\(it defines no function\)$"):
        load_target(target)


@pytest.mark.parametrize("command", ["trace", "view", "export", "saved"])
def test_every_command_gives_that_line_instead_of_no_jit_log_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    target = _file(tmp_path, "def mlp(x):\n    return x\n")
    arguments = [command, target] + (["--svg", str(tmp_path / "out")] if command == "export" else [])
    assert main(arguments) != 0
    err = capsys.readouterr().err
    assert "a Python file needs a function" in err and "JIT log" not in err
    assert len(err.strip().splitlines()) == 1




def test_a_graph_with_an_op_without_a_kernel_opens_with_the_executors_steps(tmp_path: Path) -> None:
    session = load_target(write_no_kernel_graph(tmp_path))
    assert session.run_error is not None and not session.can_run
    assert session.run_error.startswith("running the graph on the example inputs failed: unknown operator aten::cudnn_grid_sampler")
    assert "aten::cudnn_grid_sampler(%" in session.run_error  # the node, as printed
    passes = [step.pass_name for step in session.trace]
    assert passes[0] == "Input" and "specializeTypes" in passes and "CreateAutodiffSubgraphs" in passes
    assert session.notes[-1] == f"{session.run_error}; showing the executor's steps up to there"


def test_an_executor_that_records_no_pass_falls_back_to_the_generic_pipelines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gradview.loaders import targets
    from gradview.runtime.interpreter import GraphRuntimeError

    def refuse(self: object, inputs: object, grad_enabled: object = None) -> None:
        raise GraphRuntimeError("no plan for these inputs")

    monkeypatch.setattr(targets.GraphExecutor, "run", refuse)
    session = load_target(write_no_kernel_graph(tmp_path))
    assert session.run_error == (
        "running the graph on the example inputs failed: no plan for these inputs"
        " (1 node cannot run: aten::cudnn_grid_sampler (gradview has no kernel for it))"
    )
    assert "specializeTypes" not in [step.pass_name for step in session.trace]
    assert len(session.trace) > 1  # Input, then the pipelines' passes
    assert session.notes[-1].endswith("showing the generic pass pipelines instead, since the executor recorded no pass")


def test_trace_and_export_open_it_and_saved_refuses_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = write_no_kernel_graph(tmp_path)
    assert main(["trace", target, "--changes"]) == 0
    captured = capsys.readouterr()
    assert "CreateAutodiffSubgraphs" in captured.out
    assert "note: running the graph on the example inputs failed: unknown operator aten::cudnn_grid_sampler" in captured.err
    assert main(["saved", target]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"gradview: error: {target}: running the graph on the example inputs failed: unknown operator")
    assert len(err.strip().splitlines()) == 1
    assert main(["export", target, "--svg", str(tmp_path / "svg")]) == 0
    assert list((tmp_path / "svg").glob("*.svg"))
