// strait's C addon: only what Node cannot reach (TUN devices, the original
// destination of a redirected socket, network namespaces, batched UDP).
#ifndef STRAIT_NATIVE_COMMON_H
#define STRAIT_NATIVE_COMMON_H
#define NAPI_VERSION 8
#include <node_api.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

// Writer threads (writer.c): large writes on a descriptor leave from a pthread.
typedef ssize_t (*strait_write_fn)(int fd, char *data, size_t len, size_t seg, size_t split, const struct sockaddr_in *to);
typedef struct strait_writer strait_writer;
// writes of at least this many bytes go through the writer thread
#define STRAIT_THREAD_MIN 8192
int strait_io_threads(void);
strait_writer *strait_writer_new(int fd, strait_write_fn fn);
int strait_writer_idle(strait_writer *w);
// copy a ‖ b into the ring (-EAGAIN when full); returns the bytes queued
int strait_writer_push(strait_writer *w, const char *a, size_t alen, const char *b, size_t blen, size_t seg, const struct sockaddr_in *to);
long strait_writer_errors(strait_writer *w);
void strait_writer_free(strait_writer *w);

// Writer threads by descriptor (common.c): the slot of fd's writer (NULL when none and
// !create); the writer of fd, started with fn when there is none yet (NULL on failure).
strait_writer **strait_writer_slot(int fd, int create);
strait_writer *strait_writer_for(int fd, strait_write_fn fn);

// UDP GSO (common.c): one sendmsg of iov (iovlen entries) cut by the kernel into datagrams
// of seg bytes (the last may be shorter), to `to`; bytes sent or -errno. A kernel without
// UDP GSO sets strait_gso_broken (callers then send one datagram at a time).
struct iovec;
extern int strait_gso_broken;
ssize_t strait_send_gso(int fd, struct iovec *iov, size_t iovlen, size_t seg, const struct sockaddr_in *to);
// n datagrams of iov (header, payload each), GSO when n > 1, waiting out a full socket
// buffer on the calling thread until *stop / stop_fd; 0 or -errno (-ECANCELED when stopped)
int strait_send_run(int fd, const struct sockaddr_in *to, int stop_fd, int *stop, struct iovec *iov, unsigned n, size_t seg);
// The kernel's UDP GRO / GSO socket options (older headers lack them).
#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif
#ifndef SOL_UDP
#define SOL_UDP 17
#endif
struct msghdr;
// The UDP GRO segment size of a read of `len` bytes (its control message; `len` when it is one datagram).
size_t strait_gro_size(struct msghdr *m, size_t len);
// A worker thread's stop: *stop set (release), then stop_fd (an eventfd its waits watch) signalled.
void strait_signal_stop(int *stop, int stop_fd);

// Readers on Node's event loop (common.c): uv_poll on a non-blocking fd; on every wake-up
// drain(r, global, cb) reads a burst into buf and calls cb for each read, all inside one
// callback scope.
typedef struct strait_reader strait_reader;
typedef void (*strait_drain_fn)(strait_reader *r, napi_value global, napi_value cb);
struct strait_reader {
  uv_poll_t poll;
  napi_env env;
  napi_ref callback;
  napi_ref buffer_ref;
  napi_async_context async_ctx;
  char *buf;
  size_t buf_len;
  int fd;
  int closing;
  strait_drain_fn drain;
};
// start reading fd into `buffer` (a Buffer, kept referenced); throws and returns NULL on failure
napi_value strait_reader_start(napi_env env, int fd, napi_value buffer, napi_value callback, const char *name, strait_drain_fn drain);
strait_reader *strait_reader_find(int fd);
// stop (paused != 0) or resume the reader of fd, if any (the TUN pump reads in its place)
void strait_reader_pause(int fd, int paused);
// stop fd's pump (reading or sending on fd), reader and writer thread (before close(fd))
void strait_fd_release(napi_env env, int fd);

// The node agent's TUN -> VXLAN pump (pump.c): stop every pump reading or sending on fd.
void strait_pump_stop_fd(napi_env env, int fd);
// The gateway's native data path (gwpath.c): stop every path reading or sending on fd.
void strait_gwpath_stop_fd(napi_env env, int fd);

// Errors (common.c). A failed system call: an Error with code STRAIT_ERR_SYSTEM_TOOL and
// "<what>: <strerror> (errno N)"; returns NULL.
napi_value strait_throw_errno(napi_env env, const char *what, int err);
// A bad argument: a TypeError with code STRAIT_ERR_USAGE, "<fn>: <message>"; returns NULL.
napi_value strait_throw_usage(napi_env env, const char *fn, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

// Arguments (common.c): every entry point reads its arguments through these. Each checks
// every N-API status and, on a missing or wrongly typed argument, throws the usage
// TypeError above naming the entry point and the argument, and returns 0 (the entry point
// then returns NULL); 1 when the value was read.
#define STRAIT_MAX_ARGS 12
typedef struct {
  napi_env env;
  const char *fn;
  size_t argc;
  napi_value argv[STRAIT_MAX_ARGS];
} strait_args;
// the call's arguments; at least `min` of them (`max` are read, <= STRAIT_MAX_ARGS)
int strait_args_get(napi_env env, napi_callback_info info, const char *fn, size_t min, size_t max, strait_args *a);
// whether argument i was given (and is not undefined)
int strait_has_arg(strait_args *a, size_t i);
// a descriptor: an integer >= 0
int strait_get_fd(strait_args *a, size_t i, const char *name, int32_t *out);
// a 32-bit integer (a JS number, truncated as napi_get_value_int32 does)
int strait_get_int(strait_args *a, size_t i, const char *name, int32_t *out);
// an integer in [lo, hi]
int strait_get_int_range(strait_args *a, size_t i, const char *name, int32_t lo, int32_t hi, int32_t *out);
int strait_get_u32(strait_args *a, size_t i, const char *name, uint32_t *out);
int strait_get_i64(strait_args *a, size_t i, const char *name, int64_t *out);
int strait_get_bool(strait_args *a, size_t i, const char *name, bool *out);
// a Buffer (or Uint8Array); *len its length in bytes
int strait_get_buffer(strait_args *a, size_t i, const char *name, void **data, size_t *len);
// a Float64Array of at least `min_len` elements
int strait_get_f64array(strait_args *a, size_t i, const char *name, size_t min_len, double **data, size_t *len);
// a string of at most cap-2 bytes (a longer one is refused, not cut), NUL-terminated into buf
int strait_get_string(strait_args *a, size_t i, const char *name, char *buf, size_t cap, size_t *len);
int strait_get_function(strait_args *a, size_t i, const char *name);

// An exception left by a JS callback called from a poll handler goes to 'uncaughtException'.
napi_status strait_rethrow_pending(napi_env env);

// Per-environment cleanup hooks of the parts that keep threads (pump.c, tlsrec.c).
napi_status strait_init_pump(napi_env env);
napi_status strait_init_tlsrec(napi_env env);
napi_status strait_init_gwpath(napi_env env);

// The entry points (entries.h): one declaration each.
#define STRAIT_ENTRY(js, fn, file) napi_value fn(napi_env env, napi_callback_info info);
#include "entries.h"
#undef STRAIT_ENTRY
#endif
