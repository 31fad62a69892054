"""A Python frontend: compile a subset of Python functions to TorchScript-style IR.

:func:`script` parses a function's source with :mod:`ast` and emits a
:class:`~gradview.ir.Graph` the way ``torch.jit.script`` does (overloads chosen
by argument types, ``prim::If``/``prim::Loop`` for control flow, ``# file:line:col``
source comments). It only compiles: the IR layer cannot run graphs. Use
``gradview.runtime.script`` for a callable that runs the graph through a
GraphExecutor, or ``GraphExecutor(script(fn).graph)``.
"""

from .compiler import ScriptError, ScriptFunction, compile_function, script

__all__ = ["ScriptError", "ScriptFunction", "compile_function", "script"]
