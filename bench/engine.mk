# Engine + FXT writer throughput (make bench-engine): optimised, never
# sanitized, built from the engine sources alone.
ENGINE_BENCH := $(BUILD)/bench/engine_bench

$(ENGINE_BENCH): bench/engine_bench.c $(wildcard engine/*.c engine/*.h fxt/*.c fxt/*.h base/*.c base/*.h)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -g -I. -o $@ bench/engine_bench.c $(wildcard engine/*.c fxt/*.c base/*.c) -lz -lm

.PHONY: bench-engine
bench-engine: $(ENGINE_BENCH)
	$(ENGINE_BENCH)
