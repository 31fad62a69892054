"""torchvision's mobilenet_v3_small and efficientnet_b0 through gradview (issue 22, acceptance 4).

Each model as torchvision builds it (random weights, eval mode, float64; the
BatchNorm statistics moved off 0 and 1 so they matter), converted by
``from_torch``, run by GraphExecutor with the image and every parameter
requiring grad, and differentiated by gradview's autograd for a fixed random
weighting of the logits. The logits and every gradient (image and all
parameters) equal eager torch's to rtol 1e-10. Both models use
hardsigmoid/hardswish (squeeze-excitation, mobilenet) and SiLU and
stochastic depth in eval (efficientnet): PyTorch's float32 sixth in
hardsigmoid_backward is what these gradients needed.
"""

from __future__ import annotations

import numpy as np
import pytest

from gradview.ir import from_torch
from gradview.runtime import Tensor
from gradview.runtime.autograd import grad
from gradview.runtime.executor import GraphExecutor

torch = pytest.importorskip("torch")
from .torchvision_models import build  # noqa: E402 - after torch is known to be there

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::torch.jit.TracerWarning")

RTOL = 1e-10


@pytest.mark.parametrize("name", ["mobilenet_v3_small", "efficientnet_b0"])
def test_model_outputs_and_every_gradient_equal_torchs(name: str) -> None:
    model, image = build(name)
    graph, values = from_torch(model, (image,))
    parameters = list(model.named_parameters())
    leaves = range(1 + len(parameters))  # the image, then every parameter
    tensors = [
        Tensor(np.array(v), requires_grad=i in leaves) if hasattr(v, "shape") else v
        for i, v in enumerate(values)
    ]
    (logits,) = [o for o in GraphExecutor(graph).run(tensors) if isinstance(o, Tensor)]

    reference_image = image.clone().requires_grad_(True)
    expected = model(reference_image)
    weights = np.random.default_rng(1).standard_normal(tuple(expected.shape))
    theirs = torch.autograd.grad(
        (expected * torch.tensor(weights)).sum(), [reference_image] + [p for _, p in parameters]
    )
    ours = grad([(logits * Tensor(weights)).sum()], [tensors[i] for i in leaves])

    np.testing.assert_allclose(logits.detach().numpy(), expected.detach().numpy(), rtol=RTOL, atol=1e-14)
    names = ["image"] + [n for n, _ in parameters]
    assert len(ours) == len(names) == 1 + len(parameters)
    for label, mine, reference in zip(names, ours, theirs, strict=True):
        assert mine is not None, f"{label}: no gradient"
        scale = float(np.max(np.abs(reference.numpy()), initial=0.0))
        np.testing.assert_allclose(
            mine.numpy(), reference.numpy(), rtol=RTOL, atol=1e-12 * scale, err_msg=f"gradient of {label}"
        )
