"""(being moved here from kernels/, ir/passes/shape_rules_*.py and autodiff/formulas/)"""
