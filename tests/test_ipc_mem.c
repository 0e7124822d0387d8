/* Interprocess memory: export a key, import it in another process (the
 * test spawns itself), whitelists, close, a dead exporter, forged keys,
 * bad input. */
#include "test.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

/* The child side: IPCMEM_CHILD=mode, IPCMEM_KEY=key.  Exit status: the
 * evrt status of the import (0 on success), or 200+ for a wrong value. */
__attribute__((constructor)) static void child_main(void) {
  const char *mode = getenv("IPCMEM_CHILD");
  if (!mode)
    return;
  if (!strcmp(mode, "export")) {
    /* an exporter that prints its key and exits */
    void *p;
    char key[EVRT_IPC_MEM_KEY_SIZE];
    if (evrt_ipc_mem_alloc(4096, &p) ||
        evrt_ipc_mem_export(p, 4096, EVRT_IPC_MEM_NO_PID_CHECK, key))
      _exit(201);
    printf("%s\n", key);
    fflush(stdout);
    _exit(0);
  }
  if (!strcmp(mode, "wait")) {
    char c;
    if (read(0, &c, 1) != 1)
      _exit(202);
  }
  const char *key = getenv("IPCMEM_KEY");
  void *p = NULL;
  size_t n = 0;
  evrt_status_t st = evrt_ipc_mem_import(key, 0, &p, &n);
  if (st)
    _exit((int)st);
  unsigned char *b = p;
  if (n != (1u << 20) || b[0] != 0x5a || b[n - 1] != 0xa5)
    _exit(203);
  b[4096] = 0xab; /* seen by the exporter */
  if (evrt_ipc_mem_close(key) != EVRT_SUCCESS)
    _exit(204);
  if (evrt_ipc_mem_close(key) != EVRT_ERROR_INVALID_VALUE)
    _exit(205);
  _exit(0);
}

/* Spawn this binary as a child; in_fd (or -1) becomes its stdin, out_fd
 * (or -1) its stdout. */
static pid_t spawn(const char *mode, const char *key, int in_fd, int out_fd) {
  char envm[64], envk[128];
  snprintf(envm, sizeof envm, "IPCMEM_CHILD=%s", mode);
  snprintf(envk, sizeof envk, "IPCMEM_KEY=%s", key ? key : "");
  char *env[] = {envm, envk, NULL};
  char *argv[] = {"test_ipc_mem", NULL};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (in_fd >= 0)
    posix_spawn_file_actions_adddup2(&fa, in_fd, 0);
  if (out_fd >= 0)
    posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
  pid_t pid = -1;
  if (posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, env) != 0)
    pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

static int wait_exit(pid_t pid) {
  int ws = 0;
  if (waitpid(pid, &ws, 0) != pid || !WIFEXITED(ws))
    return -1;
  return WEXITSTATUS(ws);
}

static unsigned char *shared_block(char key[EVRT_IPC_MEM_KEY_SIZE],
                                   unsigned flags) {
  void *p = NULL;
  if (evrt_ipc_mem_alloc(1u << 20, &p))
    return NULL;
  unsigned char *b = p;
  b[0] = 0x5a;
  b[(1u << 20) - 1] = 0xa5;
  if (evrt_ipc_mem_export(p, 1u << 20, flags, key))
    return NULL;
  return b;
}

TEST(another_process_maps_the_same_pages) {
  char key[EVRT_IPC_MEM_KEY_SIZE];
  unsigned char *b = shared_block(key, EVRT_IPC_MEM_NO_PID_CHECK);
  ASSERT(b != NULL);
  ASSERT_EQ(strlen(key), 64);
  pid_t pid = spawn("import", key, -1, -1);
  ASSERT(pid > 0);
  ASSERT_EQ(wait_exit(pid), 0);
  ASSERT_EQ(b[4096], 0xab);
  /* exporting the same range again gives the same key */
  char again[EVRT_IPC_MEM_KEY_SIZE];
  ASSERT_OK(evrt_ipc_mem_export(b, 1u << 20, EVRT_IPC_MEM_NO_PID_CHECK, again));
  ASSERT_EQ(strcmp(again, key), 0);
  ASSERT_ST(evrt_ipc_mem_export(b, 4096, EVRT_IPC_MEM_NO_PID_CHECK, again),
            EVRT_ERROR_NOT_PERMITTED);
  ASSERT_OK(evrt_ipc_mem_close(key));
  ASSERT_OK(evrt_ipc_mem_free(b));
}

TEST(only_whitelisted_processes_import) {
  char key[EVRT_IPC_MEM_KEY_SIZE];
  unsigned char *b = shared_block(key, 0);
  ASSERT(b != NULL);
  pid_t pid = spawn("import", key, -1, -1);
  ASSERT(pid > 0);
  ASSERT_EQ(wait_exit(pid), EVRT_ERROR_NOT_PERMITTED);
  ASSERT_EQ(b[4096], 0);
  /* a child that waits until its pid is listed */
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  pid = spawn("wait", key, go[0], -1);
  ASSERT(pid > 0);
  close(go[0]);
  int32_t pids[2] = {1, (int32_t)pid};
  ASSERT_OK(evrt_ipc_mem_set_import_pids(key, pids, 2));
  ASSERT_EQ(write(go[1], "g", 1), 1);
  close(go[1]);
  ASSERT_EQ(wait_exit(pid), 0);
  ASSERT_EQ(b[4096], 0xab);
  ASSERT_OK(evrt_ipc_mem_free(b));
}

