#!/usr/bin/env python3
"""Train a small CNN twice - with torch.nn's layers and converted to pyaclnn.nn - and compare.

    python examples/train_cnn.py [--steps 40] [--batch 64] [--tolerance 1e-5]
    python examples/train_cnn.py --model stem [--steps 10] [--batch 8]

The data is generated (10 classes of 16x16 images: a class's bright bar at its own place and
angle, plus noise), so nothing is downloaded.  The model uses every layer pyaclnn covers:
ReplicationPad2d, PReLU, MaxPool2d (with ceil_mode), Unfold, Fold and a 1-D nearest-exact
Upsample, between torch's own Conv2d and Linear layers.  ``pyaclnn.nn.convert`` swaps the
covered layers of a copy of the same model (same initial weights); both copies are trained in
fp32 with the same batches and optimizer, and each step's loss and time are printed.

``--model stem`` trains ImageNet-sized layers instead: a ResNet stem on 3x224x224 images (a 7x7
stride-2 convolution to 64 channels, PReLU, a 3x3 stride-2 max pooling to 56x56), one 3x3 block
padded by ReplicationPad2d, a 2x2 pooling, and a linear classifier; its data are the small
images' bars scaled up.

The losses agree to rounding: the forward layers are exact (copies, maxima, one product) and
the backward ones sum in fp32 in a fixed order where torch's order differs, so the losses may
drift apart by a few ulps per step.  The script exits with status 1 when a step's losses differ
by more than ``--tolerance`` (relative).  The tolerance is for the default run: like any two fp32
trainings whose sums add in different orders, the two drift further over many more steps (200
steps at 2 threads: 1.7e-4 at the last one), while from the same weights a step's losses are
equal and its gradients within 4e-5 of their largest (docs/python.md, "pyaclnn.nn").
"""

import argparse
import copy
import statistics
import time

import numpy as np
import torch
from torch import nn

import pyaclnn.nn

CLASSES = 10
SIZE = 16


def make_data(count, seed=0):
    """``count`` generated images [count, 1, 16, 16] and their labels."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, CLASSES, count)
    ys, xs = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32)
    images = rng.normal(0.0, 1.0, (count, 1, SIZE, SIZE)).astype(np.float32)
    for i, label in enumerate(labels):
        angle = np.pi * label / CLASSES
        cy, cx = 5 + (label % 3) * 3, 5 + (label // 3) * 2
        distance = np.abs((ys - cy) * np.cos(angle) - (xs - cx) * np.sin(angle))
        images[i, 0] += np.exp(-distance ** 2)
    return torch.from_numpy(images), torch.from_numpy(labels)


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3), nn.ReplicationPad2d(1), nn.PReLU(8), nn.MaxPool2d(2),   # 16 -> 8
            nn.Conv2d(8, 16, 3, padding=1), nn.PReLU(16, init=0.1),
            nn.MaxPool2d(3, 2, 1, ceil_mode=True))                                      # 8 -> 5
        # overlapping 2x2 windows folded back: each pixel weighted by how many windows hold it
        self.unfold = nn.Unfold(2)
        self.fold = nn.Fold((5, 5), 2)
        self.upsample = nn.Upsample(scale_factor=1.5, mode="nearest-exact")   # [N, 16, 25 -> 37]
        self.classifier = nn.Sequential(nn.Flatten(), nn.PReLU(), nn.Linear(16 * 37, CLASSES))

    def forward(self, x):
        x = self.features(x)
        x = self.fold(self.unfold(x))
        x = self.upsample(x.flatten(2))
        return self.classifier(x)


class StemCNN(nn.Module):
    """ImageNet-sized layers: [N, 3, 224, 224] -> 10 classes."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, 7, 2, 3), nn.PReLU(64), nn.MaxPool2d(3, 2, 1),         # 224 -> 56
            nn.ReplicationPad2d(1), nn.Conv2d(64, 64, 3), nn.PReLU(64), nn.MaxPool2d(2))  # -> 28
        self.classifier = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                        nn.Linear(64, CLASSES))

    def forward(self, x):
        return self.classifier(self.features(x))


