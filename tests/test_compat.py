"""Drop-in proof: the programs in examples/ build with CANN's own build recipe (tests/compat's
CMakeLists.txt: cmake, -DCMAKE_SKIP_RPATH=TRUE, headers and libraries from the `make install` tree
found through set_env.sh), print results equal to PyTorch's, and are clean under valgrind.

This is the one place the examples' output is compared with PyTorch. Each C++ example prints its
inputs, attributes and results as
    <name> shape: [d0, d1, ...]
    <name>[i] is: v
and this file recomputes the results from the printed inputs with torch (CPU). The C example
(quickstart.c) prints "prelu(x) with weight w = y" lines.
"""
import os
import re
import shutil
import subprocess

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import support

ROOT = support.ROOT
COMPAT = ROOT / "tests" / "compat"
EXAMPLES = ROOT / "examples"
SHAPE_LINE = re.compile(r"^(\w+) shape: \[(.*)\]$")
VALUE_LINE = re.compile(r"^(\w+)\[(\d+)\] is: (\S+)$")
QUICKSTART_LINE = re.compile(r"^prelu\((\S+)\) with weight (\S+) = (\S+)$")


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
    return parse(result.stdout)


def parse(stdout):
    """{name: array} from the "<name> shape:" and "<name>[i] is: v" lines (plus the raw text)."""
    shapes, values = {}, {}
    for line in stdout.splitlines():
        shape = SHAPE_LINE.match(line)
        value = VALUE_LINE.match(line)
        if shape:
            shapes[shape.group(1)] = [int(d) for d in shape.group(2).split(",")]
            values[shape.group(1)] = []
        elif value:
            name, index, v = value.groups()
            assert int(index) == len(values[name]), line
            values[name].append(float(v))
    tensors = {name: np.array(values[name], dtype=np.float64).reshape(dims) for name, dims in shapes.items()}
    tensors["stdout"] = stdout
    return tensors


def t32(array):
    return torch.from_numpy(np.ascontiguousarray(array, dtype=np.float32))


def param(tensors, name):
    return [int(v) for v in tensors[name].ravel()]


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


def _scales(t):
    scales = float(t["scales"][0])
    return scales if scales > 0 else None


def check_upsample_nearest_exact1d(t):
    out = torch.ops.aten._upsample_nearest_exact1d(t32(t["self"]), param(t, "outputSize"), _scales(t))
    assert_equal(t["out"], out)


def check_upsample_nearest_exact1d_backward(t):
    grad = torch.ops.aten._upsample_nearest_exact1d_backward(t32(t["gradOutput"]).double(), param(t, "outputSize"),
                                                             param(t, "inputSize"), _scales(t))
    assert_equal(t["out"], grad.float(), exact=False)


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


def check_quickstart(t):
    rows = [QUICKSTART_LINE.match(line) for line in t["stdout"].splitlines()]
    rows = np.array([[float(v) for v in row.groups()] for row in rows if row], dtype=np.float32)
    assert rows.shape == (8, 3)
    x, w, out = (torch.from_numpy(rows[:, i].copy()) for i in range(3))
    # one slope per element here: prelu of a 1-element tensor with that element's slope
    want = torch.stack([F.prelu(x[i:i + 1], w[i:i + 1]) for i in range(len(x))]).reshape(-1)
    assert_equal(out.double().numpy(), want)
    assert "quickstart: all values correct" in t["stdout"]


# every C/C++ example -> the checker that recomputes its output with torch
SAMPLES = {
    "replication_pad2d": check_replication_pad2d,
    "replication_pad2d_backward": check_replication_pad2d_backward,
    "upsample_nearest_exact1d": check_upsample_nearest_exact1d,
    "upsample_nearest_exact1d_backward": check_upsample_nearest_exact1d_backward,
    "max_pool2d_with_mask": check_max_pool2d_with_mask,
    "max_pool2d_with_mask_backward": check_max_pool2d_with_mask_backward,
    "im2col": check_im2col,
    "im2col_backward": check_im2col_backward,
    "prelu": check_prelu,
    "prelu_backward": check_prelu_backward,
    "quickstart": check_quickstart,
}


def test_every_example_is_built():
    sources = {p.stem for p in EXAMPLES.iterdir() if p.suffix in (".c", ".cpp")}
    assert sources == set(SAMPLES)
    cmake_text = (COMPAT / "CMakeLists.txt").read_text()
    for source in EXAMPLES.iterdir():
        if source.suffix in (".c", ".cpp"):
            assert source.name in cmake_text or f"{source.stem}:" in cmake_text, source.name


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_example_matches_pytorch(samples, name):
    tensors = run_sample(samples, name)
    SAMPLES[name](tensors)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_example_valgrind_clean(samples, name):
    tensors = run_sample(samples, name, valgrind=True)
    SAMPLES[name](tensors)


def test_c_example_is_c11(samples):
    """quickstart.c is compiled as ISO C11 (no C++ compiler involved)."""
    bin_dir, _ = samples
    build_dir = bin_dir.parent
    flags = subprocess.run(["grep", "-rh", "std=c11", str(build_dir / "CMakeFiles" / "quickstart.dir")],
                           capture_output=True, text=True).stdout
    assert "-std=c11" in flags
