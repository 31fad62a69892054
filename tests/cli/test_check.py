"""``gradview check``: the summary line names what gradview cannot read or run."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradview.cli.main import main

GRAPH = """graph(%x : Float(3, strides=[1], device=cpu)):
  %d : int = prim::Constant[value=0]()
  %y : Float(3, strides=[1], device=cpu) = aten::sin(%x)
  %values : Tensor = aten::cudnn_grid_sampler(%y, %y)
  %z : Tensor = mylib::frobnicate(%values)
  return (%z, %values)
"""


def _check(tmp_path: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[int, str]:
    path = tmp_path / "g.ir"
    path.write_text(GRAPH)
    status = main(["check", str(path), *flags])
    return status, capsys.readouterr().out


def test_the_summary_names_unknown_ops_and_ops_without_a_kernel(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = _check(tmp_path, capsys)
    assert status == 0
    # PyTorch's cudnn_grid_sampler is known to the IR (its schema is in the catalogue),
    # but gradview has no kernel for it (a cuDNN-only op).
    assert "1 unknown operator: mylib::frobnicate" in out
    assert "1 op gradview cannot run: aten::cudnn_grid_sampler (gradview has no kernel for it)" in out
    assert "aten::sin" not in out


def test_strict_fails_on_either(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = _check(tmp_path, capsys, "--strict")
    assert status == 1
    assert ": error: " in out
