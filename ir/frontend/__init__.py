"""A Python frontend: compile a subset of Python functions to TorchScript-style IR.

:func:`script` parses a function's source with :mod:`ast` and emits a
:class:`~gradview.ir.Graph` the way ``torch.jit.script`` does (overloads chosen
by argument types, ``prim::If``/``prim::Loop`` for control flow, ``# file:line:col``
source comments). It only compiles: the IR layer cannot run graphs. Use
``gradview.runtime.script`` for a callable that runs the graph through a
GraphExecutor, or ``GraphExecutor(script(fn).graph)``.

:func:`from_torch` goes the other way round: PyTorch compiles a model and its
graph, with parameters and buffers lifted to inputs, becomes a gradview graph.
"""

from .compiler import ScriptError, ScriptFunction, compile_function, script
from .from_torch import FromTorchError, from_torch

__all__ = ["FromTorchError", "ScriptError", "ScriptFunction", "compile_function", "from_torch", "script"]
