"""The catalogue's sample calls for torch.linalg and its older aliases (ops/torch_linalg.py):
see op_gradient_samples.py, which imports this module at its end to add them to SAMPLES.

Inputs are well conditioned: symmetric positive definite for Cholesky, eigh and LDL,
diagonally dominant (full rank) for solves, inverses and LU. Every forward sample gives
all arguments in schema order (keyword-only ones too), so its ``gradview::<op>_backward``
sample is the same arguments between one gradient per output and PyTorch's outputs.
The factorizations' sign conventions (SVD, eigh, QR) agree with PyTorch's (MKL's) on
these inputs; a sample where they differed would fail on the outputs, not hide it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .op_gradient_samples import S, Sample, add, f

__all__: list[str] = []


def _spd(n: int) -> np.ndarray:
    """Symmetric positive definite, eigenvalues well apart."""
    a = f(n, n)
    return a @ a.T + n * np.eye(n)


def _full_rank(n: int) -> np.ndarray:
    """Diagonally dominant: invertible and LU-stable."""
    return f(n, n) + n * np.eye(n)


def _torch(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return torch.from_numpy(value.copy())
    if isinstance(value, list):
        return [_torch(v) for v in value]
    return value


def _numpy(value: Any) -> np.ndarray:
    return value.detach().numpy().copy()


def _forward(name: str, args: tuple[Any, ...]) -> list[np.ndarray]:
    """PyTorch's outputs of ``aten::name`` on the sample's arguments (all positional in the
    sample, split here into PyTorch's positional and keyword-only ones)."""
    op, _, overload = name.partition(".")
    function = getattr(getattr(torch.ops.aten, op), overload or "default")
    positional, keywords = [], {}
    for argument, value in zip(function._schema.arguments, args, strict=False):
        if argument.kwarg_only:
            keywords[argument.name] = _torch(value)
        else:
            positional.append(_torch(value))
    result = function(*positional, **keywords)
    return [_numpy(r) for r in (result if isinstance(result, (list, tuple)) else [result])]


def _with_backward(name: str, sample: Sample) -> None:
    """The op's sample, and its ``gradview::<op>_backward``'s: a gradient per output (zeros
    for integer outputs), the forward's arguments, PyTorch's outputs."""
    add(name, sample)
    outputs = _forward(name, sample.args)
    grads = [f(*o.shape) if o.dtype.kind == "f" else np.zeros_like(o) for o in outputs]
    frozen = tuple(i + len(grads) for i in sample.frozen)
    backward = f"gradview::{name.replace('.', '_')}_backward"
    add(backward, S(*grads, *sample.args, *outputs, frozen=frozen))


# -- norms, cross, vecdot, diagonal -----------------------------------------------------------------
_with_backward("linalg_vector_norm", S(f(3, 4), 2.5, [1], False, None))
_with_backward("linalg_matrix_norm", S(f(3, 4), 1.0, [-2, -1], False, None))
_with_backward("linalg_matrix_norm.str_ord", S(f(3, 4), "nuc", [-2, -1], True, None))
_with_backward("linalg_norm", S(f(3, 4), None, None, False, None))
_with_backward("linalg_norm.ord_str", S(f(3, 4), "fro", [0, 1], False, None))
_with_backward("linalg_cross", S(f(2, 3), f(2, 3), -1))
_with_backward("linalg_vecdot", S(f(3, 4), f(3, 4), -1))
add("linalg_diagonal", S(f(3, 4, 5), 1, -2, -1))

# -- determinants -----------------------------------------------------------------------------------
_with_backward("linalg_det", S(_full_rank(3)))
_with_backward("linalg_slogdet", S(_full_rank(3)))
_with_backward("logdet", S(_spd(3)))

# -- inverses and solves ----------------------------------------------------------------------------
_with_backward("linalg_inv", S(_full_rank(3)))
_with_backward("linalg_inv_ex", S(_full_rank(3), False))
_with_backward("linalg_solve", S(_full_rank(3), f(3, 2), True))
_with_backward("linalg_solve_ex", S(_full_rank(3), f(2, 3), False, False))
_with_backward("linalg_solve_triangular", S(np.triu(_full_rank(3)), f(3, 2), True, True, False))
_with_backward("triangular_solve", S(f(3, 2), np.tril(_full_rank(3)), False, True, False))

# -- Cholesky ---------------------------------------------------------------------------------------
_L = np.linalg.cholesky(_spd(3))
_with_backward("cholesky", S(_spd(3), False))
_with_backward("linalg_cholesky", S(_spd(3), True))
_with_backward("linalg_cholesky_ex", S(_spd(3), False, False))
_with_backward("cholesky_solve", S(f(3, 2), _L, False))
_with_backward("cholesky_inverse", S(_L.T.copy(), True))

# -- products and powers ----------------------------------------------------------------------------
_with_backward("linalg_multi_dot", S([f(2, 3), f(3, 4), f(4, 2)]))
_with_backward("linalg_matrix_power", S(_full_rank(3) / 3, 3))
_with_backward("linalg_vander", S(f(4), 3))

# -- eigh -------------------------------------------------------------------------------------------
_with_backward("linalg_eigh", S(_spd(3), "L"))
_with_backward("linalg_eigvalsh", S(_spd(3), "U"))

# -- LU ---------------------------------------------------------------------------------------------
_A = _full_rank(3)
_LU, _PIVOTS = (_numpy(t) for t in torch.linalg.lu_factor(torch.from_numpy(_A)))
_with_backward("linalg_lu_factor_ex", S(_full_rank(3), True, False))
_with_backward("linalg_lu_factor", S(_full_rank(3), True))
_with_backward("_lu_with_info", S(_full_rank(3), True, True))
_with_backward("linalg_lu", S(_full_rank(3), True))
_with_backward("lu_unpack", S(_LU, _PIVOTS, True, True))
_with_backward("linalg_lu_solve", S(_LU, _PIVOTS, f(3, 2), True, False))
_with_backward("lu_solve", S(f(3, 2), _LU, _PIVOTS))

# -- SVD, pinv, matrix_rank -------------------------------------------------------------------------
# Wide matrices: there MKL's gesdd (PyTorch's) and LAPACK's (NumPy's) agree on the singular
# vectors' signs; on tall ones they differ by a sign per vector (the op_db sweep compares
# those as OpInfo's gradcheck_wrapper does).
_with_backward("linalg_svd", S(f(3, 4), False, None))
_with_backward("svd", S(f(3, 4), True, True))
_with_backward("linalg_svdvals", S(f(4, 3), None))
_with_backward("linalg_pinv.atol_rtol_float", S(f(4, 3), None, None, False))
_with_backward("linalg_pinv.atol_rtol_tensor", S(f(4, 3), np.array(1e-12), np.array(1e-10), False,
                                                 frozen=(1, 2)))
_with_backward("linalg_pinv", S(f(3, 4), 1e-15, False))
_with_backward("linalg_pinv.rcond_tensor", S(f(4, 3), np.array(1e-15), False, frozen=(1,)))
_with_backward("pinverse", S(f(4, 3), 1e-15))
add("linalg_matrix_rank.atol_rtol_tensor", S(f(4, 3), np.array(1e-6), np.array(1e-8), False, frozen=(1, 2)))
add("linalg_matrix_rank.atol_rtol_float", S(f(4, 3), 1e-6, 1e-8, False))
add("linalg_matrix_rank", S(f(4, 3), 1e-6, False))
add("linalg_matrix_rank.tol_tensor", S(f(4, 3), np.array(1e-6), False, frozen=(1,)))

# -- QR, Householder products -----------------------------------------------------------------------
_QR_A, _TAU = (_numpy(t) for t in torch.geqrf(torch.from_numpy(f(4, 3))))
_with_backward("linalg_qr", S(f(4, 3), "reduced"))
_with_backward("qr", S(f(4, 3), True))
add("geqrf", S(f(4, 3)))
_with_backward("linalg_householder_product", S(_QR_A, _TAU))
_with_backward("ormqr", S(_QR_A, _TAU, f(4, 2), True, False))

# -- lstsq, cond, tensorinv, tensorsolve, matrix_exp ------------------------------------------------
_with_backward("linalg_lstsq", S(f(4, 3), f(4, 2), None, None))
_with_backward("linalg_cond", S(_full_rank(3), None))
# "nuc": PyTorch's own backward of cond(p="fro") fails (a saved tensor modified in place).
_with_backward("linalg_cond.p_str", S(_full_rank(3), "nuc"))
_TENSOR = _full_rank(6).reshape(2, 3, 6)
_with_backward("linalg_tensorinv", S(_TENSOR, 2))
_with_backward("linalg_tensorsolve", S(_TENSOR, f(2, 3), None))
_with_backward("linalg_matrix_exp", S(f(3, 3)))

# -- LDL (no derivative in PyTorch) -----------------------------------------------------------------
_LD, _LDL_PIVOTS = (_numpy(t) for t in torch.linalg.ldl_factor(torch.from_numpy(_spd(3))))
add("linalg_ldl_factor_ex", S(_spd(3), False, False))
add("linalg_ldl_factor", S(_spd(3), False))
add("linalg_ldl_solve", S(_LD, _LDL_PIVOTS, f(3, 2), False))
