"""PeepholeOptimize: replace small patterns by something simpler that computes the same.

A *peephole* rule looks at one node (and sometimes the node that produced
its input) and asks: does the graph's own type information prove this node is
unnecessary, or that its result is already known? Examples:

* ``x.t().t()`` is ``x``; ``x.expand(sizes x already has)`` is ``x``;
  ``x.type_as(y)`` is ``x`` when both already have the same dtype;
* ``x.size()`` and ``x.dim()`` are constants when the type of ``x`` says
  what they are (``Double(2, 3)`` has sizes ``[2, 3]`` and rank 2);
* ``len([a, b])`` is 2 and ``[a, b][1]`` is ``b`` when nothing mutates the list;
* ``n + 0``, ``n - 0`` and ``n * 1`` are ``n`` for ints, and ``x + 0``,
  ``x - 0``, ``x * 1``, ``x / 1`` are ``x`` for a tensor whose type shows
  that neither its dtype nor its shape would change;
* an ``if`` whose two branches return the same outside value for an output
  does not need that output; ``v is None`` is known when ``v``'s type cannot
  hold None;
* ``_grad_sum_to_size(x, None)`` is ``x`` and two nested ``_grad_sum_to_size``
  reduce to the outer one.

One rewrite often enables another (folding ``x.dim()`` lets a later rule see
a constant), so the pass repeats until nothing changes. Nodes a rewrite
leaves unused are removed on the spot.

The executor runs it in ``runOptimization`` right after common-subexpression
elimination and again after loop unrolling: specializing a graph to the
shapes it was profiled with turns many such checks into constants, and
constant propagation then folds what depends on them.

Where gradview differs from TorchScript: ``v is None`` is not folded for a
tensor-typed ``v``, because gradview represents an undefined tensor (an
AutogradZero gradient) as None at run time, and ``x + 0`` is only removed
when neither ``x`` nor the result is written in place and they do not both
escape the graph (TorchScript's ``safeToChangeAliasingRelationship``).

Before::

    %one : int = prim::Constant[value=1]()
    %a : Tensor = aten::t(%x)
    %b : Tensor = aten::t(%a)
    %n : int = aten::dim(%x)           # %x : Double(2, 3)
    %m : int = aten::mul(%n, %one)
    return (%b, %m)

After::

    %6 : int = prim::Constant[value=2]()
    return (%x, %6)
"""

from __future__ import annotations

from ..graph import Block, Graph
from .alias_db import AliasDb
from .peephole_rules import RULES, Rewriter, rule_key

__all__ = ["peephole_optimize"]

_MAX_ROUNDS = 1000  # every round shrinks the graph; this only guards against a bug


def peephole_optimize(graph: Graph) -> bool:
    """Apply the peephole rules to a fixpoint; True if the graph changed."""
    changed = False
    for _ in range(_MAX_ROUNDS):
        # A fresh alias database each round: the last round's rewrites may
        # have changed which values share memory.
        rewriter = Rewriter(graph, AliasDb(graph))
        if not _sweep(rewriter, graph.block):
            break
        changed = True
    return changed


def _sweep(rewriter: Rewriter, block: Block) -> bool:
    """Try the rules on every node of ``block``, nested blocks first."""
    changed = False
    for node in block.nodes():
        if not node.is_alive:
            continue
        for sub in node.blocks():
            changed |= _sweep(rewriter, sub)
        # Rules only rewrite values somebody reads; dead nodes are DCE's job.
        if not node.has_uses():
            continue
        rule = RULES.get(rule_key(node))
        if rule is not None and rule(rewriter, node):
            changed = True
    return changed
