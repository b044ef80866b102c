# libaclnn + pyaclnn: the entry points a person types.
#
#   make            build build/lib64/libaclnn.so and CANN's library names (docs/libraries.md)
#   make test       set up .venv (first time) and run every C and Python test
#   make demo       build, install into a temporary prefix, run the examples
#   make install PREFIX=DIR   lay out a CANN-like tree under DIR
#   make sanitize   AddressSanitizer + UndefinedBehaviorSanitizer build, run the C tests
#   make bench      benchmarks against PyTorch, writes docs/performance.md
#   make bench-driver   the max-pool backward's 3x3 stride-2 kernel timed alone (bench/drivers/)
#   make soak       the checking mode's soak under ACLNN_CHECK=1, 10 minutes (docs/checking.md)
#   make dist       the Python sdist and wheel, into build/dist (docs/packaging.md)
#   make cross-test aarch64: cross-build the library, its filter libraries and install tree,
#                   then run the C tests and the examples under qemu-aarch64 (.ci/run runs it)
#   make clang-test the library, the C tests and the examples built with clang (.ci/run runs it)
#   make probe      tools/card_probe.c built as a CANN program against the install tree and run on
#                   every product: docs/card_probe/<product>.txt (docs/precision.md, "Probing a card")

CC      ?= cc
CXX     ?= g++
PYTHON  ?= python3
BUILD   ?= build
PREFIX  ?= /usr/local/aclnn
VENV    ?= .venv
VPY     := $(VENV)/bin/python
# Builds use every core: the library is ~200 files, and the tests and CI build it again with
# sanitizers, for fuzzing, with clang and for aarch64 (GNU make 4.3 and newer read -j from here).
NPROC   := $(shell nproc 2>/dev/null || echo 1)
ifeq ($(filter -j%,$(MAKEFLAGS)),)
MAKEFLAGS += -j$(NPROC)
endif
# pytest's workers (pytest-xdist): each takes whole test files, so a file's fixtures and the
# builds its tests share stay in one process, in collection order (--no-loadscope-reorder: xdist
# would otherwise hand out the files with the most tests first, and tests/conftest.py puts the
# longest first).  PYTEST_WORKERS=0 runs the tests in this process.
PYTEST_WORKERS ?= auto

LIBDIR  := $(BUILD)/lib64
LIB     := $(LIBDIR)/libaclnn.so
# CANN's library names: each a small filter library with its own SONAME that exports the names
# CANN puts in it and hands them to libaclnn.so at run time (docs/libraries.md, tools/cann_filter.sh).
CANN_LIBS := libascendcl.so libacl_rt.so libnnopbase.so libopapi.so libopapi_nn.so libopapi_math.so \
             libopapi_cv.so libacl_op_compiler.so libruntime.so libplatform.so libc_sec.so libprofapi.so \
             libacl_rt_impl.so libmsprofiler.so libacl_tdt_channel.so libacl_tdt_queue.so libascend_dump.so
FILTERS := $(addprefix $(LIBDIR)/,$(CANN_LIBS))

# Every .c under libaclnn/src, however deep (src/kernels/<family>/*.c).
SRCS    := $(sort $(shell find libaclnn/src -name '*.c'))
OBJS    := $(patsubst libaclnn/src/%.c,$(BUILD)/obj/%.o,$(SRCS))
HDRS    := $(shell find libaclnn/include libaclnn/src -name '*.h' -o -name '*.inc')

WARN    := -Wall -Wextra -Werror=implicit-function-declaration -Wno-unused-parameter
CFLAGS_LIB := -std=c11 -O3 -fPIC -fvisibility=hidden -pthread -D_GNU_SOURCE -DFUNC_VISIBILITY \
              -Ilibaclnn/include -Ilibaclnn/src $(WARN) $(EXTRA_CFLAGS)
LDFLAGS_LIB := -shared -pthread -Wl,-soname,libaclnn.so -Wl,--no-undefined -lm $(EXTRA_LDFLAGS)

.PHONY: tools-check all lib test check-test ctest pytest demo install sanitize bench bench-driver venv clean \
        cdef dist sdist wheel cross-tools cross-test clang-test
all: lib
lib: $(LIB) $(FILTERS)

