#include "runtime/bpfcc_loader.h"
#include "runtime/cache.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/trust.h"

#ifndef UT_LIBDIR
#define UT_LIBDIR "/usr/local/lib/uring-trace"
#endif

#define BPFCC_NAME "libut-bpfcc.so"

static struct ut_bpfcc bpfcc;
static bool bpfcc_loaded;

/* Candidate paths of the wrapper, most specific first: next to the
 * executable, or one up (the build's tests, in build/tests/). */
#define CANDIDATES 4
static int bpfcc_candidates(char paths[CANDIDATES][PATH_MAX])
{
	int n = 0;
	const char *env = getenv("UT_BPFCC_LIB");
	if (env && *env)
		snprintf(paths[n++], PATH_MAX, "%s", env);
	char exe_dir[PATH_MAX - sizeof(BPFCC_NAME) - 4];
	if (ut_exe_dir(exe_dir, sizeof(exe_dir)) == 0) {
		snprintf(paths[n++], PATH_MAX, "%s/" BPFCC_NAME, exe_dir);
		snprintf(paths[n++], PATH_MAX, "%s/../" BPFCC_NAME, exe_dir);
	}
	snprintf(paths[n++], PATH_MAX, "%s/" BPFCC_NAME, UT_LIBDIR);
	return n;
}

const struct ut_bpfcc *ut_bpfcc_get(char *err, size_t errlen)
{
	if (bpfcc_loaded)
		return &bpfcc;
	char paths[CANDIDATES][PATH_MAX];
	int n = bpfcc_candidates(paths);
	char looked[CANDIDATES * (PATH_MAX + 2)] = "";
	for (int i = 0; i < n; i++) {
		if (access(paths[i], F_OK) != 0) {
			if (i)
				strcat(looked, ", ");
			strcat(looked, paths[i]);
			continue;
		}
		char why[PATH_MAX + 64];
		if (!ut_trusted_file(paths[i], why, sizeof(why))) {
			snprintf(err, errlen,
				 "cannot compile scripts: refusing to load %s: %s (as root, uring-trace loads code only "
				 "from files that root alone can change)", paths[i], why);
			return NULL;
		}
		void *lib = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
		if (!lib) {
			snprintf(err, errlen,
				 "cannot compile scripts: cannot load %s (%s); run a precompiled .uto "
				 "or install clang libraries",
				 paths[i], dlerror());
			return NULL;
		}
		bpfcc.compile = (ut_bpfcc_compile_fn *)dlsym(lib, "ut_bpfcc_compile");
		bpfcc.make_pch = (ut_bpfcc_make_pch_fn *)dlsym(lib, "ut_bpfcc_make_pch");
		bpfcc.version = (ut_bpfcc_version_fn *)dlsym(lib, "ut_bpfcc_version");
		if (!bpfcc.compile || !bpfcc.make_pch || !bpfcc.version) {
			snprintf(err, errlen, "cannot compile scripts: %s lacks the ut_bpfcc_* entry points",
				 paths[i]);
			dlclose(lib);
			return NULL;
		}
		bpfcc_loaded = true;
		return &bpfcc;
	}
	snprintf(err, errlen,
		 "cannot compile scripts: " BPFCC_NAME " not found (%s); run a precompiled .uto or "
		 "install clang libraries",
		 looked);
	return NULL;
}
