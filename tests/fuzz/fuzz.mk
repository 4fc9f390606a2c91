# Fuzzing (tests/fuzz/README.md): libFuzzer targets with ASan + UBSan,
# built with clang-14 from the library's sources.  Not part of make test,
# which replays the kept corpora and crashers instead (test_replay.sh, with
# the replay binaries built below).
#
#   make fuzz           fuzz_compiler.c: script text, the front end and compiler
#   make fuzz-grammar   fuzz_grammar.c: scripts made by a generator of the grammar
#   make fuzz-decode    fuzz_decode.c: record streams through decoder, engine, writer
#   make fuzz-fxt       fuzz_fxt.c: traces through dump, stats and render
#
# FUZZ_SECONDS bounds a run; FUZZ_OPTS adds libFuzzer options (such as
# -fork=1 -ignore_crashes=1 to go on past a known crash).  A target's corpus
# grows in $(FUZZ_DIR)/NAME/corpus, seeded from tests/fuzz/corpus/NAME;
# finds land in $(FUZZ_DIR)/NAME/ as crash-*, leak-*, timeout-*.  Keep each
# one as a regression test (tests/fuzz/README.md says where).
FUZZ_CC      ?= clang-14
FUZZ_SECONDS ?= 60
FUZZ_JOBS    ?= 1
FUZZ_OPTS    ?=
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_FLAGS   := -std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer \
	-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -I. -I$(GEN_DIR) -MMD -MP
FUZZ_LIB_OBJ := $(patsubst %.c,$(FUZZ_DIR)/%.o,$(LIB_C)) $(FUZZ_DIR)/gen/parser.o $(FUZZ_DIR)/gen/lexer.o \
	$(FUZZ_DIR)/gen/reader_helpers.o
FUZZ_NAMES   := compiler grammar decode fxt
FUZZ_BINS    := $(FUZZ_NAMES:%=$(FUZZ_DIR)/fuzz_%)

$(FUZZ_DIR)/%.o: %.c $(GEN_DIR)/parser.h $(GEN_DIR)/lexer.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -Wall -Wextra -Werror -c -o $@ $<

$(FUZZ_DIR)/runtime/cache.o: FUZZ_FLAGS += -DUT_CLANG_VERSION='"$(shell $(LLVM_CONFIG) --version 2>/dev/null)"'

$(FUZZ_DIR)/gen/%.o: $(GEN_DIR)/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -Icompiler -w -c -o $@ $<

# fuzz_fxt also takes the record-level mutator, which only libFuzzer calls.
$(FUZZ_DIR)/fuzz_fxt: $(FUZZ_DIR)/tests/fuzz/fxt_mutator.o
$(FUZZ_BINS): $(FUZZ_DIR)/fuzz_%: $(FUZZ_DIR)/tests/fuzz/fuzz_%.o $(FUZZ_LIB_OBJ)
	$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -o $@ $^ $(LDLIBS)

-include $(FUZZ_LIB_OBJ:.o=.d) $(FUZZ_BINS:$(FUZZ_DIR)/fuzz_%=$(FUZZ_DIR)/tests/fuzz/fuzz_%.d)

# The stored kernel, which the compiling fuzzers (all but fuzz-fxt) use
# (machine-independent finds); the replay unpacks its own (test_replay.sh).
FUZZ_KERNEL := $(FUZZ_DIR)/kernel
$(FUZZ_KERNEL)/btf: tests/kernel/6.18/btf.gz tests/kernel/6.18/tracefs.tar.gz
	@mkdir -p $(FUZZ_KERNEL)/tracefs
	gzip -dc tests/kernel/6.18/btf.gz >$@.tmp
	tar -xzf tests/kernel/6.18/tracefs.tar.gz -C $(FUZZ_KERNEL)/tracefs
	mv $@.tmp $@

FUZZ_ENV := UT_BTF=$(abspath $(FUZZ_KERNEL)/btf) UT_TRACEFS=$(abspath $(FUZZ_KERNEL)/tracefs) UT_ROOT=$(CURDIR) \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# $(call fuzz_run,NAME,max_len,seed directories and options): runs in a
# scratch directory, so that imports in random input find nothing there.
define fuzz_run
	@mkdir -p $(FUZZ_DIR)/$(1)/corpus $(FUZZ_DIR)/$(1)/run
	cd $(FUZZ_DIR)/$(1)/run && $(FUZZ_ENV) $(abspath $(FUZZ_DIR)/fuzz_$(1)) -max_total_time=$(FUZZ_SECONDS) \
	  -timeout=10 -rss_limit_mb=4096 -max_len=$(2) -jobs=$(FUZZ_JOBS) -workers=$(FUZZ_JOBS) \
	  -artifact_prefix=$(abspath $(FUZZ_DIR)/$(1))/ $(FUZZ_OPTS) $(abspath $(FUZZ_DIR)/$(1)/corpus) $(3)
endef

.PHONY: fuzz fuzz-build fuzz-grammar fuzz-decode fuzz-fxt
fuzz-build: $(FUZZ_BINS)

fuzz: $(FUZZ_DIR)/fuzz_compiler $(FUZZ_KERNEL)/btf
	$(call fuzz_run,compiler,4096,-dict=$(abspath tests/fuzz/ut.dict) $(abspath tests/compiler/golden) \
	  $(abspath tests/compiler/errors) $(abspath tests/compiler/crashers))

fuzz-grammar: $(FUZZ_DIR)/fuzz_grammar $(FUZZ_KERNEL)/btf
	$(call fuzz_run,grammar,4096,$(abspath tests/fuzz/corpus/grammar))

fuzz-decode: $(FUZZ_DIR)/fuzz_decode $(FUZZ_KERNEL)/btf
	$(call fuzz_run,decode,16384,$(abspath tests/fuzz/corpus/decode))

fuzz-fxt: $(FUZZ_DIR)/fuzz_fxt
	$(call fuzz_run,fxt,65536,$(abspath tests/fuzz/corpus/fxt))

# The replay binaries: the same targets, with replay.c's main instead of
# libFuzzer, built with the build's own compiler and flags (sanitized in
# build-san); make test runs them (tests/fuzz/test_replay.sh).
REPLAY_BINS := $(BUILD)/fuzz-replay/grammar $(BUILD)/fuzz-replay/decode $(BUILD)/fuzz-replay/fxt
$(REPLAY_BINS): $(BUILD)/fuzz-replay/%: $(BUILD)/tests/fuzz/fuzz_%.o $(BUILD)/tests/fuzz/replay.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

test-build: $(REPLAY_BINS)
