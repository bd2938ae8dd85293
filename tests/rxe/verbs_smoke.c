/* verbs_smoke.c -- hoist's Soft-RoCE smoke test: librdmacm + libibverbs.
 *
 *   server:  verbs_smoke -s ADDR [-p PORT] [-d DEV] [-n BYTES] [-t SECS]
 *   client:  verbs_smoke -c ADDR [-b SRC] [-p PORT] [-d DEV] [-n BYTES] [-t SECS]
 *
 * The server listens on ADDR:PORT, registers a buffer (default 1 MiB,
 * REMOTE_READ|REMOTE_WRITE), fills it with pattern A and hands {addr, rkey,
 * len} to the client in the accept's private data.
 *
 * The client resolves ADDR (bound to SRC when given, which picks the local
 * RDMA device) with 2000 ms address/route timeouts, connects, and retries
 * while the server is not listening yet (RDMA_CM_EVENT_REJECTED) or the
 * attempt fails otherwise, until the deadline.  Then:
 *   RDMA READ  the whole buffer, check pattern A;
 *   RDMA WRITE pattern B, RDMA READ it back into a zeroed buffer, check B;
 *   SEND "done" (with B's seed) -> the server checks its buffer holds B and
 *   SENDs back its verdict; the client RECVs it and disconnects.
 * -d DEV makes either side fail unless its connection uses RDMA device DEV.
 * Every wait is bounded by -t SECS (default 120) in total.  Exit 0 = all
 * checks passed, 1 = failure, 2 = usage.
 *
 * Written for hoist's tests/rxe harness (run it with tests/rxe/smoke.sh).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define RESOLVE_TIMEOUT_MS 2000 /* rxe under TCG: never below 2000 ms */
#define MSG_MAGIC 0x484f5354u   /* "HOST" */

enum { WR_READ = 1, WR_WRITE, WR_READ_BACK, WR_SEND, WR_RECV, WR_MAX };

struct remote_buf { /* accept private data, big-endian */
    uint64_t addr;
    uint32_t rkey;
    uint32_t len;
} __attribute__((packed));

struct msg {
    uint32_t magic;
    uint32_t seed;   /* client -> server: pattern it wrote */
    uint32_t status; /* server -> client: 0 = buffer verified */
    uint32_t pad;
};

struct conn {
    struct rdma_cm_id *id;
    struct ibv_pd *pd;
    struct ibv_comp_channel *cch;
    struct ibv_cq *cq;
    struct ibv_mr *mr, *msg_mr;
    bool done[WR_MAX];
};

static const char *role = "verbs_smoke";
static double t_start, t_deadline;
static uint8_t *buf;
static size_t buf_len = 1u << 20;
static struct msg msgs[2]; /* [0] = tx, [1] = rx */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("%s [%6.2fs]: ", role, now() - t_start);
    vprintf(fmt, ap);
    putchar('\n');
    fflush(stdout);
    va_end(ap);
}

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s [%6.2fs]: FAIL: ", role, now() - t_start);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

/* milliseconds left until the deadline (>= 0) */
static int ms_left(void)
{
    double left = t_deadline - now();
    return left <= 0 ? 0 : (int)(left * 1000) + 1;
}

static void wait_fd(int fd, const char *what)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };
    for (;;) {
        int ms = ms_left();
        if (ms == 0)
            die("timed out waiting for %s", what);
        int r = poll(&p, 1, ms);
        if (r > 0)
            return;
        if (r < 0 && errno != EINTR)
            die("poll: %s", strerror(errno));
    }
}

static void set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
        die("fcntl O_NONBLOCK: %s", strerror(errno));
}

/* Next rdma_cm event (the caller acks it). */
static struct rdma_cm_event *next_event(struct rdma_event_channel *ch, const char *what)
{
    struct rdma_cm_event *ev;
    for (;;) {
        if (rdma_get_cm_event(ch, &ev) == 0)
            return ev;
        if (errno != EAGAIN && errno != EINTR)
            die("rdma_get_cm_event: %s", strerror(errno));
        wait_fd(ch->fd, what);
    }
}

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(i * 131u + seed + (i >> 10));
}

/* index of the first mismatch, or n */
static size_t check(const uint8_t *p, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (uint8_t)(i * 131u + seed + (i >> 10)))
            return i;
    return n;
}

