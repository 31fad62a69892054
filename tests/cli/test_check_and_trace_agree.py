"""``gradview check`` and ``gradview trace`` agree on what is valid (issue 25): a
graph check calls ok traces, and one trace refuses check refuses too, in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradview.cli.main import main

GRAPHS = {
    "tensor_list": ("graph(%x : Tensor):\n  %t : Tensor[] = prim::Constant[value=[<Tensors>]]()\n  return (%t)\n", True),
    "dg_without_subgraph": ("graph(%x : Tensor):\n  %y : Tensor = prim::DifferentiableGraph(%x)\n  return (%y)\n", False),
    "mm_one_input": ("graph(%x : Tensor):\n  %y : Tensor = aten::mm(%x)\n  return (%y)\n", False),
    "blocks_nested_300_deep": (
        "graph(%c : bool, %x : Tensor):\n"
        + "".join(f"  %r{d} : Tensor = prim::If(%c)\n    block0():\n" for d in range(300))
        + "  %r300 : Tensor = aten::neg(%x)\n"
        + "".join(f"    -> (%r{d + 1})\n    block1():\n    -> (%x)\n" for d in reversed(range(300)))
        + "  return (%r0)\n",
        False,
    ),
    "size_beyond_int64": ("graph(%x : Double(99999999999999999999, 3, strides=[3, 1], device=cpu)):\n  return (%x)\n", False),
}
FREEZE_CONSTANTS = Path(__file__).resolve().parents[1] / "data" / "torch_prints" / "freeze_script_constants.ir"


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = main(argv)
    return status, capsys.readouterr().err


@pytest.mark.parametrize("name", list(GRAPHS))
@pytest.mark.parametrize("inputs", [None, "3x3"])
def test_check_and_trace_agree(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, inputs: str | None) -> None:
    text, valid = GRAPHS[name]
    path = tmp_path / f"{name}.ir"
    path.write_text(text)
    checked, check_err = _run(["check", str(path)], capsys)
    traced, trace_err = _run(["trace", str(path), *(["--inputs", inputs] if inputs else [])], capsys)
    assert (checked == 0) == valid
    assert (traced == 0) == valid
    assert "Traceback" not in check_err + trace_err
    if not valid:
        assert trace_err.startswith(f"gradview: error: {path}:")


def test_the_fixture_of_frozen_script_constants_traces(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(FREEZE_CONSTANTS)]) == 0
    assert main(["trace", str(FREEZE_CONSTANTS), "--changes"]) == 0
    assert "Traceback" not in capsys.readouterr().err


def test_inputs_too_large_for_memory_end_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    mlp = Path(__file__).resolve().parents[2] / "examples" / "mlp.ir"
    status, err = _run(["trace", str(mlp), "--inputs", "100000x100000x100000,4x16,16,16x3,3"], capsys)
    assert status == 1
    assert err == (
        "gradview: error: --inputs entry 1 ('100000x100000x100000'): a 100000x100000x100000 float64 tensor "
        "needs 7.11 PiB; example inputs may take 1 GiB in all\n"
    )
