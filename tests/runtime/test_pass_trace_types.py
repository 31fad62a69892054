"""GraphName, the Recorder protocol, structural matching of dumps, and the change function."""

from __future__ import annotations

import pytest

from gradview.ir import parse_ir
from gradview.runtime.graph_match import match_graphs
from gradview.runtime.pass_trace import NULL_TRACE, PassTrace
from gradview.runtime.trace_changes import format_change, step_changes
from gradview.runtime.trace_types import (
    AutogradZeroNotes,
    GraphName,
    GraphRole,
    Note,
    Recorder,
)

G = """graph(%x : Tensor, %y : Tensor):
  %a : Tensor = aten::mul(%x, %y)
  %b : Tensor = aten::sin(%a)
  return (%b)
"""


def test_graph_name_constructors_and_printed_form() -> None:
    assert str(GraphName.main()) == "main"
    assert str(GraphName.forward(0)) == "forward 0"
    assert str(GraphName.backward(2)) == "backward 2"
    assert str(GraphName.backward_executor(1)) == "backward executor 1"
    assert str(GraphName.main(compilation=3)) == "main (compilation 3)"
    assert str(GraphName.forward(0, compilation=2)) == "forward 0 (compilation 2)"
    assert GraphName.main(compilation=1) == GraphName.main()  # the first compilation goes unnumbered
    for name in (GraphName.main(), GraphName.forward(0), GraphName.backward_executor(4, 2)):
        assert GraphName.parse(str(name)) == name
    assert GraphName.backward(1).role is GraphRole.BACKWARD and GraphName.backward(1).index == 1


def test_graph_name_is_frozen_hashable_and_reads_legacy_spellings() -> None:
    name = GraphName.forward(0)
    with pytest.raises(AttributeError):
        name.index = 1  # type: ignore[misc]
    assert {GraphName.forward(0): "f"}[GraphName.of(("forward", 0))] == "f"
    assert GraphName.of(["backward executor", 3]) == GraphName.backward_executor(3)
    assert GraphName.of("main") == GraphName.main()
    assert GraphName.forward(0) != GraphName.backward(0) != GraphName.forward(1)
    assert GraphName.forward(0) != GraphName.forward(0, compilation=2)
    for bad in ("profiling", ("main", 0), ("forward", "0"), "forward x", 7):
        with pytest.raises(ValueError, match="not a graph name"):
            GraphName.of(bad)
    with pytest.raises(ValueError):
        GraphName(GraphRole.FORWARD)  # f of which DifferentiableGraph?


def test_pass_trace_is_a_recorder_and_takes_annotation_dataclasses() -> None:
    assert isinstance(PassTrace(), Recorder) and isinstance(NULL_TRACE, Recorder)
    trace = PassTrace()
    graph = parse_ir(G)
    a = next(n for n in graph.nodes() if n.kind() == "aten::mul").output()
    step = trace.record("specializeAutogradZero", graph, annotations=AutogradZeroNotes({a: "nonzero"}))
    assert step is not None and step.which == GraphName.main()
    assert step.annotations[Note.AUTOGRAD_ZERO] == {trace.id_of(a): "nonzero"}
    assert step.annotations["autograd_zero"] is step.annotations[Note.AUTOGRAD_ZERO]


def test_matching_an_unchanged_dump_keeps_every_id() -> None:
    old, new = parse_ir(G), parse_ir(G)
    pairs = match_graphs(old, new)
    assert len(pairs) == 2 + 2 + 2  # two inputs, two nodes, their two outputs
    trace = PassTrace()
    first = trace.record("A", old)
    trace.inherit_ids(pairs)
    second = trace.record("B", new)
    assert first is not None and second is not None and second.graph == first.graph


def test_matching_a_changed_dump_keeps_the_untouched_nodes() -> None:
    old = parse_ir(G)
    new = parse_ir(G.replace("aten::sin(%a)", "aten::cos(%a)"))
    trace = PassTrace()
    trace.record("A", old)
    trace.inherit_ids(match_graphs(old, new))
    trace.record("B", new)
    (change_a, change_b) = step_changes(trace)
    assert (change_b.changed, change_b.added, change_b.removed) == (True, 1, 1)
    assert format_change(change_b) == "1 B [main] changed +1 -1"
    assert format_change(change_a) == "0 A [main] changed +0 -0"


def test_step_changes_compare_each_graph_with_its_own_previous_step() -> None:
    trace = PassTrace()
    main = parse_ir(G)
    f = parse_ir(G)
    trace.record("Input", main, changed=False)
    trace.record("Differentiate", f, which=GraphName.forward(0))
    trace.record("Claims a change", main, changed=True)  # the graph is the same: unchanged
    mul = next(n for n in main.nodes() if n.kind() == "aten::mul")
    mul.output().replace_all_uses_with(mul.inputs()[0])
    mul.destroy()
    trace.record("Removes mul", main, changed=False)  # a pass that under-reports is still counted
    lines = [format_change(c) for c in step_changes(trace)]
    assert lines == [
        "0 Input [main] unchanged +0 -0",
        "1 Differentiate [forward 0] changed +0 -0",
        "2 Claims a change [main] unchanged +0 -0",
        "3 Removes mul [main] changed +0 -1",
    ]


def test_saved_trace_keeps_graph_names_and_changes(tmp_path) -> None:
    trace = PassTrace()
    graph = parse_ir(G)
    trace.record("Input", graph, changed=False)
    trace.record("X", graph, which=GraphName.backward_executor(1, compilation=2))
    trace.record("Y", graph, which=GraphName.backward_executor(1, compilation=2))
    path = tmp_path / "t.json"
    trace.save(str(path))
    loaded = PassTrace.load(str(path))
    assert [s.which for s in loaded] == [s.which for s in trace]
    assert step_changes(loaded) == step_changes(trace)
    assert format_change(step_changes(loaded)[2]) == "2 Y [backward executor 1 (compilation 2)] unchanged +0 -0"


def test_version_1_traces_with_legacy_graph_names_still_load(tmp_path) -> None:
    trace = PassTrace()
    trace.record("Input", parse_ir(G), changed=False)
    trace.record("Differentiate", parse_ir(G), which=GraphName.forward(0))
    data = trace.to_json()
    data["version"] = 1
    data["steps"][0]["which"] = "main"
    data["steps"][1]["which"] = ["forward", 0]
    loaded = PassTrace.from_json(data)
    assert [s.which for s in loaded] == [GraphName.main(), GraphName.forward(0)]
    data["steps"][1]["which"] = "profiling"
    with pytest.raises(ValueError, match="bad 'which'"):
        PassTrace.from_json(data)


def test_the_annotation_dataclasses_are_the_passes_own_and_name_note_keys() -> None:
    import dataclasses

    from gradview import autodiff
    from gradview.runtime import trace_types

    for name in ("AutogradZeroNotes", "AutodiffSubgraphNotes", "InlinedSubgraphNotes"):
        cls = getattr(trace_types, name)
        assert cls is getattr(autodiff, name)  # defined next to the pass, re-exported here
        assert cls.__dataclass_params__.frozen
        assert all(Note(field.name) for field in dataclasses.fields(cls))  # every field is a Note key