static void conn_setup(struct conn *c, int access)
{
    struct rdma_cm_id *id = c->id;
    const char *dev = ibv_get_device_name(id->verbs->device);
    if (!(c->pd = ibv_alloc_pd(id->verbs)))
        die("ibv_alloc_pd on %s: %s", dev, strerror(errno));
    if (!(c->cch = ibv_create_comp_channel(id->verbs)))
        die("ibv_create_comp_channel: %s", strerror(errno));
    set_nonblock(c->cch->fd);
    if (!(c->cq = ibv_create_cq(id->verbs, 16, NULL, c->cch, 0)))
        die("ibv_create_cq: %s", strerror(errno));
    if (ibv_req_notify_cq(c->cq, 0))
        die("ibv_req_notify_cq: %s", strerror(errno));
    struct ibv_qp_init_attr qa = {
        .send_cq = c->cq,
        .recv_cq = c->cq,
        .cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
        .qp_type = IBV_QPT_RC,
    };
    if (rdma_create_qp(id, c->pd, &qa))
        die("rdma_create_qp: %s", strerror(errno));
    if (!(c->mr = ibv_reg_mr(c->pd, buf, buf_len, access)))
        die("ibv_reg_mr(%zu bytes): %s", buf_len, strerror(errno));
    if (!(c->msg_mr = ibv_reg_mr(c->pd, msgs, sizeof msgs, IBV_ACCESS_LOCAL_WRITE)))
        die("ibv_reg_mr(msgs): %s", strerror(errno));
    memset(c->done, 0, sizeof c->done);
}

static void conn_teardown(struct conn *c)
{
    if (c->id && c->id->qp)
        rdma_destroy_qp(c->id);
    if (c->msg_mr)
        ibv_dereg_mr(c->msg_mr);
    if (c->mr)
        ibv_dereg_mr(c->mr);
    if (c->cq)
        ibv_destroy_cq(c->cq);
    if (c->cch)
        ibv_destroy_comp_channel(c->cch);
    if (c->pd)
        ibv_dealloc_pd(c->pd);
    if (c->id)
        rdma_destroy_id(c->id);
    memset(c, 0, sizeof *c);
}

static void post_recv(struct conn *c)
{
    struct ibv_sge sge = { (uintptr_t)&msgs[1], sizeof msgs[1], c->msg_mr->lkey };
    struct ibv_recv_wr wr = { .wr_id = WR_RECV, .sg_list = &sge, .num_sge = 1 }, *bad;
    if (ibv_post_recv(c->id->qp, &wr, &bad))
        die("ibv_post_recv: %s", strerror(errno));
}

static void post_send(struct conn *c, uint64_t wr_id, enum ibv_wr_opcode op, void *addr, uint32_t len,
                      uint32_t lkey, uint64_t raddr, uint32_t rkey)
{
    struct ibv_sge sge = { (uintptr_t)addr, len, lkey };
    struct ibv_send_wr wr = {
        .wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op, .send_flags = IBV_SEND_SIGNALED,
    }, *bad;
    wr.wr.rdma.remote_addr = raddr;
    wr.wr.rdma.rkey = rkey;
    if ((errno = ibv_post_send(c->id->qp, &wr, &bad)))
        die("ibv_post_send(wr %llu): %s", (unsigned long long)wr_id, strerror(errno));
}

/* Wait until the work request wr_id has completed successfully. */
static void wait_wr(struct conn *c, uint64_t wr_id, const char *what)
{
    while (!c->done[wr_id]) {
        struct ibv_wc wc;
        int n = ibv_poll_cq(c->cq, 1, &wc);
        if (n < 0)
            die("ibv_poll_cq failed");
        if (n == 1) {
            if (wc.status != IBV_WC_SUCCESS)
                die("work request %llu: %s (vendor err 0x%x)", (unsigned long long)wc.wr_id,
                    ibv_wc_status_str(wc.status), wc.vendor_err);
            if (wc.wr_id >= WR_MAX)
                die("unexpected wr_id %llu", (unsigned long long)wc.wr_id);
            c->done[wc.wr_id] = true;
            continue;
        }
        /* CQ empty: sleep on the completion channel (re-armed, re-polled) */
        struct ibv_cq *ev_cq;
        void *ev_ctx;
        while (ibv_get_cq_event(c->cch, &ev_cq, &ev_ctx)) {
            if (errno != EAGAIN && errno != EINTR)
                die("ibv_get_cq_event: %s", strerror(errno));
            wait_fd(c->cch->fd, what);
        }
        ibv_ack_cq_events(ev_cq, 1);
        if (ibv_req_notify_cq(c->cq, 0))
            die("ibv_req_notify_cq: %s", strerror(errno));
    }
}

