"""Small ops of scripted PyTorch modules: implicit tensor-to-number conversions,
warnings, questions about a tensor, and the casts of TorchScript's autocast pass.

* ``ScalarImplicit``/``FloatImplicit``/``IntImplicit`` turn a 0-dim tensor into
  a Python number where a schema wants a ``Scalar``, ``float`` or ``int``.
* ``aten::warn`` is ``warnings.warn``; scripted ``nn`` modules call it on
  deprecated arguments. ``prim::is_nested`` and ``prim::type(device)`` guard
  their fast paths, and have one answer on NumPy/CuPy arrays.
* ``_autocast_to_reduced_precision``/``_autocast_to_full_precision`` return
  their input unchanged unless autocast is on for the tensor's device and its
  dtype is eligible (float32 for the reduced cast, float16 for the full one);
  a cast result is laid out like its input, as ``to`` lays it out. Their
  gradient is ``to``'s (the gradient goes back in the input's dtype), declared
  with ``to`` in ops/casts.py.

The number conversions, the warning and the questions produce no tensor, so
no gradient flows through them and they need no shape rule.
"""

from __future__ import annotations

from gradview.ir.types import TensorType
from gradview.kernels import script_queries

from .casts import save_self_dtype, to_gradient
from .dtype_rules import scalar_type_name
from .registry import formula, kernel, shape_rule
from .shape_toolkit import NodeArgs, RuleResult, layout_of, make_tensor
from .tensor_layout import preserve_strides

__all__: list[str] = []


# -- aten::ScalarImplicit, FloatImplicit, IntImplicit: a 0-dim tensor as a number ----------------
kernel("aten::ScalarImplicit")(script_queries.scalar_implicit)
kernel("aten::FloatImplicit")(script_queries.float_implicit)
kernel("aten::IntImplicit")(script_queries.int_implicit)

# -- aten::warn ----------------------------------------------------------------------------------
kernel("aten::warn")(script_queries.warn)

# -- prim::is_nested, prim::type: questions scripted modules ask before a fast path -----------------
kernel("prim::is_nested")(script_queries.is_nested)
kernel("prim::type")(script_queries.device_type)


# -- aten::_autocast_to_reduced_precision, _autocast_to_full_precision ------------------------------
kernel("aten::_autocast_to_reduced_precision")(script_queries.autocast_to_reduced_precision)
kernel("aten::_autocast_to_full_precision")(script_queries.autocast_to_full_precision)


def _autocast(args: NodeArgs, eligible: str, target: str | None) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    cuda, cpu = args.value(1, None), args.value(2, None)
    if self.device is not None:
        enabled = cuda if self.device.startswith("cuda") else cpu
    else:
        enabled = cuda if cuda == cpu else None
    if self.scalar_type is not None and self.scalar_type != eligible or enabled is False:
        return [TensorType(self.scalar_type, self.sizes, self.strides, None, self.device)]
    if enabled is None or self.scalar_type is None:
        return [make_tensor(None, self.sizes, None, self.device)]
    layout = layout_of(self)
    strides = preserve_strides(*layout) if layout is not None else None
    return [make_tensor(target, self.sizes, strides, self.device)]


@shape_rule("aten::_autocast_to_reduced_precision")
def _autocast_to_reduced_precision(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    on_cuda = self is not None and self.device is not None and self.device.startswith("cuda")
    index = args.int_value(3 if on_cuda else 4)
    if self is not None and self.device is None and args.int_value(3) != args.int_value(4):
        index = None
    return _autocast(args, "Float", scalar_type_name(index) if index is not None else None)


@shape_rule("aten::_autocast_to_full_precision")
def _autocast_to_full_precision(args: NodeArgs) -> RuleResult:
    return _autocast(args, "Half", "Float")


# Identities unless autocast is on for the device and the dtype is eligible: ``to``'s gradient,
# which casts the gradient back to the input's dtype.
formula("aten::_autocast_to_full_precision", "aten::_autocast_to_reduced_precision", forward=save_self_dtype)(
    to_gradient
)
