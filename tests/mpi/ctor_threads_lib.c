/* A library whose constructor starts a thread, as OpenBLAS's does: linked after libmpc, it is
 * initialised before it, so the thread is created, yields, sleeps and is joined through libmpc's
 * interposers (pthread_create, sched_yield, nanosleep, pthread_join) before libmpc's own
 * initialisers ran. ctor_threads.c reads the outcome. */
#include <pthread.h>
#include <sched.h>
#include <time.h>

int ctor_threads_result = -1; /* 0 when the thread ran and every call succeeded */

static void *body(void *arg)
{
	struct timespec ts = { 0, 1000 };
	int *ok = arg;
	*ok = sched_yield() == 0 && nanosleep(&ts, NULL) == 0;
	return arg;
}

__attribute__((constructor)) static void start_thread(void)
{
	pthread_t t;
	int ok = 0;
	void *ret = NULL;
	if (pthread_create(&t, NULL, body, &ok) != 0)
		ctor_threads_result = 1;
	else if (pthread_join(t, &ret) != 0 || ret != &ok)
		ctor_threads_result = 2;
	else
		ctor_threads_result = ok ? 0 : 3;
}
