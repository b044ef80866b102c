# libaclnn + pyaclnn: the entry points a person types.
#
#   make            build build/lib64/libaclnn.so and its CANN-named aliases
#   make test       set up .venv (first time) and run every C and Python test
#   make demo       build, install into a temporary prefix, run the examples
#   make install PREFIX=DIR   lay out a CANN-like tree under DIR
#   make sanitize   AddressSanitizer + UndefinedBehaviorSanitizer build, run the C tests
#   make bench      benchmarks against PyTorch, writes docs/performance.md

CC      ?= cc
CXX     ?= g++
PYTHON  ?= python3
BUILD   ?= build
PREFIX  ?= /usr/local/aclnn
VENV    ?= .venv
VPY     := $(VENV)/bin/python

LIBDIR  := $(BUILD)/lib64
LIB     := $(LIBDIR)/libaclnn.so
ALIASES := libascendcl.so libacl_rt.so libnnopbase.so libopapi.so libopapi_nn.so libopapi_math.so libopapi_cv.so

SRCS    := $(sort $(wildcard libaclnn/src/*/*.c))
OBJS    := $(patsubst libaclnn/src/%.c,$(BUILD)/obj/%.o,$(SRCS))
HDRS    := $(shell find libaclnn/include libaclnn/src -name '*.h')

WARN    := -Wall -Wextra -Werror=implicit-function-declaration -Wno-unused-parameter
CFLAGS_LIB := -std=c11 -O3 -fPIC -fvisibility=hidden -pthread -D_GNU_SOURCE -DFUNC_VISIBILITY \
              -Ilibaclnn/include -Ilibaclnn/src $(WARN) $(EXTRA_CFLAGS)
LDFLAGS_LIB := -shared -pthread -Wl,-soname,libaclnn.so -Wl,--no-undefined -lm $(EXTRA_LDFLAGS)

.PHONY: tools-check all lib test ctest pytest demo install sanitize bench venv clean
all: lib
lib: $(LIB)

# `make V=1` shows the full compiler command lines.
Q := $(if $(V),,@)

$(BUILD)/obj/%.o: libaclnn/src/%.c $(HDRS)
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_LIB) -c $< -o $@

$(LIB): $(OBJS)
	@mkdir -p $(LIBDIR)
	@$(if $(V),,echo "  LD      $@")
	$(Q)$(CC) $(OBJS) -o $@ $(LDFLAGS_LIB)
	@cd $(LIBDIR) && for a in $(ALIASES); do ln -sf libaclnn.so $$a; done

# ---- Python environment: everything the tests need, installed on first use -------------------
$(VENV)/.ready: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip setuptools wheel
	$(VPY) -m pip install -q cffi numpy pytest ml_dtypes matplotlib torch==2.13.0
	touch $@
venv: $(VENV)/.ready

# pyaclnn is installed in editable mode: its build copies libaclnn.so into the package.
$(VENV)/.pyaclnn: $(VENV)/.ready $(LIB) $(shell find pyaclnn -name '*.py' -not -name '_cdef*.py' 2>/dev/null) setup.py pyproject.toml
	$(VPY) -m pip install -q --no-build-isolation -e .
	touch $@

# ---- Tests ---------------------------------------------------------------------------------
# pytest drives everything: tests/test_c_programs.py builds and runs every tests/c/*.c(pp)
# program against the built library, the other test files exercise pyaclnn.
test: $(LIB) $(VENV)/.pyaclnn tools-check
	$(VPY) -m pytest -q tests

# System tools the tests use (valgrind for the leak checks); installed from Debian if missing.
tools-check:
	@command -v valgrind >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq valgrind; }

demo: $(LIB) $(VENV)/.pyaclnn
	$(VPY) examples/run_demo.py

install: $(LIB)
	$(PYTHON) tools/install_tree.py --prefix "$(PREFIX)" --lib "$(LIB)"

sanitize:
	$(MAKE) BUILD=build-asan EXTRA_CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer" \
	        EXTRA_LDFLAGS="-fsanitize=address,undefined" lib
	ACLNN_TEST_LIBDIR=build-asan/lib64 ACLNN_TEST_SANITIZE=1 $(PYTHON) tests/run_c_tests.py

bench: $(LIB) $(VENV)/.pyaclnn
	$(VPY) bench/run.py --out docs/performance.md

clean:
	rm -rf $(BUILD) build-asan
