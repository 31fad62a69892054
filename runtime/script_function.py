"""``gradview.runtime.script``: a compiled function you can call.

:func:`gradview.ir.script` only compiles (the IR layer cannot run graphs); this
wraps its result so a call runs the graph through a :class:`GraphExecutor`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gradview.ir.frontend import ScriptFunction, compile_function

from .executor import GraphExecutor
from .tensor import Tensor

__all__ = ["RunnableScriptFunction", "script"]


class RunnableScriptFunction(ScriptFunction):
    """A ScriptFunction whose call runs ``graph`` (copied, since the executor
    optimizes its graph) through a GraphExecutor. NumPy arrays are wrapped as
    Tensors; the result is what the function returns (a tuple for a tuple)."""

    def __init__(self, fn: Callable[..., Any], graph: Any, filename: str) -> None:
        super().__init__(fn, graph, filename)
        self.executor = GraphExecutor(graph.copy())

    def __call__(self, *args: Any) -> Any:
        inputs = [
            a if isinstance(a, Tensor) or not (hasattr(a, "shape") and hasattr(a, "dtype")) else Tensor(a)
            for a in args
        ]
        (result,) = self.executor.run(inputs)
        return result


def script(fn: Callable[..., Any]) -> RunnableScriptFunction:
    """Compile ``fn`` with the Python frontend; calling the result runs its graph."""
    graph, filename = compile_function(fn)
    return RunnableScriptFunction(fn, graph, filename)
