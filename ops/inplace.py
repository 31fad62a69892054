"""In-place ops: ``x.add_(y)``, ``x.relu_()``, ``x.zero_()``, ``x.copy_(src)``...

An in-place op computes what its out-of-place op computes and writes the
result into ``self``, returning ``self`` itself. Its kernel is the
out-of-place kernel followed by a write-back under PyTorch's rules for
in-place results (kernels/inplace.py): the result keeps ``self``'s shape
and dtype, and a cast PyTorch refuses (a float result into an int tensor)
is refused. ``zero_``, ``fill_``, ``copy_`` and ``dropout_`` have kernels of
their own.
"""

from __future__ import annotations

from gradview.kernels import inplace as kernels
from gradview.kernels.registry import Kernel

from .registry import kernel, kernel_for

__all__: list[str] = []


def _out_of_place(name: str) -> Kernel:
    """The kernel of out-of-place overload ``name``: bound by the families imported before."""
    found = kernel_for(name)
    if found is None:
        raise ValueError(f"in-place kernels: the out-of-place kernel {name} is not registered")
    return found


# -- the elementwise ops: the out-of-place kernel, written back into self ---------------------------
# In-place overload -> the out-of-place overload whose kernel computes its result.
WRITTEN_BACK = {
    "aten::mul_.Scalar": "aten::mul.Scalar", "aten::div_.Scalar": "aten::div.Scalar",
    "aten::div_.Tensor_mode": "aten::div.Tensor_mode", "aten::div_.Scalar_mode": "aten::div.Scalar_mode",
    "aten::relu_": "aten::relu", "aten::sigmoid_": "aten::sigmoid", "aten::tanh_": "aten::tanh",
    "aten::exp_": "aten::exp", "aten::neg_": "aten::neg", "aten::hardswish_": "aten::hardswish",
    "aten::silu_": "aten::silu", "aten::elu_": "aten::elu", "aten::leaky_relu_": "aten::leaky_relu",
    "aten::hardtanh_": "aten::hardtanh", "aten::masked_fill_.Scalar": "aten::masked_fill.Scalar",
    "aten::masked_fill_.Tensor": "aten::masked_fill.Tensor", "aten::clamp_": "aten::clamp",
    "aten::clamp_.Tensor": "aten::clamp.Tensor",
}
for _inplace, _outplace in WRITTEN_BACK.items():
    kernel(_inplace)(kernels.in_place(_inplace.removeprefix("aten::"), _out_of_place(_outplace)))

# -- add_, sub_, mul_.Tensor, div_.Tensor: the same, with an ``out=self`` fast path ----------------
# In-place overload -> (the NumPy/CuPy ufunc that writes into self, the out-of-place overload,
# whether the fast path is for float self only: int / int is a float, which cannot go into self).
ARITHMETIC = {
    "aten::add_.Tensor": ("add", "aten::add.Tensor", False),
    "aten::add_.Scalar": ("add", "aten::add.Scalar", False),
    "aten::sub_.Tensor": ("subtract", "aten::sub.Tensor", False),
    "aten::sub_.Scalar": ("subtract", "aten::sub.Scalar", False),
    "aten::mul_.Tensor": ("multiply", "aten::mul.Tensor", False),
    "aten::div_.Tensor": ("true_divide", "aten::div.Tensor", True),
}
for _inplace, (_ufunc, _outplace, _floats_only) in ARITHMETIC.items():
    kernel(_inplace)(
        kernels.arith_in_place(
            _inplace.removeprefix("aten::"), _ufunc, _out_of_place(_outplace), _floats_only
        )
    )

# -- dropout_, zero_, fill_, copy_: kernels of their own -----------------------------------------------
kernel("aten::dropout_")(kernels.dropout_)
kernel("aten::zero_")(kernels.zero_)
kernel("aten::fill_.Scalar")(kernels.fill_scalar)
kernel("aten::fill_.Tensor")(kernels.fill_tensor)
kernel("aten::copy_")(kernels.copy_)
