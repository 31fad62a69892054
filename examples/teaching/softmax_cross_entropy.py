"""Softmax cross-entropy per example: ``-(log_softmax(logits) * target).sum(1)``.

The one-hot ``target`` does not require grad (gradview's ``Tensor`` says so,
no PyTorch needed), so df computes the gradient of the logits alone:
``grad * (softmax(logits) - target)``. ``sum(dim)`` is not in PyTorch's
symbolic autodiff set, so it stays outside the DifferentiableGraph, which
holds ``log_softmax`` and the product (a batch mean after it would form a
second, smaller group). ``gradview view examples/teaching/softmax_cross_entropy.py:f``.
"""

import numpy as np

from gradview.runtime import Tensor


def f(logits, target):
    log_p = logits.log_softmax(1)
    return -(log_p * target).sum(1)


def example_inputs():
    rng = np.random.default_rng(0)
    target = np.eye(5)[rng.integers(0, 5, 4)]
    return [Tensor(rng.standard_normal((4, 5)), requires_grad=True), Tensor(target)]
