/* compile.c -- turns a generated translation unit into a loaded function: finds the
 * system C compiler, runs it (posix_spawn, with a timeout) through the disk cache, loads
 * with dlopen -- a cached object only after its size and hash match what was stored
 * beside it when it was compiled. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/cpu/cpu.h"
#include "core/config.h"
#include "core/error.h"

extern char **environ;

/* No fast-math: + - * / sqrt must match the interpreter bit for bit. -ffp-contract=off
 * forbids fused multiply-adds; -fno-math-errno only lets sqrt inline (and vectorize),
 * since generated code never reads errno; -fno-trapping-math lets the vectorizer
 * if-convert float arithmetic behind a select (no kernel enables FP traps; values are
 * unchanged): jax.random.gumbel's log, which GCC's partial redundancy elimination
 * splits at its clamp to the smallest normal, stayed a scalar loop without it. Two optimization levels (CompileOpt): -O3 for
 * kernels with work enough to matter, and for small ones (cpu.c's kernel_opt) -O1 with
 * GCC's loop vectorizer -- about a third of -O3's compile time per kernel (a jit
 * program's first call is almost all compile time), within 0.1-0.3 us per call of -O3
 * on such kernels, some faster (bench/RESULTS.md, issue 11 item 5). Clang accepts the
 * same flags. */
#define FLAGS_COMMON "-march=native -ffp-contract=off -fno-math-errno -fno-trapping-math -fPIC -shared -w -pipe"
static const char *const opt_flags[COMPILE_OPT_COUNT] = {
    [COMPILE_OPT_FULL] = "-O3 " FLAGS_COMMON,
    [COMPILE_OPT_LIGHT] = "-O1 -ftree-vectorize " FLAGS_COMMON,
};

/* Disk cache: <dir>/<kernel name>-<key hash>.c and .so, where the key hashes the
 * source with the compiler (command and --version), the flags and the CPU. The .c file
 * starts with a header recording that key, so reuse compares the stored file byte for
 * byte with what would be written now -- a hash alone never decides. Beside the .so, a
 * .so.check file records its size and FNV-1a hash: a damaged object (truncated, zeroed
 * pages: dlopen would die of SIGBUS/SIGSEGV) or a missing record means compiling again,
 * never loading. */
#define MAX_ARGS 32
#define PATH_CAP COMPILE_PATH_MAX

static struct {
  bool configured, found;
  char command[1024];        /* as configured, e.g. "ccache gcc" */
  char words[1024];          /* command split in place */
  char *argv[MAX_ARGS];      /* the command's words */
  int argc;
  char version[256];         /* first line of `command --version` ("" until asked) */
  bool version_known;
  uint64_t cpu_hash;         /* FNV-1a of the CPU's flags (-march=native depends on it) */
  char dir[PATH_CAP];        /* writable cache directory ("" until first needed) */
} cc;

/* snprintf into a path buffer of PATH_CAP bytes; false (and a cut path) if too long. */
static bool path_printf(char *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool path_printf(char *buf, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, PATH_CAP, fmt, ap);
  va_end(ap);
  return n >= 0 && n < PATH_CAP;
}

static uint64_t fnv1a(uint64_t h, const void *p, size_t n) {
  const unsigned char *s = p;
  for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 0x100000001b3ull;
  return h;
}
#define FNV_INIT 0xcbf29ce484222325ull

/* --------------------------------------------------------------- compiler */

static bool executable(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* Whether `name` runs: a path, or found on PATH. */
static bool on_path(const char *name) {
  if (strchr(name, '/')) return executable(name);
  const char *path = getenv("PATH");
  if (!path) path = "/usr/bin:/bin";
  char buf[PATH_CAP];
  for (const char *p = path; *p;) {
    const char *end = strchr(p, ':');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len && len + strlen(name) + 2 < sizeof buf) {
      memcpy(buf, p, len);
      buf[len] = '/';
      strcpy(buf + len + 1, name);
      if (executable(buf)) return true;
    }
    if (!end) break;
    p = end + 1;
  }
  return false;
}

static void split_command(void) {
  snprintf(cc.words, sizeof cc.words, "%s", cc.command);
  cc.argc = 0;
  char *save = NULL;
  for (char *p = strtok_r(cc.words, " \t", &save); p && cc.argc < MAX_ARGS - 8;
       p = strtok_r(NULL, " \t", &save))
    cc.argv[cc.argc++] = p;
}

static uint64_t cpu_flags_hash(void) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  uint64_t h = FNV_INIT;
  if (!f) return h;
  char line[8192];
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "flags", 5) == 0 || strncmp(line, "Features", 8) == 0 ||
        strncmp(line, "model name", 10) == 0) {
      h = fnv1a(h, line, strlen(line));
      if (line[0] != 'm') break; /* the first processor's flags are enough */
    }
  fclose(f);
  return h;
}

