"""BatchMM: turn several small matrix products into one bigger one.

A matrix library (BLAS on the CPU, cuBLAS on a GPU) runs one large product
much closer to the hardware's peak than many small ones, and on a GPU every
product is also a kernel launch of its own. Two patterns are common in RNN
cells and attention heads, and both can be rewritten as a single ``mm``:

* **Tree reduction** (TorchScript's ``MMTreeReduce``): a sum of products
  ``A1 @ B1 + A2 @ B2 + ... + An @ Bn`` (a tree of ``aten::add`` with
  alpha 1 whose leaves are ``aten::mm`` used nowhere else) equals
  ``cat([A1 .. An], dim=1) @ cat([B1 .. Bn], dim=0)``: the concatenated
  inner dimension sums the n products for free. One product replaces n
  products and n - 1 additions. All products must have the same result shape
  (the adds must not broadcast) and one dtype.
* **Side batching** (``MMBatchSide``): products sharing an operand,
  ``A @ B1, A @ B2, ...``, are the column blocks of ``A @ cat([B1 .. Bn], dim=1)``,
  which ``aten::chunk`` splits back into the n results (for a shared right
  operand, ``cat(.., dim=0)`` and chunks along the rows). The other operands
  must all have the same shape, so the chunks come out equal. The products
  are first moved next to each other, which AliasDb only allows when none of
  them depends on another and no write or side effect is in the way.

Both rewrites copy the operands once (``cat``); they pay off when the
products are small or skinny (an inner or outer dimension of a few hundred
or less), where the library call overhead dominates, and above all on a GPU.
For large square matrices each product already runs near peak and the copy
is pure cost; TorchScript therefore waits for 8 products sharing an operand
(and 4 leaves in a tree) and decides at run time. Here the thresholds are
the parameters ``min_tree_leaves`` and ``min_side_batch`` (2 by default).

Only products whose operand shapes and dtypes are known from the tensor
types are touched, and only when AliasDb says nothing writes to any
operand (a write between two products would otherwise be reordered).
Summing in a different order can change float results in the last bits.

The executor runs it in ``runNondiffOptimization``, after DecomposeOps (which
turns ``addmm`` into ``mm`` + ``add`` so those can be batched) and before fusion.

Before (``%a1``, ``%a2`` : ``Double(3, 4)``; ``%b1``, ``%b2`` : ``Double(4, 5)``)::

    %m1 : Tensor = aten::mm(%a1, %b1)
    %m2 : Tensor = aten::mm(%a2, %b2)
    %s : Tensor = aten::add(%m1, %m2, %one)

After::

    %8 : Tensor[] = prim::ListConstruct(%a1, %a2)
    %9 : int = prim::Constant[value=1]()
    %10 : Double(3, 8) = aten::cat(%8, %9)
    %11 : Tensor[] = prim::ListConstruct(%b1, %b2)
    %12 : int = prim::Constant[value=0]()
    %13 : Double(8, 5) = aten::cat(%11, %12)
    %s : Tensor = aten::mm(%10, %13)
"""

from __future__ import annotations

from collections import defaultdict

from ..graph import Block, Graph
from ..node import Node, Value
from ..types import TENSOR, ListType
from .alias_db import AliasDb
from .rewrite_helpers import (
    constant_number,
    insert_op,
    op_key,
    plain_tensor,
    replace_and_drop,
    tensor_type,
)

__all__ = ["batch_mm"]


def batch_mm(graph: Graph, min_tree_leaves: int = 2, min_side_batch: int = 2) -> bool:
    """Merge add-trees of products and products sharing an operand; True if changed."""
    changed = _reduce_trees(graph, max(min_tree_leaves, 2))
    given_up: set[Node] = set()
    while True:
        db = AliasDb(graph)
        progress = _batch_one_side(graph, db, max(min_side_batch, 2), given_up)
        if progress is None:
            return changed
        changed |= progress


# -- what an mm looks like --------------------------------------------------------------
class _Product:
    """An ``aten::mm`` whose operand shapes and dtype are known."""

    def __init__(self, node: Node, left: tuple[int, int], right: tuple[int, int], dtype: str, device: str | None) -> None:
        self.node = node
        self.left, self.right = left, right
        self.dtype, self.device = dtype, device

    @property
    def operands(self) -> list[Value]:
        return self.node.inputs()[:2]


