"""Edge segments as arrays, painted a terminal row at a time.

A row of a big picture is crossed by thousands of segments: the edges into a
graph's return node run side by side down the whole drawing, and a step
repaints every visible row. One Python call per segment per row cost most of
a second per step at 5,000 ops; here a row's segments are placed with a few
array operations over all of them, and which edges a step shows is looked
up once per edge and step, not once per row.

Segments live in *dot space*: a terminal cell is 2 braille dots wide and 4
high. Each segment has a direction class (see :func:`direction_of`) that
decides how it is drawn:

* a **steep** segment crosses a row in exactly one cell, the one it is in at
  the row's middle (or where it ends inside the row): a line drifting across
  a column boundary stays one cell wide, and rows differ by at most a column;
* a **flat** segment takes one cell per column it spans, in the row it is in
  at the column's middle; where two neighbouring columns are in different
  rows (the line steps a row up or down) the left one of the pair gets a
  corner in both rows, so the two runs join (``──╮`` above ``╰──``);
* a **slanted** segment is sampled once per dot along its longer axis
  (consecutive samples are neighbouring dots, so the line has no gaps).

Where segments share a cell, their dots and directions merge and the later
segment (in the order the edges were added) names the value the cell is
coloured by.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Set

import numpy as np

from .layout import EdgeKey
from .ui_priority import step_aside

__all__ = [
    "EdgeRaster",
    "Segment",
    "direction_of",
    "VERTICAL",
    "HORIZONTAL",
    "FALLING",
    "RISING",
    "UP_RIGHT",
    "DOWN_RIGHT",
    "UP_LEFT",
    "DOWN_LEFT",
    "DOT_BITS",
    "COLUMN_BITS",
    "ROW_BITS",
    "CORNER_BITS",
]

# Which way a segment runs, in dot space (dots are about square).
VERTICAL, HORIZONTAL, FALLING, RISING = 1, 2, 4, 8
# Where a flat line steps to the next row: the corner that joins the two runs.
UP_RIGHT, DOWN_RIGHT, UP_LEFT, DOWN_LEFT = 16, 32, 64, 128

# Braille dot bits by (column in cell, row in cell).
DOT_BITS = ((0x01, 0x02, 0x04, 0x40), (0x08, 0x10, 0x20, 0x80))
COLUMN_BITS = (0x47, 0xB8)  # all four dots of the left and the right dot column
ROW_BITS = (0x09, 0x12, 0x24, 0xC0)  # both dots of each dot row
CORNER_BITS = 0x47 | 0x12  # a corner where lines meet (drawn as dots): left column and a middle row

Segment = tuple[float, float, float, float, EdgeKey, int]  # ax, ay, bx, by (dots), edge, direction

Cells = dict[int, tuple[int, int, int]]  # column -> (braille bits, value id, directions)


def direction_of(dx: float, dy: float) -> int:
    """The class of a segment: within about 22 degrees of an axis it is that
    axis's line. A slant is drawn diagonally only where it is steep enough
    to cross a row in about one cell (a cell is 2 dots wide, 4 high); a
    shallower one would read as hatching (``╲╲╲╲``), so it is drawn as a
    flat line that steps down a row with corners (``──╮`` / ``╰──``)."""
    if abs(dx) * 2.5 <= abs(dy):
        return VERTICAL
    if abs(dy) < 1.5 * abs(dx):
        return HORIZONTAL
    return FALLING if (dx > 0) == (dy > 0) else RISING


class EdgeRaster:
    """A geometry's edge segments, indexed by tiles of rows and columns."""

    def __init__(self, segments: list[Segment], tile_rows: int, tile_columns: int) -> None:
        """``segments`` in dot space; tiles of ``tile_rows`` x ``tile_columns`` dots.

        Built on the layout pool's threads: between its stages (each tens of
        milliseconds at 5,000 ops) a step key on the UI thread goes first."""
        self.size = len(segments)
        self.points = np.array([s[:4] for s in segments], dtype=np.float64).reshape(-1, 4)
        step_aside()
        self.direction = np.array([s[5] for s in segments], dtype=np.int64)
        self.value_id = np.array([s[4][2] for s in segments], dtype=np.int64)
        step_aside()
        edge_numbers: dict[EdgeKey, int] = {}
        self.edge_of = np.array([edge_numbers.setdefault(s[4], len(edge_numbers)) for s in segments], dtype=np.int64)
        self.edge_keys = list(edge_numbers)
        step_aside()
        self._low = np.minimum(self.points[:, 1], self.points[:, 3])  # each segment's dot rows
        self._high = np.maximum(self.points[:, 1], self.points[:, 3])
        self._tile_keys, self._tile_starts, self._tile_members = _tile_index(self.points, tile_rows, tile_columns)
        self._candidates: tuple[tuple[int, int, int], np.ndarray] | None = None  # rows of one tile share them
        self._shown: tuple[set[EdgeKey], np.ndarray] | None = None  # the last step's set and its answers

    def row_cells(
        self, row: int, shown: Set[EdgeKey] | None, columns: tuple[int, int], bucket: int, tile_columns: tuple[int, int]
    ) -> Cells:
        """The cells the ``shown`` edges (all: None) cross in ``row`` within
        ``columns`` (start, end); the segments to look at are those indexed
        under ``bucket`` (the row's band of tiles) and the tile columns
        ``tile_columns`` (first, last, both included)."""
        candidates = self._candidates_in(bucket, tile_columns)
        low = row * 4
        if len(candidates):
            candidates = candidates[(self._low[candidates] <= low + 4) & (self._high[candidates] >= low)]
        if shown is not None and len(candidates):
            candidates = candidates[self._shown_mask(shown, candidates)]
        if not len(candidates):
            return {}
        direction = self.direction[candidates]
        parts = [
            self._steep(candidates[direction == VERTICAL], low, columns),
            self._flat(candidates[direction == HORIZONTAL], row, columns),
            self._slanted(candidates[direction > HORIZONTAL].tolist(), low, columns),
        ]
        return _merge([part for part in parts if len(part[0])], self.value_id)

    # -- which segments -----------------------------------------------------------------------------
    def _candidates_in(self, bucket: int, tile_columns: tuple[int, int]) -> np.ndarray:
        """Indices of the segments in the tiles, in order (no repeats)."""
        key = (bucket, *tile_columns)
        if self._candidates is not None and self._candidates[0] == key:
            return self._candidates[1]
        first, last = _TILE_KEY_SPAN * bucket + tile_columns[0], _TILE_KEY_SPAN * bucket + tile_columns[1]
        low = int(np.searchsorted(self._tile_keys, first, side="left"))
        high = int(np.searchsorted(self._tile_keys, last, side="right"))
        if low >= high:
            found = np.empty(0, dtype=np.int64)
        else:
            members = self._tile_members[self._tile_starts[low] : self._tile_starts[high]]
            if high - low == 1:
                found = members.astype(np.int64)
            else:  # a long segment is indexed in every tile it passes through
                seen = np.zeros(self.size, dtype=bool)
                seen[members] = True
                found = np.flatnonzero(seen)
        self._candidates = (key, found)
        return found

    def _shown_mask(self, shown: Set[EdgeKey], indices: np.ndarray) -> np.ndarray:
        """Which of the segments ``indices`` belong to an edge in ``shown``.

        Answers are kept per edge for the set last asked about (the canvas
        makes a new set for each step, so identity tells a step apart)."""
        cached = self._shown
        if cached is None or cached[0] is not shown:
            cached = self._shown = (shown, np.full(len(self.edge_keys), -1, dtype=np.int8))
        answers = cached[1]
        edges = self.edge_of[indices]
        unknown = edges[answers[edges] < 0]
        if len(unknown):
            keys = self.edge_keys
            for edge in np.unique(unknown).tolist():
                answers[edge] = keys[edge] in shown
        return answers[edges] == 1

    # -- the cells of each class; each part is (columns, bits, directions, segment) ------------------------
    def _steep(self, indices: np.ndarray, low: int, columns: tuple[int, int]) -> _Part:
        if not len(indices):
            return _EMPTY
        ax, ay, bx, by = (self.points[indices, k] for k in range(4))
        y = np.minimum(np.maximum(low + 2.0, np.minimum(ay, by)), np.maximum(ay, by))
        x = ax + (bx - ax) * (y - ay) / (by - ay)
        dot = np.floor(x).astype(np.int64)
        col = dot // 2
        inside = (x >= 0) & (col >= columns[0]) & (col < columns[1])
        bits = np.where(dot % 2 == 0, COLUMN_BITS[0], COLUMN_BITS[1])
        return col[inside], bits[inside], np.full(int(inside.sum()), VERTICAL), indices[inside]

    def _flat(self, indices: np.ndarray, row: int, columns: tuple[int, int]) -> _Part:
        if not len(indices):
            return _EMPTY
        ax, ay, bx, by = (self.points[indices, k] for k in range(4))
        x0, x1 = np.minimum(ax, bx), np.maximum(ax, bx)
        start, end = np.trunc(x0).astype(np.int64) // 2, np.trunc(x1).astype(np.int64) // 2
        first, last = np.maximum(columns[0], start), np.minimum(columns[1] - 1, end)
        sloped = by != ay  # only the columns where the line is within a row of this one
        with np.errstate(divide="ignore", invalid="ignore"):
            near_a = ax + (bx - ax) * ((row - 1) * 4 - ay) / (by - ay)
            near_b = ax + (bx - ax) * ((row + 2) * 4 - ay) / (by - ay)
            near_first = np.trunc(np.minimum(near_a, near_b)).astype(np.int64) // 2 - 1
            near_last = np.trunc(np.maximum(near_a, near_b)).astype(np.int64) // 2 + 1
        first = np.where(sloped, np.maximum(first, near_first), first)
        last = np.where(sloped, np.minimum(last, near_last), last)
        begin = np.maximum(0, first)
        counts = np.maximum(0, last - begin + 1)
        # One entry per (segment, column), and each segment's column before its first.
        owner = np.repeat(np.arange(len(indices)), counts)
        if not len(owner):
            return _EMPTY
        offsets = _offsets(counts)
        col = begin[owner] + offsets
        here, y = _row_of(col, owner, x0, x1, ax, ay, bx, by)
        # The row of the column before: the previous entry of the same segment, or
        # (for a segment's first column) its column before ``first`` when the segment starts earlier.
        opening = offsets == 0
        previous = np.empty_like(here)
        previous[1:] = here[:-1]
        before, _ = _row_of(first[owner] - 1, owner, x0, x1, ax, ay, bx, by)
        previous[opening] = before[opening]
        has_previous = ~opening | (first[owner] > start[owner])
        runs = here == row
        steps = has_previous & (previous != here) & (col - 1 >= columns[0])
        ends = steps & (previous == row)  # the run of this row ends: down or up to the next
        starts = steps & ~ends & runs  # the run of this row starts: from the row above or below
        corner = np.where(ends, np.where(here > row, DOWN_LEFT, UP_LEFT), np.where(previous < row, UP_RIGHT, DOWN_RIGHT))
        corners = ends | starts
        row_bits = np.array(ROW_BITS)[np.floor(y[runs]).astype(np.int64) % 4]
        segment = indices[owner]
        return (
            np.concatenate([col[runs], col[corners] - 1]),
            np.concatenate([row_bits, np.full(int(corners.sum()), CORNER_BITS)]),
            np.concatenate([np.full(int(runs.sum()), HORIZONTAL), corner[corners]]),
            np.concatenate([segment[runs], segment[corners]]),
        )

    def _slanted(self, indices: list[int], low: int, columns: tuple[int, int]) -> _Part:
        """Few per row (layouts route with steep and flat stretches): one at a time."""
        cols: list[int] = []
        bits: list[int] = []
        owners: list[int] = []
        high = low + 3
        for index in indices:
            ax, ay, bx, by = self.points[index].tolist()
            count = max(1, math.ceil(max(abs(bx - ax), abs(by - ay))))
            t0 = (low - ay) / (by - ay)
            t1 = (high + 1 - ay) / (by - ay)
            for i in range(max(0, math.floor(min(t0, t1) * count) - 1), min(count, math.ceil(max(t0, t1) * count) + 1) + 1):
                y = int(ay + (by - ay) * i / count)
                if y < low or y > high:
                    continue
                x = int(ax + (bx - ax) * i / count)
                if x >= 0 and columns[0] <= x // 2 < columns[1]:
                    cols.append(x // 2)
                    bits.append(DOT_BITS[x % 2][y % 4])
                    owners.append(index)
        owner_array = np.array(owners, dtype=np.int64)
        return np.array(cols, dtype=np.int64), np.array(bits, dtype=np.int64), self.direction[owner_array], owner_array


_TILE_KEY_SPAN = 1 << 32  # a tile's key: its band of rows times this, plus its column


def _tile_index(points: np.ndarray, tile_rows: int, tile_columns: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which segments each tile holds: the sorted keys of the tiles in use,
    where each one's members start in the third array (one more start at the
    end), and the members, in segment order within a tile.

    A segment is indexed under every tile whose rows it may paint (a row's
    painting takes segments starting a dot row below it) and whose columns
    hold its cells in those rows, a corner one column beside them. Per band of
    tile rows only the columns the segment crosses within that band: a
    bounding box of tiles would be quadratic for long diagonal edges, and
    sampling the segment would miss tiles it clips at a corner. All segments
    at once, in array operations (a joint view at 5,000 ops has 227,000
    segments in 13 million tile entries: 48 s one segment at a time)."""
    empty = np.empty(0, dtype=np.int64)
    if not len(points):
        return empty, np.zeros(1, dtype=np.int64), empty.astype(np.int32)
    ax, ay, bx, by = points[:, 0], points[:, 1], points[:, 2], points[:, 3]
    y_low, y_high = np.minimum(ay, by), np.maximum(ay, by)
    band_first = (np.maximum(0.0, y_low - 4) // tile_rows).astype(np.int64)
    band_count = (np.maximum(0.0, y_high) // tile_rows).astype(np.int64) - band_first + 1
    segment = np.repeat(np.arange(len(points), dtype=np.int64), band_count)
    band = band_first[segment] + _offsets(band_count)
    # The segment's x range within each band (all of it where it is in one band or level).
    whole = (band_count[segment] == 1) | (ay[segment] == by[segment])
    a_x, a_y, dx, dy = ax[segment], ay[segment], (bx - ax)[segment], (by - ay)[segment]
    with np.errstate(divide="ignore", invalid="ignore"):
        t_top = (band * tile_rows - 4 - a_y) / dy
        t_bottom = ((band + 1) * tile_rows + 4 - a_y) / dy
    t0 = np.maximum(0.0, np.minimum(t_top, t_bottom))
    t1 = np.minimum(1.0, np.maximum(t_top, t_bottom))
    step_aside()
    x_a, x_b = a_x + dx * t0, a_x + dx * t1
    x0 = np.where(whole, np.minimum(ax, bx)[segment], np.minimum(x_a, x_b))
    x1 = np.where(whole, np.maximum(ax, bx)[segment], np.maximum(x_a, x_b))
    column_first = (np.maximum(0.0, x0 - 2) // tile_columns).astype(np.int64)
    column_count = (np.maximum(0.0, x1 + 2) // tile_columns).astype(np.int64) - column_first + 1
    del a_x, a_y, dx, dy, t_top, t_bottom, t0, t1, x_a, x_b, x0, x1, whole
    step_aside()
    keys = np.repeat(band * _TILE_KEY_SPAN + column_first, column_count) + _offsets(column_count)
    members = np.repeat(segment, column_count).astype(np.int32)
    step_aside()
    order = np.argsort(keys, kind="stable")  # stable: segment order within a tile
    keys, members = keys[order], members[order]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    return keys[starts], np.r_[starts, len(keys)], members


def _offsets(counts: np.ndarray) -> np.ndarray:
    """0, 1, …, count - 1 for each of ``counts``, one after the other."""
    total = int(counts.sum())
    return np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)


_Part = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
_EMPTY: _Part = tuple(np.empty(0, dtype=np.int64) for _ in range(4))  # type: ignore[assignment]


def _row_of(
    col: np.ndarray, owner: np.ndarray, x0: np.ndarray, x1: np.ndarray,
    ax: np.ndarray, ay: np.ndarray, bx: np.ndarray, by: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The row a flat segment is in at the middle of a column (-1 above the
    drawing), and its dot row there."""
    x = np.minimum(np.maximum(col * 2 + 1.0, x0[owner]), x1[owner])
    a_x, a_y = ax[owner], ay[owner]
    y = a_y + (by[owner] - a_y) * (x - a_x) / (bx[owner] - a_x)
    return np.where(y >= 0, np.floor(y).astype(np.int64) // 4, -1), y


def _merge(parts: Iterable[_Part], value_id: np.ndarray) -> Cells:
    """One cell per column: dots and directions merged, the value of the latest segment."""
    parts = list(parts)
    if not parts:
        return {}
    col, bits, directions, segment = (np.concatenate(column) for column in zip(*parts, strict=True))
    order = np.lexsort((segment, col))
    col, bits, directions, segment = col[order], bits[order], directions[order], segment[order]
    starts = np.flatnonzero(np.r_[True, col[1:] != col[:-1]])
    last = np.r_[starts[1:], len(col)] - 1
    return {
        c: (b, v, d)
        for c, b, v, d in zip(
            col[starts].tolist(),
            np.bitwise_or.reduceat(bits, starts).tolist(),
            value_id[segment[last]].tolist(),
            np.bitwise_or.reduceat(directions, starts).tolist(),
            strict=True,
        )
    }
