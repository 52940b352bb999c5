// Plumbing shared by tun.c, udp.c and pump.c: a reader per descriptor on Node's event
// loop (uv_poll; each wake-up drains a burst and calls back into JS inside one callback
// scope; the TUN pump pauses its device's reader), the table of writer threads by
// descriptor (writer.c), the UDP GSO send (sendmsg with UDP_SEGMENT, used by udp.c and
// the pump thread), and strait_fd_release, which every close goes through.
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <uv.h>
#include "common.h"

int strait_gso_broken = 0;

size_t strait_gro_size(struct msghdr *m, size_t len) {
  size_t seg = len;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
    if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
      int g;
      memcpy(&g, CMSG_DATA(c), sizeof g);
      if (g > 0) seg = (size_t)g;
    }
  }
  return seg;
}

void strait_signal_stop(int *stop, int stop_fd) {
  uint64_t one = 1;
  __atomic_store_n(stop, 1, __ATOMIC_RELEASE);
  if (write(stop_fd, &one, sizeof one) < 0) {
    // cannot fail: the counter is far from its limit (the if only consumes write's result)
  }
}

ssize_t strait_send_gso(int fd, struct iovec *iov, size_t iovlen, size_t seg, const struct sockaddr_in *to) {
  char control[CMSG_SPACE(sizeof(uint16_t))];
  memset(control, 0, sizeof control);
  struct sockaddr_in dst = *to;
  struct msghdr msg;
  memset(&msg, 0, sizeof msg);
  msg.msg_name = &dst;
  msg.msg_namelen = sizeof dst;
  msg.msg_iov = iov;
  msg.msg_iovlen = iovlen;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_UDP;
  c->cmsg_type = UDP_SEGMENT;
  c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
  uint16_t gs = (uint16_t)seg;
  memcpy(CMSG_DATA(c), &gs, sizeof gs);
  ssize_t n = sendmsg(fd, &msg, 0);
  if (n >= 0) return n;
  int err = errno;
  // EINVAL: segments larger than the path MTU; EIO/ENOPROTOOPT/EOPNOTSUPP: no UDP GSO here
  if (err == EIO || err == ENOPROTOOPT || err == EOPNOTSUPP) strait_gso_broken = 1;
  return -err;
}

// Send `n` datagrams described by iov (two entries each: header, payload); `seg` is the
// size of each but the last (GSO when n > 1, n <= 64). EAGAIN/ENOBUFS are waited out here,
// on the calling thread (a pump's or the gateway path's), but never past a stop (*stop set,
// stop_fd signalled). Returns 0 or -errno (-ECANCELED when stopped).
int strait_send_run(int fd, const struct sockaddr_in *to, int stop_fd, int *stop, struct iovec *iov, unsigned n, size_t seg) {
  int one_by_one = 0;
  for (int tries = 0; tries < 20; tries++) {
    if (__atomic_load_n(stop, __ATOMIC_ACQUIRE)) return -ECANCELED;
    ssize_t r;
    if (n > 1 && !strait_gso_broken && !one_by_one) {
      r = strait_send_gso(fd, iov, 2 * n, seg, to);
      if (r < 0 && r != -EAGAIN && r != -ENOBUFS) {
        one_by_one = 1; // no UDP GSO here, or refused (EINVAL): as the JS transport does, one by one
        continue;
      }
      if (r < 0) {
        errno = (int)-r;
        r = -1;
      }
    } else {
      // one by one in one sendmmsg
      struct mmsghdr mm[64];
      memset(mm, 0, sizeof(struct mmsghdr) * n);
      for (unsigned i = 0; i < n; i++) {
        mm[i].msg_hdr.msg_name = (void *)to;
        mm[i].msg_hdr.msg_namelen = sizeof *to;
        mm[i].msg_hdr.msg_iov = &iov[2 * i];
        mm[i].msg_hdr.msg_iovlen = 2;
      }
      r = sendmmsg(fd, mm, n, 0);
      if (r >= 0 && (unsigned)r < n) {
        iov += 2 * r;
        n -= (unsigned)r;
        continue;
      }
    }
    if (r >= 0) return 0;
    int err = errno;
    if (err != EAGAIN && err != ENOBUFS) return -err;
    struct pollfd pfd[2] = {{fd, POLLOUT, 0}, {stop_fd, POLLIN, 0}};
    poll(pfd, 2, 10);
    if (pfd[1].revents) return -ECANCELED;
  }
  return -EAGAIN;
}

#define MAX_READERS 128
#define MAX_WRITERS 128

static strait_reader *readers[MAX_READERS];
static strait_writer *writers[MAX_WRITERS];
static int writer_fds[MAX_WRITERS];

strait_writer **strait_writer_slot(int fd, int create) {
  int free_slot = -1;
  for (int i = 0; i < MAX_WRITERS; i++) {
    if (writers[i] && writer_fds[i] == fd) return &writers[i];
    if (!writers[i] && free_slot < 0) free_slot = i;
  }
  if (!create || free_slot < 0) return NULL;
  writer_fds[free_slot] = fd;
  return &writers[free_slot];
}

