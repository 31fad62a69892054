"""Schemas gradview registers beyond ``builtin_schemas``: PyTorch's in-place
operators (so passes know what they write) and the backward helpers that
gradient formulas emit (PyTorch's own where they exist, ``gradview::`` ones
where the backward of a list op needs one). They live here, in the IR, so a
printed backward graph parses in any process.
"""

INPLACE_SCHEMAS: tuple[str, ...] = (
    "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    "aten::add_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)",
    "aten::sub_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    "aten::sub_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)",
    "aten::mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
    "aten::mul_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
    "aten::div_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
    "aten::div_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
    "aten::relu_(Tensor(a!) self) -> Tensor(a!)",
    "aten::sigmoid_(Tensor(a!) self) -> Tensor(a!)",
    "aten::tanh_(Tensor(a!) self) -> Tensor(a!)",
    "aten::exp_(Tensor(a!) self) -> Tensor(a!)",
    "aten::neg_(Tensor(a!) self) -> Tensor(a!)",
    "aten::clamp_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> Tensor(a!)",
    "aten::zero_(Tensor(a!) self) -> Tensor(a!)",
    "aten::fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)",
    "aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
    "aten::div_.Tensor_mode(Tensor(a!) self, Tensor other, *, str? rounding_mode) -> Tensor(a!)",
    "aten::div_.Scalar_mode(Tensor(a!) self, Scalar other, *, str? rounding_mode) -> Tensor(a!)",
    "aten::clamp_.Tensor(Tensor(a!) self, Tensor? min=None, Tensor? max=None) -> Tensor(a!)",
    "aten::fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)",
    "aten::hardswish_(Tensor(a!) self) -> Tensor(a!)",
    "aten::silu_(Tensor(a!) self) -> Tensor(a!)",
    "aten::elu_(Tensor(a!) self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor(a!)",
    "aten::leaky_relu_(Tensor(a!) self, Scalar negative_slope=0.01) -> Tensor(a!)",
    "aten::hardtanh_(Tensor(a!) self, Scalar min_val=-1, Scalar max_val=1) -> Tensor(a!)",
    "aten::masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)",
    "aten::masked_fill_.Tensor(Tensor(a!) self, Tensor mask, Tensor value) -> Tensor(a!)",
    "aten::dropout_(Tensor(a!) self, float p, bool train) -> Tensor(a!)",
)

# List mutation TorchScript emits for ``xs.append(v)``.
LIST_SCHEMAS: tuple[str, ...] = ("aten::append.t(t[](a!) self, t(c -> *) el) -> t[](a!)",)

BACKWARD_HELPER_SCHEMAS: tuple[str, ...] = (
    "aten::select_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt index) -> Tensor",
    "aten::slice_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt start, SymInt end, "
    "SymInt step) -> Tensor",
    "aten::value_selecting_reduction_backward(Tensor grad, int dim, Tensor indices, SymInt[] sizes, "
    "bool keepdim) -> Tensor",
    "aten::logit_backward(Tensor grad_output, Tensor self, float? eps=None) -> Tensor",
)

# Convolution, pooling, normalization and embedding overloads that PyTorch's
# graphs use but builtin_schemas.py lacks: what tracing records for
# padding='same'/'valid', the backward PyTorch's JIT pairs with
# _slow_conv2d_forward, batch norm with running statistics (written in place),
# and the per-sample-weights gradient of embedding_bag.
NN_SCHEMAS: tuple[str, ...] = (
    "aten::_convolution_mode(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, str padding, "
    "SymInt[] dilation, SymInt groups) -> Tensor",
    "aten::_slow_conv2d_backward.output_mask(Tensor grad_output, Tensor self, Tensor weight, "
    "SymInt[2] kernel_size, SymInt[2] stride, SymInt[2] padding, bool[3] output_mask) "
    "-> (Tensor grad_input, Tensor grad_weight, Tensor grad_bias)",
    "aten::_native_batch_norm_legit(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!) running_mean, "
    "Tensor(b!) running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
    "aten::_embedding_bag_per_sample_weights_backward(Tensor grad, Tensor weight, Tensor indices, "
    "Tensor offsets, Tensor offset2bag, int mode, int padding_idx=-1) -> Tensor",
)

# Empty: the recurrent and attention backward kernels' schemas are declared in gradview.ops.recurrent
# and gradview.ops.attention (kept until operators.py stops importing this name).
RECURRENT_ATTENTION_SCHEMAS: tuple[str, ...] = ()

# Helpers of the reduction, view, indexing and loss formulas, and the forward
# half of nll_loss that PyTorch's JIT formula calls (it returns the total
# weight its backward needs).
REDUCTION_VIEW_LOSS_SCHEMAS: tuple[str, ...] = (
    "aten::nll_loss_forward(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index) "
    "-> (Tensor output, Tensor total_weight)",
    "aten::nll_loss2d_forward(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index) "
    "-> (Tensor output, Tensor total_weight)",
)

# Empty: broadcast_tensors_backward's schema is declared in gradview.ops.views
# (kept until operators.py stops importing this name).
CATALOG_GAP_SCHEMAS: tuple[str, ...] = ()
