"""`make install PREFIX=DIR` lays out a CANN-like tree, the library exports only CANN names, and a
program in the style of CANN's official samples builds with CANN's flags against the tree and runs."""
import os
import re
import subprocess
from pathlib import Path

import pytest

import support

ROOT = support.ROOT
# CANN's library names: filter libraries with their own SONAMEs (docs/libraries.md)
CANN_LIBS = ["libascendcl.so", "libacl_rt.so", "libnnopbase.so", "libopapi.so",
             "libopapi_nn.so", "libopapi_math.so", "libopapi_cv.so", "libacl_op_compiler.so"]


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    prefix = tmp_path_factory.mktemp("cann")
    subprocess.run(["make", "-s", "install", f"PREFIX={prefix}"], cwd=ROOT, check=True,
                   capture_output=True)
    return prefix


def test_tree_layout(prefix):
    for header in ["acl/acl.h", "acl/acl_base.h", "acl/acl_rt.h", "aclnn/acl_meta.h",
                   "aclnn/aclnn_base.h", "aclnn/opdev/op_errno.h", "aclnnop/aclnn_util.h",
                   "aclnnop/aclnn_prelu.h", "aclnnop/level2/aclnn_prelu.h",
                   "aclnnop/aclnn_max_pool2d_with_indices_backward.h"]:
        assert (prefix / "include" / header).is_file(), header
    assert (prefix / "lib64" / "libaclnn.so").is_file()
    assert not (prefix / "lib64" / "libaclnn.so").is_symlink()
    for name in CANN_LIBS:
        lib = prefix / "lib64" / name
        assert lib.is_file() and not lib.is_symlink(), name
        dynamic = _dynamic(lib)
        assert f"Library soname: [{name}]" in dynamic, name
        assert "Filter library: [libaclnn.so]" in dynamic, name
        assert "Library runpath: [$ORIGIN]" in dynamic, name


def _dynamic(lib):
    return subprocess.run(["readelf", "-d", str(lib)], capture_output=True, text=True, check=True).stdout


def test_install_replaces_old_symlinks(tmp_path):
    """An older install made the CANN names symlinks to libaclnn.so: installing over it replaces
    them with the filter libraries and leaves libaclnn.so intact."""
    lib64 = tmp_path / "lib64"
    lib64.mkdir()
    (lib64 / "libaclnn.so").write_bytes(b"old")
    for name in CANN_LIBS[:7]:
        os.symlink("libaclnn.so", lib64 / name)
    subprocess.run(["make", "-s", "install", f"PREFIX={tmp_path}"], cwd=ROOT, check=True,
                   capture_output=True)
    built = ROOT / "build" / "lib64"  # what `make install` (BUILD=build) copies
    assert (lib64 / "libaclnn.so").read_bytes() == (built / "libaclnn.so").read_bytes()
    for name in CANN_LIBS:
        assert not (lib64 / name).is_symlink(), name
        assert (lib64 / name).read_bytes() == (built / name).read_bytes(), name


def test_set_env_exports(prefix):
    script = f". {prefix}/set_env.sh && env"
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True).stdout
    env = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    for name in ["ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_CUSTOM_PATH"]:
        assert env[name] == str(prefix)
    assert env["ASCEND_OPP_PATH"].startswith(str(prefix))
    assert env["LD_LIBRARY_PATH"].split(":")[0] == f"{prefix}/lib64"


def test_library_exports_only_cann_names():
    lib = support.lib_dir() / "libaclnn.so"
    out = subprocess.run(["nm", "-D", "--defined-only", str(lib)], capture_output=True, text=True,
                         check=True).stdout
    names = [line.split()[-1] for line in out.splitlines() if line.strip()]
    assert names, "no exported symbols"
    # acl*/Acl*, Msprof* (libprofapi.so's, profiling/aprof_pub.h), and the securec functions CANN's libc_sec.so exports (docs/libraries.md)
    foreign = [n for n in names if not re.match(r"^(acl|Acl|Msprof)", n) and not re.match(r"^(mem|str|v?sn?printf)\w*_s$", n)]
    assert foreign == [], f"non-CANN exports: {foreign[:10]}"
    for required in ["aclInit", "aclrtMalloc", "aclCreateTensor", "aclGetRecentErrMsg",
                     "aclnnPreluGetWorkspaceSize", "aclnnMaxPool2dWithMaskBackward"]:
        assert required in names


