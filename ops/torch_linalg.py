"""torch.linalg and its older aliases (``kernels/torch_linalg.py``): vector and matrix norms,
cross, vecdot, diagonal, det/slogdet/logdet, inverses, solves (general, triangular, Cholesky,
LU, LDL, least squares), the factorizations (Cholesky, LU, QR, SVD, eigh, LDL), Householder
products, pinv, matrix_rank, cond, tensorinv/tensorsolve, multi_dot, matrix_power,
matrix_exp and vander.

Shapes run the kernel on stand-in inputs (ops/shape_by_kernel.py); where the stand-in
zeros make a factorization fail the sizes stay unknown and the run says why.

Gradients: one backward kernel of gradview's own per op,
``gradview::<op>_backward(grads..., inputs..., outputs...)``, as derivatives.yaml and
FunctionsManual.cpp compute them (``norm_backward``, ``linalg_det_backward``,
``linalg_solve_backward``, ``cholesky_backward``, ``linalg_lu_backward``,
``linalg_qr_backward``, ``svd_backward``, ``linalg_eig_backward``, ``pinv_backward``...).
An output no gradient reaches enters as zeros. The backward kernels are not
differentiated again. geqrf and the LDL ops have no gradient, as in PyTorch.

Signs: eigh's eigenvectors and the SVD's singular vectors are LAPACK's (OpenBLAS under
NumPy); PyTorch's CPU build uses MKL, whose vectors may differ by a sign each. OpInfo
compares them through each sample's ``output_process_fn_grad`` (``abs`` of the vectors).

``linalg_eig`` and ``linalg_eigvals`` are refused: a real matrix's eigenvalues are complex.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from gradview.ir import Node, Value
from gradview.ir.schema import NO_DEFAULT
from gradview.ir.types import ListType
from gradview.kernels import torch_linalg as kernels

from .gradients import BACKWARD_KERNEL
from .reductions import dims_argument, dtype_argument, keepdim_argument, reduced_type
from .registry import Emitter, formula, kernel, no_gradient, refuse, schema, shape_rule
from .shape_by_kernel import by_kernel, by_kernel_outputs
from .shape_toolkit import NodeArgs, RuleResult, fresh
from .static_info import input_at, needs_grad, size_of

__all__: list[str] = []

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]

_NOT_DIFFERENTIABLE = "its result is an integer tensor: no gradient flows through it"
_INFO = {1: "Int"}  # LAPACK's info, int32 as PyTorch's
_PIVOTS_INFO = {1: "Int", 2: "Int"}  # pivots and info, int32 as PyTorch's


def _signature(forward: str) -> tuple[str, int]:
    """The argument list of a forward schema without defaults, kwarg markers and alias
    annotations, and its number of outputs."""
    args, returns = re.match(r"[^(]*\((.*)\) -> (.*)$", forward).groups()  # type: ignore[union-attr]
    parts, depth, current = [], 0, ""
    for ch in args:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    parts.append(current.strip())
    cleaned = [re.sub(r"\([a-z]!?\)", "", p.split("=")[0]).strip().replace("SymInt", "int")
               for p in parts if p and p != "*"]
    outputs = returns.count("Tensor")
    return ", ".join(cleaned), outputs


def _with_backward(forward: str, fn: Callable[..., object], differentiable: tuple[int, ...],
                   list_grad: bool = False) -> None:
    """Declare ``gradview::<op>_backward`` for the aten op of schema ``forward`` and the
    formula that calls it: its inputs are one gradient per output, the forward's inputs
    and its outputs; it returns the gradients of the inputs ``differentiable``."""
    name = forward.split("(")[0].split("::")[1].replace(".", "_")
    aten = forward.split("(")[0]
    signature, outputs = _signature(forward)
    grads = ", ".join(f"Tensor grad_{i}" for i in range(outputs))
    results = ", ".join(f"Tensor result_{i}" for i in range(outputs))
    returns = "Tensor[]" if list_grad else "(" + ", ".join(["Tensor"] * len(differentiable)) + ")"
    backward = f"gradview::{name}_backward"
    schema(f"{backward}({grads}, {signature}, {results}) -> {returns}")
    kernel(backward)(kernels.zero_filled(fn, outputs))
    no_gradient(backward, reason=BACKWARD_KERNEL)

    def rule(args: NodeArgs) -> RuleResult:
        grad = args.tensor(0)
        if list_grad:
            return [ListType(fresh(grad.scalar_type if grad is not None else None, None, None))]
        shaped = [args.tensor(outputs + i) for i in differentiable]
        dtype = grad.scalar_type if grad is not None else None
        device = grad.device if grad is not None else None
        return [fresh(dtype, t.sizes if t is not None else None, device) for t in shaped]

    shape_rule(backward)(rule)

    def gradient(emit: Emitter, node: Node, saved: Saved, grads_in: Grads) -> Result:
        result: Result = [None] * len(node.inputs())
        if not any(needs_grad(input_at(node, i)) for i in differentiable):
            return result
        flowing = [
            emit.op("aten::zeros_like", out) if g.node.kind() == "prim::AutogradZero" else g
            for g, out in zip(grads_in, node.outputs(), strict=True)
        ]
        got = emit.op(backward, *flowing, *_all_inputs(emit, node), *node.outputs())
        got = [got] if list_grad or not isinstance(got, (list, tuple)) else list(got)
        for position, index in enumerate(differentiable):
            if needs_grad(input_at(node, index)):
                result[index] = got[position]
        return result

    formula(aten)(gradient)


def _all_inputs(emit: Emitter, node: Node) -> list[Value]:
    """The node's inputs with left-out trailing defaults (hand-written IR) as constants, so the
    backward op's outputs follow its inputs at their schema positions."""
    inputs = list(node.inputs())
    node_schema = node.maybe_schema()
    if node_schema is None:
        return inputs
    for argument in node_schema.arguments[len(inputs):]:
        if argument.default is NO_DEFAULT:
            break
        inputs.append(emit.const(argument.default))
    return inputs


