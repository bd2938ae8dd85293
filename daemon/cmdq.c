#include "cmdq.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

int cmdq_init(struct cmdq *q)
{
	q->head = q->tail = NULL;
	q->pending = 0;
	q->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (q->efd < 0)
		return -errno;
	pthread_mutex_init(&q->lock, NULL);
	return 0;
}

void cmdq_destroy(struct cmdq *q)
{
	struct cmd *c = cmdq_take_all(q);
	while (c) {
		struct cmd *n = c->next;
		free(c);
		c = n;
	}
	if (q->efd >= 0)
		close(q->efd);
	q->efd = -1;
	pthread_mutex_destroy(&q->lock);
}

int cmdq_push(struct cmdq *q, enum cmd_type type, void *obj)
{
	struct cmd *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->type = type;
	c->obj = obj;
	pthread_mutex_lock(&q->lock);
	if (q->tail)
		q->tail->next = c;
	else
		q->head = c;
	q->tail = c;
	/* pairs with the acquire in cmdq_pending() */
	__atomic_store_n(&q->pending, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&q->lock);
	uint64_t one = 1;
	ssize_t w = write(q->efd, &one, sizeof(one));
	(void)w; /* EAGAIN only if the counter is saturated: already signalled */
	return 0;
}

struct cmd *cmdq_take_all(struct cmdq *q)
{
	uint64_t v;
	ssize_t r = read(q->efd, &v, sizeof(v));
	(void)r;
	pthread_mutex_lock(&q->lock);
	struct cmd *c = q->head;
	q->head = q->tail = NULL;
	__atomic_store_n(&q->pending, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&q->lock);
	return c;
}