# `make V=1` shows the full compiler command lines.
Q := $(if $(V),,@)

# Kernel files by instruction set (libaclnn/src/kernels/<family>/): <name>_avx2.c and
# <name>_avx512.c are compiled for that set and called only when the CPU table (base/cpu.c)
# allows it; every other file is compiled for baseline x86-64.  No -mfma: the AVX2 paths must
# not let the compiler contract a*b+c (-std=c11 keeps -ffp-contract=off for AVX-512 as well).
X86_64      := $(filter x86_64%,$(shell $(CC) -dumpmachine))
ISA_AVX2    := $(if $(X86_64),-mavx2 -mf16c)
ISA_AVX512  := $(if $(X86_64),-mavx2 -mf16c -mavx512f -mavx512bw -mavx512vl -mavx512dq)
# Im2col's AVX-512 file keeps its AVX-512 code inside NN_AVX512 functions and is built with the
# AVX2 flags: with -mavx512* on the whole file its k3s2 fp16 gather ran 1.05 -> 1.36 ms
# (N8 C256 28x28, 1 thread, in-process A/B of the two objects).
AVX512_AS_AVX2 := %/im2col_avx512.c
isa_flags    = $(if $(filter $(AVX512_AS_AVX2),$(1)),$(ISA_AVX2),$(if $(filter %_avx512.c,$(1)),$(ISA_AVX512),$(if $(filter %_avx2.c,$(1)),$(ISA_AVX2))))

$(BUILD)/obj/%.o: libaclnn/src/%.c $(HDRS)
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_LIB) $(call isa_flags,$<) -c $< -o $@

$(LIB): $(OBJS)
	@mkdir -p $(LIBDIR)
	@$(if $(V),,echo "  LD      $@")
	$(Q)$(CC) $(OBJS) -o $@ $(LDFLAGS_LIB)

# A filter is rebuilt when libaclnn.so's exports change; it is linked without EXTRA_* (no
# sanitizer runtime: its code never runs).  The rm replaces what older builds made: a symlink to
# libaclnn.so, which the link would write through.
$(BUILD)/filters/%.c: $(LIB) tools/cann_filter.sh
	@mkdir -p $(dir $@)
	$(Q)sh tools/cann_filter.sh $*.so $(LIB) > $@.tmp && mv $@.tmp $@
$(FILTERS): $(LIBDIR)/%.so: $(BUILD)/filters/%.c
	@$(if $(V),,echo "  LD      $@")
	$(Q)rm -f $@
	$(Q)$(CC) -std=c11 -O2 -fPIC -shared $< -o $@ -Wl,-soname,$*.so -Wl,--filter=libaclnn.so \
	    -Wl,-rpath,'$$ORIGIN' -Wl,--enable-new-dtags -Wl,--no-undefined

# ---- Python environment: everything the tests need, installed on first use -------------------
$(VENV)/.ready: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip setuptools wheel
	$(VPY) -m pip install -q cffi numpy pytest 'pytest-xdist>=3.6' ml_dtypes matplotlib torch==2.13.0 build auditwheel
	touch $@
venv: $(VENV)/.ready

# pyaclnn is installed in editable mode and used in place: it loads $(BUILD)/lib64/libaclnn.so and
# the cffi declarations $(BUILD)/pyaclnn/_cdef.py (docs/python.md, "Install"); the declarations are
# regenerated when a header changes, without a reinstall.  Nothing is written into pyaclnn/; the rm
# clears what older builds put there (it would shadow $(BUILD)).
CDEF := $(BUILD)/pyaclnn/_cdef.py
$(VENV)/.pyaclnn: $(VENV)/.ready $(LIB) setup.py pyproject.toml pyaclnn/_version.py | $(CDEF)
	rm -rf pyaclnn/_lib pyaclnn/_cdef.py pyaclnn.egg-info
	$(VPY) -m pip install -q --no-build-isolation -e .
	touch $@

$(CDEF): tools/gen_cdef.py $(shell find libaclnn/include -name '*.h') $(VENV)/.ready
	$(VPY) tools/gen_cdef.py --out $@ >/dev/null
cdef: $(CDEF)

