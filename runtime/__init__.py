"""gradview.runtime: run graphs on NumPy or CuPy."""

from .interpreter import (
    CompiledGraph,
    GraphCompileError,
    GraphRuntimeError,
    compile_graph,
    run_graph,
)

__all__ = ["CompiledGraph", "GraphCompileError", "GraphRuntimeError", "compile_graph", "run_graph"]