def _with_integer_outputs(rule: Callable[[NodeArgs], RuleResult], integers: dict[int, str],
                          outputs: int) -> Callable[[NodeArgs], RuleResult]:
    """``rule``, or where it cannot run (sizes unknown, or the stand-in zeros are singular)
    the outputs' dtypes alone: the input's for the factors, ``integers`` for pivots and info.
    An integer output must never be typed as one that may require grad."""

    def typed(args: NodeArgs) -> RuleResult:
        result = rule(args)
        if result is not None:
            return result
        self = args.tensor(0)
        dtype = self.scalar_type if self is not None else None
        device = self.device if self is not None else None
        return [fresh(integers.get(i, dtype), None, device) for i in range(outputs)]

    return typed


def _op(forward: str, fn: Callable[..., object], backward: Callable[..., object] | None,
        differentiable: tuple[int, ...] = (0,), *, multi: bool = False, list_grad: bool = False,
        shapes: bool = True, integers: dict[int, str] | None = None) -> None:
    """Kernel, shape rule (unless another overload declared it) and gradient of one
    overload (its schema as PyTorch prints it). ``integers``: the integer outputs' dtypes
    (pivots, info), kept where the shape rule cannot run."""
    overload = forward.split("(")[0]
    kernel(overload)(fn)  # type: ignore[arg-type]
    if shapes:
        rule = (by_kernel_outputs if multi else by_kernel)(fn)
        if integers:
            rule = _with_integer_outputs(rule, integers, _signature(forward)[1])
        shape_rule(overload.split(".")[0])(rule)
    if backward is not None:
        _with_backward(forward, backward, differentiable, list_grad)


# -- norms ------------------------------------------------------------------------------------------
_op("aten::linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, "
    "ScalarType? dtype=None) -> Tensor", kernels.vector_norm, kernels.vector_norm_backward,
    shapes=False)


@shape_rule("aten::linalg_vector_norm")
def _vector_norm_shapes(args: NodeArgs) -> RuleResult:
    """(self, ord, dim?, keepdim, dtype?): a reduction's result, as aten::norm's."""
    self = args.tensor(0)
    if self is None:
        return None
    return [reduced_type(self, dims_argument(args, 2), keepdim_argument(args, 3),
                         dtype_argument(args, 4, self.scalar_type))]



for _ord in ("Scalar ord", "str ord"):
    _overload = "" if _ord == "Scalar ord" else ".str_ord"
    _op(f"aten::linalg_matrix_norm{_overload}(Tensor self, {_ord}, int[] dim=[-2, -1], bool keepdim=False, *, "
        "ScalarType? dtype=None) -> Tensor", kernels.matrix_norm, kernels.matrix_norm_backward, shapes=not _overload)
    _overload = "" if _ord == "Scalar ord" else ".ord_str"
    _op(f"aten::linalg_norm{_overload}(Tensor self, {_ord.replace('Scalar', 'Scalar?')}, int[1]? dim=None, "
        "bool keepdim=False, *, ScalarType? dtype=None) -> Tensor", kernels.linalg_norm,
        kernels.linalg_norm_backward, shapes=not _overload)

