#ifndef STAGEBOX_CLINUX_SHIM_H
#define STAGEBOX_CLINUX_SHIM_H
/* What swift-system (FileDescriptor, Errno) does not cover and Swift cannot reach directly:
   ppoll (hidden behind _GNU_SOURCE), memfd_create and its seals, eventfd, Unix sockets with the
   flags spelled once for glibc and musl, the CMSG macros for passing descriptors (SCM_RIGHTS),
   SO_PEERCRED, accept4, pipe2, the watchdog's ioctl, the kernel's clock state (adjtimex), an
   RTC's ioctls and the pseudo-terminal calls the tests use.
   Nothing here retries on EINTR: the Swift side does that in one place (retryingOnInterrupt). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timex.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/rtc.h>

int ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *timeout, const sigset_t *sigmask);

/* Touches `bytes` of the calling thread's stack below its current frame, a page at a time: with
   MCL_ONFAULT a page is locked when first touched, and the audio thread must not take that fault
   mid-period. noinline, so the alloca is this frame's and gone when it returns. */
__attribute__((noinline)) static void stagebox_prefault_stack(size_t bytes) {
    volatile unsigned char *p = __builtin_alloca(bytes);
    for (size_t i = 0; i < bytes; i += 4096) p[i] = 0;
    p[bytes - 1] = 0;
}

/* The calling thread's kernel id (gettid, which glibc 2.36 hides behind _GNU_SOURCE). */
static inline int32_t stagebox_thread_id(void) { return (int32_t)syscall(SYS_gettid); }

/* poll() with a timeout in nanoseconds (negative: wait forever). */
static inline int stagebox_poll_ns(struct pollfd *fds, unsigned long nfds, int64_t timeout_ns) {
    if (timeout_ns < 0) return ppoll(fds, nfds, NULL, NULL);
    struct timespec ts = { (time_t)(timeout_ns / 1000000000), (long)(timeout_ns % 1000000000) };
    return ppoll(fds, nfds, &ts, NULL);
}

/* Whether the kernel's clock is synchronised (NTP disciplines it: STA_UNSYNC cleared, the
   state not TIME_ERROR); 0 after boot until then. -1 when adjtimex fails. */
static inline int stagebox_clock_synchronized(void) {
    struct timex tx = { 0 };
    int state = adjtimex(&tx);
    if (state < 0) return -1;
    return state != TIME_ERROR && !(tx.status & STA_UNSYNC);
}

/* A real-time clock's time (RTC_RD_TIME on /dev/rtcN, which RTCs keep in UTC) as seconds since
   the epoch; 0, or -errno (EINVAL: the chip says its time is not valid, e.g. its oscillator
   stopped when the battery went flat). */
static inline int stagebox_rtc_read(int fd, int64_t *seconds) {
    struct rtc_time rt;
    memset(&rt, 0, sizeof rt);
    if (ioctl(fd, RTC_RD_TIME, &rt) < 0) return -errno;
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    tm.tm_sec = rt.tm_sec; tm.tm_min = rt.tm_min; tm.tm_hour = rt.tm_hour;
    tm.tm_mday = rt.tm_mday; tm.tm_mon = rt.tm_mon; tm.tm_year = rt.tm_year;
    time_t t = timegm(&tm);
    if (t == (time_t)-1) return -EINVAL;
    *seconds = (int64_t)t;
    return 0;
}

/* Sets a real-time clock (RTC_SET_TIME) to `seconds` since the epoch, in UTC; 0 or -errno. */
static inline int stagebox_rtc_set(int fd, int64_t seconds) {
    time_t t = (time_t)seconds;
    struct tm tm;
    if (!gmtime_r(&t, &tm)) return -EINVAL;
    struct rtc_time rt;
    memset(&rt, 0, sizeof rt);
    rt.tm_sec = tm.tm_sec; rt.tm_min = tm.tm_min; rt.tm_hour = tm.tm_hour;
    rt.tm_mday = tm.tm_mday; rt.tm_mon = tm.tm_mon; rt.tm_year = tm.tm_year;
    return ioctl(fd, RTC_SET_TIME, &rt) < 0 ? -errno : 0;
}

/* An anonymous shared-memory file, closed on exec, that can be sealed. */
static inline int stagebox_memfd(const char *name) {
    return (int)syscall(SYS_memfd_create, name, 1u /* MFD_CLOEXEC */ | 2u /* MFD_ALLOW_SEALING */);
}

/* Seals a memfd's size for good: nobody holding it (a client) can shrink it under our mapping
   (a SIGBUS on the next access) or grow it, and the seals cannot be lifted. */
static inline int stagebox_seal_size(int fd) {
    return fcntl(fd, 1033 /* F_ADD_SEALS */, 0x0001 /* F_SEAL_SEAL */ | 0x0002 /* F_SEAL_SHRINK */ | 0x0004 /* F_SEAL_GROW */);
}

/* A pair of connected close-on-exec, non-blocking Unix datagram sockets: a wakeup whose two
   ends are separate open files, so that neither side can change the other's flags. */
