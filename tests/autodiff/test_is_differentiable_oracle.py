"""gradview's is_differentiable against torch's verdict, node by node.

torch's verdict is read from its own slicer (``subgraph_oracle.torch_differentiable``:
the node alone, sliced by ``_jit_pass_create_autodiff_subgraphs``). The cases
are the rules of ``isDifferentiable`` that depend on whether an argument is a
constant: dropout's ``train`` (decided by its value only when it is a
constant; a run-time flag falls through to the gradient table), with the
arguments constants and graph inputs. (Views such as expand are judged by
the slicing itself, in test_create_autodiff_subgraphs: torch's slicer never
puts a lone view in a group, whatever isDifferentiable says.)
"""

from __future__ import annotations

import pytest

from gradview.autodiff import is_differentiable
from gradview.ir import parse_ir

from .subgraph_oracle import REQUIRES_GRAD, probe_verdicts, torch_differentiable, torch_partition

T = REQUIRES_GRAD

CASES = {
    "dropout, train a constant True": f"""graph(%x : {T}):
  %p : float = prim::Constant[value=0.3]()
  %t : bool = prim::Constant[value=1]()
  %y : Tensor = aten::dropout(%x, %p, %t)
  return (%y)
""",
    "dropout, train a constant False": f"""graph(%x : {T}):
  %p : float = prim::Constant[value=0.3]()
  %t : bool = prim::Constant[value=0]()
  %y : Tensor = aten::dropout(%x, %p, %t)
  return (%y)
""",
    "dropout, train a graph input": f"""graph(%x : {T}, %t : bool):
  %p : float = prim::Constant[value=0.3]()
  %y : Tensor = aten::dropout(%x, %p, %t)
  return (%y)
""",
    "dropout, p and train graph inputs": f"""graph(%x : {T}, %p : float, %t : bool):
  %y : Tensor = aten::dropout(%x, %p, %t)
  return (%y)
""",
}


@pytest.mark.parametrize("name", list(CASES))
def test_is_differentiable_is_torchs_verdict(name: str) -> None:
    graph = parse_ir(CASES[name])
    (node,) = [n for n in graph.nodes() if n.kind() == "aten::dropout"]
    assert is_differentiable(node) == torch_differentiable(node), name


def test_a_run_time_train_flag_puts_dropout_in_a_differentiable_graph_as_torch_does() -> None:
    """The whole slicing, not only the verdict: dropout with ``train`` a graph input
    joins its neighbours' DifferentiableGraph in torch and in gradview."""
    from gradview.autodiff.create_autodiff_subgraphs import create_autodiff_subgraphs

    from .subgraph_oracle import partition

    text = f"""graph(%x : {T}, %t : bool):
  %p : float = prim::Constant[value=0.3]()
  %a : Tensor = aten::tanh(%x)
  %y : Tensor = aten::dropout(%a, %p, %t)
  %z : Tensor = aten::sigmoid(%y)
  return (%z)
"""
    _, theirs = torch_partition(text, 2)
    graph = parse_ir(text)
    create_autodiff_subgraphs(graph, threshold=2)
    ours = partition(graph.nodes())
    assert ours == theirs
    assert any("aten::dropout" in group for group in ours.groups)


# -- every node of the conformance corpus and of the op sweep --------------------------------------
def _nodes_to_judge(graph: object) -> list:
    from gradview.autodiff.create_autodiff_subgraphs import VIEW_OPS

    return [
        node for node in graph.all_nodes()  # type: ignore[attr-defined]
        if node.kind() not in VIEW_OPS and node.kind() != "prim::Constant" and not node.blocks()
        and node.kind() not in ("prim::DifferentiableGraph", "prim::CallFunction", "prim::CallMethod")
    ]


def _disagreements(graph: object) -> list[str]:
    found = set()
    for node in _nodes_to_judge(graph):
        if any(str(out.type()).startswith(("DoubleTensor", "FloatTensor", "LongTensor")) for out in node.outputs()):
            continue  # a sparse result (DoubleTensor(...)): torch cannot read its own print back
        for lift in (False, True):
            mine, theirs = probe_verdicts(node, lift)
            if mine != theirs:
                how = "arguments as run-time inputs" if lift else "constant arguments"
                found.add(f"{node.kind()} ({how}): gradview {mine}, torch {theirs}")
    return sorted(found)


def test_every_corpus_node_is_judged_as_torch_judges_it() -> None:
    from ..ir.corpus import CASES_DIR, ROUNDTRIP_DIR, read_graph_text

    differ = {}
    for path in sorted(CASES_DIR.glob("*.ir")) + sorted(ROUNDTRIP_DIR.glob("*.ir")):
        found = _disagreements(parse_ir(read_graph_text(path)))
        if found:
            differ[path.name] = found
    assert differ == {}


def test_every_op_sweep_node_is_judged_as_torch_judges_it() -> None:
    """The traced graph of the first two samples of every op_db OpInfo (sizes do not
    change a verdict, so more samples add only probes already made)."""
    import warnings

    from ..ops.op_db_cases import op_samples, sweep_ops
    from .opinfo_cases import Case

    differ: dict[str, list[str]] = {}
    for op in sweep_ops():
        for index, sample in enumerate(op_samples(op, 2)):
            case = Case(op, index, sample)
            if any(t.layout.__repr__() != "torch.strided" for t in case.tensors):
                continue
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    text = case.traced_text()
            except Exception:  # what torch cannot trace, test_op_db lists
                continue
            found = _disagreements(parse_ir(text))
            if found:
                differ.setdefault(case.label, []).extend(found)
    assert differ == {}, "\n".join(f"{k}: {sorted(set(v))}" for k, v in sorted(differ.items()))
