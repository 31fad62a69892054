"""The viewer in a real terminal: ``gradview view examples/mlp.ir`` (what ``make run``
starts) and ResNet-18 (``examples/resnet18.py:build``) in a detached tmux session at
80x24, 120x40 and 200x50, read back with ``tmux capture-pane``. The canvas gets at
least half the columns at 120x40 and 200x50; the example's first view shows its whole
graph and ResNet-18's names its top-level modules; every label inside a box on screen,
framed or zoomed out to one line (``[matmul]``), is either whole or abbreviated
with "…" (issue 12, acceptance 1; issue 21, acceptance 2)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from gradview.runtime.pass_trace import PassTrace
from gradview.viewer.detail import Detail
from gradview.viewer.labels import ELLIPSIS, short_op_name
from gradview.viewer.model import View
from gradview.viewer.transforms import Transforms
from gradview.viewer.views import available_views, draw_step

ROOT = Path(__file__).resolve().parents[2]
GRADVIEW = Path(sys.executable).with_name("gradview")
EXAMPLE = "examples/mlp.ir"
DEADLINE_S = 90.0  # the first layouts start worker processes; a loaded machine is slow
POLL_S = 0.25

TOP_LEFT, TOP_RIGHT = "┌╭", "┐╮"
BOTTOM_LEFT, BOTTOM_RIGHT = "└╰", "┘╯"
SEPARATORS = "│‹›"  # the splitters between the panels (‹ › are their grips)
HEADER = re.compile(r"step (\d+)/\d+")
DETAIL = re.compile(r"detail: (model|ops|ir)\b")
COMPACT_BOX = re.compile(r"\[([^\[\]]+)\]")  # a box zoomed out to its first line: [matmul]
RESNET = "examples/resnet18.py:build"
RESNET_TOP_LEVEL = ["conv1", "bn1", "relu", "maxpool", "layer1", "layer2", "layer3", "layer4", "avgpool", "fc"]
BRAILLE = re.compile(r"[\u2800-\u28ff ]*")

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


@dataclass(frozen=True)
class Box:
    top: int
    left: int
    bottom: int
    right: int


class Terminal:
    """One detached tmux session on a private server, running one command."""

    def __init__(self, width: int, height: int, command: list[str]) -> None:
        self.socket = f"gradview-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        env = {key: value for key, value in os.environ.items() if key != "TMUX"}
        self._env = env
        self._tmux(
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-x",
            str(width),
            "-y",
            str(height),
            "-c",
            str(ROOT),
            *command,
            ";",
            "set-option",
            "-w",
            "remain-on-exit",
            "on",  # keep a crash's message on screen
        )
        self.socket_path = Path(self._tmux("display-message", "-p", "#{socket_path}").strip())

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args],
            env=self._env,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def capture(self) -> list[str]:
        return self._tmux("capture-pane", "-p").splitlines()

    def dead(self) -> bool:
        """Whether the command has exited (its last screen stays, remain-on-exit)."""
        return self._tmux("display-message", "-p", "#{pane_dead}").strip() == "1"

    def close(self) -> None:
        subprocess.run(
            ["tmux", "-L", self.socket, "kill-server"],
            env=self._env,
            capture_output=True,
            timeout=30,
        )
        self.socket_path.unlink(missing_ok=True)  # kill-server may leave the socket file


def separator_columns(rows: list[str]) -> list[int]:
    """Columns drawn as a vertical line on nearly every body row: the panel borders
    and splitters (a node box's side spans a few rows only)."""
    body = rows[1:-1]  # the header and the footer span the whole width
    width = max(len(row) for row in body)
    counts = [0] * width
    for row in body:
        for column, char in enumerate(row):
            if char in SEPARATORS:
                counts[column] += 1
    return [column for column, count in enumerate(counts) if count >= 0.8 * len(body)]


def canvas_span(rows: list[str]) -> tuple[int, int]:
    """(first, last) column of the canvas: right of the steps panel's splitter, left
    of the next separator (the tabs' splitter, or the screen's edge)."""
    columns = separator_columns(rows)
    assert columns, "no panel border found:\n" + "\n".join(rows)
    first = columns[0] + 1
    after = [column for column in columns if column > first]
    last = after[0] - 1 if after else max(len(row) for row in rows) - 1
    return first, last


def _at(rows: list[str], row: int, column: int) -> str:
    return rows[row][column] if 0 <= row < len(rows) and column < len(rows[row]) else ""


def whole_boxes(rows: list[str], first: int, last: int) -> list[Box]:
    """Node boxes drawn whole between columns ``first`` and ``last`` (a box the
    viewport cuts is no label cut: its missing side shows that)."""
    boxes = []
    for top, row in enumerate(rows):
        for left in range(first, min(last + 1, len(row))):
            if row[left] not in TOP_LEFT:
                continue
            right = next(
                (c for c in range(left + 1, min(last + 1, len(row))) if row[c] in TOP_RIGHT), None
            )
            if right is None:
                continue
            bottom = top + 1
            while _at(rows, bottom, left) == "│" and _at(rows, bottom, right) == "│":
                bottom += 1
            if _at(rows, bottom, left) in BOTTOM_LEFT and _at(rows, bottom, right) in BOTTOM_RIGHT:
                boxes.append(Box(top, left, bottom, right))
    return boxes


def label_lines(trace: PassTrace, index: int) -> set[str]:
    """Every whole label line a box may show at step ``index``, in every view, at
    every level of detail."""
    lines: set[str] = set()
    for view in available_views(trace, index):
        drawing = draw_step(trace, index, view)
        pictures = [drawing]
        for detail in Detail:
            base = ("whole", trace[index].which) if view is View.WHOLE else (view.value, 0)
            pictures.append(Transforms.for_trace(trace, detail).picture(drawing, base).graph)
        for picture in pictures:
            for node in picture.nodes.values():
                own = [line.strip() for line in node.label.splitlines() if line.strip()]
                lines.update(own)
                if own:
                    lines.add(short_op_name(own[0]))
    return lines


def compact_labels(rows: list[str]) -> list[str]:
    """The labels of the boxes zoomed out to one line (``[matmul]``) on the canvas."""
    first, last = canvas_span(rows)
    # Below the header and the view bar ("Input [main] unchanged"), above the footer.
    return [match.group(1) for row in rows[2:-1] for match in COMPACT_BOX.finditer(row[first : last + 1])]


def shown_detail(rows: list[str]) -> Detail:
    found = next((match for match in map(DETAIL.search, rows) if match), None)
    assert found is not None, "the header names the level of detail:\n" + "\n".join(rows)
    return Detail(found.group(1))


def wait_for_graph(terminal: Terminal) -> list[str]:
    """The screen once the header names a step and the canvas shows a node box, the
    same in two captures in a row (not caught halfway through a redraw)."""
    deadline = time.monotonic() + DEADLINE_S
    rows: list[str] = []
    drawn: list[str] | None = None
    while time.monotonic() < deadline:
        rows = terminal.capture()
        if terminal.dead():
            pytest.fail("the viewer exited:\n" + "\n".join(rows))
        if rows == drawn:
            return rows
        drawn = None
        if any(HEADER.search(row) for row in rows) and separator_columns(rows):
            first, last = canvas_span(rows)
            if any(char in TOP_LEFT for row in rows for char in row[first : last + 1]) or compact_labels(rows):
                drawn = rows
        time.sleep(POLL_S)
    pytest.fail(f"no graph drawn in {DEADLINE_S:.0f} s:\n" + "\n".join(rows))


def box_lines(rows: list[str], box: Box) -> list[str]:
    return [rows[row][box.left + 1 : box.right].strip() for row in range(box.top + 1, box.bottom)]


def is_minimap(lines: list[str]) -> bool:
    """The minimap is a framed picture in braille dots, not a node."""
    return all(BRAILLE.fullmatch(line) for line in lines)


def unreadable_labels(rows: list[str], boxes: list[Box], whole: set[str]) -> list[str]:
    """Label lines inside ``boxes`` that are neither a whole label line nor end with "…"."""
    bad = []
    for box in boxes:
        lines = box_lines(rows, box)
        if is_minimap(lines):
            continue
        bad.extend(
            line for line in lines if line and line not in whole and not line.endswith(ELLIPSIS)
        )
    return bad


TOAST_S = 5.0  # a notification (the level of detail chosen) covers the canvas's corner this long


def run_viewer(size: tuple[int, int], command: list[str], settle: float = 0.0) -> list[str]:
    """The screen of ``command`` in a ``size`` terminal once it shows a graph
    (and, with ``settle``, that many seconds later, once notifications are gone)."""
    terminal = Terminal(*size, command)
    try:
        rows = wait_for_graph(terminal)
        if settle:
            time.sleep(settle)
            rows = wait_for_graph(terminal)
        return rows
    finally:
        terminal.close()


def node_boxes(rows: list[str]) -> list[Box]:
    first, last = canvas_span(rows)
    return [box for box in whole_boxes(rows, first, last) if not is_minimap(box_lines(rows, box))]


def shown_step(rows: list[str]) -> int:
    return int(next(match for match in map(HEADER.search, rows) if match).group(1))


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 50)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_bundled_example_in_tmux(mlp_trace: PassTrace, size: tuple[int, int]) -> None:
    width, height = size
    rows = run_viewer(size, [str(GRADVIEW), "view", EXAMPLE], settle=TOAST_S)
    screen = "\n".join(rows)
    assert len(rows) == height and max(len(row) for row in rows) <= width, screen
    first, last = canvas_span(rows)
    if width >= 120:
        assert last - first + 1 >= width // 2, (first, last, screen)
    boxes = node_boxes(rows)
    compact = compact_labels(rows)
    index = shown_step(rows)
    whole = label_lines(mlp_trace, index)
    shown = [line for box in boxes for line in box_lines(rows, box)] + compact
    assert any(line in whole for line in shown), "boxes show the graph's labels:\n" + screen
    assert unreadable_labels(rows, boxes, whole) == [], screen
    assert [label for label in compact if label not in whole and not label.endswith(ELLIPSIS)] == [], screen
    # The first view shows the whole graph: a box on screen for every node of the picture.
    detail = shown_detail(rows)
    picture = Transforms.for_trace(mlp_trace, detail).picture(
        draw_step(mlp_trace, index, View.WHOLE), ("whole", mlp_trace[index].which)
    )
    assert len(boxes) + len(compact) == len(picture.graph.nodes), (detail, screen)


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 50)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_resnet18_opens_on_its_top_level_modules_in_tmux(size: tuple[int, int]) -> None:
    pytest.importorskip("torch")
    width, height = size
    rows = run_viewer(size, [str(GRADVIEW), "view", RESNET], settle=TOAST_S)
    screen = "\n".join(rows)
    assert len(rows) == height and max(len(row) for row in rows) <= width, screen
    shown = {label.rstrip(ELLIPSIS).strip() for label in compact_labels(rows)}
    shown |= {line for box in node_boxes(rows) for line in box_lines(rows, box)}
    named = [name for name in RESNET_TOP_LEVEL if name in shown]
    # 80x24 leaves 20 rows for the canvas: the chain of twelve boxes shows from the
    # image down as far as it goes (the rest a scroll away); larger terminals show all.
    assert len(named) >= (9 if height < 40 else len(RESNET_TOP_LEVEL)), screen
    assert not any(label.startswith("aten::") for label in shown), "modules, not IR nodes:\n" + screen
    if width >= 120:
        assert shown_detail(rows) is Detail.MODEL, screen


# The same viewer with the canvas's label fitting replaced by a silent cut.
SILENT_CUT = (
    "import sys, gradview.viewer.canvas as canvas; "
    "drawer = sys.modules[canvas.box_row_text.__module__]; "  # wherever the boxes' text is made
    "drawer.abbreviate = lambda text, width: text[: max(0, width - 4)]; "
    "from gradview.cli.main import main; sys.argv[0] = 'gradview'; sys.exit(main())"
)


def test_a_label_cut_silently_is_caught(mlp_trace: PassTrace) -> None:
    rows = run_viewer((120, 40), [sys.executable, "-c", SILENT_CUT, "view", EXAMPLE])
    whole = label_lines(mlp_trace, shown_step(rows))
    cut = [label for label in compact_labels(rows) if label not in whole and not label.endswith(ELLIPSIS)]
    assert unreadable_labels(rows, node_boxes(rows), whole) or cut, "\n".join(rows)
