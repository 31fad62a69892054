"""(being moved here from kernels/, ir/passes/shape_rules_*.py and autodiff/formulas/)"""

from gradview.kernels import gradient_helpers as helper_kernels

from .registry import kernel

kernel("aten::value_selecting_reduction_backward")(helper_kernels.value_selecting_reduction_backward)
