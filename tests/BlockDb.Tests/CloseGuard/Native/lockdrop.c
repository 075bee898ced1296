/*
 * lockdrop: an LD_PRELOAD probe for the POSIX-lock trap SQLite documents at
 * https://www.sqlite.org/howtocorrupt.html (section 2.2): closing any descriptor of a file drops every POSIX lock
 * the process holds on it. It wraps close, dup2 and dup3; when the descriptor being closed (or replaced) refers to a
 * file whose name ends with the suffix in LOCKDROP_SUFFIX (default "stress.db") and /proc/locks shows a POSIX lock
 * of this process on that file, it prints to stderr
 *     LOCKDROP <call> pid <pid> tid <tid> fd <fd> <path> held: <the /proc/locks lines>
 * followed by the native call stack and a line LOCKDROP-END, then lets the call go on. Reading /proc/locks before the
 * close also widens the window in which another thread can take a lock, which is what makes a close race show.
 * Build: cc -O2 -shared -fPIC -o lockdrop.so lockdrop.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

static int (*real_close)(int);
static int (*real_dup2)(int, int);
static int (*real_dup3)(int, int, int);

static int watched(int fd, char *path, size_t size)
{
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t length = readlink(link, path, size - 1);
    if (length <= 0)
        return 0;
    path[length] = 0;
    const char *suffix = getenv("LOCKDROP_SUFFIX");
    if (suffix == NULL || *suffix == 0)
        suffix = "stress.db";
    size_t n = strlen(suffix), l = (size_t)length;
    return l >= n && strcmp(path + l - n, suffix) == 0;
}

static int locks_held(const struct stat *st, char *out, size_t size)
{
    static __thread char buffer[1 << 16];
    int f = open("/proc/locks", O_RDONLY | O_CLOEXEC);
    if (f < 0)
        return 0;
    ssize_t length = read(f, buffer, sizeof buffer - 1);
    syscall(SYS_close, f);
    if (length <= 0)
        return 0;
    buffer[length] = 0;
    char wanted[96];
    snprintf(wanted, sizeof wanted, " %d %02x:%02x:%lu ", getpid(), major(st->st_dev), minor(st->st_dev), (unsigned long)st->st_ino);
    int found = 0;
    char *save = NULL;
    out[0] = 0;
    for (char *line = strtok_r(buffer, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save))
    {
        if (strstr(line, "POSIX") != NULL && strstr(line, wanted) != NULL)
        {
            found++;
            strncat(out, line, size - strlen(out) - 2);
            strncat(out, "|", size - strlen(out) - 1);
        }
    }
    return found;
}

static void check(int fd, const char *call)
{
    char path[512], held[2048], message[3072];
    struct stat st;
    if (!watched(fd, path, sizeof path) || fstat(fd, &st) != 0 || !locks_held(&st, held, sizeof held))
        return;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int length = snprintf(message, sizeof message, "LOCKDROP %s pid %d tid %ld fd %d %s @%ld.%09ld held: %s\n",
                          call, getpid(), (long)syscall(SYS_gettid), fd, path, (long)now.tv_sec, now.tv_nsec, held);
    if (write(2, message, (size_t)length) < 0)
        return;
    void *frames[40];
    int count = backtrace(frames, 40);
    backtrace_symbols_fd(frames, count, 2);
    if (write(2, "LOCKDROP-END\n", 13) < 0)
        return;
}

int close(int fd)
{
    if (real_close == NULL)
        real_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
    check(fd, "close");
    return real_close(fd);
}

int dup2(int old_fd, int new_fd)
{
    if (real_dup2 == NULL)
        real_dup2 = (int (*)(int, int))dlsym(RTLD_NEXT, "dup2");
    check(new_fd, "dup2");
    return real_dup2(old_fd, new_fd);
}

int dup3(int old_fd, int new_fd, int flags)
{
    if (real_dup3 == NULL)
        real_dup3 = (int (*)(int, int, int))dlsym(RTLD_NEXT, "dup3");
    check(new_fd, "dup3");
    return real_dup3(old_fd, new_fd, flags);
}
