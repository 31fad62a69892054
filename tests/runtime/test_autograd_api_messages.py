"""The grad_outputs checks of backward/grad print exactly torch's messages
(shapes as ``torch.Size([3])``, dtypes as ``torch.float64``), and a complex
gradient for a real output (or a real one for a complex output) is refused as
torch refuses it, instead of being cast."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from gradview.runtime import Tensor, autograd

X = np.array([0.5, -1.0, 2.0])


def make(lib: str, array: np.ndarray, requires_grad: bool = False):
    if lib == "torch":
        return torch.tensor(array, requires_grad=requires_grad)
    return Tensor(array.copy(), requires_grad=requires_grad)


def module(lib: str):
    return torch.autograd if lib == "torch" else autograd


def messages(call) -> list[str]:
    """``call(lib)`` must raise in both libraries: the two messages, ours first."""
    found = []
    for lib in ("ours", "torch"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a NumPy cast warning would fail the test
            with pytest.raises(RuntimeError) as error:
                call(lib)
        found.append(str(error.value))
    return found


def real_output(lib: str):
    x = make(lib, X, requires_grad=True)
    return x, x * 2


def complex_output(lib: str):
    z = make(lib, X.astype(np.complex128), requires_grad=True)
    return z, z * 2


SHAPE_CASES = {
    "grad_vector": lambda lib: module(lib).grad(
        real_output(lib)[1], real_output(lib)[0], make(lib, np.ones(4))
    ),
    "grad_matrix": lambda lib: module(lib).backward(real_output(lib)[1], make(lib, np.ones((2, 3)))),
    "scalar_grad": lambda lib: module(lib).backward(real_output(lib)[1], make(lib, np.array(1.0))),
    "batched": lambda lib: module(lib).grad(
        real_output(lib)[1], real_output(lib)[0], make(lib, np.ones((4, 2))), is_grads_batched=True
    ),
    "batched_matrix": lambda lib: module(lib).grad(
        real_output(lib)[1],
        real_output(lib)[0],
        make(lib, np.ones((4, 2, 5))),
        is_grads_batched=True,
    ),
}


@pytest.mark.parametrize("case", sorted(SHAPE_CASES))
def test_shape_mismatch_messages_print_torch_sizes(case) -> None:
    ours, theirs = messages(SHAPE_CASES[case])
    assert ours == theirs
    assert "torch.Size([" in ours


def test_mismatch_past_the_first_output_names_its_position() -> None:
    # torch finds the position with tuple.index, which compares the earlier
    # entries to the gradient: "Boolean value of Tensor with more than one value
    # is ambiguous" instead of its own message; gradview says where it is.
    x, y = real_output("ours")
    with pytest.raises(RuntimeError) as error:
        autograd.backward([y.sum(), y], [None, Tensor(np.ones(2))])
    assert str(error.value) == (
        "Mismatch in shape: grad_output[1] has a shape of torch.Size([2]) and output[1] has a "
        "shape of torch.Size([3])."
    )
    x, y = real_output("torch")
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value"):
        torch.autograd.backward([y.sum(), y], [None, torch.ones(2, dtype=torch.float64)])


@pytest.mark.parametrize("api", ["grad", "backward"])
@pytest.mark.parametrize(
    ("output", "grad_dtype"),
    [("real", np.complex128), ("real", np.complex64), ("complex", np.float64)],
)
def test_complex_grad_for_real_output_and_back_raise_torch_error(api, output, grad_dtype) -> None:
    def call(lib):
        x, y = (real_output if output == "real" else complex_output)(lib)
        g = make(lib, np.ones(3).astype(grad_dtype))
        if api == "grad":
            return module(lib).grad(y, x, g)
        return module(lib).backward(y, g)

    ours, theirs = messages(call)
    assert ours == theirs
    assert ours.startswith("For complex Tensors, both grad_output and output")


def test_complex_scalar_without_gradient_names_torch_dtype() -> None:
    def call(lib):
        z, y = complex_output(lib)
        return module(lib).backward(y.sum())

    ours, theirs = messages(call)
    assert ours == theirs
    assert ours.endswith("torch.complex128")


def test_other_real_dtype_gradient_is_accepted_and_cast_like_torch() -> None:
    results = []
    for lib in ("ours", "torch"):
        x, y = real_output(lib)
        g = make(lib, np.array([1.0, 2.0, 3.0], dtype=np.float32))
        (result,) = module(lib).grad(y, x, g)
        assert str(result.dtype).removeprefix("torch.") == "float64"
        results.append(result.detach().numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12)