# -- cross, vecdot, diagonal -------------------------------------------------------------------------
_op("aten::linalg_cross(Tensor self, Tensor other, *, int dim=-1) -> Tensor", kernels.cross,
    kernels.cross_backward, (0, 1))
_op("aten::linalg_vecdot(Tensor x, Tensor y, *, int dim=-1) -> Tensor", kernels.vecdot,
    kernels.vecdot_backward, (0, 1))
kernel("aten::linalg_diagonal")(kernels.linalg_diagonal)
shape_rule("aten::linalg_diagonal")(by_kernel(kernels.linalg_diagonal, view=True))


def _save_self_size(emit: Emitter, node: Node) -> Saved:
    self_ = node.inputs()[0]
    return {"self_size": size_of(emit, self_)} if needs_grad(self_) else {}


@formula("aten::linalg_diagonal", forward=_save_self_size)
def _linalg_diagonal(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """derivatives.yaml: ``diagonal_backward(grad, A.sizes(), offset, dim1, dim2)``."""
    if not saved:
        return [None] * len(node.inputs())
    _, offset, dim1, dim2 = _all_inputs(emit, node)
    return [emit.op("aten::diagonal_backward", grads[0], saved["self_size"], offset, dim1, dim2), None, None, None]

# -- determinants ------------------------------------------------------------------------------------
_op("aten::linalg_det(Tensor A) -> Tensor", kernels.det, kernels.det_backward)
_op("aten::linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet)", kernels.slogdet,
    kernels.slogdet_backward, multi=True)
_op("aten::logdet(Tensor self) -> Tensor", kernels.logdet, kernels.logdet_backward)

# -- inverses and solves -----------------------------------------------------------------------------
_op("aten::linalg_inv(Tensor A) -> Tensor", kernels.inv, kernels.inv_backward)
_op("aten::linalg_inv_ex(Tensor A, *, bool check_errors=False) -> (Tensor inverse, Tensor info)",
    kernels.inv_ex, kernels.inv_ex_backward, multi=True, integers=_INFO)
_op("aten::linalg_solve(Tensor A, Tensor B, *, bool left=True) -> Tensor", kernels.solve,
    kernels.solve_backward, (0, 1))
_op("aten::linalg_solve_ex(Tensor A, Tensor B, *, bool left=True, bool check_errors=False) -> "
    "(Tensor result, Tensor info)", kernels.solve_ex, kernels.solve_ex_backward, (0, 1), multi=True,
    integers=_INFO)
_op("aten::linalg_solve_triangular(Tensor self, Tensor B, *, bool upper, bool left=True, "
    "bool unitriangular=False) -> Tensor", kernels.solve_triangular, kernels.solve_triangular_backward, (0, 1))
_op("aten::triangular_solve(Tensor self, Tensor A, bool upper=True, bool transpose=False, "
    "bool unitriangular=False) -> (Tensor solution, Tensor cloned_coefficient)", kernels.triangular_solve,
    kernels.triangular_solve_backward, (0, 1), multi=True)

# -- Cholesky ----------------------------------------------------------------------------------------
_op("aten::cholesky(Tensor self, bool upper=False) -> Tensor", kernels.cholesky, kernels.cholesky_backward)
_op("aten::linalg_cholesky(Tensor self, *, bool upper=False) -> Tensor", kernels.linalg_cholesky,
    kernels.linalg_cholesky_backward)
_op("aten::linalg_cholesky_ex(Tensor self, *, bool upper=False, bool check_errors=False) -> "
    "(Tensor L, Tensor info)", kernels.cholesky_ex, kernels.cholesky_ex_backward, multi=True, integers=_INFO)
_op("aten::cholesky_solve(Tensor self, Tensor input2, bool upper=False) -> Tensor", kernels.cholesky_solve,
    kernels.cholesky_solve_backward, (0, 1))
_op("aten::cholesky_inverse(Tensor self, bool upper=False) -> Tensor", kernels.cholesky_inverse,
    kernels.cholesky_inverse_backward)

# -- products and powers -----------------------------------------------------------------------------
_op("aten::linalg_multi_dot(Tensor[] tensors) -> Tensor", kernels.multi_dot, kernels.multi_dot_backward,
    list_grad=True)
_op("aten::linalg_matrix_power(Tensor self, int n) -> Tensor", kernels.matrix_power,
    kernels.matrix_power_backward)
_op("aten::linalg_vander(Tensor x, *, SymInt? N=None) -> Tensor", kernels.vander, kernels.vander_backward)

# -- eigh --------------------------------------------------------------------------------------------
_op("aten::linalg_eigh(Tensor self, str UPLO=\"L\") -> (Tensor eigenvalues, Tensor eigenvectors)",
    kernels.eigh, kernels.eigh_backward, multi=True)
_op("aten::linalg_eigvalsh(Tensor self, str UPLO=\"L\") -> Tensor", kernels.eigvalsh, kernels.eigvalsh_backward)

refuse("aten::linalg_eig", "aten::linalg_eigvals",
       reason="its result is complex (a real matrix's eigenvalues are), and gradview's tensors are real")

# -- LU ----------------------------------------------------------------------------------------------
_op("aten::linalg_lu_factor_ex(Tensor A, *, bool pivot=True, bool check_errors=False) -> "
    "(Tensor LU, Tensor pivots, Tensor info)", kernels.lu_factor_ex, kernels.lu_factor_ex_backward, multi=True,
    integers=_PIVOTS_INFO)
_op("aten::linalg_lu_factor(Tensor A, *, bool pivot=True) -> (Tensor LU, Tensor pivots)", kernels.lu_factor,
    kernels.lu_factor_backward, multi=True, integers=_PIVOTS_INFO)
_op("aten::_lu_with_info(Tensor self, bool pivot=True, bool check_errors=True) -> "
    "(Tensor LU, Tensor pivots, Tensor info)", kernels.lu_with_info, kernels.lu_with_info_backward, multi=True,
    integers=_PIVOTS_INFO)
_op("aten::linalg_lu(Tensor A, *, bool pivot=True) -> (Tensor P, Tensor L, Tensor U)", kernels.linalg_lu,
    kernels.linalg_lu_backward, multi=True)
_op("aten::lu_unpack(Tensor LU_data, Tensor LU_pivots, bool unpack_data=True, bool unpack_pivots=True) -> "
    "(Tensor P, Tensor L, Tensor U)", kernels.lu_unpack, kernels.lu_unpack_backward, multi=True)
_op("aten::linalg_lu_solve(Tensor LU, Tensor pivots, Tensor B, *, bool left=True, bool adjoint=False) -> Tensor",
    kernels.lu_solve_linalg, kernels.lu_solve_linalg_backward, (0, 2))
_op("aten::lu_solve(Tensor self, Tensor LU_data, Tensor LU_pivots) -> Tensor", kernels.lu_solve,
    kernels.lu_solve_backward, (0, 1))

# -- SVD, pinv, matrix_rank --------------------------------------------------------------------------
_op("aten::linalg_svd(Tensor A, bool full_matrices=True, *, str? driver=None) -> (Tensor U, Tensor S, Tensor Vh)",
    kernels.linalg_svd, kernels.linalg_svd_backward, multi=True)
_op("aten::svd(Tensor self, bool some=True, bool compute_uv=True) -> (Tensor U, Tensor S, Tensor V)",
    kernels.svd, kernels.svd_backward, multi=True)
_op("aten::linalg_svdvals(Tensor A, *, str? driver=None) -> Tensor", kernels.svdvals, kernels.svdvals_backward)
_op("aten::linalg_pinv.atol_rtol_float(Tensor self, *, float? atol=None, float? rtol=None, bool hermitian=False) "
    "-> Tensor", kernels.pinv, kernels.pinv_backward)
_op("aten::linalg_pinv.atol_rtol_tensor(Tensor self, *, Tensor? atol=None, Tensor? rtol=None, bool hermitian=False) "
    "-> Tensor", kernels.pinv, kernels.pinv_backward, shapes=False)
_op("aten::linalg_pinv(Tensor self, float rcond, bool hermitian=False) -> Tensor", kernels.pinv_rcond,
    kernels.pinv_rcond_backward, shapes=False)
_op("aten::linalg_pinv.rcond_tensor(Tensor self, Tensor rcond, bool hermitian=False) -> Tensor", kernels.pinv_rcond,
    kernels.pinv_rcond_backward, shapes=False)
_op("aten::pinverse(Tensor self, float rcond=1.0000000000000001e-15) -> Tensor", kernels.pinverse,
    kernels.pinverse_backward)
_RANK = ("aten::linalg_matrix_rank.atol_rtol_tensor", "aten::linalg_matrix_rank.atol_rtol_float",
         "aten::linalg_matrix_rank", "aten::linalg_matrix_rank.tol_tensor")
for _name, _fn in zip(_RANK, (kernels.matrix_rank, kernels.matrix_rank, kernels.matrix_rank_tol,
                              kernels.matrix_rank_tol), strict=True):
    kernel(_name)(_fn)
shape_rule("aten::linalg_matrix_rank")(by_kernel(kernels.matrix_rank))
no_gradient(*_RANK, reason=_NOT_DIFFERENTIABLE)

# -- QR, Householder products ------------------------------------------------------------------------
_op("aten::linalg_qr(Tensor A, str mode=\"reduced\") -> (Tensor Q, Tensor R)", kernels.linalg_qr,
    kernels.linalg_qr_backward, multi=True)
_op("aten::qr(Tensor self, bool some=True) -> (Tensor Q, Tensor R)", kernels.qr, kernels.qr_backward, multi=True)
_op("aten::geqrf(Tensor self) -> (Tensor a, Tensor tau)", kernels.geqrf, None, multi=True)
no_gradient("aten::geqrf", reason="PyTorch implements no derivative for geqrf (its autograd raises "
            "\"the derivative for 'geqrf' is not implemented.\")")
_op("aten::linalg_householder_product(Tensor input, Tensor tau) -> Tensor", kernels.householder_product,
    kernels.householder_product_backward, (0, 1))
_op("aten::ormqr(Tensor self, Tensor input2, Tensor input3, bool left=True, bool transpose=False) -> Tensor",
    kernels.ormqr, kernels.ormqr_backward, (0, 1, 2))

# -- lstsq -------------------------------------------------------------------------------------------
_op("aten::linalg_lstsq(Tensor self, Tensor b, float? rcond=None, *, str? driver=None) -> "
    "(Tensor solution, Tensor residuals, Tensor rank, Tensor singular_values)", kernels.lstsq,
    kernels.lstsq_backward, (0, 1), multi=True, integers={2: "Long"})

# -- cond, tensorinv, tensorsolve, matrix_exp, LDL ---------------------------------------------------
_op("aten::linalg_cond(Tensor self, Scalar? p=None) -> Tensor", kernels.cond, kernels.cond_backward)
_op("aten::linalg_cond.p_str(Tensor self, str p) -> Tensor", kernels.cond, kernels.cond_str_backward, shapes=False)
_op("aten::linalg_tensorinv(Tensor self, int ind=2) -> Tensor", kernels.tensorinv, kernels.tensorinv_backward)
_op("aten::linalg_tensorsolve(Tensor self, Tensor other, int[]? dims=None) -> Tensor", kernels.tensorsolve,
    kernels.tensorsolve_backward, (0, 1))
_op("aten::linalg_matrix_exp(Tensor self) -> Tensor", kernels.matrix_exp, kernels.matrix_exp_backward)
_LDL_NO_DERIVATIVE = ("PyTorch implements no derivative for the LDL factorization or its solve (its autograd "
                      "raises 'derivative for aten::linalg_ldl_factor_ex is not implemented')")
_op("aten::linalg_ldl_factor_ex(Tensor self, *, bool hermitian=False, bool check_errors=False) -> "
    "(Tensor LD, Tensor pivots, Tensor info)", kernels.ldl_factor_ex, None, multi=True, integers=_PIVOTS_INFO)
_op("aten::linalg_ldl_factor(Tensor self, *, bool hermitian=False) -> (Tensor LD, Tensor pivots)",
    kernels.ldl_factor, None, multi=True, integers=_PIVOTS_INFO)
_op("aten::linalg_ldl_solve(Tensor LD, Tensor pivots, Tensor B, *, bool hermitian=False) -> Tensor",
    kernels.ldl_solve, None)
no_gradient("aten::linalg_ldl_factor_ex", "aten::linalg_ldl_factor", "aten::linalg_ldl_solve",
            reason=_LDL_NO_DERIVATIVE)
