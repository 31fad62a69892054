"""Nothing a user has is overwritten (issue 25) and export names say what they show (issue 23, point 7):
an output that is the command's input is refused, an existing file or a non-empty
export folder is refused unless --force, and --force leaves no stale picture."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gradview.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "mlp.ir"


@pytest.fixture
def graph(tmp_path: Path) -> Path:
    path = tmp_path / "t.ir"
    shutil.copy(EXAMPLE, path)
    return path


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.startswith("gradview: error: ") and err.count("\n") == 1 and "Traceback" not in err
    return err


@pytest.mark.parametrize("option", ["--html", "--model-explorer", "--svg"])
def test_export_refuses_to_write_over_its_input(graph: Path, capsys: pytest.CaptureFixture[str], option: str) -> None:
    before = graph.read_bytes()
    assert main(["export", str(graph), option, str(graph), "--force"]) == 1
    assert "is the input of this command" in _error(capsys)
    assert graph.read_bytes() == before


def test_view_refuses_to_save_its_trace_over_its_input(graph: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = graph.read_bytes()
    assert main(["view", str(graph), "--save-trace", str(graph), "--force"]) == 1
    assert "--save-trace" in _error(capsys)
    assert graph.read_bytes() == before


def test_a_python_target_is_an_input_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "m.py"
    model.write_text("def f(x):\n    return x.sin()\n")
    assert main(["export", f"{model}:f", "--html", str(model)]) == 1
    assert "is the input of this command" in _error(capsys)
    assert model.read_text() == "def f(x):\n    return x.sin()\n"


def test_a_file_of_an_input_folder_is_an_input_even_with_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logs = tmp_path / "torch_trace"
    logs.mkdir()
    log = logs / "rank0.log"
    shutil.copy(ROOT / "tests" / "data" / "torch_trace" / "mlp.log", log)
    before = log.read_bytes()
    assert main(["export", str(logs), "--html", str(log), "--force"]) == 1
    assert "is the input of this command" in _error(capsys)
    assert log.read_bytes() == before


@pytest.mark.parametrize(("command", "option"), [("export", "--html"), ("view", "--save-trace")])
def test_an_existing_file_is_refused_without_force(
    graph: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, option: str
) -> None:
    mine = tmp_path / "mine.out"
    mine.write_text("the user's file")
    assert main([command, str(graph), option, str(mine)]) == 1
    assert f"{option} {mine} exists; give --force" in _error(capsys)
    assert mine.read_text() == "the user's file"


def test_force_replaces_an_existing_page(graph: Path, tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text("an old page")
    assert main(["export", str(graph), "--html", str(page), "--force"]) == 0
    assert page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_a_non_empty_folder_is_refused_without_force(graph: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "svg"
    out.mkdir()
    (out / "080-EliminateDeadCode.svg").write_text("the user's picture")
    assert main(["export", str(graph), "--svg", str(out)]) == 1
    assert "is not empty (1 entry: 080-EliminateDeadCode.svg); give --force" in _error(capsys)
    assert [p.name for p in out.iterdir()] == ["080-EliminateDeadCode.svg"]
    assert (out / "080-EliminateDeadCode.svg").read_text() == "the user's picture"


def test_force_removes_the_earlier_exports_pictures_first(graph: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "svg"
    assert main(["export", str(graph), "--svg", str(out), "--view", "forward", "--step", "specializeAutogradZero"]) == 0
    earlier = sorted(p.name for p in out.iterdir())
    assert earlier and all(name.endswith("-forward-0.svg") for name in earlier)
    (out / "notes.txt").write_text("the user's notes")
    capsys.readouterr()
    assert main(["export", str(graph), "--svg", str(out), "--view", "backward", "--step", "80", "--force"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["080-EliminateDeadCode-backward-0.svg", "notes.txt"]
    assert f"removed {len(earlier)} picture" in capsys.readouterr().out


def test_whole_view_names_carry_the_steps_graph(graph: Path, tmp_path: Path) -> None:
    out = tmp_path / "svg"
    assert main(["export", str(graph), "--svg", str(out), "--step", "specializeAutogradZero"]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert any(name.endswith("-specializeAutogradZero-main.svg") for name in names)
    assert any(name.endswith("-specializeAutogradZero-backward-executor-0.svg") for name in names)


def test_one_file_per_distinct_picture(graph: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "svg"
    assert main(["export", str(graph), "--svg", str(out), "--step", "lambdaLiftReverse", "--view", "joint"]) == 0
    (picture,) = out.iterdir()  # lambdaLiftReverse's f and df steps draw the same joint picture
    assert picture.name.endswith("-lambdaLiftReverse-joint-0.svg")
    assert "1 step drew the same picture as the step before" in capsys.readouterr().out


def test_a_step_beyond_the_trace_is_one_line(graph: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", str(graph), "--svg", str(tmp_path / "svg"), "--step", "800"]) == 1
    assert "no step 800: the trace has steps 0 to 80" in _error(capsys)