TEST(closed_or_freed_keys_no_longer_import) {
  char key[EVRT_IPC_MEM_KEY_SIZE];
  unsigned char *b = shared_block(key, EVRT_IPC_MEM_NO_PID_CHECK);
  ASSERT(b != NULL);
  ASSERT_OK(evrt_ipc_mem_close(key));
  ASSERT_ST(evrt_ipc_mem_close(key), EVRT_ERROR_INVALID_VALUE);
  pid_t pid = spawn("import", key, -1, -1);
  ASSERT_EQ(wait_exit(pid), EVRT_ERROR_IPC_HANDLE);
  ASSERT_EQ(b[0], 0x5a); /* ours still */
  ASSERT_OK(evrt_ipc_mem_free(b));
  unsigned char *c = shared_block(key, EVRT_IPC_MEM_NO_PID_CHECK);
  ASSERT(c != NULL);
  ASSERT_OK(evrt_ipc_mem_free(c)); /* freed without closing */
  pid = spawn("import", key, -1, -1);
  int code = wait_exit(pid);
  ASSERT(code == EVRT_ERROR_IPC_HANDLE);
}

TEST(a_dead_exporter_is_peer_lost) {
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  pid_t pid = spawn("export", NULL, -1, out[1]);
  ASSERT(pid > 0);
  close(out[1]);
  char key[EVRT_IPC_MEM_KEY_SIZE + 1] = {0};
  ssize_t got = 0;
  while (got < 64) {
    ssize_t r = read(out[0], key + got, (size_t)(64 - got));
    if (r <= 0)
      break;
    got += r;
  }
  close(out[0]);
  ASSERT_EQ(got, 64);
  key[64] = 0;
  ASSERT_EQ(wait_exit(pid), 0);
  void *p;
  ASSERT_ST(evrt_ipc_mem_import(key, 0, &p, NULL), EVRT_ERROR_PEER_LOST);
}

TEST(forged_and_own_keys_are_refused) {
  char key[EVRT_IPC_MEM_KEY_SIZE];
  unsigned char *b = shared_block(key, EVRT_IPC_MEM_NO_PID_CHECK);
  ASSERT(b != NULL);
  void *p;
  ASSERT_ST(evrt_ipc_mem_import(key, 0, &p, NULL),
            EVRT_ERROR_IPC_SAME_PROCESS);
  char bad[EVRT_IPC_MEM_KEY_SIZE];
  memcpy(bad, key, sizeof bad);
  bad[20] = bad[20] == '0' ? '1' : '0'; /* checksum no longer matches */
  ASSERT_ST(evrt_ipc_mem_import(bad, 0, &p, NULL), EVRT_ERROR_IPC_HANDLE);
  ASSERT_ST(evrt_ipc_mem_import("zz", 0, &p, NULL), EVRT_ERROR_IPC_HANDLE);
  ASSERT_ST(evrt_ipc_mem_import("", 0, &p, NULL), EVRT_ERROR_IPC_HANDLE);
  ASSERT_ST(evrt_ipc_mem_import(NULL, 0, &p, NULL), EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_ipc_mem_import(key, 0, NULL, NULL), EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_ipc_mem_import(key, 4, &p, NULL), EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_ipc_mem_close(bad), EVRT_ERROR_IPC_HANDLE);
  ASSERT_OK(evrt_ipc_mem_free(b));
}

TEST(bad_input_changes_nothing) {
  void *p = NULL;
  char key[EVRT_IPC_MEM_KEY_SIZE];
  ASSERT_ST(evrt_ipc_mem_alloc(0, &p), EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_ipc_mem_alloc(64, NULL), EVRT_ERROR_INVALID_VALUE);
  ASSERT_OK(evrt_ipc_mem_alloc(10000, &p));
  char *c = p;
  ASSERT_ST(evrt_ipc_mem_export(c + 1, 64, 0, key), EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_ipc_mem_export(c, 20000, 0, key), EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_ipc_mem_export(c, 0, 0, key), EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_ipc_mem_export(c, 64, 8, key), EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_ipc_mem_export(c, 64, 0, NULL), EVRT_ERROR_INVALID_VALUE);
  static char heap_like[8192];
  ASSERT_ST(evrt_ipc_mem_export(heap_like, 64, 0, key),
            EVRT_ERROR_INVALID_VALUE);
  ASSERT_OK(evrt_ipc_mem_export(c + 4096, 64, 0, key));
  int32_t pid = 0;
  ASSERT_ST(evrt_ipc_mem_set_import_pids(key, &pid, 1),
            EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_ipc_mem_set_import_pids(key, NULL, 1),
            EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_ipc_mem_free(c + 4096), EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_ipc_mem_free(heap_like), EVRT_ERROR_INVALID_VALUE);
  ASSERT_OK(evrt_ipc_mem_free(c));
  ASSERT_ST(evrt_ipc_mem_free(c), EVRT_ERROR_INVALID_VALUE);
  ASSERT_ST(evrt_ipc_mem_set_import_pids(key, &pid, 1),
            EVRT_ERROR_INVALID_VALUE);
}