def _product(node: Node, db: AliasDb) -> _Product | None:
    if op_key(node) != "aten::mm" or node.maybe_schema() is None:
        return None  # an aten::mm no overload takes (one input, say) is not a product
    a, b = node.inputs()
    ta, tb = tensor_type(a), tensor_type(b)
    if ta is None or tb is None or ta.scalar_type is None or ta.scalar_type != tb.scalar_type:
        return None
    sa, sb = ta.sizes, tb.sizes
    if sa is None or sb is None or len(sa) != 2 or len(sb) != 2 or None in sa or None in sb:
        return None
    if sa[1] != sb[0] or 0 in sa or 0 in sb:
        return None  # a product that fails (or is empty) is left as it is
    if any(db.has_writers(v) for v in (a, b, node.output())):
        return None
    return _Product(node, (sa[0], sa[1]), (sb[0], sb[1]), ta.scalar_type, ta.device)  # type: ignore[arg-type]


def _is_plain_add(node: Node) -> bool:
    if op_key(node) != "aten::add.Tensor":
        return False
    alpha = node.inputs()[2:]
    return not alpha or constant_number(alpha[0]) == 1


def _list_of(graph: Graph, values: list[Value]) -> Value:
    node = graph.create("prim::ListConstruct", values, 1)
    node.output().set_type(ListType(TENSOR))
    graph.insert_node(node)
    return node.output()


def _cat(graph: Graph, values: list[Value], dim: int, dtype: str, sizes: tuple[int, int], device: str | None) -> Value:
    return insert_op(graph, "aten::cat", [_list_of(graph, values), dim], plain_tensor(dtype, sizes, device))


# -- (a) tree reduction -----------------------------------------------------------------
def _reduce_trees(graph: Graph, min_leaves: int) -> bool:
    db = AliasDb(graph)
    changed = False
    blocks = [graph.block] + [b for n in graph.all_nodes() for b in n.blocks()]
    for block in blocks:
        for root in _tree_roots(block, db):
            changed |= _reduce_tree(graph, root, db, min_leaves)
    return changed


def _tree_roots(block: Block, db: AliasDb) -> list[tuple[Node, dict[Node, tuple[Node, Node]]]]:
    """Adds over products (and over such adds) that no bigger tree absorbs.

    Returns each root with the children of the tree's adds; leaves are mms.
    """
    children: dict[Node, tuple[Node, Node]] = {}
    leaves: set[Node] = set()
    absorbed: set[Node] = set()
    for node in block.nodes():
        if _product(node, db) is not None:
            leaves.add(node)
        elif _is_plain_add(node):
            a, b = node.inputs()[:2]
            parts = (a.node, b.node)
            if (
                a is not b
                and all(p in leaves or p in children for p in parts)
                and len(a.uses) == 1
                and len(b.uses) == 1
            ):
                children[node] = parts
                absorbed.update(parts)
    return [(node, children) for node in children if node not in absorbed]


def _tree_leaves(root: Node, children: dict[Node, tuple[Node, Node]]) -> tuple[list[Node], list[Node]]:
    leaves, adds, work = [], [], [root]
    while work:
        node = work.pop()
        if node in children:
            adds.append(node)
            work.extend(children[node])
        else:
            leaves.append(node)
    return sorted(leaves, key=lambda n: n.topo_position), adds


def _reduce_tree(graph: Graph, found: tuple[Node, dict[Node, tuple[Node, Node]]], db: AliasDb, min_leaves: int) -> bool:
    root, children = found
    leaves, _ = _tree_leaves(root, children)
    products = [_product(leaf, db) for leaf in leaves]
    first = products[0]
    assert all(p is not None for p in products) and first is not None
    uniform = all(
        p is not None and p.left[0] == first.left[0] and p.right[1] == first.right[1] and p.dtype == first.dtype
        for p in products
    )
    if not uniform or len(leaves) < min_leaves:
        # The whole sum cannot be one product; its two halves may still be.
        return any([_reduce_tree(graph, (child, children), db, min_leaves) for child in children[root] if child in children])
    rows, cols = first.left[0], first.right[1]
    inner = sum(p.left[1] for p in products if p is not None)
    with graph.insert_point(root):
        lefts = _cat(graph, [leaf.inputs()[0] for leaf in leaves], 1, first.dtype, (rows, inner), first.device)
        rights = _cat(graph, [leaf.inputs()[1] for leaf in leaves], 0, first.dtype, (inner, cols), first.device)
        result = insert_op(graph, "aten::mm", [lefts, rights], root.output().type())
    replace_and_drop(root.output(), result, db)
    return True