# Release files into $(BUILD)/dist: `make dist` builds the sdist, then the wheel from it (as
# `python -m build` does); `make sdist` and `make wheel` build one, from this tree.  The wheel is
# py3-none-manylinux_2_X_<arch> (docs/packaging.md).
dist: $(VENV)/.ready
	$(VPY) -m build --outdir $(BUILD)/dist .
sdist wheel: $(VENV)/.ready
	$(VPY) -m build --$@ --outdir $(BUILD)/dist .

# ---- Tests ---------------------------------------------------------------------------------
# pytest drives everything: tests/test_c_programs.py builds and runs every tests/c/*.c(pp)
# program against the built library, the other test files exercise pyaclnn.  (Building the fuzz
# binary here, beside check-test, was tried: .ci/run took 21.3 min instead of 20.1.)
test: lib $(VENV)/.pyaclnn tools-check check-test
	$(VPY) -m pytest -q -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder tests

# Every C test program and example in checking mode (ACLNN_CHECK=1, docs/checking.md): fails on
# any "ACLNN_CHECK ERROR" report or an exit with ACLNN_CHECK_EXITCODE.
check-test: lib
	$(PYTHON) tests/run_check_programs.py

# System tools the tests use (valgrind for the leak checks); installed from Debian if missing.
tools-check:
	@command -v valgrind >/dev/null 2>&1 && command -v clang >/dev/null 2>&1 && command -v cmake >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind clang cmake; }

demo: lib $(VENV)/.pyaclnn
	$(VPY) examples/run_demo.py

install: lib
	$(PYTHON) tools/install_tree.py --prefix "$(PREFIX)" --lib "$(LIB)"

sanitize:
	$(MAKE) BUILD=build-asan EXTRA_CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer" \
	        EXTRA_LDFLAGS="-fsanitize=address,undefined" lib
	ACLNN_TEST_LIBDIR=build-asan/lib64 ACLNN_TEST_SANITIZE=1 $(PYTHON) tests/run_c_tests.py

bench: $(LIB) $(VENV)/.pyaclnn
	$(VPY) bench/run.py --out docs/performance.md

# A kernel driver (bench/drivers/): one kernel timed alone, in cache, after checking its numbers.
# It calls the kernel through its header (src/kernels/) and links with the library's objects.
$(BUILD)/bench/max_pool_bw_slots: bench/drivers/max_pool_bw_slots.c $(OBJS) $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -fPIC,$(CFLAGS_LIB)) bench/drivers/max_pool_bw_slots.c $(OBJS) -o $@ -pthread -lm
bench-driver: $(BUILD)/bench/max_pool_bw_slots
	$< 4 bf16 && $< 4 f32 && ACLNN_DRIVER_STREAM=1 $< 4 bf16

clean:
	rm -rf $(BUILD) build-asan $(CROSS_BUILD) $(CLANG_BUILD)

# ---- The card probe (docs/precision.md, "Probing a card") -------------------------------------
# Built with the line a CANN program uses, against `make install`'s tree; its output on each
# emulated product is kept in docs/card_probe/ for a user with a card to diff against.
PROBE_PREFIX   := $(BUILD)/probe-install
PROBE_PRODUCTS := Ascend910B Ascend910_93 Ascend950 Ascend910 Ascend310P
$(BUILD)/card_probe: tools/card_probe.c $(LIB) $(FILTERS)
	$(PYTHON) tools/install_tree.py --prefix "$(PROBE_PREFIX)" --lib "$(LIB)" >/dev/null
	$(CC) -std=c11 -Wall -Wextra -Werror tools/card_probe.c -I$(PROBE_PREFIX)/include \
	    -I$(PROBE_PREFIX)/include/aclnnop -L$(PROBE_PREFIX)/lib64 -lascendcl -lnnopbase -lopapi -lm \
	    -Wl,-rpath,$(abspath $(PROBE_PREFIX))/lib64 -o $@
.PHONY: probe
probe: $(BUILD)/card_probe
	@mkdir -p docs/card_probe
	for p in $(PROBE_PRODUCTS); do ACLNN_SOC_VERSION=$$p $(BUILD)/card_probe > docs/card_probe/$$p.txt || exit 1; done