strait_writer *strait_writer_for(int fd, strait_write_fn fn) {
  strait_writer **ws = strait_writer_slot(fd, 0);
  if (ws) return *ws;
  ws = strait_writer_slot(fd, 1);
  if (!ws) return NULL;
  *ws = strait_writer_new(fd, fn);
  return *ws;
}

static void on_readable(uv_poll_t *handle, int status, int events) {
  strait_reader *r = (strait_reader *)handle->data;
  if (r->closing || status < 0) return;
  napi_handle_scope scope;
  napi_open_handle_scope(r->env, &scope);
  napi_value cb, global, resource;
  napi_get_reference_value(r->env, r->callback, &cb);
  napi_get_global(r->env, &global);
  napi_create_object(r->env, &resource);
  // one callback scope per burst: the tick queue and microtasks run once at its end,
  // not after every packet (napi_make_callback per packet did that)
  napi_callback_scope cscope;
  napi_open_callback_scope(r->env, resource, r->async_ctx, &cscope);
  r->drain(r, global, cb);
  // an exception thrown by the callback reaches 'uncaughtException'
  strait_rethrow_pending(r->env);
  napi_close_callback_scope(r->env, cscope);
  napi_close_handle_scope(r->env, scope);
}

strait_reader *strait_reader_find(int fd) {
  for (int i = 0; i < MAX_READERS; i++)
    if (readers[i] && readers[i]->fd == fd) return readers[i];
  return NULL;
}

napi_value strait_reader_start(napi_env env, int fd, napi_value buffer, napi_value callback, const char *name, strait_drain_fn drain) {
  int slot = -1;
  for (int i = 0; i < MAX_READERS; i++)
    if (!readers[i]) {
      slot = i;
      break;
    }
  if (slot < 0) return strait_throw_errno(env, "too many readers", EMFILE);
  strait_reader *r = calloc(1, sizeof *r);
  if (!r) return strait_throw_errno(env, name, ENOMEM);
  r->env = env;
  r->fd = fd;
  r->drain = drain;
  void *data;
  napi_get_buffer_info(env, buffer, &data, &r->buf_len);
  r->buf = data;
  napi_create_reference(env, buffer, 1, &r->buffer_ref);
  napi_create_reference(env, callback, 1, &r->callback);
  napi_value resource_name;
  napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &resource_name);
  napi_async_init(env, NULL, resource_name, &r->async_ctx);
  uv_loop_t *loop;
  napi_get_uv_event_loop(env, &loop);
  int rc = uv_poll_init(loop, &r->poll, fd);
  if (rc < 0) {
    napi_async_destroy(env, r->async_ctx);
    napi_delete_reference(env, r->buffer_ref);
    napi_delete_reference(env, r->callback);
    free(r);
    return strait_throw_errno(env, "uv_poll_init", -rc);
  }
  r->poll.data = r;
  uv_poll_start(&r->poll, UV_READABLE, on_readable);
  readers[slot] = r;
  return NULL;
}

void strait_reader_pause(int fd, int paused) {
  strait_reader *r = strait_reader_find(fd);
  if (!r || r->closing) return;
  if (paused) uv_poll_stop(&r->poll);
  else uv_poll_start(&r->poll, UV_READABLE, on_readable);
}

static void on_poll_closed(uv_handle_t *h) {
  free(h->data);
}

void strait_fd_release(napi_env env, int fd) {
  // a pump reading this TUN device or sending on this socket stops first (its reader resumes)
  strait_pump_stop_fd(env, fd);
  strait_gwpath_stop_fd(env, fd);
  strait_writer **ws = strait_writer_slot(fd, 0);
  if (ws) {
    strait_writer_free(*ws);
    *ws = NULL;
  }
  for (int i = 0; i < MAX_READERS; i++) {
    strait_reader *r = readers[i];
    if (r && r->fd == fd) {
      r->closing = 1;
      uv_poll_stop(&r->poll);
      napi_delete_reference(env, r->callback);
      napi_delete_reference(env, r->buffer_ref);
      napi_async_destroy(env, r->async_ctx);
      readers[i] = NULL;
      uv_close((uv_handle_t *)&r->poll, on_poll_closed);
    }
  }
}

// Errors: one code per kind (src/base/errors): a failed system call is
// STRAIT_ERR_SYSTEM_TOOL, a bad argument STRAIT_ERR_USAGE (a TypeError).
napi_value strait_throw_errno(napi_env env, const char *what, int err) {
  char msg[256];
  snprintf(msg, sizeof msg, "%s: %s (errno %d)", what, strerror(err), err);
  napi_throw_error(env, "STRAIT_ERR_SYSTEM_TOOL", msg);
  return NULL;
}

