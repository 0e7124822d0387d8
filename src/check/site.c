/*
 * site.c - call sites for the checker's reports: the calling thread's
 * stack, captured at each enqueue, record and annotated access, interned
 * as a 32-bit id; turned into "function (file:line)" only when a report
 * prints it.
 *
 * Unwinding: libunwind's unw_backtrace (~100 ns for a short stack here,
 * against ~2 us for glibc's backtrace), loaded with dlopen when the
 * checker starts, so that a process with EVRT_CHECK unset never maps it
 * and libunwind's _Unwind_* symbols never interpose the C++ runtime's
 * (RTLD_LOCAL).  Without it, or under a sanitizer (under_sanitizer),
 * glibc's backtrace.
 * Symbols: elfutils' libdw (dwfl: module, function name, source line),
 * loaded with dlopen at the first report; compiled in when its header was
 * found (EVRT_HAVE_LIBDW).  Without it, dladdr: exported names and
 * addresses.
 *
 * The site table is an insert-only open-addressing hash (lock-free: a
 * slot is claimed with one CAS); symbolization runs under the report lock.
 */
#include "cimpl.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef EVRT_HAVE_LIBDW
#include <elfutils/libdwfl.h>
#endif

#define SITE_FRAMES 12
#define SITE_TABLE (1u << 16)

/* A stack (n frames), or a label a language binding gave (n = -1: the
 * string follows, evrt_check_site_api; api: the API it named). */
struct site {
  uint64_t hash;
  int n;
  unsigned api;
  void *pc[];
};
static _Thread_local uint32_t tls_hint; /* evrt_check_site's, 0: none */

static _Atomic(struct site *) table[SITE_TABLE];
static int (*unw_bt)(void **, int);
static pthread_once_t unw_once = PTHREAD_ONCE_INIT;

/* Under valgrind libunwind's address checks (a write() of the stack to a
 * pipe) read uninitialised bytes: use glibc's unwinder there. */
static bool under_valgrind(void) {
  FILE *f = fopen("/proc/self/maps", "r");
  if (!f)
    return false;
  char line[512];
  bool hit = false;
  while (!hit && fgets(line, sizeof line, f))
    hit = strstr(line, "vgpreload") != NULL;
  fclose(f);
  return hit;
}

/* A sanitizer runtime (ASan, LSan, TSan, MSan: in this library or in the
 * program) is in the process.  Their __tls_get_addr interceptor guesses
 * where a thread's dynamic TLS block of a dlopen'd library begins and how
 * big it is; the guess of gcc 12's runtime for glibc >= 2.19 reads the 16
 * bytes before a block that starts 16 bytes into a page as a {size, start}
 * header glibc no longer writes.  libunwind's block is a 16-byte malloc,
 * one in 128 of which starts there under ASan's allocator: LeakSanitizer
 * then scans a garbage range of a live worker at exit and its tracer
 * crashes ("Tracer caught signal 11", check_native.hostfn_ordered).  The
 * unwinder of glibc (libgcc_s, no TLS, loaded with the runtime) has no
 * dynamic TLS to guess. */
static bool under_sanitizer(void) {
  return dlsym(RTLD_DEFAULT, "__sanitizer_get_allocated_size") != NULL;
}

static void unw_load(void) {
#if defined(__SANITIZE_THREAD__)
  /* libunwind's thread-exit destructor takes a mutex that ThreadSanitizer
   * intercepts after it has let go of the thread (a crash at the exit of a
   * worker that unwound): glibc's unwinder under TSan. */
  return;
#endif
  if (under_valgrind() || under_sanitizer())
    return;
  /* RTLD_LOCAL: its _Unwind_* must not interpose the process's */
  void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
  if (!h)
    return;
  void *f = dlsym(h, "unw_backtrace");
  if (f)
    memcpy(&unw_bt, &f, sizeof f);
}

static uint64_t hash_pcs(void **pc, int n) {
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < n; i++) {
    h ^= (uint64_t)(uintptr_t)pc[i];
    h *= 1099511628211ull;
  }
  return h ^ (h >> 29);
}

static uint32_t intern(uint64_t h, int n, unsigned api, const void *data,
                       size_t bytes) {
  for (uint32_t i = 0; i < SITE_TABLE; i++) {
    uint32_t k = (uint32_t)(h + i) & (SITE_TABLE - 1);
    /* acquire: a site published by another thread is seen whole */
    struct site *s = atomic_load_explicit(&table[k], memory_order_acquire);
    if (!s) {
      struct site *ns = malloc(sizeof *ns + bytes);
      if (!ns)
        return 0;
      ns->hash = h;
      ns->n = n;
      ns->api = api;
      memcpy(ns->pc, data, bytes);
      struct site *exp = NULL;
      /* acq_rel: publish ours or see the winner's */
      if (atomic_compare_exchange_strong_explicit(&table[k], &exp, ns,
                                                  memory_order_acq_rel,
                                                  memory_order_acquire))
        return k + 1;
      free(ns);
      s = exp;
    }
    if (s->hash == h && s->n == n && s->api == api &&
        memcmp(s->pc, data, bytes) == 0)
      return k + 1;
  }
  return 0; /* table full */
}