# -- (b) side batching ------------------------------------------------------------------
def _batch_one_side(graph: Graph, db: AliasDb, min_batch: int, given_up: set[Node]) -> bool | None:
    """Batch one group of products sharing an operand. None: no group left;
    False/True: whether the graph changed (moves can happen without a batch).
    Products of a group that could not be batched go to ``given_up``."""
    blocks = [graph.block] + [b for n in graph.all_nodes() for b in n.blocks()]
    for block in blocks:
        groups: dict[tuple[int, Value, tuple[int, int]], list[_Product]] = defaultdict(list)
        for node in block.nodes():
            product = _product(node, db)
            if product is None or node in given_up:
                continue
            a, b = product.operands
            groups[(0, a, product.right)].append(product)
            groups[(1, b, product.left)].append(product)
        for (side, _shared, _shape), members in groups.items():
            members = [p for p in members if p.dtype == members[0].dtype]
            independent = _independent(members, db)
            if len(independent) < min_batch:
                continue
            run = _gather(independent, db)
            if len(run) >= min_batch and _batch(graph, run, side, db):
                return True
            given_up.update(p.node for p in independent)
            return len(run) > 1  # moves may have happened without a batch
    return None


def _independent(members: list[_Product], db: AliasDb) -> list[_Product]:
    """Drop products that depend on an earlier kept one (TorchScript's filter)."""
    kept: list[_Product] = []
    for product in sorted(members, key=lambda p: p.node.topo_position):
        if all(db.could_move_before_topologically(product.node, k.node) for k in kept):
            kept.append(product)
    return kept


def _gather(members: list[_Product], db: AliasDb) -> list[_Product]:
    """Move the products down next to the last one; returns those that moved (and it)."""
    run = [members[-1]]
    for product in reversed(members[:-1]):
        if db.move_before_topologically_valid(product.node, run[0].node):
            run.insert(0, product)
    return run


def _visible_at(value: Value, node: Node) -> bool:
    definer = value.node
    scope: Node | None = node
    while scope is not None:
        if definer.owning_block is scope.owning_block:
            return definer is not scope and definer.topo_position < scope.topo_position
        block = scope.owning_block
        scope = block.owning_node if block is not None else None
    return False


def _batch(graph: Graph, run: list[_Product], side: int, db: AliasDb) -> bool:
    """Replace the adjacent products of ``run`` by one product and its chunks."""
    first = run[0]
    shared = first.operands[side]
    others = [p.operands[1 - side] for p in run]
    if not all(_visible_at(v, first.node) for v in [shared, *others]):
        return False  # not all operands are ready where the batch would go
    count = len(run)
    rows, cols = first.left[0], first.right[1]
    with graph.insert_point(first.node):
        if side == 0:  # shared left operand: stack the right ones side by side
            stacked = _cat(graph, others, 1, first.dtype, (first.right[0], cols * count), first.device)
            product = insert_op(graph, "aten::mm", [shared, stacked], plain_tensor(first.dtype, (rows, cols * count), first.device))
        else:  # shared right operand: stack the left ones on top of each other
            stacked = _cat(graph, others, 0, first.dtype, (rows * count, first.left[1]), first.device)
            product = insert_op(graph, "aten::mm", [stacked, shared], plain_tensor(first.dtype, (rows * count, cols), first.device))
        pieces = insert_op(graph, "aten::chunk", [product, count, 1 if side == 0 else 0], ListType(TENSOR))
        unpack = graph.create("prim::ListUnpack", [pieces], count)
        graph.insert_node(unpack)
    for p, piece in zip(run, unpack.outputs(), strict=True):
        piece.set_type(plain_tensor(first.dtype, (rows, cols), first.device))
        replace_and_drop(p.node.output(), piece, db)
    return True
