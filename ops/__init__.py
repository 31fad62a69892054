"""gradview.ops: the op library. Each op family's facts live in one module.

For every operator overload gradview runs, its family module declares, side
by side: the kernel that runs it (an array function from ``kernels/``), its
shape rule, and its gradient formula or an explicit "no gradient" with
PyTorch's reason (see :mod:`gradview.ops.registry`). Adding an op is one
declaration in its family's module; ``tests/ops/test_op_library.py`` lists
what each registered op has and lacks.

Importing this package imports every family module, which fills the tables.
"""

# ruff: noqa: I001 - the families are imported in declaration order, in-place ops last
from .registry import (
    FAST_PATHS,
    FORMULAS,
    KERNELS,
    NO_GRADIENT,
    RANDOM,
    REFUSED,
    SHAPE_RULES,
    Emitter,
    Formula,
    fast_path,
    fast_path_for,
    formula,
    formula_for,
    kernel,
    kernel_for,
    no_gradient,
    no_gradient_reason,
    random,
    refusal_for,
    refuse,
    schema,
    shape_rule,
    shape_rule_for,
)

# The op families, one module each. In-place ops come last: their gradients are
# derived from the out-of-place formulas registered before them.
from . import (  # noqa: F401 - imported for their declarations
    pointwise,
    pointwise_math,
    activations,
    scalar_math,
    casts,
    linalg,
    products,
    torch_linalg,
    reductions,
    distances,
    statistics,
    calculus,
    softmax,
    losses,
    views,
    concat_split,
    indexing,
    containers,
    factories,
    nn,
    dropout,
    normalization,
    convolution,
    pooling,
    sampling,
    embedding,
    recurrent,
    attention,
    gradient_helpers,
    script_queries,
    fft,
    special,
    bessel,
    orthogonal_polynomials,
)
from . import inplace  # noqa: F401 - last: derives from the formulas above
from .random_draws import ConstantInputs, draws_random_values, may_draw_random_values, node_draws_random_values

__all__ = [
    "FAST_PATHS", "FORMULAS", "KERNELS", "NO_GRADIENT", "SHAPE_RULES", "Emitter", "Formula",
    "fast_path", "fast_path_for", "formula", "formula_for", "kernel", "kernel_for", "no_gradient",
    "no_gradient_reason", "schema", "shape_rule", "shape_rule_for", "REFUSED", "refuse", "refusal_for",
    "RANDOM", "random", "ConstantInputs", "draws_random_values", "may_draw_random_values", "node_draws_random_values",
]
