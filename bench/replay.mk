# The reader's work on captured records, replayed (bench/replay_bench.c):
# optimised; links the runtime library of the build (make it without SAN).
REPLAY_BENCH := $(BUILD)/bench/replay_bench

$(REPLAY_BENCH): bench/replay_bench.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -g -I. -o $@ bench/replay_bench.c $(LIB) $(LDLIBS)
