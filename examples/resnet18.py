"""ResNet-18 for ``gradview view examples/resnet18.py:build``.

The network is torchvision's ``resnet18`` written out layer by layer, with
torchvision's module names (the stem ``conv1``/``bn1``/``relu``/``maxpool``,
``layer1`` to ``layer4`` of two ``BasicBlock`` each, ``avgpool``, ``fc``), so its
parameters are named as torchvision's are (``layer4.1.conv2.weight``) without
importing torchvision. The input is one 3x64x64 image, small enough that
gradview builds the trace of a training step in about a second on two cores;
the structure, not the image size, is what the viewer shows.

The model is in eval mode: batch norm reads its running statistics, which
become graph inputs like the parameters (62 parameters and 60 buffers). In
train mode the model opens too, with batch statistics and 25 more nodes
(among them each batch norm's in-place ``num_batches_tracked += 1``,
``aten::add_``), and running statistics that every replayed step would
update in place.
"""

from __future__ import annotations

import torch
from torch import nn


def conv3x3(in_planes: int, out_planes: int, stride: int = 1) -> nn.Conv2d:
    """3x3 convolution with padding, no bias (torchvision's ``conv3x3``)."""
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=1, bias=False)


def conv1x1(in_planes: int, out_planes: int, stride: int = 1) -> nn.Conv2d:
    """1x1 convolution, no bias (torchvision's ``conv1x1``)."""
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    """Two 3x3 convolutions with batch norm and a residual connection."""

    expansion = 1

    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample: nn.Module | None = None) -> None:
        super().__init__()
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


class ResNet(nn.Module):
    """torchvision's ``ResNet`` for ``BasicBlock`` layers."""

    def __init__(self, layers: tuple[int, int, int, int] = (2, 2, 2, 2), num_classes: int = 1000) -> None:
        super().__init__()
        self.inplanes = 64
        self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(64, layers[0])
        self.layer2 = self._make_layer(128, layers[1], stride=2)
        self.layer3 = self._make_layer(256, layers[2], stride=2)
        self.layer4 = self._make_layer(512, layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * BasicBlock.expansion, num_classes)

    def _make_layer(self, planes: int, blocks: int, stride: int = 1) -> nn.Sequential:
        downsample = None
        if stride != 1 or self.inplanes != planes * BasicBlock.expansion:
            downsample = nn.Sequential(
                conv1x1(self.inplanes, planes * BasicBlock.expansion, stride),
                nn.BatchNorm2d(planes * BasicBlock.expansion),
            )
        layers = [BasicBlock(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * BasicBlock.expansion
        layers += [BasicBlock(self.inplanes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(x)


def resnet18(num_classes: int = 1000) -> ResNet:
    """ResNet-18: two BasicBlocks in each of the four layers."""
    return ResNet((2, 2, 2, 2), num_classes)


def build():
    torch.manual_seed(0)
    model = resnet18().eval()  # eval: batch norm reads its running statistics (see the module docstring)
    x = torch.randn(1, 3, 64, 64)
    return model, (x,)


def build_train():
    """The model in train mode: what ``--compile`` records as a training step
    (batch statistics, running statistics updated in place)."""
    model, inputs = build()
    return model.train(), inputs
