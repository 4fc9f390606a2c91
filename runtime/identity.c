#include "runtime/identity.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"

/* A user or group id written as sudo and pkexec write them: digits only,
 * in range.  atoi() would take "abc" for 0, root. */
static bool parse_id(const char *s, unsigned long *out)
{
	if (!s || !*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 10)
		return false;
	errno = 0;
	unsigned long v = strtoul(s, NULL, 10);
	if (errno || v >= (unsigned long)(uid_t)-1)
		return false;
	*out = v;
	return true;
}

/* Takes pw's user with primary group gid, and its groups as initgroups()
 * would set them. */
static void take_user(struct ut_identity *id, const struct passwd *pw, gid_t gid)
{
	id->change = true;
	id->uid = pw->pw_uid;
	id->gid = gid;
	id->name = xstrdup(pw->pw_name);
	id->home = xstrdup(pw->pw_dir);
	int n = 16;
	for (;;) {
		id->groups = xrealloc_array(id->groups, (size_t)n, sizeof(*id->groups));
		int got = n;
		if (getgrouplist(pw->pw_name, gid, id->groups, &got) >= 0) {
			id->ngroups = got;
			return;
		}
		n = got > n ? got : n * 2;
	}
}

#define REFUSED "; the command is not run: say who runs it with --run-as USER (--run-as root to run it as root)"

/* The user who started uring-trace through sudo: SUDO_UID and SUDO_GID,
 * which must name a user (and SUDO_USER, when set, the same one). */
static int sudo_user(struct ut_identity *id, const char *su, char *why, size_t len)
{
	const char *sg = getenv("SUDO_GID"), *name = getenv("SUDO_USER");
	unsigned long uid, gid;
	if (!parse_id(su, &uid)) {
		snprintf(why, len, "SUDO_UID='%s' is not a user id" REFUSED, su);
		return -1;
	}
	if (!parse_id(sg, &gid)) {
		snprintf(why, len, "SUDO_GID='%s' is not a group id (sudo sets it with SUDO_UID)" REFUSED, sg ? sg : "");
		return -1;
	}
	struct passwd *pw = getpwuid((uid_t)uid);
	if (!pw) {
		snprintf(why, len, "SUDO_UID=%s names no user" REFUSED, su);
		return -1;
	}
	if (name) {
		/* several names may share a uid: SUDO_USER says which one's groups */
		uid_t pw_uid = pw->pw_uid;
		pw = getpwnam(name);
		if (!pw || pw->pw_uid != pw_uid) {
			snprintf(why, len, "SUDO_USER='%s' is not the user of SUDO_UID=%s" REFUSED, name, su);
			return -1;
		}
	}
	take_user(id, pw, (gid_t)gid);
	return 0;
}

/* The user who started uring-trace through pkexec: PKEXEC_UID. */
static int pkexec_user(struct ut_identity *id, const char *pu, char *why, size_t len)
{
	unsigned long uid;
	if (!parse_id(pu, &uid)) {
		snprintf(why, len, "PKEXEC_UID='%s' is not a user id" REFUSED, pu);
		return -1;
	}
	struct passwd *pw = getpwuid((uid_t)uid);
	if (!pw) {
		snprintf(why, len, "PKEXEC_UID=%s names no user" REFUSED, pu);
		return -1;
	}
	take_user(id, pw, pw->pw_gid);
	return 0;
}

int ut_identity_resolve(const char *run_as, struct ut_identity *id, char *why, size_t len)
{
	*id = (struct ut_identity){0};
	bool root = geteuid() == 0;
	if (run_as) {
		unsigned long uid;
		struct passwd *pw = getpwnam(run_as);
		if (!pw && parse_id(run_as, &uid))
			pw = getpwuid((uid_t)uid);
		if (!pw) {
			snprintf(why, len, "--run-as %s: no such user", run_as);
			return -1;
		}
		if (!root && pw->pw_uid == getuid())
			return 0;   /* already that user */
		if (!root) {
			snprintf(why, len, "--run-as %s: only root can run the command as another user", run_as);
			return -1;
		}
		take_user(id, pw, pw->pw_gid);
		return 0;
	}
	if (!root)
		return 0;   /* the command runs as we do: the user's own identity */
	const char *su = getenv("SUDO_UID"), *pu = getenv("PKEXEC_UID");
	if (su)
		return sudo_user(id, su, why, len);
	if (pu)
		return pkexec_user(id, pu, why, len);
	return 0;   /* root started it: the command runs as root */
}

int ut_identity_become(const struct ut_identity *id)
{
	if (!id->change)
		return 0;
	if (setgroups((size_t)id->ngroups, id->groups) != 0 || setresgid(id->gid, id->gid, id->gid) != 0 ||
	    setresuid(id->uid, id->uid, id->uid) != 0)
		return -1;
	/* a drop that could be undone is no drop */
	if (id->uid != 0 && (setuid(0) == 0 || getuid() != id->uid || geteuid() != id->uid || getegid() != id->gid)) {
		errno = EPERM;
		return -1;
	}
	if (setenv("HOME", id->home, 1) != 0 || setenv("USER", id->name, 1) != 0 || setenv("LOGNAME", id->name, 1) != 0)
		return -1;
	return 0;
}

void ut_identity_free(struct ut_identity *id)
{
	free(id->groups);
	free(id->name);
	free(id->home);
	*id = (struct ut_identity){0};
}
