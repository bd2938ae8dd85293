/* Job lifecycle and membership (jobs.c): the control thread's commands
 * acted on by the progress thread; progress_job_find() is in daemon.h. */
#ifndef HOISTD_JOBS_H
#define HOISTD_JOBS_H

struct daemon;

/* Act on every queued command. 1 when one was CMD_STOP. */
int handle_commands(struct daemon *d);

#endif
