"""Issue 10, acceptance 2: ``gradview export model.py:build --svg DIR --all``
writes every step for every common nn module (traced; the scripted forms run
the same training step in tests/runtime/test_nn_modules.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradview.cli.main import main
from gradview.viewer.session import load_target

from ..runtime.nn_modules import CASES, write_builder


@pytest.mark.parametrize("name", sorted(CASES))
def test_export_writes_every_step(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = write_builder(tmp_path / "model.py", name)
    out = tmp_path / "svg"
    assert main(["export", target, "--svg", str(out), "--all"]) == 0, capsys.readouterr().err
    steps = len(load_target(target).trace)
    written = sorted(out.glob("*.svg"))
    assert len(written) == steps > 0
    assert f"wrote {steps} SVG files" in capsys.readouterr().out
