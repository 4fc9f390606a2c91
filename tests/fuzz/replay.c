/* Runs a fuzz target's LLVMFuzzerTestOneInput over files without libFuzzer:
 * make test replays the kept corpora and crashers (tests/fuzz/test_replay.sh)
 * with the sanitized build.  Arguments are files, or directories whose
 * files run in name order.  Each input's name goes to stderr before it
 * runs, so that a crash names its input.  Exits 0 when every input ran. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return 1;
	}
	uint8_t *data = NULL;
	size_t size = 0, cap = 0, n;
	do {
		if (size == cap) {
			cap = cap ? cap * 2 : 4096;
			data = realloc(data, cap);
			if (!data)
				abort();
		}
		n = fread(data + size, 1, cap - size, f);
		size += n;
	} while (n);
	fclose(f);
	fprintf(stderr, "input %s\n", path);
	LLVMFuzzerTestOneInput(data, size);
	free(data);
	return 0;
}

static int name_order(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
	LLVMFuzzerInitialize(&argc, &argv);
	int rc = 0;
	unsigned inputs = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			perror(argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			rc |= run_file(argv[i]);
			inputs++;
			continue;
		}
		struct dirent **names;
		int n = scandir(argv[i], &names, NULL, name_order);
		if (n < 0) {
			perror(argv[i]);
			return 1;
		}
		for (int k = 0; k < n; k++) {
			char path[4096];
			snprintf(path, sizeof(path), "%s/%s", argv[i], names[k]->d_name);
			if (names[k]->d_name[0] != '.' && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
				rc |= run_file(path);
				inputs++;
			}
			free(names[k]);
		}
		free(names);
	}
	fprintf(stderr, "%u inputs ran\n", inputs);
	return rc;
}