# ---- aarch64, cross-built and run under qemu (README, "Platforms") ---------------------------
# The same sources and flags as a native aarch64 build (X86_64 is empty there, so no file gets
# x86 flags and the *_avx2/_avx512 files compile to their portable stand-ins); the C tests and
# the C/C++ examples (linked with CANN's -l flags against the install tree) run under user-mode
# qemu.  The Debian cross toolchain and qemu-user are installed when missing.
CROSS       := aarch64-linux-gnu
CROSS_BUILD := build-aarch64
CROSS_ENV   := CC=$(CROSS)-gcc CXX=$(CROSS)-g++ ACLNN_TEST_EMULATOR=qemu-aarch64 QEMU_LD_PREFIX=/usr/$(CROSS) \
               ACLNN_TEST_LIBDIR=$(CROSS_BUILD)/lib64 ACLNN_TEST_BINDIR=$(CROSS_BUILD)/tests
cross-tools:
	@command -v $(CROSS)-gcc >/dev/null 2>&1 && command -v $(CROSS)-g++ >/dev/null 2>&1 && \
	 command -v qemu-aarch64 >/dev/null 2>&1 && test -e /usr/$(CROSS)/lib/ld-linux-aarch64.so.1 || { \
	 apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc-$(CROSS) g++-$(CROSS) \
	 qemu-user libc6-dev-arm64-cross; }
cross-test: cross-tools
	$(MAKE) BUILD=$(CROSS_BUILD) CC=$(CROSS)-gcc CXX=$(CROSS)-g++ lib
	$(PYTHON) tools/install_tree.py --prefix "$(CROSS_BUILD)/install" --lib $(CROSS_BUILD)/lib64/libaclnn.so
	$(CROSS_ENV) $(PYTHON) tests/run_c_tests.py
	$(CROSS_ENV) $(PYTHON) examples/run_demo.py --lib $(CROSS_BUILD)/lib64/libaclnn.so --c-only

# ---- Robustness: fuzzing and ThreadSanitizer (docs/robustness.md) ---------------------------
# make fuzz [FUZZ_SECONDS=300]   libFuzzer + ASan + UBSan over every operator's two phases,
#                                starting from the checked-in corpus fuzz/corpus (new finds go to
#                                build-fuzz/corpus; crashes to build-fuzz/crash-*)
# make fuzz-short                the bounded run the tests use (FUZZ_SECONDS=60)
# make tsan                      the library and tests/c/test_threads_streams.c with
#                                -fsanitize=thread, run until clean
FUZZ_SECONDS ?= 300
FUZZ_DIR     := build-fuzz
FUZZ_CC      ?= clang
FUZZ_CFLAGS  := -std=c11 -O1 -g -fno-omit-frame-pointer -pthread -D_GNU_SOURCE -Ilibaclnn/include \
                -Ilibaclnn/include/aclnnop -Ilibaclnn/src -fsanitize=address,undefined \
                -fsanitize-recover=undefined -Wall -Wno-unused-parameter
FUZZ_OBJS    := $(patsubst libaclnn/src/%.c,$(FUZZ_DIR)/obj/%.o,$(SRCS))

.PHONY: fuzz fuzz-short fuzz-build tsan
# A file clang cannot compile (clang 14 rejects some __builtin_cpu_supports names gcc accepts) is
# built with $(CC), uninstrumented, so the fuzzer still links; the build says which.
$(FUZZ_DIR)/obj/%.o: libaclnn/src/%.c $(HDRS) | tools-check
	@mkdir -p $(dir $@)
	@$(FUZZ_CC) $(FUZZ_CFLAGS) $(call isa_flags,$<) -fsanitize=fuzzer-no-link -c $< -o $@ 2>$@.log || { \
	  echo "  note: $(FUZZ_CC) cannot compile $< (see $@.log); using $(CC) without sanitizers"; \
	  $(CC) -std=c11 -O1 -g -pthread -D_GNU_SOURCE -Ilibaclnn/include -Ilibaclnn/src $(call isa_flags,$<) -c $< -o $@; }

$(FUZZ_DIR)/fuzz_ops: fuzz/fuzz_ops.c $(FUZZ_OBJS) | tools-check
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer fuzz/fuzz_ops.c $(FUZZ_OBJS) -o $@ -lm

