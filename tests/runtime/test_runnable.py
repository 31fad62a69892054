"""A graph with ops gradview cannot run still loads, and says which nodes, all of them."""

from __future__ import annotations

from pathlib import Path

from gradview.ir import parse_ir
from gradview.loaders.targets import load_target
from gradview.runtime.runnable import cannot_run, describe_cannot_run

T = "Double(4, 4, strides=[4, 1], requires_grad=1, device=cpu)"
GRAPH = f"""graph(%x : {T}):
  %a : {T} = aten::tanh(%x)
  %b : {T} = aten::cudnn_grid_sampler(%a, %a)
  %c : {T} = ^python_scale[]()(%a)
  %d : {T} = mylib::frobnicate(%c)
  %e : {T} = aten::add(%b, %d, %a)
  %f : {T} = aten::sigmoid(%e)
  return (%f)
"""


def test_every_node_that_cannot_run_is_named_with_its_reason() -> None:
    found = cannot_run(parse_ir(GRAPH))
    assert [(item.op, item.reason) for item in found] == [
        ("aten::cudnn_grid_sampler", "gradview has no kernel for it"),
        ("prim::PythonOp", "it calls the Python function python_scale, which only PyTorch can run"),
        ("mylib::frobnicate", "an operator gradview's IR does not know"),
        ("aten::add", "no overload of aten::add accepts these 3 inputs"),
    ]
    assert found[0].node.startswith("%b : ") and "aten::cudnn_grid_sampler(%a, %a)" in found[0].node
    assert describe_cannot_run(found).startswith(
        "4 nodes cannot run: aten::cudnn_grid_sampler (gradview has no kernel for it); prim::PythonOp"
    )
    assert describe_cannot_run(found).endswith("; and 1 more op")


def test_a_runnable_graph_has_nothing_to_report() -> None:
    text = f"graph(%x : {T}):\n  %a : {T} = aten::tanh(%x)\n  return (%a)\n"
    assert cannot_run(parse_ir(text)) == []


def test_the_session_opens_and_its_note_names_every_node(tmp_path: Path) -> None:
    path = tmp_path / "blocked.ir"
    path.write_text(GRAPH)
    session = load_target(str(path))
    assert not session.can_run
    assert len(session.trace) > 1  # the executor's steps up to the failure
    assert [item.op for item in session.cannot_run] == [
        "aten::cudnn_grid_sampler", "prim::PythonOp", "mylib::frobnicate", "aten::add",
    ]
    (note,) = [n for n in session.notes if "cannot run" in n]
    assert "4 nodes cannot run" in note and "python_scale" in note