static void check_device(struct conn *c, const char *want)
{
    const char *dev = ibv_get_device_name(c->id->verbs->device);
    if (want && strcmp(dev, want))
        die("connection is on device %s, expected %s", dev, want);
}

static void to_sockaddr(const char *host, const char *port, struct sockaddr_storage *ss)
{
    struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV }, *ai;
    int r = getaddrinfo(host, port, &hints, &ai);
    if (r)
        die("bad address %s port %s: %s", host, port ? port : "-", gai_strerror(r));
    memcpy(ss, ai->ai_addr, ai->ai_addrlen);
    freeaddrinfo(ai);
}

static int run_server(const char *addr, const char *port, const char *want_dev)
{
    struct rdma_event_channel *ch = rdma_create_event_channel();
    if (!ch)
        die("rdma_create_event_channel: %s", strerror(errno));
    set_nonblock(ch->fd);
    struct rdma_cm_id *listen_id;
    if (rdma_create_id(ch, &listen_id, NULL, RDMA_PS_TCP))
        die("rdma_create_id: %s", strerror(errno));
    struct sockaddr_storage sa;
    to_sockaddr(addr, port, &sa);
    if (rdma_bind_addr(listen_id, (struct sockaddr *)&sa))
        die("rdma_bind_addr %s: %s", addr, strerror(errno));
    if (rdma_listen(listen_id, 4))
        die("rdma_listen: %s", strerror(errno));
    say("listening on %s:%s", addr, port);

    struct conn c = { 0 };
    struct rdma_cm_event *ev = next_event(ch, "a connect request");
    if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST)
        die("expected CONNECT_REQUEST, got %s", rdma_event_str(ev->event));
    c.id = ev->id;
    rdma_ack_cm_event(ev);
    check_device(&c, want_dev);
    conn_setup(&c, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
    fill(buf, buf_len, 0xA5);
    post_recv(&c);
    struct remote_buf rb = { htobe64((uintptr_t)buf), htobe32(c.mr->rkey), htobe32((uint32_t)buf_len) };
    struct rdma_conn_param cp = {
        .private_data = &rb, .private_data_len = sizeof rb, .responder_resources = 1, .initiator_depth = 1,
        .rnr_retry_count = 7,
    };
    if (rdma_accept(c.id, &cp))
        die("rdma_accept: %s", strerror(errno));
    ev = next_event(ch, "ESTABLISHED");
    if (ev->event != RDMA_CM_EVENT_ESTABLISHED)
        die("expected ESTABLISHED, got %s (status %d)", rdma_event_str(ev->event), ev->status);
    rdma_ack_cm_event(ev);
    say("connected on %s, %zu-byte buffer rkey 0x%x", ibv_get_device_name(c.id->verbs->device), buf_len,
        c.mr->rkey);

    wait_wr(&c, WR_RECV, "the client's SEND");
    if (msgs[1].magic != MSG_MAGIC)
        die("bad message from the client (magic 0x%x)", msgs[1].magic);
    size_t bad = check(buf, buf_len, msgs[1].seed);
    if (bad == buf_len)
        say("RECV ok; buffer holds the client's RDMA WRITE data");
    else
        say("RECV ok; buffer MISMATCH at byte %zu after the client's RDMA WRITE", bad);
    msgs[0] = (struct msg){ .magic = MSG_MAGIC, .status = bad == buf_len ? 0 : 1 };
    post_send(&c, WR_SEND, IBV_WR_SEND, &msgs[0], sizeof msgs[0], c.msg_mr->lkey, 0, 0);
    wait_wr(&c, WR_SEND, "SEND completion");

    ev = next_event(ch, "DISCONNECTED");
    if (ev->event != RDMA_CM_EVENT_DISCONNECTED)
        die("expected DISCONNECTED, got %s", rdma_event_str(ev->event));
    rdma_ack_cm_event(ev);
    conn_teardown(&c);
    rdma_destroy_id(listen_id);
    rdma_destroy_event_channel(ch);
    if (bad != buf_len)
        die("data check failed");
    say("PASS");
    return 0;
}

