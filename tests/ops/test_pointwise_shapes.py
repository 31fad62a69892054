"""Shape rules of the pointwise op family of issue 10 (unary math, rounding, rsub,
fmod, atan2, the activations and their backward kernels, the in-place ops)
against PyTorch.

Each function is traced with ``torch.jit.trace``, whose graph carries the
complete type of every value as PyTorch computed it; the types of the
intermediate values are then forgotten and inferred again by
``propagate_input_shapes``: dtype, sizes, strides and device must equal
torch's, on contiguous and transposed inputs, float64/float32/int64 and
broadcasting shapes. The graphs are also run with gradview's interpreter, and
every result's shape and dtype must match its inferred type.
"""

from __future__ import annotations

import pytest
import torch

from gradview.ir.passes.propagate_input_shapes import propagate_input_shapes
from tests.ir.passes.shape_oracle import (
    reset_copy,
    run_and_compare_types,
    traced_text,
    type_mismatches,
)

A = torch.ops.aten


def _t(*shape: int, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    if dtype.is_floating_point:
        return torch.randn(*shape, dtype=dtype) * 2
    return torch.randint(-5, 6, shape, dtype=dtype)


def unary_math(x):
    return (x.acos(), x.asin(), x.atan(), x.cosh(), x.sinh(), x.tan(), torch.erfc(x), x.log10(), x.log2(),
            torch.logit(x), torch.logit(x, 0.1), x.expm1(), x.log1p(), x.reciprocal())


def rounding(x):
    return x.ceil(), x.floor(), x.round(), torch.round(x, decimals=2), x.trunc(), x.frac()


def integer_math(i):
    return (i.acos(), torch.erfc(i), i.log2(), torch.logit(i), i.ceil(), i.round(), i.trunc(), A.relu6(i),
            A.hardtanh(i, -1, 2), A.threshold(i, 1, 5), torch.fmod(i, 3))


def binary(x, y):
    return (torch.rsub(x, y), torch.rsub(x, y, alpha=2), torch.rsub(x, 2.5), torch.fmod(x, y), torch.fmod(x, 1.5),
            torch.atan2(x, y), torch.remainder(x, y))


def mixed(i, f):
    return torch.rsub(i, f), torch.rsub(i, 3), torch.rsub(i, 2.5), torch.fmod(i, f), torch.fmod(i, 2.5), torch.atan2(i, i)


def activations(x):
    return (A.relu6(x), A.hardtanh(x, -0.5, 2), A.hardshrink(x, 0.5), A.hardswish(x), A.hardsigmoid(x), A.silu(x),
            A.softplus(x, 2, 3), A.elu(x, 1.5, 2.0, 0.5), A.threshold(x, 0.5, -1))


def backwards(g, x):
    return (A.hardtanh_backward(g, x, -1, 1), A.hardshrink_backward(g, x, 0.5), A.hardswish_backward(g, x),
            A.hardsigmoid_backward(g, x), A.silu_backward(g, x), A.softplus_backward(g, x, 1, 20),
            A.elu_backward(g, 1.0, 1.0, 1.0, False, x), A.logit_backward(g, x.sigmoid(), None))


def in_place(x, y):
    t = x * 1
    t.add_(y).mul_(2.0).relu_()
    u = x.clone()
    A.hardswish_(u)
    v = x.clone().clamp_(-1, 1).masked_fill_(x > 0, 0.5)
    w = torch.zeros_like(x).copy_(y).fill_(2.0)
    s = x.clone().sub_(y, alpha=2).div_(y).div_(2.0, rounding_mode="floor")
    A.elu_(s, 1.5)
    A.leaky_relu_(s, 0.2)
    A.hardtanh_(s, -1.0, 1.0)
    A.silu_(s)
    A.dropout_(s, 0.5, False)
    return t, u, v, w, s, x.clone().sigmoid_().tanh_().exp_().neg_(), torch.empty_like(x).zero_()


def squares(x, i, b):
    return x.square(), i.square(), b.square()


TRACED = [
    (unary_math, lambda: (_t(3, 4),)),
    (unary_math, lambda: (_t(4, 3, dtype=torch.float32).t(),)),
    (rounding, lambda: (_t(3, 4),)),
    (rounding, lambda: (_t(5, 3, dtype=torch.float32).t(),)),
    (integer_math, lambda: (_t(3, 4, dtype=torch.int64),)),
    (binary, lambda: (_t(4, 1, 3), _t(5, 1))),
    (binary, lambda: (_t(3, 4, dtype=torch.float32), _t(4))),
    (mixed, lambda: (_t(3, 4, dtype=torch.int64), _t(4, dtype=torch.float32))),
    (activations, lambda: (_t(3, 4),)),
    (activations, lambda: (_t(4, 3, dtype=torch.float32).t(),)),
    (backwards, lambda: (_t(3, 1), _t(2, 3, 4))),
    (backwards, lambda: (_t(3, 4, dtype=torch.float32), _t(3, 4))),
    (in_place, lambda: (_t(3, 4), _t(4))),
    (in_place, lambda: (_t(4, 3, dtype=torch.float32).t(), _t(4, dtype=torch.float32))),
    (squares, lambda: (_t(4, 3).t(), _t(3, dtype=torch.int32), torch.tensor([True, False]))),
]
IDS = [f"{fn.__name__}-{index}" for index, (fn, _) in enumerate(TRACED)]


@pytest.mark.parametrize(("fn", "make_inputs"), TRACED, ids=IDS)
def test_matches_traced_types(fn, make_inputs):
    inputs = make_inputs()
    reference, graph = reset_copy(traced_text(fn, inputs))
    assert propagate_input_shapes(graph) is True
    graph.lint()
    assert type_mismatches(reference, graph) == []


@pytest.mark.parametrize(("fn", "make_inputs"), TRACED, ids=IDS)
def test_inferred_types_match_what_runs(fn, make_inputs):
    inputs = make_inputs()
    _, graph = reset_copy(traced_text(fn, inputs))
    propagate_input_shapes(graph)
    assert run_and_compare_types(graph, [t.numpy().copy() for t in inputs]) > 0
