"""A 12-layer transformer encoder for ``gradview view examples/transformer_encoder.py:build``.

``nn.TransformerEncoder`` of 12 ``nn.TransformerEncoderLayer`` (d_model 256,
4 heads, feed-forward 512, batch first) over a batch of 2 sequences of 8
tokens; PyTorch's tracer inlines it into about 1,350 nodes, with each layer's
parameters named ``layers.N.self_attn.in_proj_weight``,
``layers.N.linear1.weight`` and so on.

The model is in eval mode, so dropout is off (its 36 ``aten::dropout``
nodes pass values through) and every value is PyTorch's (in train mode the
masks would be gradview's own seeded draws: examples/transformer_training.py).
Its parameters require grad, so PyTorch's fused
inference path for encoder layers stays off and the graph holds the ordinary
ops (``aten::scaled_dot_product_attention``, ``linear``, ``layer_norm``).
"""

from __future__ import annotations

import torch
from torch import nn


def build():
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=512, dropout=0.1, batch_first=True)
    model = nn.TransformerEncoder(layer, num_layers=12, enable_nested_tensor=False).eval()
    x = torch.randn(2, 8, 256)
    return model, (x,)


def build_train():
    """The model in train mode (dropout on): what ``--compile`` records as a training step."""
    model, inputs = build()
    return model.train(), inputs
