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
from . import autograd  # noqa: E402
from .tensor import Tensor  # noqa: E402

__all__ += ["Tensor", "autograd"]

# The graph executor (plans per ArgumentSpec, autodiff, the pass trace hooks).
from .executor import DEFAULT_INLINE_THRESHOLD, GraphExecutor  # noqa: E402

__all__ += ["DEFAULT_INLINE_THRESHOLD", "GraphExecutor"]

# Frontends: compile Python source (script) or record a run (trace) into a Graph.
from .script_function import script  # noqa: E402
from .tracer import trace  # noqa: E402

__all__ += ["script", "trace"]
