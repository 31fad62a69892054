"""``gradview export --detail``: a real model's picture at the model level is one
slide-sized picture of its top-level modules; ``--detail ir`` is every IR node (issue 21, acceptance 3)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from gradview.cli.main import main
from gradview.viewer.detail import Detail
from gradview.viewer.export import export_trace_svgs
from gradview.viewer.session import load_target

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
RESNET = f"{ROOT / 'examples' / 'resnet18.py'}:build"
SVG = "{http://www.w3.org/2000/svg}"
TOP_LEVEL = ["conv1", "bn1", "relu", "maxpool", "layer1", "layer2", "layer3", "layer4", "avgpool", "fc"]


@pytest.fixture(scope="module")
def resnet_trace():
    return load_target(RESNET).trace


def _size_pt(path: Path) -> tuple[float, float]:
    root = ET.parse(path).getroot()
    return float(root.get("width", "0").removesuffix("pt")), float(root.get("height", "0").removesuffix("pt"))


def _texts(path: Path) -> list[str]:
    return [t.text or "" for t in ET.parse(path).getroot().iter(f"{SVG}text")]


def test_the_default_export_of_a_real_model_is_its_top_level_modules_within_2400_pt(tmp_path, capsys) -> None:
    out = tmp_path / "model"
    assert main(["export", RESNET, "--svg", str(out)]) == 0
    (picture,) = sorted(out.iterdir())
    width, height = _size_pt(picture)
    assert 0 < width <= 2400 and 0 < height <= 2400, (width, height)
    texts = _texts(picture)
    for name in TOP_LEVEL:
        assert name in texts, f"the picture names {name}"
    assert not any(t.startswith("aten::") for t in texts), "no IR node is drawn at the model level"
    # Every module box says its class and carries complete shapes.
    assert "Sequential · 16 ops · 2.0 MiB" in texts
    assert "→ Float(1, 512, 2, 2)" in texts


def test_detail_ir_gives_every_ir_node(tmp_path, resnet_trace, monkeypatch) -> None:
    from gradview.viewer import layout as layout_module

    # Both pictures from dot: on a loaded machine dot may pass the 10 s "auto" gives it on
    # ResNet's IR and one of the two would fall back to the built-in layout.
    monkeypatch.setattr(layout_module, "AUTO_DOT_TIMEOUT", 600.0)
    out = tmp_path / "ir"
    assert main(["export", RESNET, "--svg", str(out), "--detail", "ir"]) == 0
    (picture,) = sorted(out.iterdir())
    texts = _texts(picture)
    convolutions = sum(1 for t in texts if re.fullmatch(r"aten::_?convolution", t))
    assert convolutions == 20, "ResNet-18's 20 convolutions, each its own box"
    # The same picture export_trace_svgs draws at the IR level.
    again = export_trace_svgs(resnet_trace, tmp_path / "again", indices=[len(resnet_trace) - 1], detail=Detail.IR)
    assert again[0].read_text() == picture.read_text()


def test_detail_ops_folds_the_plumbing_and_keeps_every_op(tmp_path) -> None:
    out = tmp_path / "ops"
    assert main(["export", RESNET, "--svg", str(out), "--detail", "ops"]) == 0
    (picture,) = sorted(out.iterdir())
    texts = _texts(picture)
    assert sum(1 for t in texts if t.startswith("conv2d")) == 20
    assert not any(t.startswith(("prim::Constant", "prim::ListConstruct")) for t in texts)


def test_an_unknown_detail_level_is_one_line(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["export", RESNET, "--svg", "unused", "--detail", "layers"])
    err = capsys.readouterr().err
    assert "invalid choice: 'layers'" in err and "Traceback" not in err
