# uring-trace build.  Each source folder is one layer; sources are found by
# wildcard so adding a file needs no edit here.
#
#   make            build build/uring-trace
#   make test       install deps, build normal + sanitized, run every test
#   make demo       install deps, build, trace the bundled workload
#   make SAN=1 BUILD=build-san   sanitized build (ASan + UBSan)

BUILD   ?= build
SAN     ?=
PREFIX  ?= /usr/local
DESTDIR ?=
LLVM_CONFIG ?= llvm-config-14

CC  ?= cc
CXX ?= c++
CFLAGS_BASE := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -g -O2 -I. -MMD -MP
CXXFLAGS_BASE := -std=c++17 -Wall -Wextra -Werror -g -O2 -I. -MMD -MP \
	$(shell $(LLVM_CONFIG) --cxxflags | sed 's/-std=c++[0-9]*//; s/-fno-exceptions//') -fno-rtti
ifeq ($(SAN),1)
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
endif
CFLAGS   := $(CFLAGS_BASE) $(SANFLAGS) $(EXTRA_CFLAGS)
CXXFLAGS := $(CXXFLAGS_BASE) $(SANFLAGS)
LDFLAGS  := $(SANFLAGS)
LLVM_LIBDIR := $(shell $(LLVM_CONFIG) --libdir)
LDLIBS   := -lbpf -lelf -lz -lmicrohttpd -ljson-c -lpthread -lm -ldl
# The clang wrapper is a separate shared object, loaded with dlopen only when
# a script must be compiled: running a compiled script (.uto) needs no clang.
BPFCC_LIBS := -L$(LLVM_LIBDIR) -Wl,-rpath,$(LLVM_LIBDIR) -lclang-cpp -lLLVM-14

# Generated front end (flex + bison) lives in the build tree.
GEN_DIR := $(BUILD)/gen
GEN_C   := $(GEN_DIR)/parser.c $(GEN_DIR)/lexer.c $(GEN_DIR)/reader_helpers.c

LIB_C   := $(filter-out runtime/main.c,$(wildcard base/*.c kernel/*.c compiler/*.c probes/*.c fxt/*.c engine/*.c tools/*.c runtime/*.c))
LIB_CXX := $(wildcard runtime/*.cc)
LIB_OBJ := $(LIB_C:%.c=$(BUILD)/%.o) $(GEN_C:$(GEN_DIR)/%.c=$(BUILD)/gen-obj/%.o)
BPFCC   := $(BUILD)/libut-bpfcc.so
LIB     := $(BUILD)/libut.a
BIN     := $(BUILD)/uring-trace

UNIT_SRC  := $(wildcard tests/unit/test_*.c)
UNIT_BIN  := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
WORKLOAD_SRC := $(wildcard tests/workloads/*.c)
WORKLOAD_BIN := $(WORKLOAD_SRC:tests/workloads/%.c=$(BUILD)/workloads/%)

.PHONY: all deps test test-build demo clean install uninstall fuzz bench
all: $(BIN) $(BPFCC) $(WORKLOAD_BIN)

deps:
	@.ci/install-deps.sh

$(GEN_DIR)/parser.c $(GEN_DIR)/parser.h: compiler/parser.y
	@mkdir -p $(GEN_DIR)
	bison -Wall -Werror --defines=$(GEN_DIR)/parser.h -o $(GEN_DIR)/parser.c $<

$(GEN_DIR)/lexer.c $(GEN_DIR)/lexer.h: compiler/lexer.l $(GEN_DIR)/parser.h
	@mkdir -p $(GEN_DIR)
	flex --header-file=$(GEN_DIR)/lexer.h -o $(GEN_DIR)/lexer.c $<

$(BUILD)/gen-obj/parser.o: $(GEN_DIR)/lexer.h

# The C of compiler/reader_helpers.h (between its markers), as the
# string the native generator writes into every reader's C.
$(GEN_DIR)/reader_helpers.c: compiler/reader_helpers.h
	@mkdir -p $(GEN_DIR)
	{ echo 'const char ut_reader_helpers_c[] ='; \
	  sed -n '/the reader.s C: begin/,/the reader.s C: end/{//!p;}' $< | \
	  sed 's/\\/\\\\/g; s/"/\\"/g; s/^/\t"/; s/$$/\\n"/'; echo ';'; } > $@.tmp && mv $@.tmp $@

# Generated code is not ours to keep warning-free for every flag.
$(BUILD)/gen-obj/%.o: $(GEN_DIR)/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -I$(GEN_DIR) -Icompiler -Wno-unused-function -Wno-sign-compare -Wno-unused-parameter -c -o $@ $<

$(BUILD)/compiler/%.o: compiler/%.c $(GEN_DIR)/parser.h $(GEN_DIR)/lexer.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -I$(GEN_DIR) -c -o $@ $<

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/%.o: %.cc
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -fPIC -c -o $@ $<

# Cached objects are keyed by the clang they were built with: known here, so
# a cache hit need not load the compiler library to ask it.
$(BUILD)/runtime/cache.o: CFLAGS += -DUT_CLANG_VERSION='"$(shell $(LLVM_CONFIG) --version 2>/dev/null)"'

$(BPFCC): $(LIB_CXX:%.cc=$(BUILD)/%.o)
	$(CXX) -shared $(LDFLAGS) -o $@ $^ $(BPFCC_LIBS)

$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BIN): $(BUILD)/runtime/main.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(LIB) tests/unit/check.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -I$(GEN_DIR) -o $@ $< $(LIB) $(LDFLAGS) $(LDLIBS)

# Workloads are plain programs traced by the tests; never sanitized (they
# stand for the user's program, and ASan's shadow memory skews their timing).
$(BUILD)/workloads/%: tests/workloads/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -g -o $@ $< -luring -lpthread

test-build: $(BIN) $(BPFCC) $(UNIT_BIN) $(WORKLOAD_BIN)

# The full suite: a normal build (what users run) and a sanitized build that
# the tests exercise.
test: deps
	$(MAKE) all
	$(MAKE) BUILD=build-san SAN=1 test-build
	UT_BUILD=build-san UT_WORKLOADS=build/workloads tests/run.sh

demo: deps all
	tests/demo.sh

clean:
	rm -rf build build-san

# Optional fragments (benchmarks, fuzzing, kernel matrix) keep their own rules.
-include $(wildcard bench/*.mk tests/*/*.mk docs/*.mk)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