static inline int stagebox_wakeup_pair(int fds[2]) {
    return socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, fds);
}

/* Sends one wakeup byte, never waiting; 0 or -1. */
static inline int stagebox_wakeup_send(int fd) {
    char one = 1;
    return send(fd, &one, 1, MSG_DONTWAIT | MSG_NOSIGNAL) == 1 ? 0 : -1;
}

/* Takes up to 16 pending wakeup bytes in one call, never waiting; how many (0 when none).
   recvmmsg through syscall(2): glibc declares it only under _GNU_SOURCE. The struct is
   struct mmsghdr's layout; every message shares one byte, whose value nobody reads. */
static inline int stagebox_wakeup_take_many(int fd) {
    char byte;
    struct iovec iov = { &byte, 1 };
    struct { struct msghdr hdr; unsigned int len; } msgs[16];
    memset(msgs, 0, sizeof msgs);
    for (int i = 0; i < 16; i++) { msgs[i].hdr.msg_iov = &iov; msgs[i].hdr.msg_iovlen = 1; }
    _Static_assert(sizeof msgs[0] == sizeof(struct msghdr) + sizeof(long), "struct mmsghdr's layout");
    long n = syscall(SYS_recvmmsg, fd, msgs, 16, MSG_DONTWAIT, (void *)0);
    if (n < 0 && (errno == ENOSYS || errno == EPERM)) /* a host program's seccomp filter refuses it */
        return recv(fd, &byte, 1, MSG_DONTWAIT) >= 0 ? 1 : 0;
    return n > 0 ? (int)n : 0;
}

/* The peer's credentials of a connected Unix socket. */
static inline int stagebox_peer_credentials(int sock, int32_t *pid, uint32_t *uid, uint32_t *gid) {
    /* struct ucred's layout; the libc declares it only under _GNU_SOURCE. */
    struct { int32_t pid; uint32_t uid; uint32_t gid; } cred;
    socklen_t len = sizeof cred;
    if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -1;
    *pid = cred.pid; *uid = cred.uid; *gid = cred.gid;
    return 0;
}

int accept4(int sockfd, struct sockaddr *addr, socklen_t *addrlen, int flags);

/* Accepts a connection, non-blocking and close-on-exec. */
static inline int stagebox_accept(int listener) {
    return accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

/* A pipe whose ends close on exec (pipe2 is hidden behind _GNU_SOURCE): a child started by
   another thread meanwhile does not inherit it. */
int pipe2(int fds[2], int flags);
static inline int stagebox_pipe_cloexec(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}

/* Pseudo-terminals (hidden behind _XOPEN_SOURCE). */
int posix_openpt(int flags);
int grantpt(int fd);
int unlockpt(int fd);
char *ptsname(int fd);

#define STAGEBOX_MAX_FDS 8

/* Sends len bytes with up to STAGEBOX_MAX_FDS descriptors attached (SCM_RIGHTS). */
static inline ssize_t stagebox_send_with_fds(int sock, const void *buf, size_t len, const int *fds, int nfds) {
    struct iovec iov = { (void *)buf, len };
    union { char bytes[CMSG_SPACE(sizeof(int) * STAGEBOX_MAX_FDS)]; struct cmsghdr align; } control;
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (nfds > 0) {
        if (nfds > STAGEBOX_MAX_FDS) { errno = EINVAL; return -1; }
        memset(&control, 0, sizeof control);
        msg.msg_control = control.bytes;
        msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
        memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
    }
    return sendmsg(sock, &msg, MSG_NOSIGNAL);
}

/* Receives up to len bytes; descriptors that came along are stored in fds (at most max_fds,
   the rest closed) and counted in *nfds. Descriptors are received close-on-exec. */
static inline ssize_t stagebox_recv_with_fds(int sock, void *buf, size_t len, int *fds, int max_fds, int *nfds) {
    struct iovec iov = { buf, len };
    union { char bytes[CMSG_SPACE(sizeof(int) * STAGEBOX_MAX_FDS)]; struct cmsghdr align; } control;
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.bytes;
    msg.msg_controllen = sizeof control.bytes;
    ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    *nfds = 0;
    if (n < 0) return n;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        int count = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        int *received = (int *)CMSG_DATA(c);
        for (int i = 0; i < count; i++) {
            if (*nfds < max_fds) fds[(*nfds)++] = received[i];
            else close(received[i]);
        }
    }
    return n;
}
/* A close-on-exec Unix stream socket. SOCK_* are enum constants in glibc's headers and plain
   macros in musl's, so Swift would need two spellings. */
static inline int stagebox_unix_stream_socket(int nonblocking) {
    return socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0), 0);
}

/* A close-on-exec Unix datagram socket (systemd's notification socket). */
static inline int stagebox_unix_datagram_socket(void) {
    return socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
}

/* Names the calling thread (15 bytes at most; pthread_setname_np is hidden behind _GNU_SOURCE). */
static inline int stagebox_name_thread(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}

