"""Graph passes: each a function ``name(graph) -> bool`` (did it change the graph?).

Passes sit above the IR core and the kernels: they may call kernels (constant
propagation, shape inference) but never the runtime. ``PASSES`` names them
as TorchScript does, one ``PassInfo`` record each (``registry``: the generic
part of the pipeline table ``gradview.runtime.PIPELINE_TABLE``);
``pipelines`` strings the records together in the executor's order.
"""

from .alias_db import AliasDb
from .batch_mm import batch_mm
from .canonicalize_ops import canonicalize_ops
from .check_inplace import check_inplace
from .common_subexpression_elimination import eliminate_common_subexpression
from .constant_pooling import constant_pooling
from .constant_propagation import constant_propagation
from .dead_code_elimination import eliminate_dead_code
from .decompose_ops import decompose_ops
from .inline import inline
from .loop_unrolling import unroll_constant_loops, unroll_loops
from .lower_grad_of import lower_grad_of
from .lower_simple_tuples import lower_simple_tuples
from .peephole import peephole_optimize
from .pipelines import run_nondiff_optimization, run_optimization, run_required_passes
from .propagate_input_shapes import propagate_input_shapes
from .propagate_requires_grad import propagate_requires_grad
from .registry import PASSES, PassInfo, Phase, get_pass
from .remove_expands import remove_expands
from .remove_list_mutation import remove_list_mutation

__all__ = [
    "PASSES", "AliasDb", "PassInfo", "Phase", "batch_mm", "canonicalize_ops", "check_inplace",
    "constant_pooling", "constant_propagation", "decompose_ops", "eliminate_common_subexpression",
    "eliminate_dead_code", "get_pass", "inline", "lower_grad_of", "lower_simple_tuples",
    "peephole_optimize", "propagate_input_shapes", "propagate_requires_grad", "remove_expands",
    "remove_list_mutation", "run_nondiff_optimization", "run_optimization", "run_required_passes",
    "unroll_constant_loops", "unroll_loops",
]
