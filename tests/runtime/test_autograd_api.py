"""autograd.backward / autograd.grad: arguments, defaults and errors, against torch.autograd."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gradview.runtime import Tensor, autograd

RNG = np.random.default_rng(1)
A = RNG.normal(size=(2, 3))
B = RNG.normal(size=(2, 3))
C = RNG.normal(size=3)


def make(lib):
    """Leaves a, b (requiring grad), c (not), and outputs built from them, in one library."""
    if lib == "torch":
        a, b, c = (torch.tensor(v) for v in (A, B, C))
    else:
        a, b, c = (Tensor(v.copy()) for v in (A, B, C))
    a.requires_grad_()
    b.requires_grad_()
    h = a * b + c
    y = (h.tanh() * a).sum()
    z = h.sigmoid()
    return a, b, c, h, y, z


def grads_of(*tensors):
    return [None if t.grad is None else t.grad.numpy() for t in tensors]


def close(ours, theirs) -> None:
    assert len(ours) == len(theirs)
    for mine, other in zip(ours, theirs, strict=True):
        if other is None:
            assert mine is None
            continue
        mine = mine.detach().numpy() if isinstance(mine, Tensor) else mine
        other = other.detach().numpy() if isinstance(other, torch.Tensor) else other
        np.testing.assert_allclose(mine, other, rtol=1e-10, atol=1e-12)


def both(call):
    """Run ``call(lib, tensors)`` with gradview and torch; returns both results."""
    results = []
    for lib, module in (("ours", autograd), ("torch", torch.autograd)):
        results.append(call(module, make(lib), lib))
    return results


def ones(lib, shape):
    return torch.ones(shape, dtype=torch.float64) if lib == "torch" else Tensor(np.ones(shape))


def weights(lib, array):
    return torch.tensor(array) if lib == "torch" else Tensor(array.copy())


W = RNG.normal(size=(2, 3))
WB = RNG.normal(size=(4, 2, 3))


# ----- backward ------------------------------------------------------------------


@pytest.mark.parametrize("form", ["tensor", "list", "method"])
def test_backward_scalar_implicit_grad(form) -> None:
    def call(ad, t, lib):
        a, b, c, h, y, z = t
        if form == "tensor":
            ad.backward(y)
        elif form == "list":
            ad.backward([y], [None])
        else:
            y.backward()
        return grads_of(a, b, c)

    ours, theirs = both(call)
    close(ours, theirs)
    assert ours[2] is None


def test_backward_several_outputs_and_gradients() -> None:
    def call(ad, t, lib):
        a, b, c, h, y, z = t
        ad.backward([y, z], [None, weights(lib, W)])
        return grads_of(a, b)

    close(*both(call))


def test_backward_accumulates_over_calls() -> None:
    def call(ad, t, lib):
        a, b, c, h, y, z = t
        ad.backward(y, retain_graph=True)
        first = a.grad
        ad.backward(y)
        assert a.grad is first  # accumulated in place
        return grads_of(a, b)

    close(*both(call))


@pytest.mark.filterwarnings("ignore:The .grad attribute of a Tensor that is not a leaf")
@pytest.mark.parametrize("which", ["a", "b", "ab", "h", "ah"])
def test_backward_inputs(which) -> None:
    def call(ad, t, lib):
        a, b, c, h, y, z = t
        chosen = {"a": a, "b": b, "h": h}
        inputs = [chosen[k] for k in which]
        ad.backward(y, inputs=inputs[0] if len(inputs) == 1 else inputs)
        return grads_of(a, b, h)

    ours, theirs = both(call)
    close(ours, theirs)


def test_backward_errors_match_torch() -> None:
    cases = [
        (
            lambda ad, t, lib: ad.backward(t[5]),
            "grad can be implicitly created only for scalar outputs",
        ),
        (
            lambda ad, t, lib: ad.backward(t[4], inputs=[]),
            r"`inputs` argument to `backward\(\)` cannot be empty.",
        ),
        (
            lambda ad, t, lib: ad.backward(t[5], ones(lib, 3)),
            r"Mismatch in shape: grad_output\[0\] has a shape of .* and output\[0\] has a shape of",
        ),
        (
            lambda ad, t, lib: ad.backward([t[4], t[4]], [ones(lib, ())]),
            "got 2 tensors and 1 gradients",
        ),
        (
            lambda ad, t, lib: ad.backward(t[5], [3]),
            "gradients can be either Tensors or None, but got int",
        ),
        (
            lambda ad, t, lib: ad.backward(t[2].sum()),
            "element 0 of tensors does not require grad and does not have a grad_fn",
        ),
        (
            lambda ad, t, lib: ad.backward([t[4], t[2].sum()]),
            "element 1 of tensors does not require grad and does not have a grad_fn",
        ),
        (
            lambda ad, t, lib: ad.backward(t[4], inputs=[t[2]]),
            "can't retain_grad on Tensor that has requires_grad=False",
        ),
    ]
    for fn, message in cases:
        for lib, module in (("ours", autograd), ("torch", torch.autograd)):
            t = make(lib)
            with pytest.raises((RuntimeError, TypeError), match=message):
                fn(module, t, lib)


def test_extra_gradients_are_ignored_like_torch() -> None:
    def call(ad, t, lib):
        a, b, c, h, y, z = t
        ad.backward([y], [ones(lib, ()), ones(lib, ())])
        return grads_of(a, b)

    close(*both(call))


# ----- grad ----------------------------------------------------------------------


@pytest.mark.parametrize("inputs", ["a", "ab", "h", "ahb", "aa"])
@pytest.mark.parametrize("output", ["y", "z", "yz"])
def test_grad_values(inputs, output) -> None:
    def call(ad, t, lib):
        a, b, c, h, y, z = t
        named = {"a": a, "b": b, "h": h}
        outs = {"y": [y], "z": [z], "yz": [y, z]}[output]
        vectors = [None if o is y else weights(lib, W) for o in outs]
        result = ad.grad(outs, [named[k] for k in inputs], vectors)
        assert a.grad is None and b.grad is None  # grad() never accumulates
        return result

    ours, theirs = both(call)
    assert isinstance(ours, tuple)
    close(*both(call))


def test_grad_single_tensor_arguments() -> None:
    def call(ad, t, lib):
        a, b, c, h, y, z = t
        return ad.grad(z, a, weights(lib, W))

    ours, theirs = both(call)
    assert len(ours) == 1 and not ours[0].requires_grad
    close(ours, theirs)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"allow_unused": True},
        {"materialize_grads": True},
        {"allow_unused": True, "materialize_grads": True},
        {"materialize_grads": True, "create_graph": True},
        {"allow_unused": True, "create_graph": True},
    ],
)
def test_grad_unused_inputs(kwargs) -> None:
    def call(ad, t, lib):
        a, b, c, h, y, z = t
        unused = weights(lib, C).requires_grad_()
        result = ad.grad((a * 2).sum(), [a, unused, b], **kwargs)
        if kwargs.get("materialize_grads"):  # zeros, requiring grad only under create_graph
            assert result[1].requires_grad == kwargs.get("create_graph", False)
        else:
            assert result[1] is None
        return result

    ours, theirs = both(call)
    close(ours, theirs)


def test_grad_errors_match_torch() -> None:
    unused = "appears to not have been used in the graph. Set allow_unused=True if this is the desired behavior."
    cases = [
        (lambda ad, t, lib: ad.grad(t[4], [t[0], weights(lib, C).requires_grad_()]), unused),
        (
            lambda ad, t, lib: ad.grad(
                t[4], [t[0], weights(lib, C).requires_grad_()], allow_unused=False
            ),
            unused,
        ),
        (
            lambda ad, t, lib: ad.grad(t[4], [t[0]], allow_unused=False, materialize_grads=True),
            "Expected allow_unused to be True or not passed when materialize_grads=True, but got: allow_unused=False.",
        ),
        (
            lambda ad, t, lib: ad.grad(t[5], t[0]),
            "grad can be implicitly created only for scalar outputs",
        ),
        (lambda ad, t, lib: ad.grad(t[4], []), r"`inputs` argument to `grad\(\)` cannot be empty."),
        (
            lambda ad, t, lib: ad.grad(t[4], [t[2]]),
            "One of the differentiated Tensors does not require grad",
        ),
        (
            lambda ad, t, lib: ad.grad(t[5], t[0], ones(lib, (3, 2))),
            r"Mismatch in shape: grad_output\[0\]",
        ),
        (
            lambda ad, t, lib: ad.grad(t[5], t[0], ones(lib, (4, 3)), is_grads_batched=True),
            r"If `is_grads_batched=True`, we interpret the first dimension",
        ),
        (
            lambda ad, t, lib: ad.grad(t[2].sum(), t[0]),
            "element 0 of tensors does not require grad and does not have a grad_fn",
        ),
    ]
    for fn, message in cases:
        for lib, module in (("ours", autograd), ("torch", torch.autograd)):
            t = make(lib)
            with pytest.raises((RuntimeError, ValueError), match=message):
                fn(module, t, lib)


def test_grad_is_grads_batched() -> None:
    def call(ad, t, lib):
        a, b, c, h, y, z = t
        result = ad.grad([z], [a, b, h], [weights(lib, WB)], is_grads_batched=True)
        assert tuple(result[0].shape) == (4, 2, 3)
        return result

    close(*both(call))


def test_grad_is_grads_batched_frees_graph_only_at_the_end() -> None:
    def call(ad, t, lib):
        a, b, c, h, y, z = t
        ad.grad(z, a, weights(lib, WB), is_grads_batched=True)
        with pytest.raises(
            RuntimeError, match="Trying to backward through the graph a second time"
        ):
            ad.grad(z, a, weights(lib, W))

    both(call)


@pytest.mark.parametrize("api", ["backward", "grad"])
def test_second_pass_without_retain_graph_raises(api) -> None:
    def call(ad, t, lib):
        a, b, c, h, y, z = t
        run = (lambda: ad.backward(y)) if api == "backward" else (lambda: ad.grad(y, a))
        run()
        with pytest.raises(
            RuntimeError,
            match=r"Trying to backward through the graph a second time \(or directly access saved "
            r"tensors after they have already been freed\). Saved intermediate values of the graph "
            r"are freed when you call .backward\(\) or autograd.grad\(\). Specify retain_graph=True",
        ):
            run()

    both(call)


@pytest.mark.parametrize("api", ["backward", "grad"])
def test_retain_graph_allows_second_pass(api) -> None:
    def call(ad, t, lib):
        a, b, c, h, y, z = t
        if api == "backward":
            ad.backward(y, retain_graph=True)
            ad.backward(y)
            return grads_of(a, b)
        first = ad.grad(y, [a, b], retain_graph=True)
        return list(first) + list(ad.grad(y, [a, b]))

    close(*both(call))


def test_create_graph_retains_graph_by_default() -> None:
    def call(ad, t, lib):
        a, b, c, h, y, z = t
        (ga,) = ad.grad(y, a, create_graph=True)
        assert ga.requires_grad and ga.grad_fn is not None
        again = ad.grad(y, a)  # graph kept: retain_graph defaults to create_graph
        return [ga, *again]

    close(*both(call))


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_backward_create_graph_double_backward() -> None:
    def call(ad, t, lib):
        a, b, c, h, y, z = t
        ad.backward(y, create_graph=True)
        assert a.grad.requires_grad
        ga, gb = a.grad, b.grad
        a.grad = None
        b.grad = None
        ad.backward((ga * gb).sum(), inputs=[a, b])
        return grads_of(a, b)

    close(*both(call))


def test_grad_create_graph_third_order() -> None:
    def call(ad, t, lib):
        a = t[0]
        y = ((a**3).tanh() * a).sum()
        (g1,) = ad.grad(y, a, create_graph=True)
        (g2,) = ad.grad(g1.sum(), a, create_graph=True)
        (g3,) = ad.grad((g2 * g2).sum(), a)
        return [g1, g2, g3]

    close(*both(call))
