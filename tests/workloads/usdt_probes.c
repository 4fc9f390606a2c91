/* A program with USDT probes (<sys/sdt.h>), for the usdt probe kind's
 * tests: see README.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sdt.h>

int main(int argc, char **argv)
{
	long n = 10;
	const char *path = "/nowhere";
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			continue;
		if (strcmp(argv[i], "--path") == 0 && i + 1 < argc)
			path = argv[++i];
		else
			n = atol(argv[i]);
	}
	if (n < 0 || n > 1000000) {
		fprintf(stderr, "usdt_probes: N is 0 to 1000000\n");
		return 2;
	}
	for (long i = 0; i < n; i++) {
		int size = (int)(i * 100);
		DTRACE_PROBE3(ut_test, request, i, size, path);
	}
	DTRACE_PROBE1(ut_test, done, n);
	DTRACE_PROBE1(other, done, -n);
	printf("{\"ok\": true, \"requests\": %ld, \"path\": \"%s\"}\n", n, path);
	return 0;
}
