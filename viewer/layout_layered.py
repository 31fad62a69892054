"""A layered layout in pure Python: the fallback when ``dot`` is missing or the graph is huge.

The classic Sugiyama steps, each linear or n log n:

1. Orient the edges along a depth-first order, so a cycle (there should be
   none) cannot stall the layering.
2. Longest-path layers: a node sits one layer below its lowest input; then
   a node with more uses than inputs (not counting graph inputs and
   constants), and every node with no inputs, moves down to just above its
   first use, so it does not hang near the top with long edges.
3. An edge spanning several layers gets a chain of virtual nodes, one per
   layer it crosses, so it runs through the gaps between boxes. Their number
   is capped at a few per real node (the longest edges then run straight).
4. Ordering: a few sweeps down and up sort each layer by the mean position
   of each node's neighbours in the layer before (barycentres), keeping the
   members of a cluster side by side.
5. x: each node is pulled to the mean x of its neighbours, subject to
   keeping its order and the gaps in its layer: an isotonic regression
   (pool adjacent violators), linear per layer.

It looks plainer than ``dot`` but places 10,000 nodes in about a second.
"""

from __future__ import annotations

from .layout import ROW_HEIGHT, EdgeKey, Layout, NodeBox
from .model import DrawGraph

__all__ = ["layered_layout", "NODE_GAP", "LAYER_GAP"]

NODE_GAP = 18.0  # between boxes in a layer: three columns
VIRTUAL_GAP = 6.0  # beside an edge's virtual node
LAYER_GAP = 36.0  # between layers: three rows for the edges
CLUSTER_PAD = 8.0  # between a cluster's frame and what it holds
TITLE_ROOM = ROW_HEIGHT + 4.0  # a cluster's title above its contents
MARGIN = 12.0
SWEEPS = 4
VIRTUAL_PER_NODE = 4  # cap on virtual nodes per real node
# Above this many nodes the sweeps are pure-Python time the user waits for
# (a 55,000-node union took 20 s to 50 s): one sweep and one virtual node per
# real node keep it to a few seconds; such a picture is read through focus and
# collapse views anyway.
LARGE_GRAPH = 8000
LARGE_SWEEPS = 1
LARGE_VIRTUAL_PER_NODE = 1

Sizes = dict[int, tuple[float, float]]


def layered_layout(union: DrawGraph, sizes: Sizes) -> Layout:
    """Lay out ``union`` (already merged: unique edges, no self-loops) in layers, top to bottom."""
    ids = list(union.nodes)
    if not ids:
        return Layout(width=2 * MARGIN, height=2 * MARGIN, engine="layered")
    index = {node_id: i for i, node_id in enumerate(ids)}
    n = len(ids)
    pairs = {(index[e.source], index[e.target]) for e in union.edges}
    forward = _orient(n, pairs)
    layer = _layers(n, forward)
    large = n > LARGE_GRAPH
    grid = _Grid(n, layer, [sizes[i][0] for i in ids], [sizes[i][1] for i in ids])
    grid.sweeps = LARGE_SWEEPS if large else SWEEPS
    grid.virtual_per_node = LARGE_VIRTUAL_PER_NODE if large else VIRTUAL_PER_NODE
    grid.paths = _cluster_paths(union, ids)
    routes = grid.add_virtual_nodes(sorted(forward, key=lambda p: (layer[p[1]] - layer[p[0]], p)))
    grid.order()
    grid.place_x()
    grid.place_y()
    return grid.layout(union, ids, index, forward, routes)


def _orient(n: int, pairs: set[tuple[int, int]]) -> set[tuple[int, int]]:
    """The edges turned to follow a depth-first topological order (back edges reversed)."""
    succ: list[list[int]] = [[] for _ in range(n)]
    for u, v in pairs:  # a set of int pairs iterates in the same order every run
        succ[u].append(v)
    state = [0] * n
    finished: list[int] = []
    for root in range(n):
        if state[root]:
            continue
        state[root] = 1
        stack = [(root, iter(succ[root]))]
        while stack:
            node, rest = stack[-1]
            for nxt in rest:
                if not state[nxt]:
                    state[nxt] = 1
                    stack.append((nxt, iter(succ[nxt])))
                    break
            else:
                stack.pop()
                finished.append(node)
    rank = [0] * n
    for position, node in enumerate(reversed(finished)):
        rank[node] = position
    return {(u, v) if rank[u] < rank[v] else (v, u) for u, v in pairs}


