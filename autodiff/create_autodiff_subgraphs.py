"""CreateAutodiffSubgraphs: cut a graph into the pieces symbolic autodiff will take.

What a DifferentiableGraph is
-----------------------------
TorchScript's executor has two ways to get gradients. It can let autograd
record every op as it runs (one autograd node per op, slow but general), or
it can differentiate a piece of the graph symbolically ahead of time and run
that piece as *one* autograd function whose backward is a graph too. The
pieces it differentiates symbolically are ``prim::DifferentiableGraph`` nodes:
an ordinary node whose ``Subgraph`` attribute holds the ops it stands for::

    graph(%x : Tensor, %w : Tensor):
      %y : Tensor = prim::DifferentiableGraph_0(%x, %w)
      return (%y)
    with prim::DifferentiableGraph_0 = graph(%x : Tensor, %w : Tensor):
      %t : Tensor = aten::mm(%x, %w)
      %y : Tensor = aten::tanh(%t)
      return (%y)

Later the executor calls ``differentiate`` on each such subgraph and replaces
it by the forward graph plus the backward graph.

Why the graph is sliced this way
--------------------------------
Only ops with a gradient formula can go in (``is_differentiable``), and a
group must be worth it: a group with fewer than ``threshold`` real ops is
pasted back, since one autograd node per op is then just as cheap. The
slicer works on each block separately, bottom-up:

1. *Work blocks.* Nodes with side effects (``prim::Print``, raising,
   ``prim::Enter``...) can never be reordered, so each block is split at them
   and groups never cross them.
2. *Grow groups.* Scanning a work block from its end, each differentiable
   node becomes a group, and the group swallows its producers, latest first,
   whenever AliasDb says the producer can move right before the group
   (``move_before_topologically_valid``: no use and no write to shared memory
   in between is reordered). Each merge may change the group's inputs, so the
   group is scanned again; the whole work block is rescanned until nothing
   changes, because moves can push nodes past the scan point. Constants are
   copied into the group instead of becoming inputs. View ops (``aten::view``,
   ``aten::transpose``, ``aten::expand``...) stay outside: autodiff cannot
   handle an output that is a view.
3. *Unfuse aliased outputs.* An output of a group that may share memory with
   a group input, or with another output, would confuse autograd; the nodes
   behind it (and their users) are moved back out.
4. *Clean up.* CSE inside each group, then groups that are too small are
   pasted back; CSE over the whole graph removes the copies of constants that
   pasting leaves behind (TorchScript's CSE rules, see ``subgraph_cse``).
5. *requires_grad.* The backward graph needs to know which outputs require
   grad; a group output without that fact takes it from a ``prim::profile``
   node that uses it (outside the group, or inside the group that reads it),
   skipping profiles recorded in another ``with`` context (such as
   ``torch.no_grad()``). Without profile information the type stays as it is.

Example (threshold 2): ``size`` is not differentiable, so it moves below the
group to let ``mm`` join ``tanh``; ``exp`` is alone in the work block after
the print, too small for a group::

    %t : Tensor = aten::mm(%x, %w)             %y : Tensor, %t : Tensor = prim::DifferentiableGraph_0(%x, %w)
    %s : int[] = aten::size(%t)                %s : int[] = aten::size(%t)
    %y : Tensor = aten::tanh(%t)       ==>      = prim::Print(%y)
     = prim::Print(%y)                         %z : Tensor = aten::exp(%y)
    %z : Tensor = aten::exp(%y)                with prim::DifferentiableGraph_0 = graph(%x : Tensor, %w : Tensor):
                                                 %t : Tensor = aten::mm(%x, %w)
                                                 %y : Tensor = aten::tanh(%t)
                                                 return (%y, %t)
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from gradview.ir import Block, Graph, Node, TensorType, Value
from gradview.ops import formula_for, no_gradient_reason

from .autodiff_mode import AutodiffMode, autodiff_mode
from .differentiable import is_differentiable
from .subgraph_cse import eliminate_common_subexpression_like_torch
from .subgraph_utils import (
    PROFILE_KINDS,
    SlicingAliasDb,
    create_singleton_subgraph,
    get_subgraph,
    merge_node_into_subgraph,
    unmerge_aliased_outputs,
    unmerge_outputs_aliasing_inputs,
    unmerge_subgraph,
)

__all__ = [
    "create_autodiff_subgraphs", "create_autodiff_subgraphs_with_notes", "AutodiffSubgraphNotes",
    "OutsideCause", "exclusion_reason", "DIFFERENTIABLE_GRAPH", "VIEW_OPS", "DEFAULT_THRESHOLD",
]

DIFFERENTIABLE_GRAPH = "prim::DifferentiableGraph"
# TorchScript's autodiffSubgraphNodeThreshold.
DEFAULT_THRESHOLD = 2
# Views whose outputs autodiff cannot return correctly: never merged.
VIEW_OPS = frozenset({
    "aten::view", "aten::view_as", "aten::reshape", "aten::reshape_as", "aten::transpose",
    "aten::expand", "aten::expand_as",
})
# Nodes that do no work at run time: they do not count towards a group's size.
NOT_EXECUTED = frozenset({"prim::Constant", *PROFILE_KINDS})

Predicate = Callable[[Node], bool]


class OutsideCause(enum.StrEnum):
    """Why a node is in no group, as a kind of reason (the text says it in full)."""

    CONSTANT = "constant"  # copied into each group that reads it
    NOT_AN_OP = "not an op"  # a graph's inputs or outputs
    VIEW = "view"  # a view op: a group cannot return a view
    CONTROL_FLOW = "control flow"  # a node with blocks: groups form inside them
    NOT_DIFFERENTIABLE = "not differentiable"  # outside the mode's differentiable set
    TOO_SMALL = "too small"  # its group had fewer than the threshold's real ops
    UNFUSED = "unfused"  # moved back out: an output may alias
    SIDE_EFFECTS = "side effects"  # prints, raises or writes: cuts its block


_Why = tuple[OutsideCause, str]


@dataclass(frozen=True)
class AutodiffSubgraphNotes:
    """What the slicing did, for the viewer (field names are the trace's annotation keys).

    ``differentiable_graphs``: each group kept -> its number k, in the order
    the executor differentiates them; ``excluded``: every node of the result
    outside the groups (nested blocks included) -> why, in plain words;
    ``autodiff_mode``: ``"torch"`` or ``"extended"``; ``needs_grad_outside``:
    each node outside the groups with an output that requires grad (an op
    autograd then records one by one) -> ``(cause, extended)``, the
    :class:`OutsideCause` value and whether gradview's extended autodiff mode
    differentiates its op: what a viewer needs to say why a graph that needs
    gradients got no DifferentiableGraph, and what would give it one;
    ``min_group_size``: the threshold it ran with (PyTorch's 2).
    """

    differentiable_graphs: Mapping[Node, int]
    excluded: Mapping[Node, str]
    autodiff_mode: str
    needs_grad_outside: Mapping[Node, tuple[str, bool]]
    min_group_size: int = DEFAULT_THRESHOLD


def create_autodiff_subgraphs(
    graph: Graph,
    threshold: int = DEFAULT_THRESHOLD,
    *,
    differentiable: Predicate | None = None,
    mode: AutodiffMode | str | None = None,
) -> list[Node]:
    """Group differentiable nodes of ``graph`` into ``prim::DifferentiableGraph``
    nodes, in place; returns the groups kept (at least ``threshold`` real ops).

    ``differentiable`` decides which nodes may join a group (default:
    :func:`is_differentiable` in the autodiff ``mode``: PyTorch's set unless
    ``mode="extended"``); tests pass torch's verdicts to check the slicing on
    its own.
    """
    return _slice(graph, threshold, differentiable, autodiff_mode(mode), None)


def create_autodiff_subgraphs_with_notes(
    graph: Graph,
    threshold: int = DEFAULT_THRESHOLD,
    *,
    differentiable: Predicate | None = None,
    mode: AutodiffMode | str | None = None,
) -> tuple[list[Node], AutodiffSubgraphNotes]:
    """:func:`create_autodiff_subgraphs`, also saying why each node left
    outside every group is there (:class:`AutodiffSubgraphNotes`)."""
    mode = autodiff_mode(mode)
    excluded: dict[Node, _Why] = {}
    groups = _slice(graph, threshold, differentiable, mode, excluded)
    numbers = MappingProxyType({node: k for k, node in enumerate(groups)})
    texts = MappingProxyType({node: text for node, (_, text) in excluded.items()})
    return groups, AutodiffSubgraphNotes(numbers, texts, mode.value, _needing_grad(excluded), threshold)


_NOT_COUNTED = frozenset({OutsideCause.CONSTANT, OutsideCause.NOT_AN_OP})


def _needing_grad(excluded: Mapping[Node, _Why]) -> Mapping[Node, tuple[str, bool]]:
    """The nodes outside every group that compute something requiring grad."""
    out = {
        node: (cause.value, is_differentiable(node, AutodiffMode.EXTENDED))
        for node, (cause, _) in excluded.items()
        if cause not in _NOT_COUNTED and any(v.requires_grad() for v in node.outputs())
    }
    return MappingProxyType(out)


def _slice(
    graph: Graph, threshold: int, differentiable: Predicate | None, mode: AutodiffMode,
    excluded: dict[Node, _Why] | None,
) -> list[Node]:
    """The pass; ``excluded`` (when given) collects why nodes stay outside."""
    diff_nodes: list[Node] = []
    predicate = differentiable or _mode_predicate(mode)
    db = SlicingAliasDb(graph)
    slicer = SubgraphSlicer(graph.block, threshold, db, diff_nodes, predicate, excluded)
    slicer.run()
    add_requires_grad_on_output_nodes(graph)
    if excluded is not None:
        _explain_the_rest(graph.block, db, differentiable, mode, excluded)
    return diff_nodes


def _mode_predicate(mode: AutodiffMode) -> Predicate:
    return lambda node: is_differentiable(node, mode)


def exclusion_reason(
    node: Node, differentiable: Predicate | None = None, mode: AutodiffMode | str | None = None
) -> str | None:
    """Why ``node`` can never be part of a DifferentiableGraph, in plain words;
    None when it may join one.

    This is the slicer's own test (``should_consider_for_merge`` asks it), so
    an explanation cannot drift from what the pass does. A node it accepts
    may still end up outside every group (its group was too small, say):
    :func:`create_autodiff_subgraphs_with_notes` says why.
    """
    why = _exclusion(node, differentiable, mode)
    return None if why is None else why[1]


def _exclusion(node: Node, differentiable: Predicate | None, mode: AutodiffMode | str | None) -> _Why | None:
    """:func:`exclusion_reason` with the kind of reason."""
    kind = node.kind()
    if kind == DIFFERENTIABLE_GRAPH:
        return None
    if kind == "prim::Constant":
        return OutsideCause.CONSTANT, (
            "a constant: every group that reads it gets its own copy, so the constant itself stays outside"
        )
    if kind in ("prim::Param", "prim::Return"):
        return OutsideCause.NOT_AN_OP, "a graph's inputs or outputs, not an operation"
    if kind in VIEW_OPS:
        return OutsideCause.VIEW, (
            f"{kind} is a view op: its output shares memory with its input, and a DifferentiableGraph "
            "cannot return a view correctly, so views stay outside"
        )
    mode = autodiff_mode(mode)
    if (differentiable or _mode_predicate(mode))(node):
        return None
    if node.blocks():
        return OutsideCause.CONTROL_FLOW, (
            f"{kind} is control flow: symbolic autodiff does not differentiate blocks, "
            "so groups are formed inside its blocks instead"
        )
    if differentiable is None and mode == AutodiffMode.TORCH and is_differentiable(node, AutodiffMode.EXTENDED):
        return OutsideCause.NOT_DIFFERENTIABLE, (
            f"not differentiated symbolically by PyTorch: its JIT leaves {kind} to eager autograd "
            "(gradview's extended autodiff mode would put it in a DifferentiableGraph)"
        )
    reason = no_gradient_reason(node)
    if reason is not None:
        return OutsideCause.NOT_DIFFERENTIABLE, f"not differentiable: {reason}"
    if formula_for(node) is None:
        schema = node.maybe_schema()
        overload = schema.qualified_name if schema is not None else kind
        return OutsideCause.NOT_DIFFERENTIABLE, f"not differentiable: there is no gradient formula for {overload}"
    return OutsideCause.NOT_DIFFERENTIABLE, (
        f"not differentiable here: {kind} has a gradient formula, but not for these inputs "
        "(this overload, or arguments that are not constant)"
    )


_UNFUSED = (
    "moved back out of its group: one of its outputs may share memory with a group input or "
    "with another group output, which autograd cannot handle"
)
_SIDE_EFFECTS = (
    "has side effects (it prints, raises or writes): the pass never moves nodes across it, "
    "so it cuts its block in two and belongs to no group"
)


def _explain_the_rest(
    block: Block, db: SlicingAliasDb, differentiable: Predicate | None, mode: AutodiffMode, excluded: dict[Node, _Why]
) -> None:
    """Give every node outside the groups a reason, keeping those the slicer recorded."""
    for node in [n for n in excluded if n.owning_block is None]:
        del excluded[node]  # pasted back, then removed as a duplicate by CSE
    pending = [block]
    while pending:
        current = pending.pop()
        for node in current.nodes():
            pending.extend(node.blocks())
            if node.kind() == DIFFERENTIABLE_GRAPH or node in excluded:
                continue
            if db.has_side_effects(node):
                excluded[node] = OutsideCause.SIDE_EFFECTS, _SIDE_EFFECTS
            else:
                # A node the slicer would take that is outside every group
                # was unfused (short stretches and small groups are recorded).
                excluded[node] = _exclusion(node, differentiable, mode) or (OutsideCause.UNFUSED, _UNFUSED)


class SubgraphSlicer:
    """Builds, unfuses and cleans up the differentiable groups of one block."""

    def __init__(
        self, block: Block, threshold: int, db: SlicingAliasDb, diff_nodes: list[Node],
        differentiable: Predicate, excluded: dict[Node, _Why] | None = None,
    ) -> None:
        self.block = block
        self.threshold = threshold
        self.db = db
        self.diff_nodes = diff_nodes
        self.differentiable = differentiable
        self.excluded = excluded  # node -> (kind of reason, why) it stays outside, when the caller asks

    def _nested(self, block: Block) -> SubgraphSlicer:
        return SubgraphSlicer(block, self.threshold, self.db, self.diff_nodes, self.differentiable, self.excluded)

    def run(self) -> None:
        # AliasDb stays exact while groups grow, but not while they are taken
        # apart again: build everything first, then unfuse and clean up.
        self.build_up_subgraphs()
        unfuse_aliased_outputs(self.block)
        self.clean_up_subgraphs()
        eliminate_common_subexpression_like_torch(self.block.graph)

    # -- growing groups ------------------------------------------------------
    def build_up_subgraphs(self) -> None:
        for begin, end in self.build_work_blocks():
            changed = True
            while changed:
                changed = False
                node = end
                while node is not begin:
                    node, merged = self.scan_node(node)
                    changed |= merged
        for node in self.block.nodes():
            for sub in node.blocks():
                self._nested(sub).build_up_subgraphs()

    def build_work_blocks(self) -> list[tuple[Node, Node]]:
        """(begin, end) pairs, latest first: the nodes strictly between two nodes
        with side effects (or the block's ends), when enough of them qualify."""
        work: list[tuple[Node, Node]] = []
        end = self.block.return_node
        node = self._before(end)
        candidates: list[Node] = []
        while node is not self.block.param_node:
            if self.should_consider_for_merge(node):
                candidates.append(node)
            if self.db.has_side_effects(node):
                if len(candidates) >= self.threshold:
                    work.append((node, end))
                else:
                    self._note_short_stretch(candidates)
                candidates = []
                end = node
            node = self._before(node)
        if len(candidates) >= self.threshold:
            work.append((node, end))
        else:
            self._note_short_stretch(candidates)
        return work

    def _note_short_stretch(self, candidates: list[Node]) -> None:
        if self.excluded is None:
            return
        for node in candidates:
            self.excluded[node] = OutsideCause.TOO_SMALL, (
                f"only {len(candidates)} differentiable node(s) in its stretch of the block (blocks are cut "
                f"at nodes with side effects), fewer than the threshold {self.threshold}: no group is formed there"
            )

    def _before(self, node: Node) -> Node:
        """The node before ``node``; the block's param node before the first."""
        previous = node.prev
        assert previous is not None
        return self.block.param_node if previous is self.block.return_node else previous

    def should_consider_for_merge(self, node: Node) -> bool:
        return exclusion_reason(node, self.differentiable) is None

    def scan_node(self, consumer: Node) -> tuple[Node, bool]:
        """Grow ``consumer``'s group by one producer if possible.

        Returns where to scan next: the group again after a merge (its inputs
        changed), else the node before it.
        """
        if self.should_consider_for_merge(consumer):
            if consumer.kind() != DIFFERENTIABLE_GRAPH:
                consumer = create_singleton_subgraph(consumer, DIFFERENTIABLE_GRAPH, self.db)
            for value in self._inputs_latest_first(consumer):
                if self.try_merge(consumer, value.node):
                    return consumer, True
        return self._before(consumer), False

    def _inputs_latest_first(self, node: Node) -> list[Value]:
        local = [
            v for v in node.inputs()
            if v.node.owning_block is self.block and v.node is not self.block.param_node
        ]
        return sorted(local, key=lambda v: v.node.topo_position, reverse=True)

    def try_merge(self, consumer: Node, producer: Node) -> bool:
        if not self.should_consider_for_merge(producer):
            return False
        if not self.db.move_before_topologically_valid(producer, consumer):
            return False
        merge_node_into_subgraph(producer, consumer, self.db)
        return True

    # -- cleaning up -----------------------------------------------------------
    def clean_up_subgraphs(self) -> None:
        for node in self.block.reverse_nodes():
            if node.kind() != DIFFERENTIABLE_GRAPH:
                continue
            # Pasting groups into groups copies constants in repeatedly.
            eliminate_common_subexpression_like_torch(get_subgraph(node))
            if not self.inline_if_too_small(node):
                self.diff_nodes.append(node)
        for node in self.block.nodes():
            for sub in node.blocks():
                self._nested(sub).clean_up_subgraphs()

    def inline_if_too_small(self, group: Node) -> bool:
        """Paste ``group`` back if it has fewer than ``threshold`` real ops."""
        count = 0
        for inner in get_subgraph(group).nodes():
            count += inner.kind() not in NOT_EXECUTED
            if count >= self.threshold:
                return False
        pasted = unmerge_subgraph(group)
        if self.excluded is not None:
            reason = OutsideCause.TOO_SMALL, (
                f"its group had {count} op(s), fewer than the threshold {self.threshold}: pasted back, "
                "since plain autograd (one node per op) is as cheap for so few ops"
            )
            for clone in pasted:
                self.excluded.update(dict.fromkeys([clone, *clone.walk()], reason))
        return True


def unfuse_aliased_outputs(block: Block) -> None:
    """Move nodes behind aliasing outputs out of every group, until none is left."""
    changed = True
    while changed:
        changed = False
        # Backwards: nodes unfused from a group land after it, not revisited.
        for node in block.reverse_nodes():
            if node.kind() == DIFFERENTIABLE_GRAPH:
                changed |= unmerge_aliased_outputs(node)
                changed |= unmerge_outputs_aliasing_inputs(node)
    for node in block.nodes():
        for sub in node.blocks():
            unfuse_aliased_outputs(sub)


# -- requires_grad from profiles -------------------------------------------------
class ContextMapping:
    """The ``with`` context (its ``prim::Enter`` node, or None) of every node,
    nodes inside DifferentiableGraph subgraphs included."""

    def __init__(self, graph: Graph) -> None:
        self.stack: list[Node | None] = [None]
        self.context: dict[Node, Node | None] = {}
        self._block(graph.block)

    def _block(self, block: Block) -> None:
        for node in block.nodes():
            self.context[node] = self.stack[-1]
            if node.kind() == "prim::Enter":
                self.stack.append(node)
            elif node.kind() == "prim::Exit":
                self.stack.pop()
            for sub in node.blocks():
                self._block(sub)
            if node.kind() == DIFFERENTIABLE_GRAPH:
                self._block(get_subgraph(node).block)

    def differs(self, node: Node, other: Node) -> bool:
        """True if ``node`` is known and runs in another context than ``other``."""
        return node in self.context and self.context[node] is not self.context[other]


def profiled_requires_grad(node: Node) -> bool | None:
    """What a ``prim::profile`` node recorded about requires_grad, if anything."""
    if node.kind() != "prim::profile" or not node.has_attribute("profiled_type"):
        return None
    profiled = node.ty("profiled_type")
    return profiled.requires_grad if isinstance(profiled, TensorType) else None


def find_requires_grad_for_output(group: Node, output: Value, contexts: ContextMapping) -> bool | None:
    """requires_grad of a group output as a profile of one of its uses saw it."""
    for use in output.uses:
        user = use.user
        if contexts.differs(user, group):
            continue  # e.g. a profile under no_grad() saw requires_grad=False
        found = profiled_requires_grad(user)
        if found is not None:
            return found
        if user.kind() == DIFFERENTIABLE_GRAPH:
            # The profile may have been merged into the group that reads it.
            param = get_subgraph(user).inputs()[use.offset]
            for inner in param.uses:
                if contexts.differs(inner.user, group):
                    continue
                found = profiled_requires_grad(inner.user)
                if found is not None:
                    return found
    return None


def add_requires_grad_on_output_nodes(graph: Graph) -> None:
    """Give each group's tensor outputs a requires_grad flag where profiles know it."""
    contexts = ContextMapping(graph)
    for node in graph.all_nodes():
        if node.kind() != DIFFERENTIABLE_GRAPH:
            continue
        sub = get_subgraph(node)
        for index, output in enumerate(sub.outputs()):
            type_ = output.type()
            if output.node.kind() == "prim::profile" or not isinstance(type_, TensorType):
                continue
            if type_.requires_grad is not None:
                continue
            found = find_requires_grad_for_output(node, node.outputs()[index], contexts)
            output.set_type(type_.with_requires_grad(found))
