"""Checking the gradients handed to ``backward``/``grad`` against their outputs.

Each given gradient must have its output's shape (past the batch dimension
with ``is_grads_batched``) and be complex exactly when the output is; an
omitted one is made (ones) only for a real scalar output; a given one of another
dtype is cast to its output's, as PyTorch's engine does. The messages are
PyTorch's, shapes printed as ``torch.Size([3])`` and dtypes as
``torch.float64``, so that errors read the same in both libraries.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .function import tensor_class

__all__ = ["as_tuple", "check_counts", "make_grads", "torch_dtype", "torch_size"]


def torch_size(shape: Sequence[int]) -> str:
    """A shape as PyTorch prints it: ``torch.Size([2, 3])``."""
    return f"torch.Size([{', '.join(str(int(s)) for s in shape)}])"


def torch_dtype(dtype: Any) -> str:
    """A NumPy dtype as PyTorch names it: ``torch.float64`` (the names coincide)."""
    return f"torch.{dtype.name}"


def as_tuple(values: Any, length: int | None = None) -> tuple[Any, ...]:
    """One tensor or a sequence as a tuple; None as ``length`` Nones."""
    if values is None:
        return (None,) * (length or 0)
    if isinstance(values, tensor_class()):
        return (values,)
    return tuple(values)


def check_counts(outputs: Sequence[Any], grads: Sequence[Any]) -> None:
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")


def _check_given(index: int, out: Any, grad: Any, is_grads_batched: bool) -> None:
    out_shape = tuple(out.shape)
    grad_shape = tuple(grad.shape[1:]) if is_grads_batched else tuple(grad.shape)
    if grad_shape != out_shape:
        # (torch finds the index with tuple.index, which fails past the first
        # position with "Boolean value of Tensor ... is ambiguous"; this says where.)
        where, output = f"grad_output[{index}]", f"output[{index}]"
        if is_grads_batched:
            # PyTorch prints the batched gradient's shape after dropping the batch
            # dimension twice (it slices grad[0] and then drops its first dimension).
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each "
                "grad_output as the batch dimension. The sizes of the remaining dimensions are "
                "expected to match the shape of corresponding output, but a mismatch was "
                f"detected: {where} has a shape of {torch_size(grad_shape[1:])} and {output} has "
                f"a shape of {torch_size(out_shape)}. If you only want some tensors in "
                "`grad_output` to be considered batched, consider using vmap."
            )
        raise RuntimeError(
            f"Mismatch in shape: {where} has a shape of {torch_size(grad_shape)} and {output} "
            f"has a shape of {torch_size(out_shape)}."
        )
    if (out.dtype.kind == "c") != (grad.dtype.kind == "c"):
        raise RuntimeError(
            "For complex Tensors, both grad_output and output are required to have the same "
            f"dtype. Mismatch in dtype: grad_output[{index}] has a dtype of "
            f"{torch_dtype(grad.dtype)} and output[{index}] has a dtype of "
            f"{torch_dtype(out.dtype)}."
        )


def make_grads(
    outputs: Sequence[Any], grads: Sequence[Any], is_grads_batched: bool
) -> tuple[Any, ...]:
    """Check given gradients against their outputs; make implicit ones for scalars."""
    tensor = tensor_class()
    new_grads = []
    for index, (out, grad) in enumerate(zip(outputs, grads, strict=False)):
        if isinstance(grad, tensor):
            _check_given(index, out, grad, is_grads_batched)
            if grad.data.dtype != out.data.dtype:
                # PyTorch's engine casts a root gradient to its output's dtype
                # (validate_outputs): an int64 or float32 gradient for a float64 output works.
                grad = grad.to(out.data.dtype)
            new_grads.append(grad)
        elif grad is None:
            if out.requires_grad:
                if out.data.size != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if out.data.dtype.kind != "f":
                    raise RuntimeError(
                        "grad can be implicitly created only for real scalar outputs but got "
                        f"{torch_dtype(out.data.dtype)}"
                    )
                new_grads.append(tensor(out.xp.ones_like(out.data)))
            else:
                new_grads.append(None)
        else:
            raise TypeError(
                f"gradients can be either Tensors or None, but got {type(grad).__name__}"
            )
    return tuple(new_grads)
