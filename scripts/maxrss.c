/* maxrss FD COMMAND [ARG...]: run COMMAND as this process's child, with the same stdin, stdout and
 * stderr; wait for it; write its peak resident set (wait4's ru_maxrss, KiB) and a newline to the file
 * descriptor FD; exit as it did (its exit status, or the signal that ended it, raised again). A COMMAND
 * that cannot start is `cannot start COMMAND: why` on stderr, exit status 127, and nothing on FD.
 *
 * Why a program of its own: Linux keeps a process's peak across exec, and a child that Python starts
 * (vfork and exec) begins with the Python harness's own peak. A child forked from this small process
 * begins with this process's peak, about a megabyte (scripts/harness/processes.py). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    char *end;
    long fd = argc >= 3 ? strtol(argv[1], &end, 10) : -1;
    if (argc < 3 || *end != '\0' || fd < 0) {
        fprintf(stderr, "error: usage: maxrss FD COMMAND [ARG...]\n");
        return 2;
    }
    int exec_error[2];   /* the child's errno if exec fails; closed by a successful exec */
    if (pipe2(exec_error, O_CLOEXEC) != 0) {
        fprintf(stderr, "error: maxrss: pipe: %s\n", strerror(errno));
        return 127;
    }
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "error: maxrss: fork: %s\n", strerror(errno));
        return 127;
    }
    if (pid == 0) {
        close((int)fd);
        close(exec_error[0]);
        execvp(argv[2], argv + 2);
        int why = errno;
        if (write(exec_error[1], &why, sizeof why) < 0) _exit(127);
        _exit(127);
    }
    close(exec_error[1]);
    int why;
    ssize_t got;
    while ((got = read(exec_error[0], &why, sizeof why)) < 0 && errno == EINTR) {
    }
    int status;
    struct rusage usage;
    while (wait4(pid, &status, 0, &usage) < 0) {
        if (errno != EINTR) {
            fprintf(stderr, "error: maxrss: wait4: %s\n", strerror(errno));
            return 127;
        }
    }
    if (got == (ssize_t)sizeof why) {
        fprintf(stderr, "cannot start %s: %s\n", argv[2], strerror(why));
        return 127;
    }
    dprintf((int)fd, "%ld\n", usage.ru_maxrss);
    close((int)fd);
    if (WIFSIGNALED(status)) {
        signal(WTERMSIG(status), SIG_DFL);
        raise(WTERMSIG(status));
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 127;
}
