"""Distances and norms: dist, pairwise_distance, cosine_similarity, cdist, pdist and renorm
(``kernels/distances.py``, which says whose arithmetic each follows).

Shapes run the kernel on stand-in inputs (ops/shape_by_kernel.py); gradients are backward
kernels of gradview's own, each returning both inputs' gradients summed back to their
shapes (``gradview::cdist_backward``...).
"""

from __future__ import annotations

from gradview.kernels import distances as kernels

from .gradients import BACKWARD_KERNEL
from .kernel_backward import backward_schema, calls_backward, grads_like
from .registry import formula, kernel, no_gradient, schema, shape_rule
from .shape_by_kernel import by_kernel

__all__: list[str] = []

for _name, _signature, _inputs in (
    ("dist", "Tensor self, Tensor other, Scalar p", (0, 1)),
    ("pairwise_distance", "Tensor x1, Tensor x2, float p, float eps, bool keepdim", (0, 1)),
    ("cosine_similarity", "Tensor x1, Tensor x2, int dim, float eps", (0, 1)),
    ("cdist", "Tensor x1, Tensor x2, float p, int? compute_mode", (0, 1)),
    ("pdist", "Tensor self, float p", (0,)),
    ("renorm", "Tensor self, Scalar p, int dim, Scalar maxnorm", (0,)),
):
    _forward = getattr(kernels, _name)
    kernel(f"aten::{_name}")(_forward)
    shape_rule(f"aten::{_name}")(by_kernel(_forward))
    schema(backward_schema(f"{_name}_backward", _signature, len(_inputs)))
    kernel(f"gradview::{_name}_backward")(getattr(kernels, f"{_name}_backward"))
    no_gradient(f"gradview::{_name}_backward", reason=BACKWARD_KERNEL)
    shape_rule(f"gradview::{_name}_backward")(grads_like(*_inputs))
    formula(f"aten::{_name}")(calls_backward(f"gradview::{_name}_backward", _inputs))