void evrt__site_hint(const char *where, unsigned api) {
  if (!where) {
    tls_hint = 0;
    return;
  }
  size_t len = strnlen(where, 255);
  char buf[256];
  memcpy(buf, where, len);
  buf[len] = 0;
  uint64_t h = 0x9e3779b97f4a7c15ull ^ api;
  for (size_t i = 0; i < len; i++)
    h = (h ^ (unsigned char)buf[i]) * 1099511628211ull;
  tls_hint = intern(h, -1, api, buf, len + 1);
}

uint32_t evrt__site_capture(void) {
  if (tls_hint)
    return tls_hint;
  pthread_once(&unw_once, unw_load);
  void *pc[SITE_FRAMES + 1];
  int n = unw_bt ? unw_bt(pc, SITE_FRAMES + 1) : backtrace(pc, SITE_FRAMES + 1);
  if (n <= 1)
    return 0;
  /* frame 0 is this function */
  void **v = pc + 1;
  n--;
  return intern(hash_pcs(v, n), n, EVRT_CHECK_API_C, v,
                (size_t)n * sizeof(void *));
}

static struct site *site_get(uint32_t id) {
  if (id == 0 || id > SITE_TABLE)
    return NULL;
  return atomic_load_explicit(&table[id - 1], memory_order_acquire);
}



/* ------------------------------------------------------- symbolization */

/* Objects whose frames are the runtime, not the user's call: libevrt (or
 * the module the core is compiled into), the ACL layer, the Python
 * extension. */
static void *self_base;
static bool is_runtime(void *pc) {
  Dl_info di;
  if (!dladdr(pc, &di))
    return false;
  if (!self_base) {
    Dl_info me;
    if (dladdr((void *)evrt__site_capture, &me))
      self_base = me.dli_fbase;
  }
  if (di.dli_fbase == self_base)
    return true;
  const char *f = di.dli_fname ? strrchr(di.dli_fname, '/') : NULL;
  f = f ? f + 1 : di.dli_fname;
  return f && (strncmp(f, "libascendcl", 11) == 0 ||
               strncmp(f, "libevrt", 7) == 0 || strncmp(f, "_evrt", 5) == 0);
}

#ifdef EVRT_HAVE_LIBDW
static struct {
  bool tried;
  Dwfl *dwfl;
  Dwfl *(*begin)(const Dwfl_Callbacks *);
  int (*proc_report)(Dwfl *, pid_t);
  int (*report_end)(Dwfl *, int (*)(Dwfl_Module *, void *, const char *,
                                    Dwarf_Addr, void *),
                    void *);
  Dwfl_Module *(*addrmodule)(Dwfl *, Dwarf_Addr);
  const char *(*addrname)(Dwfl_Module *, GElf_Addr);
  Dwfl_Line *(*getsrc)(Dwfl_Module *, Dwarf_Addr);
  const char *(*lineinfo)(Dwfl_Line *, Dwarf_Addr *, int *, int *, Dwarf_Word *,
                          Dwarf_Word *);
  Dwfl_Callbacks cb;
} dw;

#define DW_SYM(field, name)                                                    \
  do {                                                                         \
    void *p_ = dlsym(h, name);                                                 \
    if (!p_)                                                                   \
      return;                                                                  \
    memcpy(&dw.field, &p_, sizeof p_);                                         \
  } while (0)

static void dw_load(void) {
  dw.tried = true;
  void *h = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h)
    return;
  DW_SYM(begin, "dwfl_begin");
  DW_SYM(proc_report, "dwfl_linux_proc_report");
  DW_SYM(report_end, "dwfl_report_end");
  DW_SYM(addrmodule, "dwfl_addrmodule");
  DW_SYM(addrname, "dwfl_module_addrname");
  DW_SYM(getsrc, "dwfl_module_getsrc");
  DW_SYM(lineinfo, "dwfl_lineinfo");
  DW_SYM(cb.find_elf, "dwfl_linux_proc_find_elf");
  DW_SYM(cb.find_debuginfo, "dwfl_standard_find_debuginfo");
  Dwfl *d = dw.begin(&dw.cb);
  if (!d)
    return;
  if (dw.proc_report(d, getpid()) != 0 || dw.report_end(d, NULL, NULL) != 0)
    return;
  dw.dwfl = d;
}
#endif