def test_soname():
    assert "Library soname: [libaclnn.so]" in _dynamic(support.lib_dir() / "libaclnn.so")


OFFICIAL_STYLE = r'''
#include <iostream>
#include <memory>
#include <vector>
#include "acl/acl.h"
#include "aclnnop/aclnn_replication_pad2d.h"

#define CHECK_RET(cond, return_expr) do { if (!(cond)) { return_expr; } } while (0)
#define LOG_PRINT(message, ...) do { printf(message, ##__VA_ARGS__); } while (0)

int64_t GetShapeSize(const std::vector<int64_t>& shape) {
  int64_t shapeSize = 1;
  for (auto i : shape) shapeSize *= i;
  return shapeSize;
}

int main() {
  int32_t deviceId = 0;
  aclrtStream stream;
  auto ret = aclInit(nullptr);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclInit failed. ERROR: %d\n", ret); return ret);
  ret = aclrtSetDevice(deviceId);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSetDevice failed. ERROR: %d\n", ret); return ret);
  ret = aclrtCreateStream(&stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtCreateStream failed. ERROR: %d\n", ret); return ret);

  std::vector<int64_t> selfShape = {1, 1, 2, 2};
  std::vector<int64_t> outShape = {1, 1, 4, 4};
  std::vector<float> selfHostData = {1, 2, 3, 4};
  std::vector<float> outHostData(16, 0);
  std::vector<int64_t> strides = {4, 4, 2, 1};
  std::vector<int64_t> outStrides = {16, 16, 4, 1};
  void *selfDeviceAddr = nullptr, *outDeviceAddr = nullptr;
  ret = aclrtMalloc(&selfDeviceAddr, 16, ACL_MEM_MALLOC_HUGE_FIRST);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = aclrtMalloc(&outDeviceAddr, 64, ACL_MEM_MALLOC_HUGE_FIRST);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = aclrtMemcpy(selfDeviceAddr, 16, selfHostData.data(), 16, ACL_MEMCPY_HOST_TO_DEVICE);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  aclTensor* self = aclCreateTensor(selfShape.data(), selfShape.size(), aclDataType::ACL_FLOAT, strides.data(), 0,
                                    aclFormat::ACL_FORMAT_NCHW, selfShape.data(), selfShape.size(), selfDeviceAddr);
  aclTensor* out = aclCreateTensor(outShape.data(), outShape.size(), aclDataType::ACL_FLOAT, outStrides.data(), 0,
                                   aclFormat::ACL_FORMAT_NCHW, outShape.data(), outShape.size(), outDeviceAddr);
  std::vector<int64_t> padData = {1, 1, 1, 1};
  aclIntArray* padding = aclCreateIntArray(padData.data(), 4);
  std::unique_ptr<aclTensor, aclnnStatus (*)(const aclTensor*)> selfGuard(self, aclDestroyTensor);
  std::unique_ptr<aclTensor, aclnnStatus (*)(const aclTensor*)> outGuard(out, aclDestroyTensor);
  std::unique_ptr<aclIntArray, aclnnStatus (*)(const aclIntArray*)> padGuard(padding, aclDestroyIntArray);
  std::unique_ptr<void, aclError (*)(void*)> selfMem(selfDeviceAddr, aclrtFree);
  std::unique_ptr<void, aclError (*)(void*)> outMem(outDeviceAddr, aclrtFree);

  uint64_t workspaceSize = 0;
  aclOpExecutor* executor;
  ret = aclnnReplicationPad2dGetWorkspaceSize(self, padding, out, &workspaceSize, &executor);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("GetWorkspaceSize failed. ERROR: %d\n", ret); return ret);
  void* workspaceAddr = nullptr;
  if (workspaceSize > 0) {
    ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
  }
  ret = aclnnReplicationPad2d(workspaceAddr, workspaceSize, executor, stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnReplicationPad2d failed. ERROR: %d\n", ret); return ret);
  ret = aclrtSynchronizeStream(stream);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = aclrtMemcpy(outHostData.data(), 64, outDeviceAddr, 64, ACL_MEMCPY_DEVICE_TO_HOST);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  for (int64_t i = 0; i < GetShapeSize(outShape); i++) LOG_PRINT("result[%ld] is: %f\n", i, outHostData[i]);
  if (workspaceSize > 0) aclrtFree(workspaceAddr);
  selfGuard.reset(); outGuard.reset(); padGuard.reset(); selfMem.reset(); outMem.reset();
  aclrtDestroyStream(stream);
  aclrtResetDevice(deviceId);
  aclFinalize();
  return 0;
}
'''


