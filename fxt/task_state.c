/* What a Linux task state means for a thread switched out (fxt/fxt.h):
 * the engine draws it so, and readers of its traces read it so. */
#include "fxt/fxt.h"

enum ut_sched_state ut_sched_state_of(uint32_t linux_state)
{
	uint32_t s = linux_state;
	if (s & (UT_TASK_DEAD | UT_EXIT_DEAD))
		return UT_SCHED_DEAD;
	if (s & UT_EXIT_ZOMBIE)
		return UT_SCHED_DYING;
	/* TASK_IDLE (UNINTERRUPTIBLE | NOLOAD) is how idle kernel threads
	 * wait: Linux does not count it as D (not in the load average) */
	if ((s & UT_TASK_RTLOCK_WAIT) || ((s & UT_TASK_UNINTERRUPTIBLE) && !(s & UT_TASK_NOLOAD)))
		return UT_SCHED_UNINTERRUPTIBLE;
	if (s & (UT_TASK_STOPPED | UT_TASK_TRACED))
		return UT_SCHED_STOPPED;
	if (s == UT_TASK_RUNNING)
		return UT_SCHED_RUNNABLE;
	return UT_SCHED_SLEEPING; /* interruptible, idle, parked, frozen */
}