MODELS = {"small": (SmallCNN, 1), "stem": (StemCNN, 224 // SIZE)}


def make_models(seed=0, model="small"):
    """(the torch.nn model, a converted copy with the same weights)."""
    torch.manual_seed(seed)
    reference = MODELS[model][0]()
    return reference, pyaclnn.nn.convert(copy.deepcopy(reference))


def model_data(count, seed=0, model="small"):
    """make_data's images at the model's input size (3 channels, 224x224, for the stem)."""
    images, labels = make_data(count, seed)
    scale = MODELS[model][1]
    if scale > 1:
        images = nn.functional.interpolate(images, scale_factor=scale).expand(-1, 3, -1, -1)
        images = images.contiguous()
    return images, labels


def trainer(model, lr=0.02):
    """One SGD step on (images, labels) -> loss, as a function."""
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    def step(images, labels):
        optimizer.zero_grad()
        loss = loss_fn(model(images), labels)
        loss.backward()
        optimizer.step()
        return loss.item()
    return step


def train(steps, batch, seed=0, model="small"):
    """[(step, torch loss, pyaclnn loss, torch seconds, pyaclnn seconds)]."""
    reference, converted = make_models(seed, model)
    images, labels = model_data(steps * batch, seed, model)
    steps_torch, steps_ours = trainer(reference), trainer(converted)
    rows = []
    for i in range(steps):
        x, y = images[i * batch:(i + 1) * batch], labels[i * batch:(i + 1) * batch]
        start = time.perf_counter()
        loss_torch = steps_torch(x, y)
        middle = time.perf_counter()
        loss_ours = steps_ours(x, y)
        end = time.perf_counter()
        rows.append((i, loss_torch, loss_ours, middle - start, end - middle))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=sorted(MODELS), default="small",
                        help="small: 1x16x16 images (default); stem: ImageNet-sized layers")
    parser.add_argument("--steps", type=int, default=None, help="default 40 (stem: 10)")
    parser.add_argument("--batch", type=int, default=None, help="default 64 (stem: 8)")
    parser.add_argument("--tolerance", type=float, default=1e-5,
                        help="largest relative loss difference accepted (default 1e-5)")
    parser.add_argument("--quiet", action="store_true", help="print the summary only")
    args = parser.parse_args(argv)

    stem = args.model == "stem"
    args.steps = args.steps or (10 if stem else 40)
    args.batch = args.batch or (8 if stem else 64)
    rows = train(args.steps, args.batch, model=args.model)
    worst = 0.0
    if not args.quiet:
        print("step  torch.nn loss  pyaclnn.nn loss  rel. diff  torch.nn ms  pyaclnn.nn ms")
    for step, loss_torch, loss_ours, t_torch, t_ours in rows:
        diff = abs(loss_ours - loss_torch) / max(abs(loss_torch), 1e-30)
        worst = max(worst, diff)
        if not args.quiet:
            print("%4d  %13.7f  %15.7f  %9.2e  %11.2f  %13.2f"
                  % (step, loss_torch, loss_ours, diff, t_torch * 1e3, t_ours * 1e3))
    # the first step pays one-time costs (executor planning): medians from step 1 on
    later = rows[1:] or rows
    median_torch = statistics.median(r[3] for r in later) * 1e3
    median_ours = statistics.median(r[4] for r in later) * 1e3
    print("loss %.4f -> %.4f (torch.nn) and %.4f -> %.4f (pyaclnn.nn); largest relative "
          "difference %.2e (tolerance %.0e)"
          % (rows[0][1], rows[-1][1], rows[0][2], rows[-1][2], worst, args.tolerance))
    print("median step: torch.nn %.2f ms, pyaclnn.nn %.2f ms (batch %d, %d steps)"
          % (median_torch, median_ours, args.batch, len(rows)))
    return 0 if worst <= args.tolerance else 1


if __name__ == "__main__":
    raise SystemExit(main())
