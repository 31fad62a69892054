"""Regenerate screenshots/: the viewer at a few telling steps of the bundled
example and of a torch.compile log (the joint view with the Saved tab), the viewer at three terminal sizes (80x24, 120x40, 200x50; SVG and,
where Chromium is installed, PNG), and the SVG diagrams ``gradview export``
writes for the same steps.

    .venv/bin/python scripts/screenshots.py           # everything
    .venv/bin/python scripts/screenshots.py --sizes   # the three terminal sizes only

Everything is drawn headless at fixed terminal sizes, so the files change
only when the app or the example changes.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import subprocess
import sys
from pathlib import Path

from gradview.runtime import GraphName

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "screenshots"
EXAMPLE = ROOT / "examples" / "mlp.ir"
SIZE = (200, 50)

# (file name, pass name, which graph, view key, extra keys)
SHOTS = [
    ("01-create-autodiff-subgraphs", "CreateAutodiffSubgraphs", GraphName.main(), "1", []),
    ("02-add-reverse-inline-joint", "addReverseInline", GraphName.backward(0), "4", []),
    ("03-lambda-lift-reverse-df", "lambdaLiftReverse", GraphName.backward(0), "3", []),
    ("04-specialize-autograd-zero-df", "specializeAutogradZero", GraphName.backward_executor(0), "1", []),
    ("05-help", "InlineAutodiffSubgraphs", GraphName.main(), "1", ["question_mark"]),
]


# torch.compile's graphs from a TORCH_TRACE fixture: the joint view with the Saved tab
# open and its biggest saved value selected (its producer and readers lit).
COMPILED_LOG = ROOT / "tests" / "data" / "torch_trace" / "attention.log"
COMPILED_SHOTS = [
    ("06-compiled-joint-saved", "partition", GraphName.backward(0), "4", ["S", "down", "down", "minus"]),
    # The what-if: that value marked as recomputed (w): bytes before -> after, the ops rerun lit.
    ("07-compiled-what-if", "partition", GraphName.backward(0), "4", ["S", "down", "down", "w", "minus"]),
]


# The first screen a user sees at each size, at the step that frames the DifferentiableGraph.
SIZES = [(80, 24), (120, 40), (200, 50)]
SIZE_STEP = ("CreateAutodiffSubgraphs", GraphName.main())
# A real model's first screen at each size: ResNet-18's top-level modules (needs PyTorch).
RESNET = "examples/resnet18.py:build"


def _find(trace: object, pass_name: str, which: object) -> int:
    for step in trace:  # type: ignore[attr-defined]
        if step.pass_name == pass_name and step.which == which:
            return step.index
    raise SystemExit(f"screenshots: no step {pass_name} [{which}] in the example's trace")


async def _shoot(
    name: str, pass_name: str, which: object, view_key: str, keys: list[str], size: tuple[int, int] = SIZE,
    target: Path = EXAMPLE,
) -> Path:
    from gradview.viewer.app import GradviewApp
    from gradview.viewer.session import load_target

    session = load_target(str(target))
    app = GradviewApp(session)
    async with app.run_test(size=size) as pilot:
        await app.wait_for_layouts()
        await pilot.pause()
        await app.wait_for_layouts()  # a first picture that does not fit goes one level up: its layout
        app.jump_to_pass(_find(session.trace, pass_name, which))
        await pilot.press(view_key)
        await app.wait_for_layouts()
        await pilot.pause()
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
        await app.wait_for_layouts()
        await pilot.pause()
        app.save_screenshot(f"{name}.svg", path=str(OUT))
    return OUT / f"{name}.svg"


def _png(svg: Path) -> Path | None:
    """The SVG drawn by headless Chromium at its own size (None without Chromium)."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if browser is None:
        return None
    match = re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', svg.read_text(encoding="utf-8")[:400])
    width, height = (int(float(v)) + 1 for v in match.groups()) if match else (2000, 1200)
    png = svg.with_suffix(".png")
    subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         f"--screenshot={png}", f"--window-size={width},{height}", svg.resolve().as_uri()],
        check=True, capture_output=True, timeout=120,
    )
    return png


def _sizes() -> None:
    pass_name, which = SIZE_STEP
    for width, height in SIZES:
        svg = asyncio.run(_shoot(f"size-{width}x{height}", pass_name, which, "1", [], (width, height)))
        png = _png(svg)
        print(f"screenshots/{svg.name}" + (f", screenshots/{png.name}" if png else " (no Chromium: no PNG)"))
    try:
        import torch  # noqa: F401 - the ResNet is a PyTorch model
    except ImportError:
        print("screenshots: no PyTorch: the ResNet-18 sizes are left as they are")
        return
    for width, height in SIZES:
        name = f"resnet18-{width}x{height}"
        svg = asyncio.run(_shoot(name, "Input", GraphName.main(), "1", [], (width, height), target=RESNET))  # type: ignore[arg-type]
        png = _png(svg)
        print(f"screenshots/{svg.name}" + (f", screenshots/{png.name}" if png else " (no Chromium: no PNG)"))


def _export_diagrams() -> None:
    from gradview.viewer import export
    from gradview.viewer.model import View
    from gradview.viewer.session import load_target

    session = load_target(str(EXAMPLE))
    export.export_trace_html(session.trace, OUT / "steps.html", title="gradview: examples/mlp.ir")
    views = {"1": View.WHOLE, "3": View.BACKWARD, "4": View.JOINT}
    for name, pass_name, which, view_key, _ in SHOTS[:4]:
        index = _find(session.trace, pass_name, which)
        (written,) = export.export_trace_svgs(session.trace, OUT / "tmp", views[view_key], indices=[index])
        written.replace(OUT / f"{name}.diagram.svg")
    (OUT / "tmp").rmdir()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", action="store_true", help="only the viewer at 80x24, 120x40 and 200x50")
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    _sizes()
    if args.sizes:
        return 0
    for shot in SHOTS:
        asyncio.run(_shoot(*shot))
        print(f"screenshots/{shot[0]}.svg")
    for name, pass_name, which, view_key, keys in COMPILED_SHOTS:
        svg = asyncio.run(_shoot(name, pass_name, which, view_key, keys, target=COMPILED_LOG))
        png = _png(svg)
        print(f"screenshots/{svg.name}" + (f", screenshots/{png.name}" if png else " (no Chromium: no PNG)"))
    _export_diagrams()
    print("screenshots/*.diagram.svg, screenshots/steps.html")
    return 0


if __name__ == "__main__":
    sys.exit(main())
