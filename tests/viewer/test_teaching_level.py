"""The ops level on f, df and the joint view (issue 23, point 2): autodiff's plumbing folds.

For every function of examples/teaching/, the joint view at ``--detail ops``
draws no shape plumbing, constant or tuple packing (``aten::size``,
``_size_if_not_equal``, ``prim::Constant``, ``ListConstruct``,
``TupleConstruct``) and no ``_grad_sum_to_size`` (its reader shows the
gradient), at its last step, as ``gradview export --view joint --detail ops``
draws it; every real op of that step is still drawn.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gradview.runtime.trace_records import walk_records
from gradview.viewer.detail import Detail
from gradview.viewer.export import export_transforms, trace_frames
from gradview.viewer.model import NodeRole, View
from gradview.viewer.session import load_target
from gradview.viewer.views import view_unavailable_reason

ROOT = Path(__file__).resolve().parents[2]
TEACHING = sorted((ROOT / "examples" / "teaching").glob("*.py"))
PLUMBING = ("aten::size", "_size_if_not_equal", "prim::Constant", "ListConstruct", "TupleConstruct", "_grad_sum_to_size")


@pytest.mark.parametrize("path", TEACHING, ids=lambda p: p.stem)
def test_the_joint_view_at_the_ops_level_draws_no_plumbing(path: Path) -> None:
    size = 1 if path.stem == "x_times_w" else None  # one op: PyTorch's minimum group is 2
    trace = load_target(f"{path}:f", min_group_size=size).trace
    last = max(s.index for s in trace if view_unavailable_reason(trace, s.index, View.JOINT, 0) is None)
    frame = trace_frames(trace, View.JOINT, 0, [last], export_transforms(trace, Detail.OPS))[0]
    drawn = [node.label.splitlines()[0] for node in frame.graph.nodes.values()]
    heads = [label.split()[0].split("::")[-1] if label else "" for label in drawn]
    assert not [head for head in heads if head in {kind.split("::")[-1] for kind in PLUMBING}], drawn
    ops = [node for node in frame.graph.nodes.values() if node.role is NodeRole.OP]
    assert ops
    # The real ops of f and df are all there (mul, sin, cos...): only plumbing went.
    real = {
        n.kind.split("::")[-1] for s in trace if s.index == last or s.which.index == 0
        for n in walk_records(s.graph) if n.kind.startswith("aten::") and not n.kind.startswith("aten::_")
        and n.kind not in ("aten::size",)
    }
    assert set(heads) & real


def test_values_are_named_as_the_source_names_them() -> None:
    """f's ``%x.1`` and ``%sin_x.3`` read ``x`` and ``sin_x``, as df's captures of them do;
    a loop's ``h.2``, ``h.4`` keep their numbers (one name for several values would lie),
    and df's captures of them read as in f (df's own names are ``h.1`` and ``h.3``)."""
    labels = {}
    for name in ("sin_times_x", "loop_if"):
        trace = load_target(f"{ROOT / 'examples' / 'teaching' / name}.py:f").trace
        frame = trace_frames(trace, View.JOINT, 0, [len(trace) - 1], export_transforms(trace, Detail.OPS))[0]
        labels[name] = "\n".join(node.label for node in frame.graph.nodes.values())
    assert "%x : " in labels["sin_times_x"] and "%sin_x : " in labels["sin_times_x"]
    assert "%x.1" not in labels["sin_times_x"] and "%sin_x.3" not in labels["sin_times_x"]
    assert labels["loop_if"].count("%h.2 : ") == 2 and labels["loop_if"].count("%h.4 : ") == 2
    assert "%h.1" not in labels["loop_if"] and "%h.3" not in labels["loop_if"]


def test_grad_of_frames_say_the_op_they_differentiate() -> None:
    """Before LowerGradOf, df's GradOf blocks are frames titled by their primal op, holding
    the formula's ops (the _grad_sum_to_size a block returns folds into the block's return)."""
    trace = load_target(f"{ROOT / 'examples' / 'teaching' / 'sin_times_x'}.py:f").trace
    first = next(s.index for s in trace if s.which.is_backward)
    frame = trace_frames(trace, View.JOINT, 0, [first], export_transforms(trace, Detail.OPS))[0]
    titles = sorted(c.title for c in frame.graph.clusters.values() if c.key not in ("f", "df"))
    assert titles == ["gradient of mul", "gradient of sin"]
    assert not [n for n in frame.graph.nodes.values() if "_grad_sum_to_size" in n.label]


def test_run_values_reach_the_values_named_as_the_source_names_them() -> None:
    """r on f at the ops level: %x and %sin_x (the IR's %x.1 and %sin_x.3) show their values."""
    from gradview.runtime.checks import run_step
    from gradview.viewer.formatting import add_run_values

    session = load_target(f"{ROOT / 'examples' / 'teaching' / 'sin_times_x'}.py:f")
    trace = session.trace
    step = [s for s in trace if s.which.is_forward][-1]
    frame = trace_frames(trace, View.FORWARD, 0, [step.index], export_transforms(trace, Detail.OPS))[0]
    shown = add_run_values(frame.graph, step, run_step(trace, step.index, session.inputs))
    labels = "\n".join(node.label for node in shown.nodes.values())
    assert "%x = 3x4 float64" in labels and "%sin_x = 3x4 float64" in labels


def test_a_folded_grad_sum_to_size_hands_its_roles_to_the_box_making_the_gradient() -> None:
    """x * w: df's gradients are _grad_sum_to_size's results; folded, the muls making
    them carry the vjp output roles (and their own AutogradZero states only)."""
    from gradview.viewer.model import Mark

    trace = load_target(f"{ROOT / 'examples' / 'teaching' / 'x_times_w'}.py:f", min_group_size=1).trace
    frame = trace_frames(trace, View.JOINT, 0, [len(trace) - 1], export_transforms(trace, Detail.OPS))[0]
    muls = [i for i, n in frame.graph.nodes.items() if n.cluster == "df" and n.label.startswith("mul")]
    assert len(muls) == 2
    for box in muls:
        found = frame.marks.nodes.get(box, set())
        assert Mark.VJP_OUTPUT in found
        assert len(found & {Mark.ZERO, Mark.NONZERO, Mark.UNKNOWN}) <= 1
    assert sorted(frame.marks.indices[(box, Mark.VJP_OUTPUT)] for box in muls) == [0, 1]
