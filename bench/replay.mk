# The reader's work on captured records, replayed (bench/replay_bench.c).
# Built with the build's flags: optimised in build/ (make it there to time
# it), sanitized in the test build, where tests/e2e/test_capture.sh runs it.
REPLAY_BENCH := $(BUILD)/bench/replay_bench

$(REPLAY_BENCH): bench/replay_bench.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ bench/replay_bench.c $(LIB) $(LDFLAGS) $(LDLIBS)

test-build: $(REPLAY_BENCH)
