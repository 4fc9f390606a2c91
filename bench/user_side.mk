# The reader's cost of a probe's user side per hit (make bench-user-side):
# optimised; links the runtime library of the build (make it without SAN).
USER_SIDE_BENCH := $(BUILD)/bench/user_side_bench

$(USER_SIDE_BENCH): bench/user_side_bench.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -g -I. -o $@ bench/user_side_bench.c $(LIB) $(LDLIBS)

.PHONY: bench-user-side
bench-user-side: $(USER_SIDE_BENCH)
	$(USER_SIDE_BENCH)
