"""Graph passes: each a function ``name(graph) -> bool`` (did it change the graph?).

Passes sit above the IR core and the kernels: they may call kernels (constant
propagation, shape inference) but never the runtime.
"""