/* Asks the kernel for no transparent huge pages in this process (inherited by its children).
   Where THP is "always" (Debian's arm64 kernel), the first touch of a thread's malloc arena or
   stack can take a whole 2 MiB page for a few KiB of use: a client of 9.7 MiB became 11.7. */
#ifndef PR_SET_THP_DISABLE
#define PR_SET_THP_DISABLE 41 /* Linux 3.15 */
#endif
static inline int stagebox_refuse_huge_pages(void) {
    return prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
}

/* The simulated board's one wait, the audio thread's: clock_nanosleep to an absolute monotonic
   deadline as the bare system call. glibc's wrapper makes it a cancellation point, which costs two
   atomic updates of the thread's cancel state a period for a thread nobody cancels. Returns 0 or
   the error (EINTR: a signal came first). 32-bit targets keep the wrapper (their time64 call). */
static inline int stagebox_sleep_until(int64_t deadline_ns) {
    struct timespec ts = { .tv_sec = (time_t)(deadline_ns / 1000000000), .tv_nsec = (long)(deadline_ns % 1000000000) };
#if __SIZEOF_POINTER__ == 8 && defined(SYS_clock_nanosleep)
    return syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == 0 ? 0 : errno;
#else
    return clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
#endif
}

/* The ALSA loop's one wait, for the period interrupt: poll as the bare system call, for the same
   reason (glibc's poll is a cancellation point too). ppoll, which every 64-bit architecture has
   (aarch64 has no poll), with no signal mask: what poll does. Returns what poll returns (-1 and
   errno on an error); a negative timeout waits without end. 32-bit targets keep the wrapper. */
static inline int stagebox_poll(struct pollfd *fds, unsigned long count, int timeout_ms) {
#if __SIZEOF_POINTER__ == 8 && defined(SYS_ppoll)
    struct timespec ts = { .tv_sec = timeout_ms / 1000, .tv_nsec = (long)(timeout_ms % 1000) * 1000000 };
    return (int)syscall(SYS_ppoll, fds, count, timeout_ms < 0 ? NULL : &ts, NULL, (size_t)0);
#else
    return poll(fds, (nfds_t)count, timeout_ms);
#endif
}

/* The limits and calls of the audio thread's scheduling fallback (RLIMIT_* and PRIO_* are enum
   constants of their own types in glibc's headers and plain macros in musl's). A limit of
   RLIM_INFINITY reads as -1. */
static inline int stagebox_get_limit(int rtprio, long *soft, long *hard) {
    struct rlimit l;
    if (getrlimit(rtprio ? RLIMIT_RTPRIO : RLIMIT_NICE, &l) != 0) return -1;
    *soft = l.rlim_cur == RLIM_INFINITY ? -1 : (long)l.rlim_cur;
    *hard = l.rlim_max == RLIM_INFINITY ? -1 : (long)l.rlim_max;
    return 0;
}
/* Raises the soft limit to the hard one (what an unprivileged process may do). */
static inline int stagebox_raise_soft_limit(int rtprio) {
    struct rlimit l;
    int resource = rtprio ? RLIMIT_RTPRIO : RLIMIT_NICE;
    if (getrlimit(resource, &l) != 0) return -1;
    l.rlim_cur = l.rlim_max;
    return setrlimit(resource, &l);
}
/* On Linux, PRIO_PROCESS with a thread id sets or reads that one thread's nice value. */
static inline int stagebox_set_thread_nice(int nice) {
    return setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), nice);
}
static inline int stagebox_thread_nice(void) {
    return getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
}

/* WDIOC_SETTIMEOUT: asks the watchdog driver for a timeout; it answers with the one it took. */
static inline int stagebox_watchdog_set_timeout(int fd, int *seconds) {
    return ioctl(fd, (unsigned long)0xC0045706 /* _IOWR('W', 6, int) */, seconds);
}

/* Pins the calling thread to one CPU (a test's watch on each CPU); 0, or -1 with errno. */
static inline int stagebox_pin_to_cpu(int cpu) {
    unsigned long mask[16] = {0};
    const int bits = (int)(8 * sizeof(unsigned long));
    if (cpu < 0 || cpu >= 16 * bits) { errno = EINVAL; return -1; }
    mask[cpu / bits] = 1UL << (cpu % bits);
    return (int)syscall(SYS_sched_setaffinity, 0, sizeof(mask), mask);
}

/* A socket on the kernel's device events (NETLINK_KOBJECT_UEVENT, its multicast group 1: what
   udev and mdev listen to), non-blocking and closed on exec; -1 with errno when refused. The
   receive buffer is raised so that a burst (a hub of sticks) is not dropped. */
static inline int stagebox_uevent_socket(void) {
    int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
    if (fd < 0) return -1;
    struct sockaddr_nl address = { 0 };
    address.nl_family = AF_NETLINK;
    address.nl_groups = 1;
    if (bind(fd, (struct sockaddr *)&address, sizeof(address)) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    int size = 1 << 20;
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
    return fd;
}

#endif
