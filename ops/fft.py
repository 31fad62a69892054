"""The FFT family (``torch.fft``): what runs, and what gradview refuses.

gradview's tensors are real, so it runs the transforms whose input and result
are both real: ``irfft``/``irfft2``/``irfftn`` and ``hfft``/``hfft2``/``hfftn``
of a real input (PyTorch reads it as complex with zero imaginary part), and
``fftshift``/``ifftshift`` (rolls). Every transform with a complex result
(``fft``, ``rfft``, ``ihfft``..., ``stft``) is refused, naming the op.

Gradients, derivatives.yaml's for the real input: a complex-to-real
transform's gradient is ``fft_c2r_backward`` (``rfft`` of the gradient, the
onesided bins doubled) whose real part is kept, with the input's crop or
padding undone: ``gradview::fft_c2r_backward`` (one dim) and
``gradview::fft_c2rn_backward`` (several). That map is the transform's
transpose, so its own gradient is the forward op again, applied to the
gradient's gradient: second derivatives work. ``fftshift``'s gradient is
``ifftshift`` and the other way round (roll's gradient: the roll undone).
"""

from __future__ import annotations

from gradview.ir import Node, TensorType, Value
from gradview.kernels import fft as kernels

from .registry import Emitter, formula, kernel, refuse, schema, shape_rule
from .shape_by_kernel import by_kernel
from .shape_toolkit import NodeArgs, RuleResult, ShapeRule
from .static_info import const, needs_grad, none_grads

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]

_COMPLEX = "its result is complex, and gradview's tensors are real"

refuse(
    "aten::fft_fft", "aten::fft_ifft", "aten::fft_fft2", "aten::fft_ifft2", "aten::fft_fftn", "aten::fft_ifftn",
    "aten::fft_rfft", "aten::fft_rfft2", "aten::fft_rfftn", "aten::fft_ihfft", "aten::fft_ihfft2",
    "aten::fft_ihfftn", "aten::_fft_r2c", "aten::_fft_c2c",
    reason=_COMPLEX,
)
refuse(
    "aten::stft",
    reason="it computes a complex spectrum, and gradview's tensors are real "
    "(return_complex=False only views that spectrum as pairs of reals)",
)

# -- complex-to-real transforms of a real input --------------------------------------------------------
_ONE_DIM = {"aten::fft_irfft": kernels.fft_irfft, "aten::fft_hfft": kernels.fft_hfft}
_N_DIM = {
    "aten::fft_irfft2": kernels.fft_irfft2, "aten::fft_irfftn": kernels.fft_irfftn,
    "aten::fft_hfft2": kernels.fft_hfft2, "aten::fft_hfftn": kernels.fft_hfftn,
}
_INTEGRAL = frozenset({"Bool", "Byte", "Char", "Short", "Int", "Long"})


def _in_default_float(rule: ShapeRule) -> ShapeRule:
    """An integer input's transform is float32 (promote_tensor_fft), also when its sizes are unknown."""

    def promoted(args: NodeArgs) -> RuleResult:
        result = rule(args)
        found = result[0] if result else None
        if isinstance(found, TensorType) and found.scalar_type in _INTEGRAL:
            return [TensorType("Float", found.sizes, found.strides, None, found.device)]
        return result

    return promoted


for _name, _fn in {**_ONE_DIM, **_N_DIM}.items():
    kernel(_name)(_fn)
    shape_rule(_name)(_in_default_float(by_kernel(_fn)))

schema(
    "gradview::fft_c2r_backward(Tensor grad, Tensor self, int? n, int dim, str? norm, bool hermitian) -> Tensor",
    "gradview::fft_c2rn_backward(Tensor grad, Tensor self, int[]? s, int[]? dim, str? norm, bool hermitian) -> Tensor",
)
kernel("gradview::fft_c2r_backward")(kernels.fft_c2r_backward)
kernel("gradview::fft_c2rn_backward")(kernels.fft_c2rn_backward)
shape_rule("gradview::fft_c2r_backward")(by_kernel(kernels.fft_c2r_backward))
shape_rule("gradview::fft_c2rn_backward")(by_kernel(kernels.fft_c2rn_backward))


def _given(node: Node, index: int, default: object) -> object:
    """Input ``index``, or its schema default where hand-written IR left it out."""
    inputs = node.inputs()
    return inputs[index] if index < len(inputs) else default


@formula(*_ONE_DIM, *_N_DIM)
def _c2r_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``fft_c2r_backward``'s real part, the input's resize undone (one op)."""
    x = node.inputs()[0]
    if not needs_grad(x):
        return none_grads(node)
    one_dim = node.kind() in _ONE_DIM
    default_dim = -1 if one_dim else ([-2, -1] if node.kind().endswith("2") else None)
    size, dim, norm = (_given(node, i, default) for i, default in ((1, None), (2, default_dim), (3, None)))
    hermitian = node.kind().startswith("aten::fft_hfft")
    backward = "gradview::fft_c2r_backward" if one_dim else "gradview::fft_c2rn_backward"
    return none_grads(node, emit.op(backward, grads[0], x, size, dim, norm, hermitian))


@formula("gradview::fft_c2r_backward", "gradview::fft_c2rn_backward")
def _c2r_backward_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """The transpose of the transform's transpose: the forward transform (``self`` gives only sizes)."""
    grad, _self, size, dim, norm, hermitian = node.inputs()
    if not needs_grad(grad):
        return none_grads(node)
    one_dim = node.kind() == "gradview::fft_c2r_backward"
    forward = ("aten::fft_hfft" if const(hermitian) else "aten::fft_irfft") + ("" if one_dim else "n")
    return none_grads(node, emit.op(forward, grads[0], size, dim, norm))


# -- fftshift, ifftshift ----------------------------------------------------------------------------------
kernel("aten::fft_fftshift")(kernels.fft_fftshift)
kernel("aten::fft_ifftshift")(kernels.fft_ifftshift)
shape_rule("aten::fft_fftshift")(by_kernel(kernels.fft_fftshift))
shape_rule("aten::fft_ifftshift")(by_kernel(kernels.fft_ifftshift))


@formula("aten::fft_fftshift")
def _fftshift_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """The roll undone: ``ifftshift`` of the gradient along the same dims."""
    if not needs_grad(node.inputs()[0]):
        return none_grads(node)
    return none_grads(node, emit.op("aten::fft_ifftshift", grads[0], _given(node, 1, None)))


@formula("aten::fft_ifftshift")
def _ifftshift_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    if not needs_grad(node.inputs()[0]):
        return none_grads(node)
    return none_grads(node, emit.op("aten::fft_fftshift", grads[0], _given(node, 1, None)))
