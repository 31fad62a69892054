"""The op library's tables: everything gradview knows about each operator overload.

An op's facts are declared together, in its family's module (``ops/linalg.py``
for ``aten::mm``), with the five declarations below, the way JAX declares a
primitive's evaluation, abstract evaluation and derivative rules side by side:

* :func:`kernel` binds the overload to the array function that runs it
  (``kernels/`` holds those functions: pure NumPy/CuPy code, no graphs);
* :func:`fast_path` adds a compile-time specialization of that kernel;
* :func:`shape_rule` says what the op's outputs look like, from its inputs'
  types: rules are keyed by node kind (``aten::add`` covers every overload);
* :func:`formula` gives the gradient as a forward/backward pair, or
  :func:`no_gradient` says, in PyTorch's words, why there is none;
* :func:`schema` adds the signature of an op of gradview's own
  (``gradview::conv_backward``); PyTorch's ops already have theirs in the IR;
* :func:`refuse` says why gradview does not run an op PyTorch has (its
  results are complex, say): the runtime refuses the node in that one line,
  and ``python -m gradview.ops.catalog --lacking`` lists every such op;
* :func:`random` says the op draws random values, always or when its
  constant inputs say so (:mod:`gradview.ops.random_draws`).

The tables are filled when ``gradview.ops`` is imported; passes, autodiff and
the runtime read them through the lookups at the bottom of this module.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from gradview.ir import Node
from gradview.ir.operators import register_schema
from gradview.kernels.protocol import FastPath, Kernel

from .gradients import Backward, Emitter, Formula, Forward, Supports

if TYPE_CHECKING:
    from .random_draws import DrawTest
    from .shape_toolkit import ShapeRule

__all__ = [
    "Emitter", "Formula", "KERNELS", "FAST_PATHS", "SHAPE_RULES", "FORMULAS", "NO_GRADIENT", "GRADVIEW_SCHEMAS",
    "REFUSED", "NON_DIFFERENTIABLE", "RANDOM", "kernel", "fast_path", "shape_rule", "formula", "no_gradient", "schema",
    "refuse", "random",
    "kernel_for", "fast_path_for", "shape_rule_for", "formula_for", "no_gradient_reason", "refusal_for",
]

KERNELS: dict[str, Kernel] = {}
FAST_PATHS: dict[str, FastPath] = {}
SHAPE_RULES: dict[str, ShapeRule] = {}
FORMULAS: dict[str, Formula] = {}
# Overloads that deliberately have no gradient formula, with PyTorch's reason:
# their results are integers or booleans (comparisons, ``argmax``, sizes), or
# PyTorch itself has no derivative for them (its autograd raises "the
# derivative for ... is not implemented"). The coverage test checks every op
# has a formula or an entry here, and the executor raises this reason, naming
# the node, when a backward pass reaches such a node.
NO_GRADIENT: dict[str, str] = {}
# Kinds whose every tensor input derivatives.yaml marks ``non_differentiable`` (the
# Bessel functions, the orthogonal polynomials): PyTorch's autograd records nothing
# for them, so their results never require grad, whatever their inputs
# (PropagateRequiresGrad reads it). Declared with ``no_gradient(..., non_differentiable=True)``.
NON_DIFFERENTIABLE: set[str] = set()
GRADVIEW_SCHEMAS: list[str] = []
# Ops PyTorch has that gradview deliberately does not run, with the reason in
# plain words, keyed by kind (``aten::fft_rfft``: every overload) or overload.
REFUSED: dict[str, str] = {}
# Kinds whose nodes draw random values (gradview's own seeded draws, kernels/dropout.py;
# or, in compiled graphs gradview reads but does not run, PyTorch's): kind -> None (every
# run draws) or the test of the node's constant inputs that says it draws.
RANDOM: dict[str, DrawTest | None] = {}
# Which module declared each fact: DECLARED_IN["kernel"]["aten::mm"] == "gradview.ops.linalg".
# The op library test reads it to check an op's facts sit in one module.
DECLARED_IN: dict[str, dict[str, str]] = {
    fact: {} for fact in ("kernel", "fast_path", "shape_rule", "formula", "no_gradient", "schema", "refused", "random")
}


def _declared(fact: str, names: tuple[str, ...], depth: int = 2) -> None:
    """Remember the module whose body made the declaration (``depth`` frames up)."""
    module = sys._getframe(depth).f_globals.get("__name__", "?")
    for name in names:
        DECLARED_IN[fact][name] = module


def kernel(*names: str) -> Callable[[Kernel], Kernel]:
    """Run overloads ``names`` (``"aten::add.Tensor"``) with the decorated array function."""
    _declared("kernel", names)

    def bind(fn: Kernel) -> Kernel:
        for name in names:
            if name in KERNELS:
                raise ValueError(f"kernel {name} registered twice")
            KERNELS[name] = fn
        return fn

    return bind


def fast_path(*names: str) -> Callable[[FastPath], FastPath]:
    """Add a compile-time specialization for overloads ``names`` (see kernels.protocol)."""
    _declared("fast_path", names)

    def bind(fn: FastPath) -> FastPath:
        for name in names:
            if name in FAST_PATHS:
                raise ValueError(f"fast path {name} registered twice")
            FAST_PATHS[name] = fn
        return fn

    return bind


def shape_rule(*kinds: str) -> Callable[[ShapeRule], ShapeRule]:
    """Register a shape rule for node kinds such as ``"aten::mm"``."""
    _declared("shape_rule", kinds)

    def bind(fn: ShapeRule) -> ShapeRule:
        for kind in kinds:
            if kind in SHAPE_RULES:
                raise ValueError(f"shape rule for {kind} registered twice")
            SHAPE_RULES[kind] = fn
        return fn

    return bind


def formula(
    *names: str, forward: Forward | None = None, supports: Supports | None = None
) -> Callable[[Backward], Backward]:
    """Register ``backward`` (and optional ``forward`` and ``supports``) for overloads ``names``."""
    _declared("formula", names)

    def bind(backward: Backward) -> Backward:
        for name in names:
            if name in FORMULAS or name in NO_GRADIENT:
                raise ValueError(f"gradient formula for {name} registered twice")
            FORMULAS[name] = Formula(name, forward, backward, supports)
        return backward

    return bind


def no_gradient(*names: str, reason: str, non_differentiable: bool = False) -> None:
    """Declare that overloads ``names`` have no gradient, and why (in plain words).

    ``non_differentiable``: PyTorch marks every input ``non_differentiable``, so the
    results never require grad (rather than requiring it and refusing a backward,
    as a "not implemented" derivative does); it covers every overload of the kind."""
    _declared("no_gradient", names)
    for name in names:
        if name in FORMULAS or name in NO_GRADIENT:
            raise ValueError(f"{name} already has a gradient formula or a no-gradient entry")
        NO_GRADIENT[name] = reason
        if non_differentiable:
            NON_DIFFERENTIABLE.add(name.split(".", 1)[0])


def schema(*texts: str) -> None:
    """Add the signatures of ops of gradview's own (``gradview::...``) to the IR."""
    for text in texts:
        _declared("schema", (text[: text.index("(")],))
        if not text.startswith("gradview::"):
            raise ValueError(f"only gradview's own ops declare a schema here; PyTorch's are in the IR: {text}")
        register_schema(text)
        GRADVIEW_SCHEMAS.append(text)


