"""Every differentiable op of the IR issue's list has a gradient formula, for every
tensor overload gradview registers (so none silently falls out of autodiff)."""

import pytest

from gradview.ir import schemas_for
from gradview.ops import FORMULAS, KERNELS

DIFFERENTIABLE_OPS = ["add", "sub", "mul", "div", "neg", "exp", "log", "sin", "cos", "tanh", "sigmoid", "relu", "gelu", "leaky_relu", "sqrt", "rsqrt", "abs", "pow", "clamp", "where", "max", "min", "sum", "mean", "mm", "matmul", "t", "transpose", "permute", "addmm", "linear", "view", "reshape", "expand", "expand_as", "squeeze", "unsqueeze", "flatten", "cat", "stack", "chunk", "split", "select", "slice", "softmax", "log_softmax", "layer_norm", "native_batch_norm", "dropout", "type_as", "prod", "norm", "clamp_min", "sign", "topk", "kthvalue", "max_pool2d"]

# Overloads that take no tensor with a gradient, or are not differentiable by nature.
NOT_DIFFERENTIABLE = {
    "aten::where",  # where(condition) -> indices
    "aten::max.dim_max", "aten::min.dim_min",  # out= variants
    "aten::mm.dtype", "aten::addmm.dtype",  # CUDA-only out_dtype variants; PyTorch has no derivative
    "aten::view.dtype",  # reinterprets the bits: not differentiable
}


def tensor_overloads(op: str) -> list[str]:
    names = []
    for schema in schemas_for(f"aten::{op}"):
        if schema.qualified_name not in KERNELS:
            continue  # PyTorch's out= and named-dim overloads: gradview does not run them
        takes_tensor = any(a.type.is_tensor() or a.type.contains_tensor() for a in schema.arguments)
        returns_tensor = any(r.type.contains_tensor() for r in schema.returns)
        if takes_tensor and returns_tensor and schema.qualified_name not in NOT_DIFFERENTIABLE:
            names.append(schema.qualified_name)
    return names


@pytest.mark.parametrize("op", DIFFERENTIABLE_OPS)
def test_every_tensor_overload_has_a_formula(op: str) -> None:
    overloads = tensor_overloads(op)
    assert overloads, f"aten::{op} has no registered tensor overload"
    missing = [name for name in overloads if name not in FORMULAS]
    assert not missing, f"no gradient formula for {missing}"