def _layers(n: int, forward: set[tuple[int, int]]) -> list[int]:
    """Longest-path layers; sources then move down to just above their first use."""
    preds: list[list[int]] = [[] for _ in range(n)]
    succs: list[list[int]] = [[] for _ in range(n)]
    indegree = [0] * n
    for u, v in forward:
        preds[v].append(u)
        succs[u].append(v)
        indegree[v] += 1
    order = [v for v in range(n) if indegree[v] == 0]
    for node in order:  # Kahn's algorithm: the list grows while it is walked
        for nxt in succs[node]:
            indegree[nxt] -= 1
            if indegree[nxt] == 0:
                order.append(nxt)
    layer = [0] * n
    for node in order:
        if preds[node]:
            layer[node] = max(layer[p] for p in preds[node]) + 1
    # A node with more uses than inputs moves down to just above its first
    # use: that shortens more edges than it lengthens. In a backward graph
    # thousands of gradient terms read only inputs; longest-path layers put
    # them all in the second layer (3,100 boxes side by side at 5,000 ops,
    # with edges running down the whole picture to their uses).
    for node in reversed(order):
        if succs[node] and len(succs[node]) > sum(1 for p in preds[node] if preds[p]):
            layer[node] = min(layer[s] for s in succs[node]) - 1
    for node in order:
        if not preds[node] and succs[node]:
            layer[node] = min(layer[s] for s in succs[node]) - 1
    _place_pieces(layer, preds, succs)
    low = min(layer)
    return [value - low for value in layer]


def _place_pieces(layer: list[int], preds: list[list[int]], succs: list[list[int]]) -> None:
    """Move each piece not connected to the largest one just below the node
    before it in program order (the union's node order): a block of
    constants, such as an ``If`` branch returning ``AutogradZero``, sits by
    its ``If`` instead of at the top. At 5,000 ops the backward graph has
    3,100 of them, which put 3,100 boxes in one layer."""
    n = len(layer)
    piece = [-1] * n
    members: list[list[int]] = []
    for start in range(n):
        if piece[start] >= 0:
            continue
        number = len(members)
        piece[start] = number
        stack, found = [start], [start]
        while stack:
            node = stack.pop()
            for other in (*preds[node], *succs[node]):
                if piece[other] < 0:
                    piece[other] = number
                    stack.append(other)
                    found.append(other)
        members.append(found)
    if len(members) < 2:
        return
    largest = max(range(len(members)), key=lambda number: len(members[number]))
    placed = [False] * len(members)
    placed[largest] = True
    above: int | None = None  # the layer of the latest placed node in program order
    for node in range(n):
        number = piece[node]
        if not placed[number]:
            placed[number] = True
            found = members[number]
            shift = (above + 1 if above is not None else 0) - min(layer[other] for other in found)
            for other in found:
                layer[other] += shift
        above = layer[node]


def _cluster_paths(union: DrawGraph, ids: list[int]) -> list[tuple[int, ...]]:
    """For each node, the indices of the clusters around it, outermost first."""
    keys = {key: i for i, key in enumerate(union.clusters)}
    chains: dict[str | None, tuple[int, ...]] = {None: ()}

    def chain(key: str | None) -> tuple[int, ...]:
        found = chains.get(key)
        if found is None:
            if key not in keys:
                return ()
            found = chains[key] = chain(union.clusters[key].parent) + (keys[key],)
        return found

    return [chain(union.nodes[node_id].cluster) for node_id in ids]


