/* Counts, on one watched thread, the calls that take a lock or wait on one: pthread mutexes,
 * read-write locks and condition variables, POSIX semaphores, and futex system calls (which is
 * how Swift's Mutex waits when it is contended). The functions are interposed: this library,
 * linked into the executable, is found before libc. For the allocation probe only. */
#ifndef LOCK_COUNTER_H
#define LOCK_COUNTER_H

/* Resolves the real functions; call once before arming. */
void lock_counter_init(void);
/* The calling thread is the one watched. */
void lock_counter_watch_current_thread(void);
void lock_counter_arm(int on);
long lock_counter_count(void);

#endif
