/* Shared by the interprocess tests: start a peer process with posix_spawn
 * (its stdout on a pipe), read its lines with a deadline, reap it.  Needs
 * harness.h (now_ns). */
#ifndef IPC_SPAWN_H
#define IPC_SPAWN_H
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
#define MS 1000000ull

struct peer {
  pid_t pid;
  int fd;
  char buf[4096];
  size_t len;
};

/* Start `path a1 a2 a3 a4` (trailing NULLs end the list); 0 on success. */
static inline int peer_spawn(struct peer *p, const char *path, const char *a1,
                             const char *a2, const char *a3, const char *a4) {
  int fds[2];
  if (pipe(fds))
    return -1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  char *argv[] = {(char *)path, (char *)a1, (char *)a2,
                  (char *)a3,   (char *)a4, NULL};
  int r = posix_spawn(&p->pid, path, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  p->fd = fds[0];
  p->len = 0;
  return r;
}

/* Next line starting with key, within ms; NULL on timeout or EOF. */
static inline char *read_line(struct peer *p, const char *key, unsigned ms) {
  static char line[4096];
  uint64_t dl = now_ns() + ms * MS;
  for (;;) {
    char *nl = memchr(p->buf, '\n', p->len);
    if (nl) {
      size_t n = (size_t)(nl - p->buf);
      memcpy(line, p->buf, n);
      line[n] = 0;
      memmove(p->buf, nl + 1, p->len - n - 1);
      p->len -= n + 1;
      if (!strncmp(line, key, strlen(key)))
        return line;
      if (!strncmp(line, "error", 5))
        fprintf(stderr, "  peer: %s\n", line);
      continue;
    }
    uint64_t now = now_ns();
    if (now >= dl)
      return NULL;
    struct pollfd pf = {p->fd, POLLIN, 0};
    if (poll(&pf, 1, (int)((dl - now) / MS) + 1) <= 0)
      continue;
    ssize_t r = read(p->fd, p->buf + p->len, sizeof p->buf - 1 - p->len);
    if (r <= 0)
      return NULL;
    p->len += (size_t)r;
  }
}

static inline int reap(struct peer *p) {
  int status = 0;
  waitpid(p->pid, &status, 0);
  close(p->fd);
  return status;
}
#endif