class _Grid:
    """Nodes (real ones first, then virtual ones) in layers, with their order and coordinates."""

    def __init__(self, n: int, layer: list[int], widths: list[float], heights: list[float]) -> None:
        self.real = n
        self.layer = list(layer)
        self.width = list(widths)
        self.height = list(heights)
        self.paths: list[tuple[int, ...]] = []
        self.preds: list[list[int]] = [[] for _ in range(n)]
        self.succs: list[list[int]] = [[] for _ in range(n)]
        self.x: list[float] = []
        self.layer_y: list[float] = []
        self.layer_height: list[float] = []
        self.rows: list[list[int]] = []
        self.offsets: list[list[float]] = []
        self.sweeps = SWEEPS
        self.virtual_per_node = VIRTUAL_PER_NODE

    def _new_virtual(self, layer: int) -> int:
        self.layer.append(layer)
        self.width.append(VIRTUAL_GAP)
        self.height.append(0.0)
        self.paths.append(())
        self.preds.append([])
        self.succs.append([])
        return len(self.layer) - 1

    def _link(self, u: int, v: int) -> None:
        self.succs[u].append(v)
        self.preds[v].append(u)

    def add_virtual_nodes(self, forward: list[tuple[int, int]]) -> dict[tuple[int, int], list[int]]:
        """Chains of virtual nodes for long edges, shortest first, within the budget."""
        budget = self.virtual_per_node * self.real + 64
        routes: dict[tuple[int, int], list[int]] = {}
        for u, v in forward:
            span = self.layer[v] - self.layer[u]
            if span == 1:
                self._link(u, v)
                routes[(u, v)] = []
                continue
            if span - 1 > budget:
                continue  # drawn straight, outside the ordering
            budget -= span - 1
            chain = [self._new_virtual(layer) for layer in range(self.layer[u] + 1, self.layer[v])]
            for a, b in zip([u, *chain], [*chain, v], strict=True):
                self._link(a, b)
            routes[(u, v)] = chain
        return routes

    # -- ordering -----------------------------------------------------------------
    def order(self) -> None:
        depth = max(self.layer) + 1
        self.rows = [[] for _ in range(depth)]
        for node, layer in enumerate(self.layer):
            self.rows[layer].append(node)
        position = [0.0] * len(self.layer)
        for row in self.rows:
            for i, node in enumerate(row):
                position[node] = i
        for _ in range(self.sweeps):
            for layer in range(1, depth):
                self._sort_row(layer, self.preds, position)
            for layer in range(depth - 2, -1, -1):
                self._sort_row(layer, self.succs, position)
        for layer in range(1, depth):
            self._sort_row(layer, self.preds, position)

    def _sort_row(self, layer: int, neighbours: list[list[int]], position: list[float]) -> None:
        row = self.rows[layer]
        centre = {}
        for node in row:
            others = neighbours[node]
            centre[node] = sum(position[o] for o in others) / len(others) if others else position[node]
        paths = self.paths
        if not any(paths[node] for node in row):  # no frames in this layer (most, in big graphs)
            row.sort(key=lambda node: (centre[node], position[node]))
            for i, node in enumerate(row):
                position[node] = i
            return
        # Members of one cluster stay side by side: the key of a node starts
        # with the mean centre of each cluster around it, outermost first.
        group_sum: dict[tuple[int, ...], float] = {}
        group_count: dict[tuple[int, ...], int] = {}
        for node in row:
            path = self.paths[node]
            for depth in range(1, len(path) + 1):
                prefix = path[:depth]
                group_sum[prefix] = group_sum.get(prefix, 0.0) + centre[node]
                group_count[prefix] = group_count.get(prefix, 0) + 1

        def key(node: int) -> tuple[float, ...]:
            path = self.paths[node]
            parts: list[float] = []
            for depth in range(1, len(path) + 1):
                prefix = path[:depth]
                parts += [group_sum[prefix] / group_count[prefix], path[depth - 1]]
            return (*parts, centre[node], -1, position[node])

        row.sort(key=key)
        for i, node in enumerate(row):
            position[node] = i

    # -- coordinates --------------------------------------------------------------------
    def _separation(self, a: int, b: int) -> float:
        gap = VIRTUAL_GAP if a >= self.real or b >= self.real else NODE_GAP
        pa, pb = self.paths[a], self.paths[b]
        common = 0
        while common < len(pa) and common < len(pb) and pa[common] == pb[common]:
            common += 1
        frames = (len(pa) - common) + (len(pb) - common)
        return (self.width[a] + self.width[b]) / 2 + gap + CLUSTER_PAD * frames

    def place_x(self) -> None:
        # Each node's least distance from the row's first node (the order is fixed now).
        self.offsets = []
        for row in self.rows:
            offsets = [0.0]
            for a, b in zip(row, row[1:], strict=False):
                offsets.append(offsets[-1] + self._separation(a, b))
            self.offsets.append(offsets)
        self.x = [0.0] * len(self.layer)
        for row, offsets in zip(self.rows, self.offsets, strict=True):
            for node, offset in zip(row, offsets, strict=True):
                self.x[node] = offset
        depth = len(self.rows)
        for _ in range(self.sweeps):
            for layer in range(1, depth):
                self._pull_row(layer, self.preds)
            for layer in range(depth - 2, -1, -1):
                self._pull_row(layer, self.succs)

    def _pull_row(self, layer: int, neighbours: list[list[int]]) -> None:
        """Move the row's nodes toward their neighbours' mean x, keeping order and gaps."""
        row, offsets = self.rows[layer], self.offsets[layer]
        if not row:
            return
        targets = []
        for node, offset in zip(row, offsets, strict=True):
            others = neighbours[node]
            want = sum(self.x[o] for o in others) / len(others) if others else self.x[node]
            targets.append(want - offset)
        # Pool adjacent violators: the nearest non-decreasing sequence to targets.
        blocks: list[list[float]] = []  # [sum, count, first index]
        for i, value in enumerate(targets):
            blocks.append([value, 1.0, float(i)])
            while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
                total, count, _ = blocks.pop()
                blocks[-1][0] += total
                blocks[-1][1] += count
        for b, block in enumerate(blocks):
            mean = block[0] / block[1]
            end = int(blocks[b + 1][2]) if b + 1 < len(blocks) else len(row)
            for i in range(int(block[2]), end):
                self.x[row[i]] = mean + offsets[i]

    def place_y(self) -> None:
        depth = len(self.rows)
        # Frames need room: a title and padding above the layer where a
        # cluster starts, padding below the layer where it ends.
        first = {}
        last = {}
        for node in range(self.real):
            for cluster in self.paths[node]:
                layer = self.layer[node]
                first[cluster] = min(first.get(cluster, layer), layer)
                last[cluster] = max(last.get(cluster, layer), layer)
        opening = [0] * depth
        closing = [0] * depth
        for node in range(self.real):
            layer = self.layer[node]
            opens = sum(1 for c in self.paths[node] if first[c] == layer)
            closes = sum(1 for c in self.paths[node] if last[c] == layer)
            opening[layer] = max(opening[layer], opens)
            closing[layer] = max(closing[layer], closes)
        self.layer_height = [max((self.height[v] for v in row), default=0.0) for row in self.rows]
        self.layer_y = []
        top = 0.0
        for layer in range(depth):
            top += opening[layer] * (TITLE_ROOM + CLUSTER_PAD)
            self.layer_y.append(top + self.layer_height[layer] / 2)
            top += self.layer_height[layer] + closing[layer] * CLUSTER_PAD + LAYER_GAP

    # -- the result -----------------------------------------------------------------------
    def layout(
        self,
        union: DrawGraph,
        ids: list[int],
        index: dict[int, int],
        forward: set[tuple[int, int]],
        routes: dict[tuple[int, int], list[int]],
    ) -> Layout:
        """Boxes, edge polylines and frames, shifted so the drawing starts at
        the margin: the shift is worked out first, so each point is made once."""
        x, width, height, layer, layer_y = self.x, self.width, self.height, self.layer, self.layer_y
        real = self.real
        frames = self._frames(union)
        # Edges only pass through real nodes' centres and virtual nodes, so the
        # leftmost of everything is a box, a frame or a virtual node.
        left = min(
            min(x[v] - width[v] / 2 for v in range(real)),
            min((f[0] for f in frames.values()), default=float("inf")),
            min((x[v] for v in range(real, len(x))), default=float("inf")),
        )
        top = min(
            min(layer_y[layer[v]] - height[v] / 2 for v in range(real)),
            min((f[1] for f in frames.values()), default=float("inf")),
        )
        dx, dy = MARGIN - left, MARGIN - top
        boxes = {}
        for node, node_id in enumerate(ids):
            boxes[node_id] = NodeBox(x[node] + dx, layer_y[layer[node]] + dy, width[node], height[node])
        layer_height = self.layer_height
        edges: dict[EdgeKey, list[tuple[float, float]]] = {}
        for edge in union.edges:
            u, v = index[edge.source], index[edge.target]
            turned = (u, v) not in forward
            a, b = (v, u) if turned else (u, v)
            points = [(x[a] + dx, layer_y[layer[a]] + height[a] / 2 + dy)]
            for virtual in routes.get((a, b), ()):
                y, half = layer_y[layer[virtual]], layer_height[layer[virtual]] / 2
                vx = x[virtual] + dx
                points += [(vx, y - half + dy), (vx, y + half + dy)]
            points.append((x[b] + dx, layer_y[layer[b]] - height[b] / 2 + dy))
            edges[(edge.source, edge.target, edge.value_id)] = points[::-1] if turned else points
        clusters = {k: (f[0] + dx, f[1] + dy, f[2] + dx, f[3] + dy) for k, f in frames.items()}
        right = max(
            max(b.x + b.width / 2 for b in boxes.values()),
            max((f[2] for f in clusters.values()), default=0.0),
            max((x[v] + dx for v in range(real, len(x))), default=0.0),
        )
        bottom = max(
            max(b.y + b.height / 2 for b in boxes.values()),
            max((f[3] for f in clusters.values()), default=0.0),
        )
        return Layout(boxes, edges, clusters, right + MARGIN, bottom + MARGIN, engine="layered")

    def _frames(self, union: DrawGraph) -> dict[str, tuple[float, float, float, float]]:
        keys = list(union.clusters)
        frames: dict[int, list[float]] = {}
        for node in range(self.real):
            path = self.paths[node]
            half_w, half_h = self.width[node] / 2, self.height[node] / 2
            x, y = self.x[node], self.layer_y[self.layer[node]]
            for depth, cluster in enumerate(path):
                levels = len(path) - depth
                pad = CLUSTER_PAD * levels
                box = (x - half_w - pad, y - half_h - levels * (TITLE_ROOM + CLUSTER_PAD), x + half_w + pad, y + half_h + pad)
                frame = frames.get(cluster)
                if frame is None:
                    frames[cluster] = list(box)
                else:
                    frame[0], frame[1] = min(frame[0], box[0]), min(frame[1], box[1])
                    frame[2], frame[3] = max(frame[2], box[2]), max(frame[3], box[3])
        return {keys[c]: (f[0], f[1], f[2], f[3]) for c, f in frames.items()}