def test_official_style_program_builds_with_cann_flags(prefix, tmp_path):
    source = tmp_path / "official.cpp"
    source.write_text(OFFICIAL_STYLE)
    exe = tmp_path / "official"
    subprocess.run(["g++", "-std=c++11", str(source), "-o", str(exe), f"-I{prefix}/include",
                    f"-L{prefix}/lib64", "-lascendcl", "-lnnopbase", "-lopapi"], check=True)
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]", _dynamic(exe))
    assert needed[:3] == ["libascendcl.so", "libnnopbase.so", "libopapi.so"], needed
    assert "libaclnn.so" not in needed
    env = dict(os.environ, LD_LIBRARY_PATH=f"{prefix}/lib64")
    out = subprocess.run([str(exe)], capture_output=True, text=True, env=env, check=True).stdout
    values = [float(m) for m in re.findall(r"result\[\d+\] is: (\S+)", out)]
    # replication padding of [[1, 2], [3, 4]] by one on every side, computed by hand-free numpy
    import numpy as np
    expected = np.pad(np.array([[1, 2], [3, 4]], np.float32), 1, mode="edge").ravel()
    assert values == expected.tolist()


SAMPLE_CMAKE = """\
cmake_minimum_required(VERSION 3.16.0)
project(Runtime_Sample)
set(ASCENDC_CMAKE_DIR $ENV{ASCENDC_CMAKE_DIR})
include(${ASCENDC_CMAKE_DIR}/ascendc.cmake)
ascendc_library(kernels STATIC kernel_never_called.cpp)
include_directories(${ASCEND_CANN_PACKAGE_PATH}/include)
link_directories(${ASCEND_CANN_PACKAGE_PATH}/lib64)
add_executable(main main.cpp)
target_link_libraries(main PRIVATE kernels acl_rt)
"""
SAMPLE_MAIN = """\
#include <cstdio>
#include "acl/acl.h"
int main() {
    if (aclInit(nullptr) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) return 1;
    std::printf("soc=%s\\n", aclrtGetSocName());
    aclrtResetDevice(0);
    return aclFinalize() == ACL_SUCCESS ? 0 : 1;
}
"""


def test_runtime_sample_layout(prefix, tmp_path):
    """CANN's runtime samples source bin/setenv.bash, include tikcpp/ascendc_kernel_cmake/ascendc.cmake
    and declare their kernels with ascendc_library(): a sample in that shape that never calls its
    kernel configures, builds against the tree and runs (tools/runtime_samples.py runs the real ones)."""
    (tmp_path / "CMakeLists.txt").write_text(SAMPLE_CMAKE)
    (tmp_path / "main.cpp").write_text(SAMPLE_MAIN)
    script = (f'source "{prefix}/bin/setenv.bash" && '
              f'export ASCENDC_CMAKE_DIR="{prefix}/tikcpp/ascendc_kernel_cmake" && '
              f'cmake -S . -B build -DASCEND_CANN_PACKAGE_PATH="{prefix}" >/dev/null && '
              'cmake --build build >/dev/null && ./build/main')
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "compiles no AscendC kernel" in done.stderr
    assert done.stdout.startswith("soc=Ascend")