fuzz-build: tools-check $(FUZZ_DIR)/fuzz_ops

fuzz: fuzz-build
	@mkdir -p $(FUZZ_DIR)/corpus
	ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:suppressions=fuzz/ubsan.supp \
	  $(FUZZ_DIR)/fuzz_ops -max_total_time=$(FUZZ_SECONDS) -timeout=20 -rss_limit_mb=4096 \
	  -max_len=512 -print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/ $(FUZZ_DIR)/corpus fuzz/corpus

fuzz-short:
	$(MAKE) fuzz FUZZ_SECONDS=60

# No function entry/exit hooks: the target_clones (ifunc) resolvers of the hot loops run while
# the loader relocates libaclnn.so, before TSan is initialised, and crash in those hooks.
# Memory accesses are still instrumented, so races are still found (with shorter stacks).
TSAN_DIR := build-tsan
TSAN_FLAGS := -fsanitize=thread --param=tsan-instrument-func-entry-exit=0
tsan: tools-check
	$(MAKE) BUILD=$(TSAN_DIR) EXTRA_CFLAGS="-O1 -g $(TSAN_FLAGS) -fno-omit-frame-pointer" \
	        EXTRA_LDFLAGS="-fsanitize=thread" lib
	@mkdir -p $(TSAN_DIR)/tests
	$(CC) -std=c11 -O1 -g $(TSAN_FLAGS) -Wall -Wextra -Werror -D_GNU_SOURCE -Ilibaclnn/include \
	      tests/c/test_threads_streams.c -o $(TSAN_DIR)/tests/test_threads_streams \
	      -L$(TSAN_DIR)/lib64 -laclnn -Wl,-rpath,$(abspath $(TSAN_DIR)/lib64) -lm -pthread
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ACLNN_NUM_THREADS=2 ACLNN_TEST_ITERS=100 \
	  $(TSAN_DIR)/tests/test_threads_streams
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ACLNN_NUM_THREADS=2 ACLNN_TEST_ITERS=100 \
	  ACLNN_CHECK=1 ACLNN_CHECK_EXITCODE=86 $(TSAN_DIR)/tests/test_threads_streams

# ---- clang (README, "Platforms") -------------------------------------------------------------
# The same sources and flags built with clang (tools-check installs it), then the C tests and the
# C/C++ examples compiled with clang/clang++ against that library.
CLANG_BUILD := build-clang
CLANG_ENV   := CC=clang CXX=clang++ ACLNN_TEST_LIBDIR=$(CLANG_BUILD)/lib64 ACLNN_TEST_BINDIR=$(CLANG_BUILD)/tests
clang-test: tools-check
	$(MAKE) BUILD=$(CLANG_BUILD) CC=clang CXX=clang++ lib
	$(CLANG_ENV) $(PYTHON) tests/run_c_tests.py
	$(CLANG_ENV) $(PYTHON) examples/run_demo.py --lib $(CLANG_BUILD)/lib64/libaclnn.so --c-only

# ---- The checking mode's soak (docs/checking.md, "The soak") -----------------------------------
# make soak [SOAK_SECONDS=600] [SOAK_THREADS=4] [SOAK_STREAMS=3]   tests/soak/soak.c under
#   ACLNN_CHECK=1: threads x streams x every operator on random layouts, dtypes and products, with
#   asynchronous copies, events, callbacks and host functions; fails on a report, a wrong result,
#   a failed call or a resident set that grew after the warm-up.  tests/test_soak.py runs it for 20 s.
SOAK_SECONDS ?= 600
SOAK_THREADS ?= 4
SOAK_STREAMS ?= 3
.PHONY: soak
$(BUILD)/soak/soak: tests/soak/soak.c tests/soak/soak_ops.h tests/soak/soak_tensor.h $(LIB)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -Ilibaclnn/include -Ilibaclnn/src tests/soak/soak.c \
	      -o $@ -L$(LIBDIR) -laclnn -Wl,-rpath,$(abspath $(LIBDIR)) -lm -pthread
soak: $(BUILD)/soak/soak
	ACLNN_CHECK=1 ACLNN_CHECK_EXITCODE=86 $< $(SOAK_SECONDS) $(SOAK_THREADS) $(SOAK_STREAMS)
