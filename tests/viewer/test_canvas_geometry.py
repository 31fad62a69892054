"""Painting a row of edges with arrays gives the cells the segment-by-segment rule gives.

``CanvasGeometry.dots_in_row`` places a row's segments with NumPy
(``viewer/edge_raster.py``; a row of a 5,000-op picture is crossed by
thousands). The reference here is the rule written plainly, one segment and
one cell at a time, walking every segment of the geometry (not the tile
index) in the order the edges were added: the later segment names the value
of a shared cell."""

from __future__ import annotations

import math
import random

import pytest

from gradview.viewer import edge_raster as er
from gradview.viewer.canvas_geometry import CanvasGeometry
from gradview.viewer.layout import Layout, NodeBox

Cells = dict[int, tuple[int, int, int]]


def _put(cells: Cells, col: int, bits: int, value_id: int, direction: int) -> None:
    old_bits, _, directions = cells.get(col, (0, value_id, 0))
    cells[col] = (old_bits | bits, value_id, directions | direction)


def _steep_cell(cells: Cells, ax: float, ay: float, bx: float, by: float, low: int, columns: tuple[int, int], value: int) -> None:
    """One cell: where the segment is at the row's middle (or its end in the row)."""
    y = min(max(low + 2, min(ay, by)), max(ay, by))
    x = ax + (bx - ax) * (y - ay) / (by - ay)
    col = int(x) // 2
    if x >= 0 and columns[0] <= col < columns[1]:
        _put(cells, col, er.COLUMN_BITS[int(x) % 2], value, er.VERTICAL)


