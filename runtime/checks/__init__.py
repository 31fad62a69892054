"""gradview.runtime.checks: run a trace's steps and check them, for the viewer and scripts.

Typed functions over a :class:`~gradview.runtime.pass_trace.PassTrace` that
return frozen results and never raise for a failing graph (a failure is a
one-line message naming the node):

* :func:`run_step` (``r``): run one step's graph, summarize every value;
* :func:`find_divergence` (``b``): the first step whose outputs or gradients
  differ from the original graph's (on a TORCH_TRACE log, from the joint graph's);
* :func:`check_step_gradient` (``G``): a step's gradient against finite differences;
* :func:`gradient_path` (``T``): the df ops a gradient is computed through,
  and the forward ops they differentiate;
* :func:`summarize_value`: what one run-time value held;
* :func:`forward_step`, :func:`backward_step`, :func:`gradient_notes` and the other
  lookups of :mod:`.trace_steps`: which step holds a group's f, df or Gradient lists.

Where each job lives: :mod:`.graph_runs` runs one step with probes,
:mod:`.step_feeds` says what a step runs on, :mod:`.compiled_runs` feeds a
TORCH_TRACE log's graphs, :mod:`.states` runs DifferentiableGraph states and
eager gradients, :mod:`.compare` compares values, :mod:`.finite_differences`
is gradcheck's comparison, :mod:`.graph_gradient` checks one graph's gradient,
:mod:`.trace_steps` finds a group's f and df at a step.
"""

from .divergence import Divergence, find_divergence, first_divergent_step
from .finite_differences import (
    GRADCHECK,
    GradCheckRow,
    GradientComparison,
    Tolerance,
    compare_gradients,
)
from .gradient import check_step_gradient
from .graph_gradient import gradient_check
from .result import CheckCancelled, CheckResult, CheckRow, Status
from .run_step import StepRun, run_step
from .trace_back import GradientPath, gradient_path
from .trace_steps import (
    backward_step,
    companion_index,
    differentiable_graph_count,
    first_index,
    forward_step,
    grad_of_links,
    gradient_notes,
    latest_step,
)
from .value_summary import ValueSummary, short_repr, summarize_value

__all__ = [
    "GRADCHECK",
    "CheckCancelled",
    "CheckResult",
    "CheckRow",
    "Divergence",
    "GradCheckRow",
    "GradientComparison",
    "GradientPath",
    "Status",
    "StepRun",
    "Tolerance",
    "ValueSummary",
    "backward_step",
    "check_step_gradient",
    "companion_index",
    "compare_gradients",
    "differentiable_graph_count",
    "find_divergence",
    "first_divergent_step",
    "first_index",
    "forward_step",
    "grad_of_links",
    "gradient_check",
    "gradient_notes",
    "gradient_path",
    "latest_step",
    "run_step",
    "short_repr",
    "summarize_value",
]
