"""Drop-in proof: the official-style samples in tests/compat build with CANN's own build recipe
(cmake, -DCMAKE_SKIP_RPATH=TRUE, headers and libraries from the `make install` tree found
through set_env.sh) and print results equal to PyTorch's; they are also clean under valgrind.

Each program prints its inputs, attributes and outputs as
    tensor <name> <d0,d1,...> : v v v ...
and this file recomputes the outputs from the printed inputs with torch (CPU).
"""
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import support

ROOT = support.ROOT
COMPAT = ROOT / "tests" / "compat"
LINE = re.compile(r"^tensor (.+) (\S+) :(.*)$")


def _build_dir_of_lib():
    """`make install` copies $(BUILD)/lib64/libaclnn.so: point BUILD at the library under test."""
    lib_dir = support.lib_dir()
    return lib_dir.parent if lib_dir.name == "lib64" else None


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    """Installs the tree, sources set_env.sh, configures and builds with cmake; returns (bin dir, env)."""
    work = tmp_path_factory.mktemp("compat")
    prefix = work / "cann"
    make = ["make", "-s", "install", f"PREFIX={prefix}"]
    build = _build_dir_of_lib()
    if build is not None:
        make.append(f"BUILD={os.path.relpath(build, ROOT)}")
    subprocess.run(make, cwd=ROOT, check=True, capture_output=True)
    cmake = shutil.which("cmake")
    assert cmake, "cmake is required (Debian package: cmake)"
    build_dir = work / "build"
    script = (f". {prefix}/set_env.sh && "
              f"{cmake} -S {COMPAT} -B {build_dir} -DCMAKE_CXX_COMPILER=g++ -DCMAKE_SKIP_RPATH=TRUE && "
              f"{cmake} --build {build_dir} -j2 && env")
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    env = dict(line.split("=", 1) for line in result.stdout.splitlines()
               if "=" in line and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", line))
    return build_dir / "bin", env


def run_sample(samples, name, valgrind=False):
    bin_dir, env = samples
    exe = bin_dir / name
    # no rpath (CMAKE_SKIP_RPATH): the library is found only through set_env.sh's LD_LIBRARY_PATH
    readelf = subprocess.run(["readelf", "-d", str(exe)], capture_output=True, text=True, check=True).stdout
    assert "RPATH" not in readelf and "RUNPATH" not in readelf
    cmd = [str(exe)]
    if valgrind:
        cmd = ["valgrind", "-q", "--leak-check=full", "--show-leak-kinds=definite,indirect,possible",
               "--errors-for-leak-kinds=definite,indirect,possible", "--error-exitcode=99", *cmd]
    run_env = dict(env, ACLNN_NUM_THREADS="2")
    result = subprocess.run(cmd, capture_output=True, text=True, env=run_env, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    tensors = {}
    for line in result.stdout.splitlines():
        match = LINE.match(line)
        if match:
            name_, shape, values = match.groups()
            dims = [int(d) for d in shape.split(",")]
            tensors[name_] = np.array([float(v) for v in values.split()], dtype=np.float64).reshape(dims)
    return tensors


def t32(array):
    return torch.from_numpy(np.ascontiguousarray(array, dtype=np.float32))


def param(tensors, name):
    return [int(v) for v in tensors["param " + name].ravel()]


def assert_equal(actual, expected, exact=True):
    expected = expected.detach().numpy().astype(np.float64)
    assert actual.shape == expected.shape
    if exact:
        np.testing.assert_array_equal(actual, expected)
    else:
        np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-5)


# ---- one checker per sample: recompute from the printed inputs --------------------------------

def check_replication_pad2d(t):
    out = F.pad(t32(t["self"]), param(t, "padding"), mode="replicate")
    assert_equal(t["out"], out)


def check_replication_pad2d_backward(t):
    pads = param(t, "padding")
    go = t32(t["gradOutput"])
    shape = list(go.shape)
    shape[-1] -= pads[0] + pads[1]
    shape[-2] -= pads[2] + pads[3]
    x = torch.zeros(shape, dtype=torch.float64, requires_grad=True)
    F.pad(x, pads, mode="replicate").backward(go.double())
    assert_equal(t["gradInput"], x.grad.float(), exact=False)


def check_upsample_nearest_exact1d(t):
    out = F.interpolate(t32(t["self"]), size=param(t, "outputSize"), mode="nearest-exact")
    assert_equal(t["out"], out)


def check_upsample_nearest_exact1d_backward(t):
    x = torch.zeros(param(t, "inputSize"), dtype=torch.float64, requires_grad=True)
    F.interpolate(x, size=param(t, "outputSize"), mode="nearest-exact").backward(t32(t["gradOutput"]).double())
    assert_equal(t["out"], x.grad.float(), exact=False)


def _pool(t, x):
    return F.max_pool2d(x, param(t, "kernelSize"), param(t, "strides"), param(t, "padding"),
                        param(t, "dilation"), ceil_mode=bool(param(t, "ceilMode")[0]), return_indices=True)


def check_max_pool2d_with_mask(t):
    out, indices = _pool(t, t32(t["self"]))
    assert_equal(t["out"], out)
    assert_equal(t["argmax"], indices)
    assert t["maskTailNonZero"].item() == 0


def check_max_pool2d_with_mask_backward(t):
    x = t32(t["self"]).double().requires_grad_(True)
    out, _ = _pool(t, x)
    out.backward(t32(t["gradOutput"]).double())
    assert_equal(t["gradInput"], x.grad.float(), exact=False)


def _im2col_args(t):
    return dict(kernel_size=param(t, "kernelSize"), dilation=param(t, "dilation"),
                padding=param(t, "padding"), stride=param(t, "stride"))


def check_im2col(t):
    x = t32(t["self"])
    batched = x.dim() == 4
    out = F.unfold(x if batched else x.unsqueeze(0), **_im2col_args(t))
    assert_equal(t["out"], out if batched else out.squeeze(0))


def check_im2col_backward(t):
    out = F.fold(t32(t["gradOutput"]).double(), output_size=param(t, "inputSize"), **_im2col_args(t))
    assert_equal(t["out"], out.float(), exact=False)


def check_prelu(t):
    assert_equal(t["out"], F.prelu(t32(t["self"]), t32(t["weight"])))


def check_prelu_backward(t):
    x = t32(t["self"]).double().requires_grad_(True)
    w = t32(t["weight"]).double().requires_grad_(True)
    F.prelu(x, w).backward(t32(t["gradOutput"]).double())
    assert_equal(t["gradInput"], x.grad.float(), exact=False)
    assert_equal(t["gradWeight"], w.grad.float(), exact=False)


SAMPLES = {
    "test_aclnn_replication_pad2d": check_replication_pad2d,
    "test_aclnn_replication_pad2d_backward": check_replication_pad2d_backward,
    "test_aclnn_upsample_nearest_exact1d": check_upsample_nearest_exact1d,
    "test_aclnn_upsample_nearest_exact1d_backward": check_upsample_nearest_exact1d_backward,
    "test_aclnn_max_pool2d_with_mask": check_max_pool2d_with_mask,
    "test_aclnn_max_pool2d_with_mask_backward": check_max_pool2d_with_mask_backward,
    "test_aclnn_im2col": check_im2col,
    "test_aclnn_im2col_backward": check_im2col_backward,
    "test_aclnn_prelu": check_prelu,
    "test_aclnn_prelu_backward": check_prelu_backward,
    "test_aclnn_im2col_c": check_im2col,
}


def test_every_sample_is_built():
    sources = {p.stem for p in COMPAT.glob("test_aclnn_*.c*")}
    assert sources == set(SAMPLES)
    cmake_text = (COMPAT / "CMakeLists.txt").read_text()
    for name in SAMPLES:
        assert name in cmake_text


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_sample_matches_pytorch(samples, name):
    tensors = run_sample(samples, name)
    SAMPLES[name](tensors)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_sample_valgrind_clean(samples, name):
    tensors = run_sample(samples, name, valgrind=True)
    SAMPLES[name](tensors)


def test_c_sample_is_c11(samples):
    """The C sample is compiled as ISO C11 (no C++ compiler involved)."""
    bin_dir, _ = samples
    build_dir = bin_dir.parent
    flags = subprocess.run(["grep", "-rh", "std=c11", str(build_dir / "CMakeFiles" / "test_aclnn_im2col_c.dir")],
                           capture_output=True, text=True).stdout
    assert "-std=c11" in flags


# ---- examples/: built like run_demo.py (CANN's -l flags against the installed tree), valgrind-clean

EXAMPLES = sorted(p for p in (ROOT / "examples").iterdir() if p.suffix in (".c", ".cpp"))


@pytest.mark.parametrize("source", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_valgrind_clean(samples, source, tmp_path):
    bin_dir, env = samples
    prefix = Path(env["ASCEND_CUSTOM_PATH"])
    compiler = ["g++", "-std=c++11"] if source.suffix == ".cpp" else ["cc", "-std=c11"]
    exe = tmp_path / source.stem
    subprocess.run([*compiler, "-Wall", "-Wextra", "-O1", "-g", str(source), "-o", str(exe),
                    f"-I{prefix}/include", f"-I{prefix}/include/aclnnop", f"-L{prefix}/lib64",
                    "-lascendcl", "-lnnopbase", "-lopapi", "-lm"], check=True, capture_output=True)
    cmd = ["valgrind", "-q", "--leak-check=full", "--show-leak-kinds=definite,indirect,possible",
           "--errors-for-leak-kinds=definite,indirect,possible", "--error-exitcode=99", str(exe)]
    result = subprocess.run(cmd, capture_output=True, text=True, env=dict(env, ACLNN_NUM_THREADS="2"), timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
