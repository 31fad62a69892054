"""autodiff_ops kernels (filled in by the op-library work)."""