void compile_configure(void) {
  memset(&cc, 0, sizeof cc);
  cc.configured = true;
  const char *env = config_cc();
  if (env) {
    snprintf(cc.command, sizeof cc.command, "%s", env);
    split_command();
    cc.found = cc.argc > 0 && on_path(cc.argv[0]);
  } else {
    static const char *const candidates[] = {"cc", "gcc", "clang"};
    for (size_t i = 0; i < sizeof candidates / sizeof *candidates && !cc.found; i++)
      if (on_path(candidates[i])) {
        snprintf(cc.command, sizeof cc.command, "%s", candidates[i]);
        split_command();
        cc.found = true;
      }
  }
  cc.cpu_hash = cpu_flags_hash();
}

bool compile_available(void) {
  if (!cc.configured) compile_configure();
  return cc.found;
}

const char *compile_command(void) { return cc.command; }
const char *compile_flags(CompileOpt opt) { return opt_flags[opt]; }

/* ------------------------------------------------------------- processes */

/* Runs argv with stdout and stderr sent to log_path, in a process group of its own, for
 * at most config_compile_timeout() seconds (then the whole group is killed: a compiler
 * script's children too); returns the exit status, or -1 when it could not start, -2
 * when it died of a signal, -3 when it timed out. */
#define RUN_FAILED_START -1
#define RUN_CRASHED -2
#define RUN_TIMED_OUT -3
static int run(char *const *argv, const char *log_path) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, &attr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return RUN_FAILED_START;
  double limit_s = config_compile_timeout();
  struct timespec t0, now, nap = {0, 1000000}; /* polls from 1 ms, backing off to 50 ms */
  clock_gettime(CLOCK_MONOTONIC, &t0);
  /* Where the kernel has pidfds (Linux 5.3), sleep in poll() until the child exits: the
   * backing-off poll below noticed a compile's end up to 50 ms late (a 180 ms unit was
   * seen at 213 ms), a sixth of a jit program's first call. */
  int pfd = -1;
#ifdef SYS_pidfd_open
  pfd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
  int status;
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) {
      if (pfd >= 0) close(pfd);
      return RUN_FAILED_START;
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    double spent = (double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) * 1e-9;
    if (spent > limit_s) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
      if (pfd >= 0) close(pfd);
      return RUN_TIMED_OUT;
    }
    if (pfd >= 0) {
      struct pollfd pf = {.fd = pfd, .events = POLLIN};
      double left_ms = (limit_s - spent) * 1e3 + 1;
      poll(&pf, 1, left_ms > 1000 ? 1000 : (int)left_ms); /* readable once the child exits */
      continue;
    }
    nanosleep(&nap, NULL);
    if (nap.tv_nsec < 50000000) nap.tv_nsec *= 2;
  }
  if (pfd >= 0) close(pfd);
  return WIFEXITED(status) ? WEXITSTATUS(status) : RUN_CRASHED;
}

/* Reads up to cap-1 bytes of a file into buf (NUL-terminated); returns the length. */
static size_t read_head(const char *path, char *buf, size_t cap) {
  buf[0] = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  size_t n = fread(buf, 1, cap - 1, f);
  buf[n] = 0;
  fclose(f);
  return n;
}

/* --------------------------------------------------------------- disk cache */

static bool mkdir_p(const char *dir) {
  char buf[PATH_CAP];
  if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf) return false;
  for (char *p = buf + 1; *p; p++)
    if (*p == '/') {
      *p = 0;
      if (mkdir(buf, 0755) != 0 && errno != EEXIST) return false;
      *p = '/';
    }
  if (mkdir(buf, 0755) != 0 && errno != EEXIST) return false;
  return access(buf, W_OK | X_OK) == 0;
}

/* The cache directory: the configured one, else a per-user one under TMPDIR. */
static bool cache_dir(void) {
  if (cc.dir[0]) return true;
  char dir[PATH_CAP];
  if (config_cache_dir(dir, sizeof dir) && mkdir_p(dir)) {
    snprintf(cc.dir, sizeof cc.dir, "%s", dir);
    return true;
  }
  if (path_printf(dir, "%s/jaxc-%ld", config_tmp_dir(), (long)getuid()) && mkdir_p(dir)) {
    snprintf(cc.dir, sizeof cc.dir, "%s", dir);
    return true;
  }
  return false;
}

