#!/usr/bin/env python3
"""Lays out a CANN-like install tree (what `make install PREFIX=DIR` does).

DIR/include/{acl,aclnn,aclnnop}   the public headers (and securec.h, securectype.h), with aclnnop/level2/ copies of every op
                                  header (older programs include aclnnop/level2/...)
DIR/lib64/libaclnn.so             the library, plus CANN's library names (libascendcl.so, ...):
                                  the filter libraries `make` builds next to it, copied as real
                                  files, each with its own SONAME (docs/libraries.md)
DIR/set_env.sh                    exports ASCEND_HOME_PATH & co. and prepends DIR/lib64 to
DIR/bin/setenv.bash               LD_LIBRARY_PATH, like CANN's own set_env.sh (bin/setenv.bash is the
                                  name CANN's runtime samples source)
DIR/tikcpp/ascendc_kernel_cmake/ascendc.cmake
                                  libaclnn/cmake/ascendc.cmake: ascendc_library() declares an empty
                                  library (no AI Core kernels on a CPU), so samples that include it build
"""
import argparse
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the Makefile's CANN_LIBS
CANN_LIBS = ["libascendcl.so", "libacl_rt.so", "libnnopbase.so", "libopapi.so",
             "libopapi_nn.so", "libopapi_math.so", "libopapi_cv.so", "libacl_op_compiler.so",
             "libruntime.so", "libplatform.so", "libc_sec.so", "libprofapi.so", "libacl_rt_impl.so",
             "libmsprofiler.so", "libacl_tdt_channel.so", "libacl_tdt_queue.so", "libascend_dump.so"]

SET_ENV = """\
# Source this file to use libaclnn like a CANN toolkit: . {prefix}/set_env.sh
export ASCEND_HOME_PATH="{prefix}"
export ASCEND_TOOLKIT_HOME="{prefix}"
export ASCEND_CUSTOM_PATH="{prefix}"
export ASCEND_OPP_PATH="{prefix}/opp"
export LD_LIBRARY_PATH="{prefix}/lib64${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}"
"""


def install_headers(prefix: Path):
    src = ROOT / "libaclnn" / "include"
    dst = prefix / "include"
    for sub in ("acl", "aclnn", "aclnnop"):
        if (dst / sub).exists():
            shutil.rmtree(dst / sub)
        shutil.copytree(src / sub, dst / sub)
    for header in ("securec.h", "securectype.h"):  # libc_sec.so's headers, at the top as in CANN
        shutil.copy2(src / header, dst / header)
    level2 = dst / "aclnnop" / "level2"
    level2.mkdir(exist_ok=True)
    for header in (dst / "aclnnop").glob("*.h"):
        shutil.copy2(header, level2 / header.name)


def _copy(src: Path, dst: Path):
    # unlink first: an older install made the CANN names symlinks to libaclnn.so, and copying onto
    # one would overwrite libaclnn.so
    if dst.is_symlink() or dst.exists():
        dst.unlink()
    shutil.copy2(src, dst)


def install_library(prefix: Path, lib: Path):
    """libaclnn.so and, from the same directory, the filter libraries with CANN's names."""
    lib_dir = prefix / "lib64"
    lib_dir.mkdir(parents=True, exist_ok=True)
    missing = [name for name in CANN_LIBS if not (lib.parent / name).is_file()]
    if missing:
        raise SystemExit(f"install_tree: {', '.join(missing)} not found next to {lib}; run `make lib`")
    _copy(lib, lib_dir / "libaclnn.so")
    for name in CANN_LIBS:
        _copy(lib.parent / name, lib_dir / name)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--lib", required=True)
    args = parser.parse_args()
    prefix = Path(args.prefix).resolve()
    install_headers(prefix)
    install_library(prefix, Path(args.lib))
    (prefix / "opp").mkdir(exist_ok=True)
    (prefix / "set_env.sh").write_text(SET_ENV.format(prefix=prefix))
    (prefix / "bin").mkdir(exist_ok=True)
    (prefix / "bin" / "setenv.bash").write_text(SET_ENV.format(prefix=prefix))
    cmake_dir = prefix / "tikcpp" / "ascendc_kernel_cmake"
    cmake_dir.mkdir(parents=True, exist_ok=True)
    shutil.copy2(ROOT / "libaclnn" / "cmake" / "ascendc.cmake", cmake_dir / "ascendc.cmake")
    print(f"installed libaclnn into {prefix}")


if __name__ == "__main__":
    main()