/* One connection attempt; false (after cleaning up) if it should be retried. */
static bool try_connect(struct rdma_event_channel *ch, struct conn *c, struct sockaddr *src, struct sockaddr *dst,
                        struct remote_buf *rb)
{
    struct rdma_cm_event *ev;
    const char *fail = NULL;
    int status = 0;
    if (rdma_create_id(ch, &c->id, NULL, RDMA_PS_TCP))
        die("rdma_create_id: %s", strerror(errno));
    if (rdma_resolve_addr(c->id, src, dst, RESOLVE_TIMEOUT_MS))
        die("rdma_resolve_addr: %s", strerror(errno));
    ev = next_event(ch, "ADDR_RESOLVED");
    if (ev->event != RDMA_CM_EVENT_ADDR_RESOLVED) {
        fail = rdma_event_str(ev->event), status = ev->status;
        rdma_ack_cm_event(ev);
        goto retry;
    }
    rdma_ack_cm_event(ev);
    if (rdma_resolve_route(c->id, RESOLVE_TIMEOUT_MS))
        die("rdma_resolve_route: %s", strerror(errno));
    ev = next_event(ch, "ROUTE_RESOLVED");
    if (ev->event != RDMA_CM_EVENT_ROUTE_RESOLVED) {
        fail = rdma_event_str(ev->event), status = ev->status;
        rdma_ack_cm_event(ev);
        goto retry;
    }
    rdma_ack_cm_event(ev);
    conn_setup(c, IBV_ACCESS_LOCAL_WRITE);
    post_recv(c);
    struct rdma_conn_param cp = {
        .responder_resources = 1, .initiator_depth = 1, .retry_count = 7, .rnr_retry_count = 7,
    };
    if (rdma_connect(c->id, &cp))
        die("rdma_connect: %s", strerror(errno));
    ev = next_event(ch, "ESTABLISHED");
    if (ev->event != RDMA_CM_EVENT_ESTABLISHED) {
        fail = rdma_event_str(ev->event), status = ev->status;
        rdma_ack_cm_event(ev);
        goto retry;
    }
    if (ev->param.conn.private_data_len < sizeof *rb)
        die("no buffer description in the accept's private data");
    memcpy(rb, ev->param.conn.private_data, sizeof *rb);
    rdma_ack_cm_event(ev);
    return true;
retry:
    conn_teardown(c);
    static int logged;
    if (logged++ < 3 || logged % 20 == 0)
        say("connect attempt: %s (status %d)%s, retrying", fail, status,
            status == 8 ? " -- server not listening yet" : "");
    return false;
}

