"""``gradview view``: bad targets give one line and a non-zero status; good ones open the app."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradview.cli.main import main
from gradview.runtime.pass_trace import PassTrace

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["view", "missing.ir"], "missing.ir: cannot read: no such file"),
        (["view", str(ROOT / "examples" / "mlp.ir"), "--inputs", "8x4,3"], "--inputs gives 2 values for 5 inputs"),
        (["view", str(ROOT / "examples" / "mlp.ir"), "--inputs", "8x4,4x16,16,16x3,3x"], "is not a shape"),
        (["view", "nope.py:fn"], "nope.py: cannot read: no such file"),
    ],
)
def test_bad_targets_give_one_line(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args) == 1
    err = capsys.readouterr().err
    assert err.startswith("gradview: error: ") and message in err and len(err.strip().splitlines()) == 1


def test_malformed_ir_names_line_and_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.ir"
    bad.write_text("graph(%x : Tensor):\n  %y : Tensor = aten::relu(%z)\n  return (%y)\n")
    assert main(["view", str(bad)]) == 1
    assert f"{bad}:2:28: undefined value %z" in capsys.readouterr().err


def test_view_opens_the_app_and_saves_the_trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[object] = []
    monkeypatch.setattr("gradview.viewer.app.GradviewApp.run", lambda self: opened.append(self.session))
    saved = tmp_path / "trace.json"
    assert main(["view", str(ROOT / "examples" / "mlp.ir"), "--save-trace", str(saved)]) == 0
    (session,) = opened
    assert PassTrace.load(str(saved)) == session.trace
    names = [step.pass_name for step in session.trace]
    assert "CreateAutodiffSubgraphs" in names and "lambdaLiftReverse" in names