def refuse(*names: str, reason: str) -> None:
    """Declare that gradview does not run ``names`` (kinds or overloads), and why.

    The reason is one plain sentence a user reads in the refusal
    (``its result is complex, and gradview's tensors are real``)."""
    _declared("refused", names)
    for name in names:
        if name in REFUSED or name in KERNELS:
            raise ValueError(f"{name} is already refused or has a kernel")
        REFUSED[name] = reason


def random(*kinds: str, when: DrawTest | None = None) -> None:
    """Declare that nodes of ``kinds`` draw random values: on every run, or when
    ``when`` (a test of the node's constant inputs) says so."""
    _declared("random", kinds)
    for kind in kinds:
        if kind in RANDOM:
            raise ValueError(f"{kind} declared random twice")
        RANDOM[kind] = when


def refusal_for(qualified_name: str) -> str | None:
    """Why gradview does not run the overload (declared for it or for its kind)."""
    return REFUSED.get(qualified_name) or REFUSED.get(qualified_name.split(".", 1)[0])


def kernel_for(qualified_name: str) -> Kernel | None:
    return KERNELS.get(qualified_name)


def fast_path_for(qualified_name: str) -> FastPath | None:
    return FAST_PATHS.get(qualified_name)


def shape_rule_for(kind: str) -> ShapeRule | None:
    return SHAPE_RULES.get(kind)


def formula_for(node: Node) -> Formula | None:
    """The formula for the node's resolved overload, or for its kind when it is a
    schema-less prim (``prim::ListConstruct``, ``prim::TupleUnpack``...)."""
    resolved = node.maybe_schema()
    if resolved is not None:
        return FORMULAS.get(resolved.qualified_name)
    return FORMULAS.get(node.kind())


def no_gradient_reason(node: Node) -> str | None:
    """Why the node's overload has no gradient, when it is declared to have none."""
    resolved = node.maybe_schema()
    return NO_GRADIENT.get(resolved.qualified_name if resolved is not None else node.kind())
