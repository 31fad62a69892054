"""The typed vocabulary of the pass trace: which graph a step shows, the
annotation keys, the annotations passes hand back, and the recorder protocol.

The executor, ``differentiate`` and the JIT-log reader speak to a trace only
through :class:`Recorder`; :class:`gradview.runtime.pass_trace.PassTrace`
implements it. A step's graph is named by a :class:`GraphName`::

    GraphName.main()                 # the graph being compiled
    GraphName.forward(k)             # f of DifferentiableGraph k
    GraphName.backward(k)            # df of DifferentiableGraph k, as differentiate writes it
    GraphName.backward_executor(k)   # df again, as its own executor compiles it

Its printed form (``main``, ``forward 0``, ``backward executor 0``) is what the
``==`` headers and the ``[<graph>]`` names show. A JIT log holds several
compilations (executors); a graph of the second and later ones carries its
number: ``main (compilation 2)``.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

# The annotations the executor's passes return with their results, defined
# next to each pass (the autodiff layer) and named here with the trace's keys.
from gradview.autodiff import AutodiffSubgraphNotes, AutogradZeroNotes, InlinedSubgraphNotes

if TYPE_CHECKING:
    from gradview.ir import Graph

__all__ = [
    "AutogradZeroNotes",
    "AutodiffSubgraphNotes",
    "GraphName",
    "GraphRole",
    "InlinedSubgraphNotes",
    "MAIN_GRAPH",
    "Note",
    "Recorder",
    "differentiated_graph_name",
    "notes_dict",
]


class GraphRole(enum.Enum):
    MAIN = "main"
    FORWARD = "forward"
    BACKWARD = "backward"
    BACKWARD_EXECUTOR = "backward executor"


_ROLES = {role.value: role for role in GraphRole}


@dataclass(frozen=True)
class GraphName:
    """Which graph a step shows; immutable and hashable, equal only to a GraphName
    with the same fields (print it with ``str``, read its ``role`` and ``index``).

    ``index`` is the DifferentiableGraph number k (None for ``main``);
    ``compilation`` numbers a JIT log's compilations after the first (None:
    the first, or a trace of one compilation).
    """

    role: GraphRole = GraphRole.MAIN
    index: int | None = None
    compilation: int | None = None

    def __post_init__(self) -> None:
        if (self.role is GraphRole.MAIN) != (self.index is None):
            raise ValueError(f"{self.role.value} graph needs {'no' if self.index is None else 'a'} index")
        if self.compilation == 1:
            object.__setattr__(self, "compilation", None)

    # -- named constructors --------------------------------------------------
    @classmethod
    def main(cls, compilation: int | None = None) -> GraphName:
        return cls(GraphRole.MAIN, None, compilation)

    @classmethod
    def forward(cls, k: int, compilation: int | None = None) -> GraphName:
        return cls(GraphRole.FORWARD, k, compilation)

    @classmethod
    def backward(cls, k: int, compilation: int | None = None) -> GraphName:
        return cls(GraphRole.BACKWARD, k, compilation)

    @classmethod
    def backward_executor(cls, k: int, compilation: int | None = None) -> GraphName:
        return cls(GraphRole.BACKWARD_EXECUTOR, k, compilation)

    @classmethod
    def of(cls, which: Any) -> GraphName:
        """A GraphName from itself, its printed form, or the legacy spellings
        (``"main"``, ``("forward", k)``, ``["backward", k]``) of saved traces."""
        if isinstance(which, GraphName):
            return which
        if isinstance(which, str):
            return cls.parse(which)
        if isinstance(which, (tuple, list)) and len(which) in (2, 3):
            role = _ROLES.get(which[0]) if isinstance(which[0], str) else None
            k = which[1]
            compilation = which[2] if len(which) == 3 else None
            if (
                role is not None
                and role is not GraphRole.MAIN
                and isinstance(k, int)
                and (compilation is None or isinstance(compilation, int))
            ):
                return cls(role, k, compilation)
        raise ValueError(f"not a graph name: {which!r}")

    @classmethod
    def parse(cls, text: str) -> GraphName:
        """The inverse of ``str()``: ``main``, ``forward 0``, ``backward executor 1 (compilation 2)``."""
        body, compilation = text.strip(), None
        if body.endswith(")") and " (compilation " in body:
            body, _, rest = body.partition(" (compilation ")
            number = rest[:-1]
            if not number.isdigit():
                raise ValueError(f"not a graph name: {text!r}")
            compilation = int(number)
        if body == "main":
            return cls.main(compilation)
        head, _, k = body.rpartition(" ")
        role = _ROLES.get(head)
        if role is None or role is GraphRole.MAIN or not k.isdigit():
            raise ValueError(f"not a graph name: {text!r}")
        return cls(role, int(k), compilation)

    # -- queries ----------------------------------------------------------------
    @property
    def is_main(self) -> bool:
        return self.role is GraphRole.MAIN

    @property
    def is_forward(self) -> bool:
        return self.role is GraphRole.FORWARD

    @property
    def is_backward(self) -> bool:
        return self.role is GraphRole.BACKWARD

    @property
    def is_backward_executor(self) -> bool:
        return self.role is GraphRole.BACKWARD_EXECUTOR

    def __str__(self) -> str:
        text = self.role.value if self.index is None else f"{self.role.value} {self.index}"
        return text if self.compilation is None else f"{text} (compilation {self.compilation})"

    def __repr__(self) -> str:
        return f"GraphName({str(self)!r})"


MAIN_GRAPH = GraphName.main()


class Note(enum.StrEnum):
    """Annotation keys. A StrEnum: ``step.annotations[Note.GRAD_OF]`` and the
    saved JSON (plain strings) read the same entry."""

    # CreateAutodiffSubgraphs
    DIFFERENTIABLE_GRAPHS = "differentiable_graphs"  # DifferentiableGraph node id -> k
    EXCLUDED = "excluded"  # node id -> why it stayed outside every group
    AUTODIFF_MODE = "autodiff_mode"  # "torch" or "extended"
    # node id -> (OutsideCause value, extended mode differentiates it), for each node
    # outside every group with an output that requires grad
    NEEDS_GRAD_OUTSIDE = "needs_grad_outside"
    MIN_GROUP_SIZE = "min_group_size"  # the minimum group size it ran with (PyTorch: 2)
    # specializeAutogradZero
    AUTOGRAD_ZERO = "autograd_zero"  # value id -> "zero" | "nonzero" | "unknown"
    # InlineAutodiffSubgraphs
    INLINED = "inlined"  # DifferentiableGraph node id -> why it was pasted back
    INLINE_THRESHOLD = "inline_threshold"  # the threshold it ran with (PyTorch: 5)
    # differentiate (the Gradient's lists)
    F_REAL_OUTPUTS = "f_real_outputs"
    DF_INPUT_VJPS = "df_input_vjps"
    DF_INPUT_CAPTURED_INPUTS = "df_input_captured_inputs"
    DF_INPUT_CAPTURED_OUTPUTS = "df_input_captured_outputs"
    DF_OUTPUT_VJPS = "df_output_vjps"
    GRAD_OF = "grad_of"  # GradOf node id -> the forward node it differentiates
    READS_FROM_FORWARD = "reads_from_forward"  # before lambdaLiftReverse: forward values df reads
    # Where df takes each list's values when its inputs are not in the Gradient's
    # order (vjps, captured inputs, captured outputs) and its returns are not the
    # gradients alone: AOTAutograd's backward takes the saved values first and
    # returns None for inputs without a gradient. Positions in df's inputs / returns.
    DF_VJP_PARAMS = "df_vjp_params"
    DF_CAPTURED_INPUT_PARAMS = "df_captured_input_params"
    DF_CAPTURED_OUTPUT_PARAMS = "df_captured_output_params"
    DF_OUTPUT_RETURNS = "df_output_returns"
    # torch.compile's structured traces (TORCH_TRACE)
    COMPILE_ID = "compile_id"  # "0/0", "1/0", "0/0_1" (a retried compile)
    SYMBOLIC_SIZES = "symbolic_sizes"  # forward value name -> its sizes, symbols as text ("s77")
    SYMBOL_VALUES = "symbol_values"  # symbol -> the value it had in the run that compiled it
    VALUE_NAMES = "value_names"  # graph value name -> the name users act on ("primals_98" -> "layer4.1.conv2.weight")
    PARAMETER_OWNERS = "parameter_owners"  # parameter/buffer input name -> its module ("" the model's own)
    # JIT logs
    HEADER = "header"
    COMPILATION = "compilation"
    LOG_LINE = "log_line"
    LOG = "log"


# -- annotations the executor's passes hand back ------------------------------------------
# AutogradZeroNotes, AutodiffSubgraphNotes and InlinedSubgraphNotes (imported
# above): each field name is a Note value; :func:`notes_dict` turns one into
# the step's annotations.


def differentiated_graph_name(notes: Mapping[str, Any], k: int) -> str:
    """What differentiated graph k is called, from its forward step's annotations:
    ``compiled graph 0/0`` for torch.compile's, ``DifferentiableGraph 0`` for TorchScript's."""
    compile_id = notes.get(Note.COMPILE_ID)
    return f"compiled graph {compile_id}" if compile_id is not None else f"DifferentiableGraph {k}"


def notes_dict(notes: Any) -> dict[str, Any]:
    """A step's annotations from an annotation dataclass (or a mapping, keyed by Note or str)."""
    if notes is None:
        return {}
    if dataclasses.is_dataclass(notes) and not isinstance(notes, type):
        out = {Note(f.name).value: getattr(notes, f.name) for f in dataclasses.fields(notes)}
    else:
        out = {str(key): value for key, value in dict(notes).items()}  # a Note is its str
    return {key: value for key, value in out.items() if value is not None}


@runtime_checkable
class Recorder(Protocol):
    """What the executor, ``differentiate`` and log readers call to record steps."""

    enabled: bool

    def record(
        self,
        pass_name: str,
        graph: Graph,
        *,
        which: GraphName = ...,
        changed: bool = ...,
        seconds: float = ...,
        annotations: Any = ...,
    ) -> Any:
        """Snapshot ``graph`` after ``pass_name`` ran on it."""
        ...

    def inherit_ids(self, copies: Mapping[Any, Any]) -> None:
        """Show each copy (a value of ``copies``) as the same node as its original."""
        ...

    def record_saved(self, which: GraphName, metas: list[Any]) -> None:
        """Remember (shape, dtype) of what DifferentiableGraph ``which``'s first run saved for backward."""
        ...

    def autodiff_recorder(self, k: int) -> Callable[..., None] | None:
        """The ``record(step_name, gradient, reverse_details, changed)`` callback
        ``differentiate`` takes for DifferentiableGraph ``k``."""
        ...
