"""``--min-group-size N`` beside ``--inline-threshold``, and ``--inputs ...:nograd``.

``x * w`` is one op: PyTorch's smallest DifferentiableGraph has 2
(CreateAutodiffSubgraphs' minSubgraphSize), so by default it gets none and
the message says why; ``--min-group-size 1`` (beyond PyTorch) gives it one,
kept and differentiated, and the viewer's header says it differs from PyTorch.
"""

from __future__ import annotations

from pathlib import Path

import numpy
import pytest

from gradview.cli.main import main
from gradview.cli.options import PYTORCH_MIN_GROUP_SIZE
from gradview.loaders.targets import TargetError, load_target
from gradview.runtime.no_graph_reason import MIN_SUBGRAPH_SIZE, no_differentiable_graph_reason
from gradview.runtime.trace_types import Note
from gradview.viewer.formatting import min_group_size_label

TIMES = '''import numpy as np


def f(x, w):
    return x * w


def g(x, w):
    return (x * w).sin() * w


def example_inputs():
    rng = np.random.default_rng(0)
    return [rng.standard_normal((3, 4)), rng.standard_normal((3, 4))]
'''


@pytest.fixture
def times(tmp_path: Path) -> str:
    path = tmp_path / "times.py"
    path.write_text(TIMES)
    return f"{path}:f"


def test_the_default_minimum_group_size_is_pytorchs() -> None:
    from gradview.autodiff.create_autodiff_subgraphs import DEFAULT_THRESHOLD

    assert PYTORCH_MIN_GROUP_SIZE == MIN_SUBGRAPH_SIZE == DEFAULT_THRESHOLD == 2


def test_one_op_gets_no_group_by_default_and_the_message_says_why(times: str) -> None:
    trace = load_target(times).trace
    assert trace.min_group_size() == 2
    reason = no_differentiable_graph_reason(trace)
    assert "aten::mul" in reason and "fewer than 2 ops" in reason
    assert "--min-group-size 1" in reason
    assert "nothing in it needed grad" not in reason


def test_min_group_size_one_makes_and_keeps_a_group_of_one_op(times: str) -> None:
    trace = load_target(times, min_group_size=1).trace
    assert trace.min_group_size() == 1
    created = trace.select("CreateAutodiffSubgraphs")[0]
    assert len(created.annotations[Note.DIFFERENTIABLE_GRAPHS]) == 1
    # Kept after differentiating: f (the mul and its size plumbing) reaches PyTorch's inline threshold.
    assert trace.inline_threshold() == 5
    assert "prim::DifferentiableGraph" in trace.select("InlineAutodiffSubgraphs")[0].text()
    assert any(step.which.is_backward_executor for step in trace)


def test_the_header_says_a_size_that_is_not_pytorchs() -> None:
    assert min_group_size_label(None) == min_group_size_label(2) == ""
    assert min_group_size_label(1) == " · min group size 1 (not PyTorch's 2)"


def test_the_command_line_takes_the_size(times: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", times, "--changes", "--min-group-size", "1"]) == 0
    assert "[backward executor 0]" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["trace", times, "--min-group-size", "0"])
    assert "1 or more" in capsys.readouterr().err
    with pytest.raises(TargetError):
        load_target(times, min_group_size=0)


def test_nograd_input_reaches_the_executor_and_gets_no_gradient(times: str) -> None:
    trace = load_target(times, inputs="3x4,w=3x4:f32:nograd", min_group_size=1).trace
    typed = trace.select("specializeTypes")[0].graph
    assert [p.type for p in typed.params] == [
        "Double(*, *, requires_grad=1, device=cpu)", "Float(*, *, requires_grad=0, device=cpu)"
    ]
    df = [step for step in trace if step.which.is_backward][-1]
    assert df.text().count("_grad_sum_to_size(") == 1  # x's gradient only


def test_nograd_reaches_specialize_autograd_zero_with_a_zero_state_marked(times: str) -> None:
    from gradview.viewer.marks import step_marks
    from gradview.viewer.model import Mark, View

    trace = load_target(times.replace(":f", ":g"), inputs="3x4,3x4:nograd").trace
    zero = [s for s in trace.select("specializeAutogradZero") if s.which.is_backward_executor][0]
    states = zero.annotations[Note.AUTOGRAD_ZERO]
    assert "Zero" in states.values()
    marks = step_marks(trace, zero.index, View.BACKWARD, 0)
    zeros = [value for value, found in marks.values.items() if Mark.ZERO in found]
    assert zeros and all(states[value] == "Zero" for value in zeros)
    # w gets no gradient: df's executor computes one (x's).
    assert zero.text().count("_grad_sum_to_size(") == 2  # x's: through mul, and through sin's mul


def test_every_input_nograd_says_none_requires_grad(times: str) -> None:
    trace = load_target(times, inputs="3x4:nograd,3x4:nograd").trace
    assert "no graph input requires grad" in no_differentiable_graph_reason(trace)


def test_ir_input_annotated_requires_grad_0_keeps_it(tmp_path: Path) -> None:
    path = tmp_path / "times.ir"
    path.write_text(
        "graph(%x : Double(3, 4, requires_grad=1, device=cpu),\n"
        "      %w : Double(3, 4, requires_grad=0, device=cpu)):\n"
        "  %2 : Tensor = aten::mul(%x, %w)\n"
        "  %3 : Tensor = aten::sin(%2)\n"
        "  return (%3)\n"
    )
    typed = load_target(str(path)).trace.select("specializeTypes")[0].graph
    assert [p.type for p in typed.params][1] == "Double(*, *, requires_grad=0, device=cpu)"


def test_example_inputs_say_which_require_grad(tmp_path: Path) -> None:
    path = tmp_path / "marked.py"
    path.write_text(
        "import numpy as np\n"
        "from gradview.runtime import Tensor\n\n\n"
        "def f(x, w):\n    return (x * w).sin()\n\n\n"
        "def example_inputs():\n"
        "    return [Tensor(np.ones((2, 3)), requires_grad=True), Tensor(np.ones((2, 3)))]\n"
    )
    session = load_target(f"{path}:f")
    typed = session.trace.select("specializeTypes")[0].graph
    assert ["requires_grad=1" in p.type for p in typed.params] == [True, False]
    assert isinstance(session.inputs[0], numpy.ndarray)
