# libaclnn's stand-in for CANN's tikcpp/ascendc_kernel_cmake/ascendc.cmake.
#
# CANN's runtime samples include this file and declare their AscendC kernels with
# ascendc_library(<name> <STATIC|SHARED> <sources>...).  libaclnn runs no AI Core kernels, so the
# library is declared empty: a sample that never calls its kernel builds and runs unchanged, and one
# that does call it fails to link with an undefined reference to the kernel's host wrapper - the
# honest answer on a CPU, at build time rather than as a wrong result (docs/runtime.md, "Samples").
cmake_minimum_required(VERSION 3.16)

function(ascendc_library name type)
    message(WARNING "libaclnn: ascendc_library(${name}) compiles no AscendC kernel on a CPU; "
                    "a program that calls one of its kernels will not link (${ARGN})")
    add_library(${name} INTERFACE)
endfunction()

# ascendc_fatbin_library(<name> <sources>...): a kernel binary a program loads at run time with
# aclrtBinaryLoadFromFile, which answers 207000 here; the target exists so the project configures.
function(ascendc_fatbin_library name)
    message(WARNING "libaclnn: ascendc_fatbin_library(${name}) compiles no AscendC kernel on a CPU (${ARGN})")
    add_custom_target(${name})
endfunction()
