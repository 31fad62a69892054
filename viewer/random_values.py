"""Does a graph draw random values? The header and the Run tab say so: gradview's
draws (dropout masks, bernoulli, normal, rand...) come from its own seeded
generator (kernels/dropout.py), the same on every run of a step, never
PyTorch's numbers."""

from __future__ import annotations

from gradview.runtime import BlockRecord, PassTrace, walk_records

__all__ = ["RANDOM_NOTE", "draws_random_values", "random_values_label"]

RANDOM_NOTE = "random values are gradview's own (seeded, the same every run), not PyTorch's"

# Kinds that always draw.
_DRAWS = frozenset({
    "aten::bernoulli", "aten::bernoulli_", "aten::normal", "aten::normal_", "aten::uniform_",
    "aten::exponential_", "aten::geometric_", "aten::log_normal_", "aten::cauchy_", "aten::rand",
    "aten::randn", "aten::randint", "aten::rand_like", "aten::randn_like", "aten::randint_like",
    "aten::multinomial",
})
# Dropouts draw unless ``train`` (input 2) is a constant False or ``p`` (input 1) a constant 0.
_DROPOUTS = frozenset({
    "aten::dropout", "aten::dropout_", "aten::feature_dropout", "aten::alpha_dropout",
    "aten::feature_alpha_dropout", "aten::native_dropout",
})
_SDPA = "aten::scaled_dot_product_attention"  # draws when dropout_p (input 4) is not a constant 0
# rrelu draws its slopes unless ``training`` (input 3) is a constant False.
_RRELU = "aten::rrelu"
# Recurrent layers draw between layers in training: (..., num_layers, float dropout, bool train, ...).
_RECURRENT = frozenset({"aten::lstm", "aten::gru", "aten::rnn_tanh", "aten::rnn_relu"})


def draws_random_values(block: BlockRecord) -> bool:
    """Whether a node of ``block`` (nested blocks and subgraphs included) draws random values."""
    constants: dict[int, str] = {}
    types: dict[int, str] = {}
    for node in walk_records(block):
        if node.kind == "prim::Constant" and node.outputs:
            constants[node.outputs[0].id] = dict(node.attrs).get("value", "None")
            types[node.outputs[0].id] = node.outputs[0].type
            continue
        if node.kind in _RECURRENT and _recurrent_dropout(node.inputs, constants, types):
            return True
        if node.kind in _DRAWS:
            return True
        if node.kind in _DROPOUTS and len(node.inputs) >= 3 and not any(
            _zero(constants.get(value)) for value in node.inputs[1:3]
        ):
            return True
        if node.kind == _SDPA and len(node.inputs) >= 5 and not _zero(constants.get(node.inputs[4])):
            return True
        if node.kind == _RRELU and len(node.inputs) >= 4 and not _zero(constants.get(node.inputs[3])):
            return True
    return False


def _recurrent_dropout(inputs: tuple[int, ...], constants: dict[int, str], types: dict[int, str]) -> bool:
    """A layer op's dropout in training: its float argument (after num_layers) and the bool
    after it, unless either is a constant 0, or num_layers a constant 1."""
    for at in (5, 6):  # .input: dropout is input 5; .data (with batch_sizes): input 6
        if at + 1 < len(inputs) and types.get(inputs[at]) == "float":
            layers = constants.get(inputs[at - 1])
            one_layer = layers is not None and layers.strip() == "1"
            return not one_layer and not _zero(constants.get(inputs[at])) and not _zero(constants.get(inputs[at + 1]))
    return False


def _zero(text: str | None) -> bool:
    """A constant False, 0 or 0.0 (not a run-time value)."""
    if text is None:
        return False
    try:
        return float(text) == 0
    except ValueError:
        return False


def random_values_label(trace: PassTrace) -> str:
    """The header's word on random values: said when a graph of the trace draws them."""
    seen: set[object] = set()
    for step in trace:
        if step.which in seen:
            continue
        seen.add(step.which)  # a graph's random ops are in its first step already
        if draws_random_values(step.graph):
            return " · random values: gradview's own, not PyTorch's"
    return ""
