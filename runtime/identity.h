/* Who -c's command runs as.  uring-trace runs as root (it loads BPF), but
 * the command it starts is the user's program: started through sudo or
 * pkexec, it runs as the user who asked, with exactly that user's
 * identity (uid, primary gid, supplementary groups) and not root's.
 * docs/runtime.md, "Privileges". */
#ifndef UT_IDENTITY_H
#define UT_IDENTITY_H
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct ut_identity {
	bool change;      /* become this user in the child (else run as uring-trace runs) */
	uid_t uid;
	gid_t gid;
	gid_t *groups;    /* supplementary groups, as initgroups() would set them */
	int ngroups;
	char *name, *home;
};

/* Decides who the command runs as: run_as (--run-as USER, a name or a
 * uid; NULL when not given), else the user who started uring-trace
 * through sudo (SUDO_UID, SUDO_GID, SUDO_USER) or pkexec (PKEXEC_UID),
 * else uring-trace's own user.  0, or -1 with why (malformed variables,
 * no such user, --run-as without the right to change users): the command
 * must then not run. */
int ut_identity_resolve(const char *run_as, struct ut_identity *id, char *why, size_t len);

/* In the child, before exec: drops to id (groups, gid, uid, in that order,
 * checked after) and sets HOME, USER and LOGNAME to the user's.  0, or -1
 * with errno. */
int ut_identity_become(const struct ut_identity *id);

void ut_identity_free(struct ut_identity *id);

#endif
