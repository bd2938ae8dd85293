/*
 * Job lifecycle and membership on the progress thread: the commands the
 * control thread sends (cmdq.c) are acted on here. A client joins the
 * served set (CMD_CLIENT_ADD) and leaves it (CMD_CLIENT_GONE: what it
 * posted still runs, then its state goes back to the control thread); a
 * job's node map becomes final (CMD_JOB_READY) and remote operations may
 * go; this node's ranks are announced to the other daemons
 * (CMD_ANNOUNCE, am.c), and theirs (W_MEMBER, the handler this file
 * registers) are checked and handed to the control thread. A descriptor
 * starts its way only after its client was added here: next, the engine
 * (engine.c) drains its ring.
 */
#include "jobs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "am.h"
#include "coll.h"
#include "daemon.h"
#include "engine.h"
#include "log.h"
#include "multi.h"
#include "overlap.h"

static void client_retire(struct daemon *d, struct client *c)
{
	struct job *j = c->job;
	struct client **pp = &d->active;
	while (*pp && *pp != c)
		pp = &(*pp)->prog_next;
	if (*pp)
		*pp = c->prog_next;
	if (c->multi) { /* its descriptor will not resume */
		struct xp_multi *m = c->multi;
		c->multi = NULL;
		m->issuing = 0;
		if (!m->pending)
			multi_free(m);
	}
	if (c->agg_held && d->xport->pack_release)
		d->xport->pack_release(d);
	d->xport->orphan(d, c);
	xp_amo_orphan(d, c);
	overlap_destroy(c);
	reg_unpin(d, c);
	barrier_depart(d, j, c, c->clean_detach);
	if (--j->local == 0) { /* the job has no client here any more */
		struct job **jp = &d->pjobs;
		while (*jp && *jp != j)
			jp = &(*jp)->prog_next;
		if (*jp)
			*jp = j->prog_next;
		coll_job_free(j);
	}
	if (cmdq_push(&d->to_control, CMD_CLIENT_FREE, c))
		hlog_err("out of memory handing client %llu back; leaking it",
			 (unsigned long long)c->id);
}

static void client_add(struct daemon *d, struct client *c)
{
	struct job *j = c->job;
	if (j->local++ == 0) {
		j->prog_next = d->pjobs;
		d->pjobs = j;
	}
	j->pe[c->rank] = c;
	if (!c->blocking && overlap_create(d, c))
		hlog_warn("job %s rank %d: no memory for automatic overlap; running without it",
			  j->key, c->rank);
	if (reg_pin(d, c))
		hlog_warn("pinned table full: job %s rank %d is reachable by name only", j->key,
			  c->rank);
	c->prog_next = d->active;
	d->active = c;
	d->cpu_unpublished = 1; /* its prog_cpu is 0 until published */
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

/* Every rank's node is known: derive the job's node list. */
static void job_ready(struct daemon *d, struct job *j)
{
	int32_t n = 0, *nodes = malloc((size_t)j->size * sizeof(*nodes));
	if (!nodes) {
		job_fail(j, -ENOMEM);
		return;
	}
	j->nlocal = 0;
	for (int32_t r = 0; r < j->size; r++) {
		if (j->node_of[r] == d->net.self)
			j->nlocal++;
		nodes[n++] = j->node_of[r];
	}
	qsort(nodes, (size_t)n, sizeof(*nodes), cmp_i32);
	int32_t u = 0;
	for (int32_t i = 0; i < n; i++)
		if (i == 0 || nodes[i] != nodes[u - 1])
			nodes[u++] = nodes[i];
	j->nodes = nodes;
	j->nnodes = u;
	for (int32_t i = 0; i < u; i++)
		if (nodes[i] == d->net.self)
			j->my_idx = i;
	j->prog_ready = 1;
	job_gone_early_apply(d, j);
}

static void announce(struct daemon *d, struct announce *a)
{
	for (int32_t node = 0; node < d->net.nnodes; node++) {
		if (node == d->net.self || (a->to_node >= 0 && a->to_node != node))
			continue;
		am_send_member(d, node, a); /* unreachable now: it will ask us */
	}
}

int handle_commands(struct daemon *d)
{
	int stop = 0;
	struct cmd *cmd = cmdq_take_all(&d->to_progress);
	while (cmd) {
		struct cmd *next = cmd->next;
		STAT_INC(&d->pst, commands);
		switch (cmd->type) {
		case CMD_CLIENT_ADD:
			client_add(d, cmd->obj);
			break;
		case CMD_JOB_READY:
			job_ready(d, cmd->obj);
			break;
		case CMD_ANNOUNCE:
			announce(d, cmd->obj);
			free(cmd->obj);
			break;
		case CMD_CLIENT_GONE: {
			struct client *c = cmd->obj;
			drain(d, c); /* what it posted before dying still runs */
			client_retire(d, c);
			break;
		}
		case CMD_STOP:
			stop = 1;
			break;
		case CMD_CLIENT_FREE:
		case CMD_MEMBER:
			break;
		}
		free(cmd);
		cmd = next;
	}
	return stop;
}

/* W_MEMBER: another node's ranks of a job (its CMD_ANNOUNCE), checked
 * and handed to the control thread (attach_member). */
static int member_am_ok(const void *ext, uint64_t plen)
{
	struct wire_member m;
	memcpy(&m, ext, sizeof(m));
	return m.keylen > 0 && m.keylen <= 255 && m.size >= 1 && m.size <= (1 << 20) &&
	       m.nranks <= (uint32_t)m.size &&
	       plen == m.keylen + (uint64_t)m.nranks * sizeof(struct wire_rank);
}

static int member_am_recv(struct daemon *d, int32_t from, const void *ext, const void *payload,
			  uint64_t plen)
{
	(void)plen;
	struct wire_member m;
	memcpy(&m, ext, sizeof(m));
	struct announce *a = calloc(1, sizeof(*a) + m.nranks * sizeof(struct wire_rank));
	if (!a)
		return -ENOMEM;
	memcpy(a->key, payload, m.keylen);
	a->key[m.keylen] = 0;
	memcpy(a->ranks, (const char *)payload + m.keylen, m.nranks * sizeof(struct wire_rank));
	a->from_node = from;
	a->to_node = d->net.self;
	a->job = m.job;
	a->size = m.size;
	a->uid = m.uid;
	a->heap_bytes = m.heap_bytes;
	a->nranks = m.nranks;
	a->flags = m.flags;
	/* the key must contain no NUL, and (uid, key) be what the id says */
	if (strlen(a->key) != m.keylen || cluster_job_id(&d->net, m.uid, a->key) != m.job ||
	    cmdq_push(&d->to_control, CMD_MEMBER, a)) {
		free(a);
		return -EPROTO;
	}
	return 0;
}

static const struct am_handler member_am = {.name = "member",
					    .hlen = sizeof(struct wire_member),
					    .payload_ok = member_am_ok,
					    .recv = member_am_recv};

void jobs_am_register(void)
{
	am_register(W_MEMBER, &member_am);
}