static void compiler_version(void) {
  if (cc.version_known) return;
  cc.version_known = true;
  char log[PATH_CAP];
  path_printf(log, "%s/version.%ld.tmp", cc.dir, (long)getpid());
  char *argv[MAX_ARGS + 2];
  for (int i = 0; i < cc.argc; i++) argv[i] = cc.argv[i];
  argv[cc.argc] = "--version";
  argv[cc.argc + 1] = NULL;
  if (run(argv, log) == 0) {
    char head[sizeof cc.version];
    read_head(log, head, sizeof head);
    head[strcspn(head, "\n")] = 0;
    snprintf(cc.version, sizeof cc.version, "%s", head);
  }
  unlink(log);
}

/* Whether the file at path holds exactly text[0..len). */
static bool file_equals(const char *path, const char *text, size_t len) {
  FILE *f = fopen(path, "rb");
  if (!f) return false;
  bool same = true;
  char buf[65536];
  size_t off = 0, n;
  while (same && (n = fread(buf, 1, sizeof buf, f)) > 0) {
    same = off + n <= len && memcmp(buf, text + off, n) == 0;
    off += n;
  }
  fclose(f);
  return same && off == len;
}

/* Writes text atomically (temporary file + rename). */
static bool write_file(const char *path, const char *text, size_t len) {
  static atomic_int counter;
  char tmp[PATH_CAP];
  if (!path_printf(tmp, "%s.%ld.%d.tmp", path, (long)getpid(), atomic_fetch_add(&counter, 1)))
    return false;
  FILE *f = fopen(tmp, "wb");
  if (!f) return false;
  bool ok = fwrite(text, 1, len, f) == len;
  ok = fclose(f) == 0 && ok;
  if (ok) ok = rename(tmp, path) == 0;
  if (!ok) unlink(tmp);
  return ok;
}

/* Size and FNV-1a hash of a file's bytes; false if it cannot be read. */
static bool file_digest(const char *path, long long *size, uint64_t *hash) {
  FILE *f = fopen(path, "rb");
  if (!f) return false;
  char buf[65536];
  size_t n;
  *size = 0;
  *hash = FNV_INIT;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) *hash = fnv1a(*hash, buf, n), *size += (long long)n;
  bool ok = !ferror(f);
  fclose(f);
  return ok;
}

#define CHECK_FORMAT "jaxc shared object: size %lld, fnv1a %016" PRIx64 "\n"

/* Records so's size and hash in check_path (atomically); false if it cannot. */
static bool write_check(const char *so, const char *check_path) {
  long long size;
  uint64_t hash;
  char text[128];
  if (!file_digest(so, &size, &hash)) return false;
  int n = snprintf(text, sizeof text, CHECK_FORMAT, size, hash);
  return n > 0 && (size_t)n < sizeof text && write_file(check_path, text, (size_t)n);
}

/* Whether so's size and hash are those recorded in check_path. */
static bool check_matches(const char *so, const char *check_path) {
  char want[128], got[128];
  long long size;
  uint64_t hash;
  if (!read_head(check_path, want, sizeof want) || !file_digest(so, &size, &hash)) return false;
  snprintf(got, sizeof got, CHECK_FORMAT, size, hash);
  return strcmp(want, got) == 0;
}

/* dlopen + dlsym of n functions; `report` records a failure as the error (else it is
 * silent). */
static jx_status load(const char *so, int n, const char *const *names, CpuKernelFn *fns,
                      bool report) {
  void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *why = dlerror();
    if (report) error_set(JX_ERR_COMPILE, "cpu: cannot load %s: %s", so, why ? why : "?");
    return JX_ERR_COMPILE;
  }
  for (int i = 0; i < n; i++) {
    void *sym = dlsym(h, names[i]);
    if (!sym) {
      if (report) error_set(JX_ERR_COMPILE, "cpu: %s has no function %s", so, names[i]);
      return JX_ERR_COMPILE; /* the handle stays open: harmless, and rare */
    }
    /* Handles are never closed: callers may keep function pointers (see cpu.c). */
    memcpy(&fns[i], &sym, sizeof sym);
  }
  return JX_OK;
}

bool compile_ready(void) {
  /* everything compile_load_many initializes lazily, done once before compiles run
   * on several threads */
  if (!compile_available() || !cache_dir()) return false;
  compiler_version();
  return true;
}

jx_status compile_load(const char *source, size_t len, const char *name, CompileOpt opt,
                       CpuKernelFn *fn, bool *compiled, char *path) {
  return compile_load_many(source, len, name, opt, 1, &name, fn, compiled, path);
}

