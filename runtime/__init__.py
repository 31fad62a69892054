"""gradview.runtime: run graphs on NumPy or CuPy."""

# First: keep freed memory for reuse (glibc's malloc), as PyTorch's process does;
# GRADVIEW_KEEP_FREED_MEMORY=0 leaves the allocator alone (see allocator.py).
from . import allocator  # noqa: F401
from .interpreter import (
    CompiledGraph,
    GraphCompileError,
    GraphRuntimeError,
    compile_graph,
    run_graph,
)

__all__ = ["CompiledGraph", "GraphCompileError", "GraphRuntimeError", "compile_graph", "run_graph"]

# Eager tensors and the tape-based autograd engine.
from . import autograd
from .tensor import Tensor

__all__ += ["Tensor", "autograd"]

# The graph executor (plans per ArgumentSpec, autodiff, the pass trace hooks).
from .executor import DEFAULT_INLINE_THRESHOLD, GraphExecutor  # noqa: E402

__all__ += ["DEFAULT_INLINE_THRESHOLD", "GraphExecutor"]

# Frontends: compile Python source (script) or record a run (trace) into a Graph.
from .script_function import script  # noqa: E402
from .tracer import trace  # noqa: E402

__all__ += ["script", "trace"]

# What a run leaves to read: the pass trace, its records and what they tell (the
# viewer's and the CLI's material). These modules load with the executor already, or
# cost a millisecond; the checks (r, b, G, T) are a subpackage, gradview.runtime.checks.
# saved_values, gradient_wiring and value_names name the functions here; the modules
# of the same names stay importable by their full path.
from .argument_spec import specialize_types  # noqa: E402
from .executor import pack_gradient  # noqa: E402
from .gradient_wiring import GradientWiring, gradient_wiring  # noqa: E402
from .no_graph_reason import MIN_SUBGRAPH_SIZE, no_differentiable_graph_reason  # noqa: E402
from .pass_trace import PassTrace, Step, normalize_pass_name, which_label  # noqa: E402
from .pipeline import (  # noqa: E402
    CREATE_AUTODIFF_SUBGRAPHS,
    PIPELINE_TABLE,
    STEP_ALIASES,
    PassInfo,
    Phase,
    pipeline_step_names,
    steps_named,
)
from .random_values import graph_draws_random_values, may_draw_random_values  # noqa: E402
from .recompute import Recomputation, RecomputeError, what_if_recomputed  # noqa: E402
from .saved_values import (  # noqa: E402
    INPUT,
    GraphSaved,
    SavedValue,
    SavedValuesError,
    saved_values,
    tensor_shape_dtype,
)
from .trace_changes import StepChange, change_lines, step_changes  # noqa: E402
from .trace_records import (  # noqa: E402
    BlockRecord,
    NodeRecord,
    ValueRecord,
    print_record,
    value_names,
    walk_records,
)
from .trace_types import GraphName, GraphRole, Note, differentiated_graph_name  # noqa: E402
from .value_names import NameTable, ValueName, name_table  # noqa: E402

__all__ += [
    "specialize_types", "pack_gradient", "GradientWiring", "gradient_wiring", "MIN_SUBGRAPH_SIZE",
    "no_differentiable_graph_reason", "PassTrace", "Step", "normalize_pass_name", "which_label",
    "PIPELINE_TABLE", "STEP_ALIASES", "PassInfo", "Phase", "pipeline_step_names", "steps_named",
    "CREATE_AUTODIFF_SUBGRAPHS",
    "graph_draws_random_values", "may_draw_random_values",
    "Recomputation", "RecomputeError", "what_if_recomputed", "INPUT", "GraphSaved", "SavedValue",
    "SavedValuesError", "saved_values", "tensor_shape_dtype", "StepChange", "change_lines", "step_changes",
    "BlockRecord", "NodeRecord", "ValueRecord", "print_record", "value_names", "walk_records", "GraphName",
    "GraphRole", "Note", "differentiated_graph_name", "NameTable", "ValueName", "name_table", "checks",
]
