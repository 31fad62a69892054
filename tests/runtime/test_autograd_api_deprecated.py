"""The deprecated autograd arguments (``grad(only_inputs=)``, ``backward(grad_variables=)``)
and ``autograd.variable``, against torch: same values, warnings and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from gradview.runtime import Tensor, autograd

X = np.array([0.5, -1.0, 2.0])
G = np.array([1.0, 2.0, -3.0])


def setup(lib: str):
    """A leaf x and y = x * x * 3, in one library (module, x, y, g)."""
    if lib == "torch":
        x, g, module = torch.tensor(X, requires_grad=True), torch.tensor(G), torch.autograd
    else:
        x, g, module = Tensor(X.copy(), requires_grad=True), Tensor(G.copy()), autograd
    return module, x, x * x * 3, g


def caught(call) -> tuple[object, list[warnings.WarningMessage]]:
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        result = call()
    return result, record


def to_numpy(value) -> np.ndarray:
    return value.detach().numpy()


def same_warnings(ours, theirs) -> None:
    assert [(str(w.message), w.category) for w in ours] == [
        (str(w.message), w.category) for w in theirs
    ]
    assert all(w.filename == __file__ for w in ours + theirs)  # stacklevel: the caller's line


@pytest.mark.parametrize("only_inputs", [False, True])
def test_grad_only_inputs_is_ignored_and_false_warns(only_inputs) -> None:
    runs = {}
    for lib in ("ours", "torch"):
        module, x, y, g = setup(lib)
        runs[lib] = caught(lambda: module.grad(y, x, g, only_inputs=only_inputs))  # noqa: B023
        assert x.grad is None
    (ours, our_warnings), (theirs, their_warnings) = runs["ours"], runs["torch"]
    np.testing.assert_allclose(to_numpy(ours[0]), to_numpy(theirs[0]), rtol=1e-12)
    same_warnings(our_warnings, their_warnings)
    assert len(our_warnings) == (0 if only_inputs else 1)
    if not only_inputs:
        assert str(our_warnings[0].message).startswith("only_inputs argument is deprecated")


def test_grad_only_inputs_keeps_torch_positional_order() -> None:
    # grad(outputs, inputs, grad_outputs, retain_graph, create_graph, only_inputs, allow_unused)
    results = []
    for lib in ("ours", "torch"):
        module, x, y, g = setup(lib)
        unused = (torch.tensor(G) if lib == "torch" else Tensor(G.copy())).requires_grad_()
        results.append(module.grad(y, [x, unused], g, None, False, True, True))
    assert results[0][1] is None and results[1][1] is None
    np.testing.assert_allclose(to_numpy(results[0][0]), to_numpy(results[1][0]), rtol=1e-12)


def test_backward_grad_variables_warns_and_is_used() -> None:
    runs = {}
    for lib in ("ours", "torch"):
        module, x, y, g = setup(lib)
        _, record = caught(lambda: module.backward(y, grad_variables=g))  # noqa: B023
        runs[lib] = (to_numpy(x.grad), record)
    np.testing.assert_allclose(runs["ours"][0], runs["torch"][0], rtol=1e-12)
    np.testing.assert_allclose(runs["ours"][0], 6 * X * G, rtol=1e-12)
    same_warnings(runs["ours"][1], runs["torch"][1])
    assert len(runs["ours"][1]) == 1


def test_backward_grad_tensors_and_grad_variables_together_raise() -> None:
    messages = []
    for lib in ("ours", "torch"):
        module, x, y, g = setup(lib)
        deprecated = pytest.warns(FutureWarning, match="`grad_variables` is deprecated")
        with deprecated, pytest.raises(RuntimeError) as error:
            module.backward(y, g, grad_variables=g)
        messages.append(str(error.value))
        assert x.grad is None
    assert messages[0] == messages[1]
    assert messages[0].startswith("`grad_tensors` and `grad_variables` (deprecated) arguments")


def test_backward_grad_variables_is_checked_like_grad_tensors() -> None:
    messages = []
    for lib in ("ours", "torch"):
        module, x, y, g = setup(lib)
        wrong = torch.ones(4, dtype=torch.float64) if lib == "torch" else Tensor(np.ones(4))
        with pytest.warns(FutureWarning), pytest.raises(RuntimeError) as error:
            module.backward(y, grad_variables=wrong)
        messages.append(str(error.value))
    assert messages[0] == messages[1]


def test_tensor_backward_inputs_keyword_still_reaches_inputs() -> None:
    grads = []
    for lib in ("ours", "torch"):
        module, x, y, g = setup(lib)
        other = (torch.tensor(G) if lib == "torch" else Tensor(G.copy())).requires_grad_()
        (y * other).sum().backward(inputs=[other])
        assert x.grad is None
        grads.append(to_numpy(other.grad))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


def test_variable_raises_torch_error() -> None:
    messages = []
    for module in (autograd, torch.autograd):
        with pytest.raises(RuntimeError) as error:
            module.variable([1.0, 2.0], requires_grad=True)
        messages.append(str(error.value))
    assert messages[0] == messages[1]
    assert autograd.variable.Variable is Tensor
