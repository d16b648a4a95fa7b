#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include "lock_counter.h"

static _Atomic unsigned long watched;
static _Atomic int armed;
static _Atomic long counted;

static int (*real_mutex_lock)(pthread_mutex_t *);
static int (*real_mutex_trylock)(pthread_mutex_t *);
static int (*real_rwlock_rdlock)(pthread_rwlock_t *);
static int (*real_rwlock_wrlock)(pthread_rwlock_t *);
static int (*real_cond_wait)(pthread_cond_t *, pthread_mutex_t *);
static int (*real_cond_timedwait)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
static int (*real_sem_wait)(sem_t *);
static int (*real_sem_timedwait)(sem_t *, const struct timespec *);
static long (*real_syscall)(long, ...);

void lock_counter_init(void) {
    real_mutex_lock = dlsym(RTLD_NEXT, "pthread_mutex_lock");
    real_mutex_trylock = dlsym(RTLD_NEXT, "pthread_mutex_trylock");
    real_rwlock_rdlock = dlsym(RTLD_NEXT, "pthread_rwlock_rdlock");
    real_rwlock_wrlock = dlsym(RTLD_NEXT, "pthread_rwlock_wrlock");
    real_cond_wait = dlsym(RTLD_NEXT, "pthread_cond_wait");
    real_cond_timedwait = dlsym(RTLD_NEXT, "pthread_cond_timedwait");
    real_sem_wait = dlsym(RTLD_NEXT, "sem_wait");
    real_sem_timedwait = dlsym(RTLD_NEXT, "sem_timedwait");
    real_syscall = dlsym(RTLD_NEXT, "syscall");
}

void lock_counter_watch_current_thread(void) { watched = (unsigned long)pthread_self(); }
void lock_counter_arm(int on) { armed = on; }
long lock_counter_count(void) { return counted; }

static void note(void) {
    if (armed && (unsigned long)pthread_self() == watched) counted++;
}

/* Before lock_counter_init the real functions are looked up on first use. */
#define REAL(var, name) (var ? var : (var = dlsym(RTLD_NEXT, name)))

int pthread_mutex_lock(pthread_mutex_t *m) { note(); return REAL(real_mutex_lock, "pthread_mutex_lock")(m); }
int pthread_mutex_trylock(pthread_mutex_t *m) { note(); return REAL(real_mutex_trylock, "pthread_mutex_trylock")(m); }
int pthread_rwlock_rdlock(pthread_rwlock_t *l) { note(); return REAL(real_rwlock_rdlock, "pthread_rwlock_rdlock")(l); }
int pthread_rwlock_wrlock(pthread_rwlock_t *l) { note(); return REAL(real_rwlock_wrlock, "pthread_rwlock_wrlock")(l); }
int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m) { note(); return REAL(real_cond_wait, "pthread_cond_wait")(c, m); }
int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t) {
    note();
    return REAL(real_cond_timedwait, "pthread_cond_timedwait")(c, m, t);
}
int sem_wait(sem_t *s) { note(); return REAL(real_sem_wait, "sem_wait")(s); }
int sem_timedwait(sem_t *s, const struct timespec *t) { note(); return REAL(real_sem_timedwait, "sem_timedwait")(s, t); }

long syscall(long number, ...) {
    va_list ap;
    va_start(ap, number);
    long a = va_arg(ap, long), b = va_arg(ap, long), c = va_arg(ap, long);
    long d = va_arg(ap, long), e = va_arg(ap, long), f = va_arg(ap, long);
    va_end(ap);
    if (number == SYS_futex) note();
    return REAL(real_syscall, "syscall")(number, a, b, c, d, e, f);
}
