"""torch.linalg through from_torch + GraphExecutor: what the op_db sweep does not see.

The sweep (tests/ops/test_op_db.py) compares every sample's outputs and gradients;
here: the refusals' words, PyTorch's no-derivative reasons where a user asks for a
gradient anyway, and an output nobody uses (its gradient undefined at run time).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gradview.ir import parse_ir
from gradview.ir.frontend.from_torch import from_torch
from gradview.runtime import GraphExecutor, Tensor, autograd


def _run(fn, *arrays: np.ndarray, requires_grad: bool = False):  # type: ignore[no-untyped-def]
    examples = [torch.from_numpy(a.copy()) for a in arrays]
    graph, _ = from_torch(fn, tuple(examples))
    inputs = [Tensor(a.copy(), requires_grad=requires_grad) for a in arrays]
    outputs = GraphExecutor(graph).run(inputs)
    return (outputs[0] if len(outputs) == 1 else outputs), inputs  # a traced tuple is one output


def _matrix(n: int = 4, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, n)) + n * np.eye(n)


def test_eigvals_is_refused_in_one_line_naming_the_op_and_why() -> None:
    with pytest.raises(Exception, match=r"aten::linalg_eigvals: its result is complex") as raised:
        _run(lambda a: torch.linalg.eigvals(a), _matrix())
    assert "\n" not in str(raised.value).strip()


def test_ldl_factor_gradient_is_refused_with_pytorchs_reason() -> None:
    a = _matrix()
    a = a + a.T
    (ld, _), inputs = _run(lambda m: torch.linalg.ldl_factor(m), a, requires_grad=True)
    with pytest.raises(Exception, match=r"linalg_ldl_factor.*not implemented"):
        autograd.grad([ld], inputs, [Tensor(np.ones_like(a))])


def test_qr_differentiates_with_r_unused() -> None:
    """R's gradient is undefined at run time: the backward kernel takes it as zeros."""
    a = np.random.default_rng(1).standard_normal((5, 3))
    (q, _), inputs = _run(lambda m: torch.linalg.qr(m), a, requires_grad=True)
    (ours,) = autograd.grad([q], inputs, [Tensor(np.ones((5, 3)))])
    t = torch.from_numpy(a.copy()).requires_grad_()
    (theirs,) = torch.autograd.grad(torch.linalg.qr(t)[0].sum(), t)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.numpy(), rtol=1e-12, atol=1e-14)


def test_lu_permutation_and_lstsq_singular_values_never_require_grad() -> None:
    a = _matrix()
    (p, lower, upper), _ = _run(lambda m: torch.linalg.lu(m), a, requires_grad=True)
    assert (p.requires_grad, lower.requires_grad, upper.requires_grad) == (False, True, True)
    outs, _ = _run(lambda m, b: torch.linalg.lstsq(m, b, driver="gelsd"), a, a, requires_grad=True)
    assert [o.requires_grad for o in outs] == [True, True, False, False]


_NOT_POSITIVE_DEFINITE = np.array([[4.0, 2.0, 1.0], [2.0, -3.0, 0.0], [1.0, 0.0, 2.0]])
_SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])


@pytest.mark.parametrize(("call", "matrix"), [
    (lambda m: torch.linalg.cholesky_ex(m), _NOT_POSITIVE_DEFINITE),
    (lambda m: torch.linalg.cholesky_ex(m, upper=True), _NOT_POSITIVE_DEFINITE),
    (lambda m: torch.linalg.inv_ex(m), _SINGULAR),
    (lambda m: torch.linalg.solve_ex(m, torch.ones(2, 1, dtype=torch.float64)), _SINGULAR),
    (lambda m: torch.linalg.lu_factor_ex(m), _SINGULAR),
])
def test_the_ex_variants_report_info_and_lapacks_partial_results_as_pytorch(call, matrix) -> None:  # type: ignore[no-untyped-def]
    ours, _ = _run(call, matrix)
    theirs = call(torch.from_numpy(matrix.copy()))
    for mine, reference in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(mine.detach().numpy(), reference.numpy())


@pytest.mark.parametrize(("call", "matrix", "words"), [
    (lambda m: torch.linalg.cholesky(m), _NOT_POSITIVE_DEFINITE,
     "the leading minor of order 2 is not positive-definite"),
    (lambda m: torch.linalg.inv(m), _SINGULAR, "The diagonal element 2 is zero"),
    (lambda m: torch.linalg.solve(m, torch.ones(2, dtype=torch.float64)), _SINGULAR,
     "The solver failed because the input matrix is singular"),
    (lambda m: torch.linalg.lu_factor(m), _SINGULAR, r"U\[2,2\] is zero"),
])
def test_singular_inputs_are_refused_in_pytorchs_words(call, matrix, words) -> None:  # type: ignore[no-untyped-def]
    # Traced with an invertible, positive-definite matrix; run with the bad one.
    graph, _ = from_torch(call, (torch.eye(matrix.shape[0], dtype=torch.float64),))
    with pytest.raises(Exception, match=words):
        GraphExecutor(graph).run([Tensor(matrix.copy())])


def test_hand_written_ir_may_leave_out_trailing_defaults() -> None:
    """``linalg_vector_norm(%a)``: the backward kernel still gets ord=2, dim=None... in place."""
    graph = parse_ir("graph(%a : Tensor):\n  %r : Tensor = aten::linalg_vector_norm(%a)\n  return (%r)\n")
    a = np.array([[3.0, 4.0], [1.0, 2.0]])
    x = Tensor(a.copy(), requires_grad=True)
    (out,) = GraphExecutor(graph).run([x])
    (ours,) = autograd.grad([out], [x], [Tensor(np.ones(()))])
    t = torch.from_numpy(a.copy()).requires_grad_()
    (theirs,) = torch.autograd.grad(torch.linalg.vector_norm(t), t)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("call", [torch.linalg.det, torch.logdet])
def test_an_exactly_singular_matrix_gets_pytorchs_first_order_gradient(call) -> None:  # type: ignore[no-untyped-def]
    """PyTorch's first derivative solves with the LU's zero pivot replaced by eps: det's
    gradient is 0 there (not the cofactors, which only its double-backward path computes)
    and logdet's has getrs's infinities."""
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    graph, _ = from_torch(call, (torch.eye(3, dtype=torch.float64),))
    x = Tensor(a.copy(), requires_grad=True)
    (out,) = GraphExecutor(graph).run([x])
    (ours,) = autograd.grad([out], [x], [Tensor(np.ones(()))])
    t = torch.from_numpy(a.copy()).requires_grad_()
    (theirs,) = torch.autograd.grad(call(t), t)
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.numpy())
