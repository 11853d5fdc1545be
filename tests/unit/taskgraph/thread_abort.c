/* A checked thread macro of starpu_thread_util.h whose call fails stops the program (abort)
 * with a line naming the call, its error and the place; the key macros print the line and go
 * on, as StarPU's. One failing call per run, chosen by argv[1]; ctest checks the status and
 * the line. */
#include <starpu.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    const char *what = argc > 1 ? argv[1] : "";
    setvbuf(stdout, NULL, _IONBF, 0);
    if (strcmp(what, "unlock") == 0 || strcmp(what, "unlock_sched") == 0) {
        starpu_pthread_mutex_t m;
        starpu_pthread_mutexattr_t attr;
        starpu_pthread_mutexattr_init(&attr);
        starpu_pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK);
        STARPU_PTHREAD_MUTEX_INIT(&m, &attr);
        if (what[6] == '\0') {
            STARPU_PTHREAD_MUTEX_UNLOCK(&m); /* not held: EPERM */
        } else {
            STARPU_PTHREAD_MUTEX_UNLOCK_SCHED(&m);
        }
    } else if (strcmp(what, "join") == 0) {
        STARPU_PTHREAD_JOIN(starpu_pthread_self(), NULL); /* itself: EDEADLK */
    } else if (strcmp(what, "barrier") == 0) {
        starpu_pthread_barrier_t b;
        STARPU_PTHREAD_BARRIER_INIT(&b, NULL, 0); /* no thread: EINVAL */
    } else if (strcmp(what, "setspecific") == 0) {
        starpu_pthread_key_t key;
        STARPU_PTHREAD_KEY_CREATE(&key, NULL);
        STARPU_PTHREAD_KEY_DELETE(key);
        STARPU_PTHREAD_SETSPECIFIC(key, &key); /* a deleted key: EINVAL, reported, not fatal */
        printf("thread_abort: went on after the failed setspecific\n");
        return 0;
    } else {
        printf("usage: thread_abort unlock|unlock_sched|join|barrier|setspecific\n");
        return 2;
    }
    printf("thread_abort: the failed call did not stop the program\n");
    return 0;
}