jx_status compile_load_many(const char *source, size_t len, const char *name, CompileOpt opt,
                            int nfn, const char *const *names, CpuKernelFn *fns, bool *compiled,
                            char *path) {
  *compiled = false;
  path[0] = 0;
  if (!compile_available()) {
    error_set(JX_ERR_COMPILE, "cpu: no C compiler found (CC=%s)",
              cc.command[0] ? cc.command : "unset");
    return JX_ERR_COMPILE;
  }
  if (!cache_dir()) {
    error_set(JX_ERR_IO, "cpu: no writable kernel cache directory (JAXC_CACHE_DIR, "
              "XDG_CACHE_HOME, HOME, TMPDIR) for %s", name);
    return JX_ERR_IO;
  }
  compiler_version();
  /* The stored text: a header with the whole key, then the source. */
  char header[2048];
  int hn = snprintf(header, sizeof header,
                    "/* jaxc kernel cache entry\n * compiler: %s\n * version: %s\n"
                    " * flags: %s\n * cpu: %016" PRIx64 "\n */\n",
                    cc.command, cc.version, opt_flags[opt], cc.cpu_hash);
  if (hn < 0 || (size_t)hn >= sizeof header) hn = (int)strlen(header);
  size_t total = (size_t)hn + len;
  char *text = malloc(total + 1);
  if (!text) {
    error_set(JX_ERR_OOM, "cpu: out of memory compiling %s", name);
    return JX_ERR_OOM;
  }
  memcpy(text, header, (size_t)hn);
  memcpy(text + hn, source, len);
  text[total] = 0;
  uint64_t key = fnv1a(FNV_INIT, text, total);
  char base[PATH_CAP], c_path[PATH_CAP], so_path[PATH_CAP], tmp_so[PATH_CAP], log[PATH_CAP];
  char check_path[PATH_CAP];
  if (!path_printf(base, "%s/%s-%016" PRIx64, cc.dir, name, key) ||
      !path_printf(c_path, "%s.c", base) || !path_printf(so_path, "%s.so", base) ||
      !path_printf(log, "%s.log", base) || !path_printf(check_path, "%s.so.check", base)) {
    free(text);
    error_set(JX_ERR_IO, "cpu: cache path too long under %s", cc.dir);
    return JX_ERR_IO;
  }
  memcpy(path, c_path, strlen(c_path) + 1);

  /* Reuse: the stored source is exactly ours, its object is the one compiled from it
   * (size and hash as recorded), and it loads. */
  if (file_equals(c_path, text, total) && access(so_path, R_OK) == 0 &&
      check_matches(so_path, check_path)) {
    if (load(so_path, nfn, names, fns, false) == JX_OK) {
      free(text);
      return JX_OK;
    }
    /* a broken object: compile again */
  }
  if (!write_file(c_path, text, total)) {
    free(text);
    error_set(JX_ERR_IO, "cpu: cannot write %s: %s", c_path, strerror(errno));
    return JX_ERR_IO;
  }
  free(text);
  static atomic_int counter;
  path_printf(tmp_so, "%s.%ld.%d.so", base, (long)getpid(), atomic_fetch_add(&counter, 1));
  char flags[256];
  snprintf(flags, sizeof flags, "%s", opt_flags[opt]);
  char *argv[MAX_ARGS * 2];
  int argc = 0;
  for (int i = 0; i < cc.argc; i++) argv[argc++] = cc.argv[i];
  char *save = NULL;
  for (char *p = strtok_r(flags, " ", &save); p && argc < MAX_ARGS * 2 - 6;
       p = strtok_r(NULL, " ", &save))
    argv[argc++] = p;
  argv[argc++] = "-o";
  argv[argc++] = tmp_so;
  argv[argc++] = c_path;
  argv[argc++] = "-lm";
  argv[argc] = NULL;
  *compiled = true;
  int status = run(argv, log);
  if (status != 0 || access(tmp_so, R_OK) != 0) {
    char out[600];
    read_head(log, out, sizeof out);
    unlink(tmp_so);
    char how[96];
    if (status == RUN_TIMED_OUT)
      snprintf(how, sizeof how, "timed out after %g s (JAXC_COMPILE_TIMEOUT)", config_compile_timeout());
    else if (status > 0)
      snprintf(how, sizeof how, "failed with exit status %d", status);
    else
      snprintf(how, sizeof how, "%s", status == RUN_FAILED_START ? "could not be started"
                                      : status == RUN_CRASHED  ? "crashed" : "failed");
    error_set(JX_ERR_COMPILE,
              "cpu: compiling kernel %s %s (%s); generated source kept at %s; compiler output (%s):\n%s",
              name, how, cc.command, c_path, log, out[0] ? out : "(none)");
    return JX_ERR_COMPILE;
  }
  unlink(log);
  /* Load under the unique temporary name (dlopen matches loaded objects by name, so a
   * reused path could give an older object), then publish it for other processes. */
  jx_status st = load(tmp_so, nfn, names, fns, true);
  /* the record first: an object published without one is compiled again, not trusted */
  if (st != JX_OK || !write_check(tmp_so, check_path) || rename(tmp_so, so_path) != 0)
    unlink(tmp_so); /* still loaded; not cached on disk */
  return st;
}
