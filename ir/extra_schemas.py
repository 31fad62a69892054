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
)

# List mutation TorchScript emits for ``xs.append(v)``.
LIST_SCHEMAS: tuple[str, ...] = ("aten::append.t(t[](a!) self, t(c -> *) el) -> t[](a!)",)

BACKWARD_HELPER_SCHEMAS: tuple[str, ...] = (
    "aten::select_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt index) -> Tensor",
    "aten::slice_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt start, SymInt end, "
    "SymInt step) -> Tensor",
    "gradview::split_with_sizes_backward(Tensor?[] grads, int[] split_sizes, int dim, int[] sizes) -> Tensor?",
    "gradview::split_backward(Tensor?[] grads, int split_size, int dim, int[] sizes) -> Tensor?",
    "gradview::chunk_backward(Tensor?[] grads, int chunks, int dim, int[] sizes) -> Tensor?",
    "gradview::unbind_backward(Tensor?[] grads, int dim, int[] sizes) -> Tensor?",
    "gradview::sizes_along(Tensor[] tensors, int dim) -> int[]",
    "gradview::invert_permutation(int[] dims) -> int[]",
    "aten::value_selecting_reduction_backward(Tensor grad, int dim, Tensor indices, SymInt[] sizes, "
    "bool keepdim) -> Tensor",
    "gradview::matmul_grad_self(Tensor grad, Tensor other, int[] self_size) -> Tensor",
    "gradview::matmul_grad_other(Tensor grad, Tensor self, int[] other_size) -> Tensor",
)