def _flat_cells(cells: Cells, ax: float, ay: float, bx: float, by: float, row: int, columns: tuple[int, int], value: int) -> None:
    """A cell per column in the row the line is in at the column's middle;
    a corner on the left cell of two neighbouring columns in different rows."""
    x0, x1 = min(ax, bx), max(ax, bx)
    start, end = int(x0) // 2, int(x1) // 2
    first, last = max(columns[0], start), min(columns[1] - 1, end)
    if by != ay:
        xs = (ax + (bx - ax) * ((row - 1) * 4 - ay) / (by - ay), ax + (bx - ax) * ((row + 2) * 4 - ay) / (by - ay))
        first, last = max(first, int(min(xs)) // 2 - 1), min(last, int(max(xs)) // 2 + 1)

    def row_of(col: int) -> tuple[int, float]:
        x = min(max(col * 2 + 1.0, x0), x1)
        y = ay + (by - ay) * (x - ax) / (bx - ax)
        return (int(y) // 4 if y >= 0 else -1), y

    previous = row_of(first - 1)[0] if first > start else None
    for col in range(max(0, first), last + 1):
        here, y = row_of(col)
        if here == row:
            _put(cells, col, er.ROW_BITS[int(y) % 4], value, er.HORIZONTAL)
        if previous is not None and previous != here and col - 1 >= columns[0]:
            if previous == row:
                _put(cells, col - 1, er.CORNER_BITS, value, er.DOWN_LEFT if here > row else er.UP_LEFT)
            elif here == row:
                _put(cells, col - 1, er.CORNER_BITS, value, er.UP_RIGHT if previous < row else er.DOWN_RIGHT)
        previous = here


def _slanted_dots(
    cells: Cells, ax: float, ay: float, bx: float, by: float, low: int, columns: tuple[int, int], value: int, direction: int,
) -> None:
    """One sample per dot along the longer axis, in the row's four dot rows."""
    high = low + 3
    steps = max(1, math.ceil(max(abs(bx - ax), abs(by - ay))))
    t0, t1 = (low - ay) / (by - ay), (high + 1 - ay) / (by - ay)
    for i in range(max(0, math.floor(min(t0, t1) * steps) - 1), min(steps, math.ceil(max(t0, t1) * steps) + 1) + 1):
        y = int(ay + (by - ay) * i / steps)
        if y < low or y > high:
            continue
        x = int(ax + (bx - ax) * i / steps)
        if x >= 0 and columns[0] <= x // 2 < columns[1]:
            _put(cells, x // 2, er.DOT_BITS[x % 2][y % 4], value, direction)


def _reference_row(geometry: CanvasGeometry, row: int, shown: set | None, columns: tuple[int, int]) -> Cells:
    table = geometry.raster
    assert table is not None
    cells: Cells = {}
    low, high = row * 4, row * 4 + 3
    for index in range(table.size):
        ax, ay, bx, by = table.points[index].tolist()
        edge_key = table.edge_keys[int(table.edge_of[index])]
        direction = int(table.direction[index])
        if min(ay, by) > high + 1 or max(ay, by) < low:
            continue
        if shown is not None and edge_key not in shown:
            continue
        if direction == er.VERTICAL:
            _steep_cell(cells, ax, ay, bx, by, low, columns, edge_key[2])
        elif direction == er.HORIZONTAL:
            _flat_cells(cells, ax, ay, bx, by, row, columns, edge_key[2])
        else:
            _slanted_dots(cells, ax, ay, bx, by, low, columns, edge_key[2], direction)
    return cells


def _random_layout(seed: int, nodes: int = 60, edges: int = 240) -> Layout:
    rng = random.Random(seed)
    boxes = {i: NodeBox(rng.uniform(20, 1400), rng.uniform(20, 2400), 60, 36) for i in range(nodes)}
    # Many edges into one node (a return node's fan-in), drawn side by side, and
    # random ones with bends: steep, flat and slanted segments, crossings, shared cells.
    sink = 0
    edge_points: dict[tuple[int, int, int], list[tuple[float, float]]] = {}
    for value in range(edges):
        source = rng.randrange(1, nodes)
        target = sink if value % 3 == 0 else rng.randrange(nodes)
        start, end = boxes[source], boxes[target]
        points = [(start.x, start.y + 18)]
        for _ in range(rng.randrange(0, 4)):
            points.append((rng.uniform(0, 1500), rng.uniform(0, 2500)))
        if value % 3 == 0:  # a long vertical run beside the others, then into the sink
            column = end.x + rng.uniform(-30, 30)
            points += [(column, start.y + 40), (column, end.y - 30)]
        points.append((end.x, end.y - 18))
        edge_points[(source, target, 1000 + value)] = points
    return Layout(boxes=boxes, edges=edge_points, width=1500, height=2500)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("zoom", [1.0, 0.5, 0.25])
def test_rows_match_the_segment_by_segment_rule(seed: int, zoom: float) -> None:
    layout = _random_layout(seed)
    geometry = CanvasGeometry.build(layout, zoom)
    assert geometry.raster is not None and geometry.raster.size > 0
    rng = random.Random(seed)
    keys = list(layout.edges)
    # All edges; a step's subset; a second subset (a new step: answers not reused).
    for shown in (None, set(rng.sample(keys, len(keys) // 2)), set(rng.sample(keys, len(keys) // 3))):
        # The whole width, windows of a camera (one starting left of the drawing),
        # and random ones: a window's tiles must hold every segment painting in it.
        windows = [(0, geometry.columns), (geometry.columns // 3, geometry.columns // 3 + 80), (-13, 60)]
        windows += [(start, start + rng.randrange(8, 200)) for start in rng.sample(range(-20, geometry.columns), 4)]
        for window in windows:
            for row in range(0, geometry.rows, 3):
                assert geometry.dots_in_row(row, shown, window) == _reference_row(geometry, row, shown, window), (
                    row, window,
                )


def test_a_step_that_hides_every_edge_paints_none() -> None:
    geometry = CanvasGeometry.build(_random_layout(7), 1.0)
    assert all(not geometry.dots_in_row(row, set()) for row in range(geometry.rows))
    assert any(geometry.dots_in_row(row) for row in range(geometry.rows))
