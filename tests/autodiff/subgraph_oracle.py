"""torch as the oracle for create_autodiff_subgraphs.

* :func:`torch_partition` runs ``torch._C._jit_pass_create_autodiff_subgraphs``
  on the same IR text and :func:`partition` reads either graph the same way:
  each DifferentiableGraph as the sorted kinds of its subgraph's nodes, and
  the sorted kinds left outside (nested blocks included). ``prim::Constant``
  is left out of both: the pass copies constants into every group that reads
  them, and merging one group into another leaves dead copies behind whose
  number depends on the order of merges, not on the partition.
* :func:`torch_differentiable` asks torch whether it would put one node in a
  DifferentiableGraph: the node alone, fed by graph inputs (constants copied),
  each tensor output followed by ``aten::neg`` so no output aliases an input,
  sliced with threshold 1. Passing it to create_autodiff_subgraphs checks the
  slicing itself against torch's, whatever gradient formulas gradview has.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import torch

from gradview.autodiff import is_differentiable
from gradview.autodiff.create_autodiff_subgraphs import VIEW_OPS
from gradview.ir import Graph, Node, TensorType
from gradview.ir.types import IntType

__all__ = [
    "Partition", "canonical", "partition", "torch_partition", "torch_text", "torch_differentiable",
    "probe_verdicts",
    "disagreements", "require_grad_inputs", "REQUIRES_GRAD",
]

DG = "prim::DifferentiableGraph"


@dataclass(frozen=True)
class Partition:
    groups: tuple[tuple[str, ...], ...]  # sorted kinds per subgraph, groups sorted
    outside: tuple[str, ...]  # sorted kinds outside any subgraph

    def __str__(self) -> str:
        groups = "\n".join("  group: " + " ".join(g) for g in self.groups)
        return f"{groups}\n  outside: {' '.join(self.outside)}"


def partition(nodes: Iterable[Any]) -> Partition:
    """Read a partition from gradview or torch nodes (same method names)."""
    groups: list[tuple[str, ...]] = []
    outside: list[str] = []
    stack = [iter(list(nodes))]
    while stack:
        node = next(stack[-1], None)
        if node is None:
            stack.pop()
            continue
        kind = node.kind()
        if kind == DG:
            sub = node.g("Subgraph")
            groups.append(tuple(sorted(n.kind() for n in sub.nodes() if n.kind() != "prim::Constant")))
        elif kind != "prim::Constant":
            outside.append(kind)
        for block in node.blocks():
            stack.append(iter(list(block.nodes())))
    return Partition(tuple(sorted(groups)), tuple(sorted(outside)))


def canonical(text: str) -> str:
    """Printed IR with values renumbered per graph section and comments dropped,
    so gradview's and torch's prints compare whatever the value names."""
    return "with ".join(_renumber(section) for section in re.split(r"(?m)^with ", text))


def _renumber(section: str) -> str:
    names: dict[str, str] = {}
    section = re.sub(r" #.*$", "", section, flags=re.MULTILINE)
    return re.sub(r"%([\w.]+)", lambda m: "%" + names.setdefault(m.group(1), str(len(names))), section)


def torch_text(text: str) -> str:
    """gradview writes nodes without outputs as ``  = prim::Print(...)``; torch's parser wants no ``=``."""
    return re.sub(r"^( *) = ", r"\1", text, flags=re.MULTILINE)


REQUIRES_GRAD = "Double(3, 3, strides=[3, 1], requires_grad=1, device=cpu)"


def require_grad_inputs(text: str) -> str:
    """Type every plain ``Tensor`` graph input as a 3x3 double requiring grad."""
    head, sep, body = text.partition("):\n")
    head = re.sub(r" : Tensor(?=[,)]|$)", " : " + REQUIRES_GRAD, head, flags=re.MULTILINE)
    return head + sep + body


