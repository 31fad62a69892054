"""The catalogue's sample calls for the FFT family's real transforms (irfft, hfft and their
2-d and n-d forms, fftshift, ifftshift): see op_gradient_samples.py, which imports this
module at its end to add them to SAMPLES.

The gradient ops are checked against PyTorch's vjp of the forward transform, taken with
``create_graph`` so their own gradients (the forward transform again) are compared too.
"""

from __future__ import annotations

from typing import Any

import torch

from .op_gradient_samples import S, add, f

__all__: list[str] = []


def _c2r_vjp(grad: torch.Tensor, self: torch.Tensor, size: Any, dim: Any, norm: Any, hermitian: bool,
             ) -> torch.Tensor:
    """PyTorch's gradient of irfft/hfft (``size`` an int) or irfftn/hfftn (a list) for ``self``."""
    x = self.detach().requires_grad_()
    if isinstance(size, int) or (size is None and isinstance(dim, int)):
        out = (torch.fft.hfft if hermitian else torch.fft.irfft)(x, size, dim, norm)
    else:
        out = (torch.fft.hfftn if hermitian else torch.fft.irfftn)(x, size, dim, norm)
    return torch.autograd.grad(out, x, grad, create_graph=True)[0]


add("fft_irfft", S(f(3, 5), 7, 0, "ortho"))
add("fft_hfft", S(f(3, 5), None, -1, None))
add("fft_irfft2", S(f(3, 5), [4, 6], [0, 1], "forward"))
add("fft_hfft2", S(f(3, 5), None, [-2, -1], "backward"))
add("fft_irfftn", S(f(2, 3, 4), [3, -1], None, None))
add("fft_hfftn", S(f(2, 3, 4), None, [0, 2], "ortho"))
add("fft_fftshift", S(f(3, 5), [1]))
add("fft_ifftshift", S(f(3, 5), None))
add("gradview::fft_c2r_backward", S(f(3, 8), f(3, 5), 8, -1, "ortho", False, torch=_c2r_vjp, frozen=(1,)))
add("gradview::fft_c2rn_backward", S(f(4, 7), f(3, 5), [4, 7], [0, 1], None, True, torch=_c2r_vjp,
                                     frozen=(1,)))