napi_value strait_throw_usage(napi_env env, const char *fn, const char *fmt, ...) {
  char detail[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  char msg[256];
  snprintf(msg, sizeof msg, "%s: %s", fn, detail);
  napi_throw_type_error(env, "STRAIT_ERR_USAGE", msg);
  return NULL;
}

napi_status strait_rethrow_pending(napi_env env) {
  bool pending = false;
  napi_is_exception_pending(env, &pending);
  if (!pending) return napi_ok;
  napi_value err;
  napi_get_and_clear_last_exception(env, &err);
  return napi_fatal_exception(env, err);
}

// Arguments (see common.h).
int strait_args_get(napi_env env, napi_callback_info info, const char *fn, size_t min, size_t max, strait_args *a) {
  a->env = env;
  a->fn = fn;
  a->argc = max < STRAIT_MAX_ARGS ? max : STRAIT_MAX_ARGS;
  if (napi_get_cb_info(env, info, &a->argc, a->argv, NULL, NULL) != napi_ok) {
    strait_throw_usage(env, fn, "cannot read the arguments");
    return 0;
  }
  if (a->argc > max) a->argc = max;
  if (a->argc < min) {
    strait_throw_usage(env, fn, "needs %zu arguments, got %zu", min, a->argc);
    return 0;
  }
  return 1;
}

int strait_has_arg(strait_args *a, size_t i) {
  if (i >= a->argc) return 0;
  napi_valuetype t;
  return napi_typeof(a->env, a->argv[i], &t) == napi_ok && t != napi_undefined;
}

static int bad(strait_args *a, size_t i, const char *name, const char *what) {
  strait_throw_usage(a->env, a->fn, "argument %zu (%s) must be %s", i + 1, name, what);
  return 0;
}

static int is_number(strait_args *a, size_t i) {
  napi_valuetype t;
  return i < a->argc && napi_typeof(a->env, a->argv[i], &t) == napi_ok && t == napi_number;
}

int strait_get_int(strait_args *a, size_t i, const char *name, int32_t *out) {
  if (!is_number(a, i) || napi_get_value_int32(a->env, a->argv[i], out) != napi_ok) return bad(a, i, name, "an integer");
  return 1;
}

int strait_get_int_range(strait_args *a, size_t i, const char *name, int32_t lo, int32_t hi, int32_t *out) {
  char what[64];
  snprintf(what, sizeof what, "an integer in [%d, %d]", lo, hi);
  if (!is_number(a, i) || napi_get_value_int32(a->env, a->argv[i], out) != napi_ok || *out < lo || *out > hi) return bad(a, i, name, what);
  return 1;
}

int strait_get_fd(strait_args *a, size_t i, const char *name, int32_t *out) {
  if (!is_number(a, i) || napi_get_value_int32(a->env, a->argv[i], out) != napi_ok || *out < 0) return bad(a, i, name, "a descriptor (an integer >= 0)");
  return 1;
}

int strait_get_u32(strait_args *a, size_t i, const char *name, uint32_t *out) {
  if (!is_number(a, i) || napi_get_value_uint32(a->env, a->argv[i], out) != napi_ok) return bad(a, i, name, "an unsigned 32-bit integer");
  return 1;
}

int strait_get_i64(strait_args *a, size_t i, const char *name, int64_t *out) {
  if (!is_number(a, i) || napi_get_value_int64(a->env, a->argv[i], out) != napi_ok) return bad(a, i, name, "an integer");
  return 1;
}

int strait_get_bool(strait_args *a, size_t i, const char *name, bool *out) {
  if (i >= a->argc || napi_get_value_bool(a->env, a->argv[i], out) != napi_ok) return bad(a, i, name, "a boolean");
  return 1;
}

int strait_get_buffer(strait_args *a, size_t i, const char *name, void **data, size_t *len) {
  bool is_buf = false;
  if (i >= a->argc || napi_is_buffer(a->env, a->argv[i], &is_buf) != napi_ok || !is_buf || napi_get_buffer_info(a->env, a->argv[i], data, len) != napi_ok)
    return bad(a, i, name, "a Buffer");
  return 1;
}

int strait_get_f64array(strait_args *a, size_t i, const char *name, size_t min_len, double **data, size_t *len) {
  bool is_typed = false;
  napi_typedarray_type type;
  void *p = NULL;
  char what[64];
  snprintf(what, sizeof what, "a Float64Array of at least %zu elements", min_len);
  if (i >= a->argc || napi_is_typedarray(a->env, a->argv[i], &is_typed) != napi_ok || !is_typed ||
      napi_get_typedarray_info(a->env, a->argv[i], &type, len, &p, NULL, NULL) != napi_ok || type != napi_float64_array || *len < min_len)
    return bad(a, i, name, what);
  *data = p;
  return 1;
}

int strait_get_string(strait_args *a, size_t i, const char *name, char *buf, size_t cap, size_t *len) {
  napi_valuetype t;
  char what[64];
  snprintf(what, sizeof what, "a string of at most %zu bytes", cap - 2);
  if (i >= a->argc || napi_typeof(a->env, a->argv[i], &t) != napi_ok || t != napi_string ||
      napi_get_value_string_utf8(a->env, a->argv[i], buf, cap, len) != napi_ok || *len >= cap - 1)
    return bad(a, i, name, what);
  return 1;
}

int strait_get_function(strait_args *a, size_t i, const char *name) {
  napi_valuetype t;
  if (i >= a->argc || napi_typeof(a->env, a->argv[i], &t) != napi_ok || t != napi_function) return bad(a, i, name, "a function");
  return 1;
}