def torch_partition(text: str, threshold: int) -> tuple[Any, Partition]:
    text = re.sub(r"\bTensor\(requires_grad=[01]\)", "Tensor", torch_text(text))
    graph = torch._C.parse_ir(text, parse_tensor_constants=True)
    torch._C._jit_pass_create_autodiff_subgraphs(graph, threshold)
    return graph, partition(graph.nodes())


_VERDICTS: dict[str, bool] = {}


def _probe_text(node: Node, lift_constants: bool = False) -> str:
    """``node`` alone in a graph, its tensor outputs negated. Its constant inputs
    are copied, or with ``lift_constants`` made graph inputs (known only at run
    time), all but ``None`` (an absent optional argument, not a value)."""
    graph = Graph()
    mapping = {}
    for value in node.inputs():
        if value in mapping:
            continue
        # (a tensor constant is a graph input too: its constness decides nothing,
        # and torch's parser cannot read back the many-element ones it prints)
        constant = value.node.kind() == "prim::Constant" and not isinstance(value.type(), TensorType)
        if constant and (not lift_constants or str(value.type()) in ("NoneType", "Function")):
            copied = graph.append_node(graph.create_clone(value.node, lambda v: v))
            mapping[value] = copied.output()
        else:
            mapping[value] = graph.add_input(type_=value.type())
    clone = graph.append_node(graph.create_clone(node, mapping.__getitem__))
    for out in clone.outputs():
        if isinstance(out.type(), TensorType):
            neg = graph.append_node(graph.create("aten::neg", [out]))
            graph.register_output(neg.output())
        elif str(out.type()) == "Tensor[]":
            # A list leaves a group only unpacked (as traced graphs do): torch's
            # slicer never groups a node whose list goes straight out.
            dim = graph.append_node(graph.create("prim::Constant", []))
            dim.i_("value", 0)
            dim.output().set_type(IntType())
            cat = graph.append_node(graph.create("aten::cat", [out, dim.output()]))
            neg = graph.append_node(graph.create("aten::neg", [cat.output()]))
            graph.register_output(neg.output())
        else:
            graph.register_output(out)
    return str(graph)


# Sizes and strides do not change torch's verdict: one probe per shape-erased text.
_SIZES = re.compile(r"\((?:[\d*]+, )*[\d*]+, strides=\[[\d, ]*\], |\((?:[\d*]+, )*[\d*]+, (?=requires_grad)")


def torch_differentiable(node: Node, lift_constants: bool = False) -> bool:
    """Would torch's slicer consider ``node`` differentiable (isDifferentiable)?"""
    if node.blocks() or node.kind() in (DG, "prim::Constant"):
        return False
    text = _probe_text(node, lift_constants)
    key = re.sub(r" #.*$", "", _SIZES.sub("(", text), flags=re.MULTILINE)
    verdict = _VERDICTS.get(key)
    if verdict is None:
        _, found = torch_partition(text, 1)
        verdict = _VERDICTS[key] = any(node.kind() in group for group in found.groups)
    return verdict


def probe_verdicts(node: Node, lift_constants: bool) -> tuple[bool, bool]:
    """(gradview's, torch's) verdict on ``node`` alone, as the probe graph has it."""
    from gradview.ir import parse_ir

    probe = parse_ir(_probe_text(node, lift_constants))
    mine = next(n for n in probe.nodes() if n.kind() == node.kind())  # (before the negations)
    return is_differentiable(mine), torch_differentiable(node, lift_constants)


def disagreements(graph: Graph) -> list[str]:
    """Kinds (views and constants aside) gradview and torch judge differently."""
    differ = set()
    for node in graph.all_nodes():
        if node.kind() in VIEW_OPS or node.kind() == "prim::Constant" or node.blocks():
            continue
        if is_differentiable(node) != torch_differentiable(node):
            mark = "gradview only" if is_differentiable(node) else "torch only"
            differ.add(f"{node.kind()} ({mark})")
    return sorted(differ)
