/* A program with USDT probes (<sys/sdt.h>), for the usdt probe kind's
 * tests: see README.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sdt.h>
#include <time.h>

/* A function whose address a probe passes (usym() names it). */
__attribute__((noinline)) static int usdt_callback(int x)
{
	return x + 1;
}

int main(int argc, char **argv)
{
	long n = 10, delay_ms = 0;
	const char *path = "/nowhere";
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			continue;
		if (strcmp(argv[i], "--path") == 0 && i + 1 < argc)
			path = argv[++i];
		else if (strcmp(argv[i], "--delay-ms") == 0 && i + 1 < argc)
			delay_ms = atol(argv[++i]);
		else
			n = atol(argv[i]);
	}
	if (n < 0 || n > 1000000 || delay_ms < 0 || delay_ms > 10000) {
		fprintf(stderr, "usdt_probes: N is 0 to 1000000, --delay-ms 0 to 10000\n");
		return 2;
	}
	struct timespec delay = {delay_ms / 1000, delay_ms % 1000 * 1000000};
	nanosleep(&delay, NULL);
	for (long i = 0; i < n; i++) {
		int size = (int)(i * 100);
		DTRACE_PROBE3(ut_test, request, i, size, path);
	}
	int (*callback)(int) = usdt_callback;
	DTRACE_PROBE1(ut_test, callback, callback);
	DTRACE_PROBE1(ut_test, done, callback((int)n) - 1);
	DTRACE_PROBE1(other, done, -n);
	printf("{\"ok\": true, \"requests\": %ld, \"path\": \"%s\"}\n", n, path);
	return 0;
}
