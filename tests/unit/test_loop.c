/* daemon/loop.c: the progress loop's one epoll. Callbacks run with their
 * argument and count as work; a paused descriptor reports nothing; a
 * descriptor removed by an earlier callback of the same batch gets no
 * callback, even when its number is reused at once by a new registration
 * (the new one must not see the old one's event). Real pipes. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "loop.h"
#include "unit_util.h"

struct end {
	int rd, wr;
	int calls;
};

static struct loop L;
static struct end A, B, C;
static int others; /* the descriptor the first callback removes */

static void pipe_open(struct end *e)
{
	int fd[2];
	ck_assert_int_eq(pipe2(fd, O_CLOEXEC | O_NONBLOCK), 0);
	e->rd = fd[0];
	e->wr = fd[1];
	e->calls = 0;
}

static int count(struct daemon *d, void *arg, uint32_t events)
{
	(void)d;
	struct end *e = arg;
	ck_assert(events & EPOLLIN);
	e->calls++;
	return 1;
}

/* The first of A and B to run closes the other's pipe and puts a fresh,
 * empty pipe under the same descriptor number (C). */
static int close_other(struct daemon *d, void *arg, uint32_t events)
{
	(void)d;
	(void)events;
	struct end *e = arg, *o = e == &A ? &B : &A;
	e->calls++;
	if (o->rd < 0)
		return 1; /* done before (level-triggered: e is still readable) */
	int num = o->rd;
	loop_del(&L, num);
	close(o->rd);
	close(o->wr);
	o->rd = o->wr = -1;
	pipe_open(&C);
	if (C.rd != num) { /* make it the same number */
		ck_assert_int_eq(dup2(C.rd, num), num);
		close(C.rd);
		C.rd = num;
	}
	ck_assert_int_eq(loop_add(&L, C.rd, EPOLLIN, count, &C), 0);
	others = num;
	return 1;
}

static void setup(void)
{
	ck_assert_int_eq(loop_init(&L, NULL), 0);
	pipe_open(&A);
	pipe_open(&B);
}

static void teardown(void)
{
	loop_fini(&L);
}

START_TEST(test_dispatch)
{
	ck_assert_int_eq(loop_add(&L, A.rd, EPOLLIN, count, &A), 0);
	ck_assert_int_eq(loop_add(&L, B.rd, EPOLLIN, count, &B), 0);
	ck_assert_int_eq(loop_add(&L, A.rd, EPOLLIN, count, &A), -EEXIST);
	ck_assert_int_eq(loop_wait(&L, 0), 0); /* nothing ready */
	ck_assert_int_eq(write(B.wr, "x", 1), 1);
	ck_assert_int_eq(loop_wait(&L, 1000), 1);
	ck_assert_int_eq(B.calls, 1);
	ck_assert_int_eq(A.calls, 0);
	/* level-triggered: still readable, reported again */
	ck_assert_int_eq(loop_wait(&L, 0), 1);
	ck_assert_int_eq(B.calls, 2);
	/* paused: nothing; resumed: again */
	ck_assert_int_eq(loop_mod(&L, B.rd, 0), 0);
	ck_assert_int_eq(loop_wait(&L, 0), 0);
	ck_assert_int_eq(loop_mod(&L, B.rd, EPOLLIN), 0);
	ck_assert_int_eq(loop_wait(&L, 0), 1);
	ck_assert_int_eq(B.calls, 3);
	/* removed: nothing */
	loop_del(&L, B.rd);
	ck_assert_int_eq(loop_mod(&L, B.rd, EPOLLIN), -ENOENT);
	ck_assert_int_eq(loop_wait(&L, 0), 0);
	ck_assert_int_eq(B.calls, 3);
}
END_TEST

START_TEST(test_removed_in_batch)
{
	ck_assert_int_eq(loop_add(&L, A.rd, EPOLLIN, close_other, &A), 0);
	ck_assert_int_eq(loop_add(&L, B.rd, EPOLLIN, close_other, &B), 0);
	ck_assert_int_eq(write(A.wr, "x", 1), 1);
	ck_assert_int_eq(write(B.wr, "x", 1), 1);
	/* both ready in one batch: the first callback removes the other
	 * descriptor and registers C under its number */
	ck_assert_int_eq(loop_wait(&L, 1000), 1);
	ck_assert_int_eq(A.calls + B.calls, 1);
	ck_assert_int_eq(C.calls, 0); /* the old event did not reach C */
	/* C itself works */
	ck_assert_int_eq(write(C.wr, "y", 1), 1);
	ck_assert_int_eq(loop_wait(&L, 1000), 2); /* C, and the survivor still readable */
	ck_assert_int_eq(C.calls, 1);
	ck_assert_int_eq(A.calls + B.calls, 2);
	ck_assert_int_eq(C.rd, others);
	(void)others;
}
END_TEST

int main(void)
{
	Suite *s = suite_create("loop");
	TCase *tc = tcase_create("loop");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_dispatch);
	tcase_add_test(tc, test_removed_in_batch);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
