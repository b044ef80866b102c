"""examples/train_cnn.py: the converted model trains to torch.nn's losses, step by step."""

import os
import subprocess
import sys

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "examples"))

import train_cnn  # noqa: E402
import pyaclnn.nn as PN  # noqa: E402


def test_converted_model_uses_pyaclnn_for_every_covered_layer():
    reference, converted = train_cnn.make_models()
    ours = [type(m) for m in converted.modules() if type(m).__module__ == "pyaclnn.nn"]
    assert set(ours) == set(PN.COVERED.values())
    assert not any(type(m) in PN.COVERED for m in converted.modules())
    for a, b in zip(reference.parameters(), converted.parameters()):
        assert torch.equal(a, b)


def test_losses_agree_step_by_step():
    rows = train_cnn.train(steps=4, batch=16)
    for step, loss_torch, loss_ours, _, _ in rows:
        assert abs(loss_ours - loss_torch) <= 1e-5 * abs(loss_torch), step


def test_script_runs_briefly():
    result = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "train_cnn.py"),
                             "--steps", "3", "--batch", "8"], cwd=ROOT, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "median step: torch.nn" in result.stdout
    assert len([line for line in result.stdout.splitlines() if line[:4].strip().isdigit()]) == 3


def test_imagenet_sized_layers_agree_step_by_step():
    rows = train_cnn.train(steps=3, batch=2, model="stem")
    for step, loss_torch, loss_ours, _, _ in rows:
        assert abs(loss_ours - loss_torch) <= 1e-5 * abs(loss_torch), step
