# Fuzzing the compiler front end (make fuzz): libFuzzer with ASan + UBSan,
# built with clang-14 from the compiler sources alone.  Not part of make
# test.  FUZZ_SECONDS bounds the run; the corpus grows in $(FUZZ_DIR)/corpus,
# seeded from the compiler tests' scripts; crashers land in $(FUZZ_DIR)/ as
# crash-*, leak-*, timeout-*.  Keep each one as a regression test in
# tests/compiler/crashers/.
FUZZ_CC      ?= clang-14
FUZZ_SECONDS ?= 60
FUZZ_JOBS    ?= 1
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_BIN     := $(FUZZ_DIR)/fuzz_compiler
FUZZ_FLAGS   := -std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer \
	-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -I. -I$(GEN_DIR) -MMD -MP
FUZZ_OBJ     := $(patsubst %.c,$(FUZZ_DIR)/%.o,$(wildcard base/*.c kernel/*.c compiler/*.c probes/*.c) tests/fuzz/fuzz_compiler.c) \
	$(FUZZ_DIR)/gen/parser.o $(FUZZ_DIR)/gen/lexer.o

$(FUZZ_DIR)/%.o: %.c $(GEN_DIR)/parser.h $(GEN_DIR)/lexer.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -Wall -Wextra -Werror -c -o $@ $<

$(FUZZ_DIR)/gen/%.o: $(GEN_DIR)/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -Icompiler -w -c -o $@ $<

$(FUZZ_BIN): $(FUZZ_OBJ)
	$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -o $@ $^ -lbpf -lelf -lz

-include $(FUZZ_OBJ:.o=.d)

.PHONY: fuzz fuzz-build
fuzz-build: $(FUZZ_BIN)

# Runs in a scratch directory so that imports in random input find nothing.
fuzz: $(FUZZ_BIN)
	@mkdir -p $(FUZZ_DIR)/corpus $(FUZZ_DIR)/run
	cd $(FUZZ_DIR)/run && UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  $(abspath $(FUZZ_BIN)) -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=4096 \
	  -max_len=4096 -jobs=$(FUZZ_JOBS) -workers=$(FUZZ_JOBS) \
	  -dict=$(abspath tests/fuzz/ut.dict) -artifact_prefix=$(abspath $(FUZZ_DIR))/ \
	  $(abspath $(FUZZ_DIR)/corpus) $(abspath tests/compiler/golden) $(abspath tests/compiler/errors) \
	  $(abspath tests/compiler/crashers)