struct frame {
  const char *fn, *file;
  int line;
  uintptr_t pc;
  char buf[160];
};

static void describe(void *pc, struct frame *fr) {
  /* a return address: the call is the byte before */
  uintptr_t a = (uintptr_t)pc - 1;
  fr->fn = fr->file = NULL;
  fr->line = 0;
  fr->pc = (uintptr_t)pc;
#ifdef EVRT_HAVE_LIBDW
  if (!dw.tried)
    dw_load();
  if (dw.dwfl) {
    Dwfl_Module *m = dw.addrmodule(dw.dwfl, a);
    if (m) {
      fr->fn = dw.addrname(m, a);
      Dwfl_Line *l = dw.getsrc(m, a);
      if (l) {
        const char *f = dw.lineinfo(l, NULL, &fr->line, NULL, NULL, NULL);
        if (f) {
          const char *b = strrchr(f, '/');
          fr->file = b ? b + 1 : f;
        }
      }
    }
  }
#endif
  if (!fr->fn) {
    Dl_info di;
    if (dladdr((void *)a, &di) && di.dli_sname) {
      fr->fn = di.dli_sname;
    } else if (dladdr((void *)a, &di) && di.dli_fname) {
      const char *b = strrchr(di.dli_fname, '/');
      snprintf(fr->buf, sizeof fr->buf, "%s+0x%lx", b ? b + 1 : di.dli_fname,
               (unsigned long)(a - (uintptr_t)di.dli_fbase));
      fr->fn = fr->buf;
    }
  }
}

/* Index of the first user frame of s (past the runtime's own). */
static int first_user(const struct site *s) {
  int i = 0;
  while (i < s->n && is_runtime(s->pc[i]))
    i++;
  return i < s->n ? i : (s->n ? s->n - 1 : 0);
}

/* The ACL layer's frame: its call came through libascendcl (or a program
 * the layer is compiled into: then its aclrt* function's name says so). */
static bool is_acl(void *pc) {
  Dl_info di;
  if (!dladdr(pc, &di))
    return false;
  const char *f = di.dli_fname ? strrchr(di.dli_fname, '/') : NULL;
  f = f ? f + 1 : di.dli_fname;
  return (f && strncmp(f, "libascendcl", 11) == 0) ||
         (di.dli_sname && strncmp(di.dli_sname, "aclrt", 5) == 0);
}

unsigned evrt__site_api(uint32_t id) {
  struct site *s = site_get(id);
  if (!s)
    return EVRT_CHECK_API_C;
  if (s->n < 0)
    return s->api;
  /* the runtime's frames below the user's: did it call into ACL? */
  int u = first_user(s);
  for (int i = 0; i < u; i++)
    if (is_acl(s->pc[i]))
      return EVRT__CHECK_API_ACL;
  return EVRT_CHECK_API_C;
}

static void put_frame(FILE *f, const struct frame *fr) {
  fprintf(f, "%s", fr->fn ? fr->fn : "??");
  if (fr->file)
    fprintf(f, " (%s:%d)", fr->file, fr->line);
  else
    fprintf(f, " (0x%lx)", (unsigned long)fr->pc);
}

void evrt__site_print(FILE *f, uint32_t id, const char *indent, int more) {
  struct site *s = site_get(id);
  if (!s) {
    fprintf(f, "an unknown call site\n");
    return;
  }
  if (s->n < 0) {
    fprintf(f, "%s\n", (const char *)s->pc);
    return;
  }
  int i = first_user(s);
  struct frame fr;
  describe(s->pc[i], &fr);
  put_frame(f, &fr);
  fprintf(f, "\n");
  if (fr.fn && strcmp(fr.fn, "main") == 0)
    return;
  for (int k = 1; k <= more && i + k < s->n; k++) {
    describe(s->pc[i + k], &fr);
    if (!fr.fn)
      break;
    fprintf(f, "%s  called from ", indent);
    put_frame(f, &fr);
    fprintf(f, "\n");
    if (strcmp(fr.fn, "main") == 0)
      break;
  }
}

void evrt__site_frame(uint32_t id, const char **fn, const char **file,
                      int *line, uintptr_t *pc) {
  static struct frame fr;
  struct site *s = site_get(id);
  *fn = *file = NULL;
  *line = 0;
  *pc = 0;
  if (!s)
    return;
  if (s->n < 0) {
    *fn = (const char *)s->pc; /* the label, whole */
    return;
  }
  describe(s->pc[first_user(s)], &fr);
  *fn = fr.fn;
  *file = fr.file;
  *line = fr.line;
  *pc = fr.pc;
}