static int run_client(const char *addr, const char *port, const char *src_addr, const char *want_dev)
{
    struct rdma_event_channel *ch = rdma_create_event_channel();
    if (!ch)
        die("rdma_create_event_channel: %s", strerror(errno));
    set_nonblock(ch->fd);
    struct sockaddr_storage dst, src;
    to_sockaddr(addr, port, &dst);
    if (src_addr)
        to_sockaddr(src_addr, NULL, &src);

    struct conn c = { 0 };
    struct remote_buf rb;
    int attempts = 1;
    double backoff = 0.05;
    while (!try_connect(ch, &c, src_addr ? (struct sockaddr *)&src : NULL, (struct sockaddr *)&dst, &rb)) {
        if (now() + backoff >= t_deadline)
            die("could not connect to %s:%s in %d attempts", addr, port, attempts);
        struct timespec ts = { 0, (long)(backoff * 1e9) };
        nanosleep(&ts, NULL);
        backoff = backoff * 2 > 0.5 ? 0.5 : backoff * 2;
        attempts++;
    }
    check_device(&c, want_dev);
    uint64_t raddr = be64toh(rb.addr);
    uint32_t rkey = be32toh(rb.rkey), rlen = be32toh(rb.len);
    if (rlen != buf_len)
        die("server buffer is %u bytes, expected %zu (same -n on both sides)", rlen, buf_len);
    say("connected on %s (attempt %d) to %s:%s, remote buffer rkey 0x%x",
        ibv_get_device_name(c.id->verbs->device), attempts, addr, port, rkey);

    double t = now();
    size_t bad;
    memset(buf, 0, buf_len);
    post_send(&c, WR_READ, IBV_WR_RDMA_READ, buf, (uint32_t)buf_len, c.mr->lkey, raddr, rkey);
    wait_wr(&c, WR_READ, "RDMA READ");
    if ((bad = check(buf, buf_len, 0xA5)) != buf_len)
        die("RDMA READ: data mismatch at byte %zu", bad);
    say("RDMA READ %zu bytes ok (%.0f ms)", buf_len, (now() - t) * 1e3);

    t = now();
    fill(buf, buf_len, 0x3C);
    post_send(&c, WR_WRITE, IBV_WR_RDMA_WRITE, buf, (uint32_t)buf_len, c.mr->lkey, raddr, rkey);
    wait_wr(&c, WR_WRITE, "RDMA WRITE");
    say("RDMA WRITE %zu bytes ok (%.0f ms)", buf_len, (now() - t) * 1e3);

    t = now();
    memset(buf, 0, buf_len);
    post_send(&c, WR_READ_BACK, IBV_WR_RDMA_READ, buf, (uint32_t)buf_len, c.mr->lkey, raddr, rkey);
    wait_wr(&c, WR_READ_BACK, "RDMA READ back");
    if ((bad = check(buf, buf_len, 0x3C)) != buf_len)
        die("RDMA READ back: data mismatch at byte %zu", bad);
    say("RDMA READ back %zu bytes ok (%.0f ms)", buf_len, (now() - t) * 1e3);

    msgs[0] = (struct msg){ .magic = MSG_MAGIC, .seed = 0x3C };
    post_send(&c, WR_SEND, IBV_WR_SEND, &msgs[0], sizeof msgs[0], c.msg_mr->lkey, 0, 0);
    wait_wr(&c, WR_SEND, "SEND completion");
    wait_wr(&c, WR_RECV, "the server's reply");
    if (msgs[1].magic != MSG_MAGIC)
        die("bad reply from the server (magic 0x%x)", msgs[1].magic);
    if (msgs[1].status != 0)
        die("the server saw wrong data after the RDMA WRITE");
    say("SEND/RECV ok; the server verified the written data");

    rdma_disconnect(c.id);
    struct rdma_cm_event *ev = next_event(ch, "DISCONNECTED");
    if (ev->event != RDMA_CM_EVENT_DISCONNECTED)
        say("note: got %s after disconnect", rdma_event_str(ev->event));
    rdma_ack_cm_event(ev);
    conn_teardown(&c);
    rdma_destroy_event_channel(ch);
    say("PASS");
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: verbs_smoke -s ADDR [-p PORT] [-d DEV] [-n BYTES] [-t SECS]\n"
                    "       verbs_smoke -c ADDR [-b SRC] [-p PORT] [-d DEV] [-n BYTES] [-t SECS]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *server = NULL, *client = NULL, *src = NULL, *port = "7174", *dev = NULL;
    double timeout = 120;
    int opt;
    t_start = now();
    while ((opt = getopt(argc, argv, "s:c:b:p:d:n:t:")) != -1) {
        switch (opt) {
        case 's': server = optarg; break;
        case 'c': client = optarg; break;
        case 'b': src = optarg; break;
        case 'p': port = optarg; break;
        case 'd': dev = optarg; break;
        case 'n': buf_len = strtoul(optarg, NULL, 0); break;
        case 't': timeout = strtod(optarg, NULL); break;
        default: usage();
        }
    }
    if (optind != argc || !server == !client || buf_len == 0 || buf_len > (1u << 30) || timeout <= 0)
        usage();
    role = server ? "server" : "client";
    t_deadline = t_start + timeout;
    if (posix_memalign((void **)&buf, 4096, buf_len))
        die("out of memory");
    return server ? run_server(server, port, dev) : run_client(client, port, src, dev);
}
