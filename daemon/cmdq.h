/*
 * A mutex-protected command list plus an eventfd: the only channel between
 * the control and progress threads. Rare (attach, detach, stop), never on
 * the per-descriptor path; the progress thread only looks at an atomic
 * "pending" word when the queue is empty.
 */
#ifndef HOISTD_CMDQ_H
#define HOISTD_CMDQ_H

#include <pthread.h>
#include <stdint.h>

enum cmd_type {
	CMD_CLIENT_ADD,
	CMD_JOB_READY,
	CMD_ANNOUNCE,
	CMD_CLIENT_GONE,
	CMD_CLIENT_FREE,
	CMD_MEMBER,
	CMD_STOP,
};

struct cmd {
	enum cmd_type type;
	void *obj; /* struct job *, struct client * or struct announce * */
	struct cmd *next;
};

struct cmdq {
	pthread_mutex_t lock;
	struct cmd *head, *tail;
	uint32_t pending; /* relaxed hint: the list is not empty */
	int efd;          /* eventfd, written on every push */
};

int cmdq_init(struct cmdq *q);
void cmdq_destroy(struct cmdq *q);
int cmdq_push(struct cmdq *q, enum cmd_type type, void *obj); /* 0 or -ENOMEM */
struct cmd *cmdq_take_all(struct cmdq *q); /* caller frees each cmd */
static inline int cmdq_pending(struct cmdq *q)
{
	return __atomic_load_n(&q->pending, __ATOMIC_ACQUIRE) != 0;
}

#endif
