"""grad(..., is_grads_batched=True, create_graph=True) against torch: a batched
result that requires grad (when torch's does), and its derivatives."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gradview.runtime import Tensor, autograd

RNG = np.random.default_rng(11)
A = RNG.normal(size=(2, 3))
B = RNG.normal(size=(2, 3))
V = RNG.normal(size=(4, 2, 3))
W = RNG.normal(size=(4, 2, 3))


def lift(lib: str, array: np.ndarray, requires_grad: bool = False):
    if lib == "torch":
        return torch.tensor(array, requires_grad=requires_grad)
    return Tensor(array.copy(), requires_grad=requires_grad)


def module(lib: str):
    return torch.autograd if lib == "torch" else autograd


def numpy_of(value):
    return None if value is None else value.detach().numpy()


def close(ours, theirs) -> None:
    assert len(ours) == len(theirs)
    for mine, other in zip(ours, theirs, strict=True):
        assert (mine is None) == (other is None)
        if mine is not None:
            assert mine.requires_grad == other.requires_grad
            np.testing.assert_allclose(numpy_of(mine), numpy_of(other), rtol=1e-10, atol=1e-12)


def both(call):
    return [call(lib, module(lib)) for lib in ("ours", "torch")]


def graph(lib: str):
    """Leaves a, b; z = sigmoid(a * b + 1) * tanh(a)."""
    a, b = lift(lib, A, True), lift(lib, B, True)
    return a, b, ((a * b + 1).sigmoid() * a.tanh())


def test_batched_create_graph_requires_grad_and_second_derivatives_match() -> None:
    def call(lib, ad):
        a, b, z = graph(lib)
        first = ad.grad(z, [a, b], lift(lib, V), is_grads_batched=True, create_graph=True)
        assert tuple(first[0].shape) == (4, 2, 3)
        weighted = (first[0] * lift(lib, W)).sum() + (first[1] * first[1]).sum()
        second = ad.grad(weighted, [a, b], create_graph=True)
        third = ad.grad(second[0].sum() + second[1].sum(), [a, b])
        return [*first, *second, *third]

    close(*both(call))


def test_batched_create_graph_on_a_cube_matches_torch() -> None:
    def call(lib, ad):
        x = lift(lib, np.array([1.0, 2.0, 3.0]), True)
        (g,) = ad.grad(x * x * x, x, lift(lib, np.eye(3)), is_grads_batched=True, create_graph=True)
        return [g, *ad.grad(g.sum(), x)]

    ours, theirs = both(call)
    close(ours, theirs)
    np.testing.assert_allclose(numpy_of(ours[1]), [6.0, 12.0, 18.0])


def test_batched_create_graph_of_a_linear_function_is_constant() -> None:
    def call(lib, ad):
        x = lift(lib, np.array([1.0, 2.0, 3.0]), True)
        return ad.grad(x * 2, x, lift(lib, np.eye(3)), is_grads_batched=True, create_graph=True)

    ours, theirs = both(call)
    close(ours, theirs)
    assert not ours[0].requires_grad


@pytest.mark.parametrize("kwargs", [{"allow_unused": True}, {"materialize_grads": True}])
def test_batched_create_graph_unused_input(kwargs) -> None:
    def call(lib, ad):
        a, b, z = graph(lib)
        unused = lift(lib, A, True)
        return ad.grad(
            z, [a, unused], lift(lib, V), is_grads_batched=True, create_graph=True, **kwargs
        )

    close(*both(call))


def test_batched_create_graph_inside_no_grad_still_requires_grad() -> None:
    def call(lib, ad):
        a, b, z = graph(lib)
        with (torch.no_grad() if lib == "torch" else autograd.no_grad()):
            result = ad.grad(z, [a, b], lift(lib, V), is_grads_batched=True, create_graph=True)
        return [*result, *ad.grad(result[0].sum(), [a, b])]

    close(*both(call))


def test_batched_create_graph_differentiates_through_grad_outputs() -> None:
    def call(lib, ad):
        a, b, z = graph(lib)
        v = lift(lib, V, True)
        (g,) = ad.grad(z, a, v, is_grads_batched=True, create_graph=True)
        return ad.grad((g * g).sum(), [v, a])

    close(*both(call))


def test_batched_grad_outputs_of_different_batch_sizes_raise_torch_error() -> None:
    found = []
    for lib in ("ours", "torch"):
        a, b, z = graph(lib)
        with pytest.raises(ValueError) as error:
            module(lib).grad(
                [z, z * 2], a, [lift(lib, V), lift(lib, V[:2])], is_grads_batched=True
            )
        found.append(str(error.value))
    assert found[0] == found[1]
