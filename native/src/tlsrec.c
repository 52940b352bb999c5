// TLS 1.3 application-data records on Node's event loop, after Node's own TLS handshake
// (the hand-off and every decision live in src/platform/native/tls-relay.ts). A relay joins
// a TLS connection's TCP socket with a plaintext socket: bytes read from the plaintext side
// leave as TLS 1.3 records (AES-GCM, libcrypto's EVP only), records read from the TLS side
// are opened and their plaintext written to the other side, with no JS on the way.
// Only what TLS 1.3 allows after the handshake is accepted from the peer:
//   application data                         -> written to the plaintext side
//   alert close_notify                        -> end of the TLS side (shutdown(WR) of the other)
//   alert user_canceled                       -> ignored (a close_notify follows)
//   handshake NewSessionTicket (whole)         -> dropped (counted): the session is not resumed
//   handshake KeyUpdate (last in its record)   -> the read key is updated (RFC 8446 7.2); when the
//                                                peer asks, a KeyUpdate is sent and the write key updated
//   anything else, a record that does not open, a malformed header, a length past
//   2^14 + 256 (or a plaintext past 2^14)      -> the relay fails: JS resets both connections
// A plaintext EOF sends close_notify and then FIN; when both directions have ended the relay
// ends and JS closes both sockets. Relays use their own dup()s of the descriptors (Node's
// handles keep theirs, stopped): JS closes its sockets after the relay ends or is stopped.
//   tlsRelayStart(tlsFd, plainFd, suite (1: TLS_AES_128_GCM_SHA256, 2: TLS_AES_256_GCM_SHA384),
//                 readSecret, readSeq, writeSecret, writeSeq, pending (Buffer), onEnd(id, reason, errno))
//       -> id (a number), or a string: the reason the pending bytes already failed (nothing started)
//   tlsRelayStop(id) -> true when it was running (no onEnd then)
//   tlsTrafficKeys(suite, secret) -> key ‖ iv
//   tlsRecordOpen(suite, keyIv, seq, record) -> content ‖ type of a record that opens, or null
//   tlsRelayStats() -> Float64Array [active, started, ended, failed, recordsIn, recordsOut, tickets, keyUpdates]
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/core_names.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include "common.h"

#define HDR 5
#define TAG 16
#define MAX_PLAIN 16384              // TLSInnerPlaintext content limit (2^14)
#define MAX_CIPHER (MAX_PLAIN + 256) // TLSCiphertext.length limit (RFC 8446 5.2)
#define REC_MAX (HDR + MAX_CIPHER)
#define IN_CAP (4 * MAX_PLAIN + 2 * REC_MAX) // a read of 64 KiB behind a partial record
#define OUT_RECS 4                           // plaintext read at once: 4 full records
#define OUT_STRIDE (HDR + MAX_PLAIN + 1 + TAG)
#define OUT_CAP (OUT_RECS * OUT_STRIDE + 64) // + room for a KeyUpdate and a close_notify
#define POOL 16

enum { S_ACTIVE, S_STARTED, S_ENDED, S_FAILED, S_REC_IN, S_REC_OUT, S_TICKETS, S_KEY_UPDATES, N_STATS };
static double stats[N_STATS];

typedef struct {
  EVP_CIPHER_CTX *ctx;
  unsigned char secret[48];
  unsigned char iv[12];
  uint64_t seq;
} keys;

typedef struct relay relay;
typedef struct {
  uv_poll_t poll;
  relay *r;
  int fd;   // our dup
  int mask; // events polled now
} side;

struct relay {
  relay *next;
  double id;
  napi_env env;
  napi_ref cb;
  napi_async_context actx;
  side tls, app;
  int suite;
  keys rk, wk;
  // TLS -> plaintext: in[pt_off, pt_len) is plaintext still to write, in[pt_len, in_len) ciphertext not yet opened
  unsigned char *in;
  size_t in_len, pt_off, pt_len;
  // plaintext -> TLS: out[out_off, out_len) is records still to write
  unsigned char *out;
  size_t out_off, out_len;
  int tls_eof, app_eof, app_shut, close_queued, tls_shut;
  int done, open_handles;
  const char *reason;
  int err;
};

static relay *relays;
static double next_id = 1;

// --- buffers: a few kept for reuse, so an idle relay holds none ---------------------
static unsigned char *pool_in[POOL], *pool_out[POOL];
static int n_in, n_out;

static unsigned char *buf_get(int out) {
  if (out) return n_out > 0 ? pool_out[--n_out] : malloc(OUT_CAP);
  return n_in > 0 ? pool_in[--n_in] : malloc(IN_CAP);
}

static void buf_put(int out, unsigned char *b) {
  if (!b) return;
  if (out && n_out < POOL) pool_out[n_out++] = b;
  else if (!out && n_in < POOL) pool_in[n_in++] = b;
  else free(b);
}

// --- keys: HKDF-Expand-Label (RFC 8446 7.1) and the AEAD, all libcrypto --------------
static size_t suite_hash(int suite) {
  return suite == 2 ? 48 : 32;
}

static int expand_label(int suite, const unsigned char *secret, const char *label, unsigned char *out, size_t outlen) {
  unsigned char info[2 + 1 + 6 + 16 + 1];
  size_t ll = strlen(label);
  if (ll > 16) return 0;
  info[0] = (unsigned char)(outlen >> 8);
  info[1] = (unsigned char)outlen;
  info[2] = (unsigned char)(6 + ll);
  memcpy(info + 3, "tls13 ", 6);
  memcpy(info + 9, label, ll);
  info[9 + ll] = 0; // empty context
  // HKDF (expand only) from libcrypto, fetched once
  static EVP_KDF *hkdf;
  if (!hkdf) hkdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
  EVP_KDF_CTX *c = hkdf ? EVP_KDF_CTX_new(hkdf) : NULL;
  int mode = EVP_KDF_HKDF_MODE_EXPAND_ONLY;
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode),
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, suite == 2 ? "SHA384" : "SHA256", 0),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)secret, suite_hash(suite)),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, info, 10 + ll),
      OSSL_PARAM_construct_end(),
  };
  int ok = c && EVP_KDF_derive(c, out, outlen, params) == 1;
  EVP_KDF_CTX_free(c);
  return ok;
}

// key and iv of k->secret into k->ctx (sequence number 0)
static int set_keys(keys *k, int suite, int enc) {
  unsigned char key[32];
  size_t kl = suite == 2 ? 32 : 16;
  const EVP_CIPHER *c = suite == 2 ? EVP_aes_256_gcm() : EVP_aes_128_gcm();
  int ok = expand_label(suite, k->secret, "key", key, kl) && expand_label(suite, k->secret, "iv", k->iv, 12) &&
           (enc ? EVP_EncryptInit_ex(k->ctx, c, NULL, key, NULL) : EVP_DecryptInit_ex(k->ctx, c, NULL, key, NULL)) == 1;
  OPENSSL_cleanse(key, sizeof key);
  k->seq = 0;
  return ok;
}

// RFC 8446 7.2: application_traffic_secret_N+1
static int update_keys(keys *k, int suite, int enc) {
  unsigned char next[48];
  size_t hl = suite_hash(suite);
  if (!expand_label(suite, k->secret, "traffic upd", next, hl)) return 0;
  memcpy(k->secret, next, hl);
  OPENSSL_cleanse(next, sizeof next);
  return set_keys(k, suite, enc);
}

static void nonce_of(const keys *k, unsigned char *nonce) {
  memcpy(nonce, k->iv, 12);
  for (int i = 0; i < 8; i++) nonce[11 - i] ^= (unsigned char)(k->seq >> (8 * i));
}

// rec: header, then ptlen bytes of TLSInnerPlaintext (content ‖ type); the tag goes after them
static int seal(keys *k, unsigned char *rec, size_t ptlen) {
  unsigned char nonce[12];
  size_t clen = ptlen + TAG;
  int outl;
  if (k->seq == UINT64_MAX) return 0;
  rec[0] = 23;
  rec[1] = 3;
  rec[2] = 3;
  rec[3] = (unsigned char)(clen >> 8);
  rec[4] = (unsigned char)clen;
  nonce_of(k, nonce);
  if (EVP_EncryptInit_ex(k->ctx, NULL, NULL, NULL, nonce) != 1 || EVP_EncryptUpdate(k->ctx, NULL, &outl, rec, HDR) != 1 ||
      EVP_EncryptUpdate(k->ctx, rec + HDR, &outl, rec + HDR, (int)ptlen) != 1 || EVP_EncryptFinal_ex(k->ctx, rec + HDR + ptlen, &outl) != 1 ||
      EVP_CIPHER_CTX_ctrl(k->ctx, EVP_CTRL_GCM_GET_TAG, TAG, rec + HDR + ptlen) != 1)
    return 0;
  k->seq++;
  stats[S_REC_OUT]++;
  return 1;
}

// opens the record in place (header checked by the caller, clen > TAG); 1 when authentic
static int open_rec(keys *k, unsigned char *rec, size_t clen) {
  unsigned char nonce[12];
  int outl;
  if (k->seq == UINT64_MAX) return 0;
  nonce_of(k, nonce);
  size_t n = clen - TAG;
  if (EVP_DecryptInit_ex(k->ctx, NULL, NULL, NULL, nonce) != 1 || EVP_DecryptUpdate(k->ctx, NULL, &outl, rec, HDR) != 1 ||
      EVP_DecryptUpdate(k->ctx, rec + HDR, &outl, rec + HDR, (int)n) != 1 || EVP_CIPHER_CTX_ctrl(k->ctx, EVP_CTRL_GCM_SET_TAG, TAG, rec + HDR + n) != 1 ||
      EVP_DecryptFinal_ex(k->ctx, rec + HDR + n, &outl) <= 0)
    return 0;
  k->seq++;
  stats[S_REC_IN]++;
  return 1;
}

// --- the relay ---------------------------------------------------------------------
static void update(relay *r);

static void on_side_closed(uv_handle_t *h) {
  side *s = (side *)h->data;
  relay *r = s->r;
  close(s->fd);
  if (--r->open_handles > 0) return;
  EVP_CIPHER_CTX_free(r->rk.ctx);
  EVP_CIPHER_CTX_free(r->wk.ctx);
  OPENSSL_cleanse(r->rk.secret, sizeof r->rk.secret);
  OPENSSL_cleanse(r->wk.secret, sizeof r->wk.secret);
  buf_put(0, r->in);
  buf_put(1, r->out);
  free(r);
}

// stop polling, unlink, close our descriptors; the struct goes when both handles closed
static void close_handles(relay *r) {
  r->done = 1;
  for (relay **p = &relays; *p; p = &(*p)->next) {
    if (*p == r) {
      *p = r->next;
      stats[S_ACTIVE]--;
      break;
    }
  }
  uv_poll_stop(&r->tls.poll);
  uv_poll_stop(&r->app.poll);
  uv_close((uv_handle_t *)&r->tls.poll, on_side_closed);
  uv_close((uv_handle_t *)&r->app.poll, on_side_closed);
}

// stopped by JS: no callback
static void teardown(relay *r) {
  napi_delete_reference(r->env, r->cb);
  napi_async_destroy(r->env, r->actx);
  close_handles(r);
}

// the relay ends: tell JS (from a poll callback, in a callback scope)
static void finish(relay *r) {
  if (r->done) return;
  napi_env env = r->env;
  napi_ref cbref = r->cb;
  napi_async_context actx = r->actx;
  stats[r->reason ? S_FAILED : S_ENDED]++;
  napi_handle_scope scope;
  napi_open_handle_scope(env, &scope);
  napi_value cb, global, resource, argv[3];
  napi_get_reference_value(env, cbref, &cb);
  napi_get_global(env, &global);
  napi_create_object(env, &resource);
  napi_create_double(env, r->id, &argv[0]);
  napi_create_string_utf8(env, r->reason ? r->reason : "end", NAPI_AUTO_LENGTH, &argv[1]);
  napi_create_int32(env, r->err, &argv[2]);
  close_handles(r); // r is not touched after this
  napi_callback_scope cscope;
  napi_open_callback_scope(env, resource, actx, &cscope);
  napi_value ignored;
  napi_call_function(env, global, cb, 3, argv, &ignored);
  strait_rethrow_pending(env);
  napi_close_callback_scope(env, cscope);
  napi_async_destroy(env, actx);
  napi_delete_reference(env, cbref);
  napi_close_handle_scope(env, scope);
}

static int fail(relay *r, const char *reason, int err) {
  if (!r->reason) {
    r->reason = reason;
    r->err = err;
  }
  return 0;
}

// room at the end of `out` for a control record (KeyUpdate, close_notify)
static unsigned char *out_tail(relay *r, size_t len) {
  if (!r->out) {
    r->out = buf_get(1);
    if (!r->out) return NULL;
    r->out_off = r->out_len = 0;
  }
  if (r->out_len + len > OUT_CAP) return NULL;
  return r->out + r->out_len;
}

static int queue_close_notify(relay *r) {
  unsigned char *rec = out_tail(r, HDR + 3 + TAG);
  if (!rec) return fail(r, "no-buffer", ENOMEM);
  rec[HDR] = 1;     // warning
  rec[HDR + 1] = 0; // close_notify
  rec[HDR + 2] = 21;
  if (!seal(&r->wk, rec, 3)) return fail(r, "crypto", 0);
  r->out_len += HDR + 3 + TAG;
  r->close_queued = 1;
  return 1;
}

// the peer asked for our KeyUpdate: send one (update_not_requested) under the old key, then switch
static int queue_key_update(relay *r) {
  unsigned char *rec = out_tail(r, HDR + 6 + TAG);
  if (!rec) return fail(r, "key-update-flood", 0);
  rec[HDR] = 24;
  rec[HDR + 1] = 0;
  rec[HDR + 2] = 0;
  rec[HDR + 3] = 1;
  rec[HDR + 4] = 0;
  rec[HDR + 5] = 22;
  if (!seal(&r->wk, rec, 6) || !update_keys(&r->wk, r->suite, 1)) return fail(r, "crypto", 0);
  r->out_len += HDR + 6 + TAG;
  return 1;
}

static int handshake_msgs(relay *r, const unsigned char *p, size_t n) {
  while (n > 0) {
    if (n < 4) return fail(r, "unexpected-handshake", 0);
    size_t len = (size_t)p[1] << 16 | (size_t)p[2] << 8 | p[3];
    if (len > n - 4) return fail(r, "unexpected-handshake", 0); // spread over records: not taken
    if (p[0] == 4) {
      stats[S_TICKETS]++;
    } else if (p[0] == 24) {
      // KeyUpdate: one byte, and the last message of its record (RFC 8446 5.1)
      if (len != 1 || p[4] > 1 || n != 5) return fail(r, "unexpected-handshake", 0);
      if (!update_keys(&r->rk, r->suite, 0)) return fail(r, "crypto", 0);
      stats[S_KEY_UPDATES]++;
      if (p[4] == 1 && !r->close_queued && !queue_key_update(r)) return 0;
    } else {
      return fail(r, "unexpected-handshake", 0);
    }
    p += 4 + len;
    n -= 4 + len;
  }
  return 1;
}

// open every whole record in in[0, in_len) (all ciphertext); their plaintext goes to the
// front, the partial record after it
static int open_records(relay *r) {
  unsigned char *in = r->in;
  size_t pos = 0, out = 0;
  while (!r->tls_eof && r->in_len - pos >= HDR) {
    unsigned char *h = in + pos;
    size_t len = (size_t)h[3] << 8 | h[4];
    if (h[0] != 23 || h[1] != 3 || h[2] != 3) return fail(r, "bad-record", 0);
    if (len <= TAG || len > MAX_CIPHER) return fail(r, "bad-record-length", 0);
    if (r->in_len - pos < HDR + len) break;
    if (!open_rec(&r->rk, h, len)) return fail(r, "bad-record-mac", 0);
    size_t n = len - TAG;
    while (n > 0 && h[HDR + n - 1] == 0) n--; // padding
    if (n == 0) return fail(r, "bad-record", 0);
    unsigned char type = h[HDR + n - 1];
    n--;
    if (n > MAX_PLAIN) return fail(r, "record-overflow", 0);
    if (type == 23) {
      memmove(in + out, h + HDR, n);
      out += n;
    } else if (type == 21) {
      if (n != 2) return fail(r, "bad-alert", 0);
      if (h[HDR + 1] == 0) r->tls_eof = 1; // close_notify: what follows is ignored
      else if (h[HDR + 1] != 90) return fail(r, "alert", h[HDR + 1]);
    } else if (type == 22) {
      if (!handshake_msgs(r, h + HDR, n)) return 0;
    } else {
      return fail(r, "bad-record", 0);
    }
    pos += HDR + len;
  }
  size_t tail = r->tls_eof ? 0 : r->in_len - pos;
  memmove(in + out, in + pos, tail);
  r->in_len = out + tail;
  r->pt_off = 0;
  r->pt_len = out;
  return 1;
}

static int flush_pt(relay *r) {
  while (r->pt_off < r->pt_len) {
    ssize_t n = send(r->app.fd, r->in + r->pt_off, r->pt_len - r->pt_off, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return 1;
      return fail(r, "plain-write", errno);
    }
    r->pt_off += (size_t)n;
  }
  size_t tail = r->in_len - r->pt_len;
  if (r->in) memmove(r->in, r->in + r->pt_len, tail);
  r->in_len = tail;
  r->pt_off = r->pt_len = 0;
  if (r->in_len == 0) {
    buf_put(0, r->in);
    r->in = NULL;
  }
  if (r->tls_eof && !r->app_shut) {
    r->app_shut = 1;
    shutdown(r->app.fd, SHUT_WR);
  }
  return 1;
}

static int flush_out(relay *r) {
  while (r->out_off < r->out_len) {
    ssize_t n = send(r->tls.fd, r->out + r->out_off, r->out_len - r->out_off, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return 1;
      return fail(r, "tls-write", errno);
    }
    r->out_off += (size_t)n;
  }
  r->out_off = r->out_len = 0;
  buf_put(1, r->out);
  r->out = NULL;
  if (r->close_queued && !r->tls_shut) {
    r->tls_shut = 1;
    shutdown(r->tls.fd, SHUT_WR);
  }
  return 1;
}

static int read_tls(relay *r) {
  if (r->pt_off < r->pt_len || r->tls_eof) return 1;
  if (!r->in) {
    r->in = buf_get(0);
    if (!r->in) return fail(r, "no-buffer", ENOMEM);
    r->in_len = 0;
  }
  ssize_t n;
  do n = recv(r->tls.fd, r->in + r->in_len, IN_CAP - r->in_len, 0);
  while (n < 0 && errno == EINTR);
  if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK ? 1 : fail(r, "tls-read", errno);
  if (n == 0) {
    if (r->in_len > 0) return fail(r, "truncated-record", 0);
    r->tls_eof = 1;
    return flush_pt(r);
  }
  r->in_len += (size_t)n;
  return open_records(r) && flush_pt(r);
}

static int read_app(relay *r) {
  if (r->out_off < r->out_len || r->app_eof || r->close_queued) return 1;
  if (!r->out) {
    r->out = buf_get(1);
    if (!r->out) return fail(r, "no-buffer", ENOMEM);
  }
  r->out_off = r->out_len = 0;
  struct iovec iov[OUT_RECS];
  for (int i = 0; i < OUT_RECS; i++) {
    iov[i].iov_base = r->out + (size_t)i * OUT_STRIDE + HDR;
    iov[i].iov_len = MAX_PLAIN;
  }
  ssize_t n;
  do n = readv(r->app.fd, iov, OUT_RECS);
  while (n < 0 && errno == EINTR);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return flush_out(r); // releases the empty buffer
    return fail(r, "plain-read", errno);
  }
  if (n == 0) {
    r->app_eof = 1;
    return queue_close_notify(r) && flush_out(r);
  }
  size_t left = (size_t)n;
  for (size_t i = 0; left > 0; i++) {
    size_t m = left < MAX_PLAIN ? left : MAX_PLAIN;
    unsigned char *rec = r->out + i * OUT_STRIDE;
    rec[HDR + m] = 23;
    if (!seal(&r->wk, rec, m + 1)) return fail(r, "crypto", 0);
    r->out_len = i * OUT_STRIDE + HDR + m + 1 + TAG;
    left -= m;
  }
  return flush_out(r);
}

static void on_tls(uv_poll_t *h, int status, int events);
static void on_app(uv_poll_t *h, int status, int events);

static void set_mask(side *s, int mask, uv_poll_cb cb) {
  if (s->mask == mask) return;
  s->mask = mask;
  if (mask) uv_poll_start(&s->poll, mask, cb);
  else uv_poll_stop(&s->poll);
}

// after every event: end, fail, or poll for what each side waits for
static void update(relay *r) {
  if (r->done) return;
  if (r->reason || (r->tls_shut && r->app_shut)) {
    finish(r);
    return;
  }
  int pt_pending = r->pt_off < r->pt_len;
  int out_pending = r->out_off < r->out_len;
  set_mask(&r->tls, (!r->tls_eof && !pt_pending ? UV_READABLE : 0) | (out_pending ? UV_WRITABLE : 0), on_tls);
  set_mask(&r->app, (!r->app_eof && !r->close_queued && !out_pending ? UV_READABLE : 0) | (pt_pending ? UV_WRITABLE : 0), on_app);
}

static void on_tls(uv_poll_t *h, int status, int events) {
  relay *r = ((side *)h->data)->r;
  if (r->done) return;
  if (status < 0) fail(r, "tls-poll", -status);
  else {
    if (events & UV_WRITABLE) flush_out(r);
    if (!r->reason && (events & UV_READABLE)) read_tls(r);
  }
  update(r);
}

static void on_app(uv_poll_t *h, int status, int events) {
  relay *r = ((side *)h->data)->r;
  if (r->done) return;
  if (status < 0) fail(r, "plain-poll", -status);
  else {
    if (events & UV_WRITABLE) flush_pt(r);
    if (!r->reason && (events & UV_READABLE)) read_app(r);
  }
  update(r);
}

// argument i: a Buffer of `want` bytes, copied to out (1), or the usage TypeError (0)
static int get_secret(strait_args *a, size_t i, const char *name, size_t want, unsigned char *out) {
  void *data;
  size_t len;
  if (!strait_get_buffer(a, i, name, &data, &len)) return 0;
  if (len != want) return strait_throw_usage(a->env, a->fn, "argument %zu (%s) must be %zu bytes, got %zu", i + 1, name, want, len), 0;
  memcpy(out, data, len);
  return 1;
}

// a record sequence number: an integer in [0, 2^53)
static int seq_of(napi_env env, napi_value v, uint64_t *out) {
  double d;
  if (napi_get_value_double(env, v, &d) != napi_ok || !(d >= 0) || d > 9007199254740991.0 || d != (double)(uint64_t)d) return 0;
  *out = (uint64_t)d;
  return 1;
}

// argument i: a sequence number (1), or the usage TypeError (0)
static int get_seq(strait_args *a, size_t i, const char *name, uint64_t *out) {
  if (i < a->argc && seq_of(a->env, a->argv[i], out)) return 1;
  return strait_throw_usage(a->env, a->fn, "argument %zu (%s) must be an integer in [0, 2^53)", i + 1, name), 0;
}

// argument i: the cipher suite, 1 (TLS_AES_128_GCM_SHA256) or 2 (TLS_AES_256_GCM_SHA384)
static int get_suite(strait_args *a, size_t i, int32_t *out) {
  return strait_get_int_range(a, i, "suite", 1, 2, out);
}

napi_value strait_js_relay_start(napi_env env, napi_callback_info info) {
  strait_args a;
  int32_t tls_fd, app_fd, suite;
  void *pending;
  size_t pending_len = 0;
  unsigned char rsec[48], wsec[48];
  uint64_t rseq, wseq;
  int ok = strait_args_get(env, info, "tlsRelayStart", 9, 9, &a) && strait_get_fd(&a, 0, "tlsFd", &tls_fd) && strait_get_fd(&a, 1, "plainFd", &app_fd) &&
           get_suite(&a, 2, &suite) && get_secret(&a, 3, "readSecret", suite_hash(suite), rsec) && get_seq(&a, 4, "readSeq", &rseq) &&
           get_secret(&a, 5, "writeSecret", suite_hash(suite), wsec) && get_seq(&a, 6, "writeSeq", &wseq) &&
           strait_get_buffer(&a, 7, "pending", &pending, &pending_len) && strait_get_function(&a, 8, "onEnd");
  if (ok && pending_len > IN_CAP - MAX_PLAIN) {
    strait_throw_usage(env, "tlsRelayStart", "argument 8 (pending) must be at most %d bytes, got %zu", IN_CAP - MAX_PLAIN, pending_len);
    ok = 0;
  }
  if (!ok) {
    OPENSSL_cleanse(rsec, sizeof rsec);
    OPENSSL_cleanse(wsec, sizeof wsec);
    return NULL;
  }
  relay *r = calloc(1, sizeof *r);
  if (!r) return strait_throw_errno(env, "tlsRelayStart", ENOMEM);
  r->env = env;
  r->suite = suite;
  memcpy(r->rk.secret, rsec, sizeof rsec);
  memcpy(r->wk.secret, wsec, sizeof wsec);
  OPENSSL_cleanse(rsec, sizeof rsec);
  OPENSSL_cleanse(wsec, sizeof wsec);
  r->rk.ctx = EVP_CIPHER_CTX_new();
  r->wk.ctx = EVP_CIPHER_CTX_new();
  r->tls.r = r->app.r = r;
  r->tls.fd = fcntl(tls_fd, F_DUPFD_CLOEXEC, 0);
  r->app.fd = fcntl(app_fd, F_DUPFD_CLOEXEC, 0);
  uv_loop_t *loop;
  napi_get_uv_event_loop(env, &loop);
  int tls_ok = r->tls.fd >= 0 && uv_poll_init(loop, &r->tls.poll, r->tls.fd) == 0;
  int app_ok = tls_ok && r->app.fd >= 0 && uv_poll_init(loop, &r->app.poll, r->app.fd) == 0;
  if (!app_ok) {
    int err = errno;
    if (tls_ok) {
      // the TLS side's handle is initialised: closing it frees the relay
      r->tls.poll.data = &r->tls;
      r->open_handles = 1;
      if (r->app.fd >= 0) close(r->app.fd);
      uv_close((uv_handle_t *)&r->tls.poll, on_side_closed);
    } else {
      if (r->tls.fd >= 0) close(r->tls.fd);
      if (r->app.fd >= 0) close(r->app.fd);
      EVP_CIPHER_CTX_free(r->rk.ctx);
      EVP_CIPHER_CTX_free(r->wk.ctx);
      OPENSSL_cleanse(r, sizeof *r);
      free(r);
    }
    return strait_throw_errno(env, "tlsRelayStart: dup/poll", err);
  }
  r->open_handles = 2;
  r->tls.poll.data = &r->tls;
  r->app.poll.data = &r->app;
  r->id = next_id++;
  r->next = relays;
  relays = r;
  stats[S_ACTIVE]++;
  stats[S_STARTED]++;
  if (!r->rk.ctx || !r->wk.ctx || !set_keys(&r->rk, suite, 0) || !set_keys(&r->wk, suite, 1)) fail(r, "crypto", 0);
  r->rk.seq = rseq;
  r->wk.seq = wseq;
  if (!r->reason && pending_len > 0) {
    // what was read past the hand-off: opened and written now
    r->in = buf_get(0);
    if (!r->in) fail(r, "no-buffer", ENOMEM);
    else {
      memcpy(r->in, pending, pending_len);
      r->in_len = pending_len;
      if (open_records(r)) flush_pt(r);
    }
  }
  napi_value out;
  if (r->reason) {
    stats[S_FAILED]++;
    napi_create_string_utf8(env, r->reason, NAPI_AUTO_LENGTH, &out);
    close_handles(r);
    return out;
  }
  napi_create_reference(env, a.argv[8], 1, &r->cb);
  napi_value name;
  napi_create_string_utf8(env, "strait.tlsRelay", NAPI_AUTO_LENGTH, &name);
  napi_async_init(env, NULL, name, &r->actx);
  update(r);
  napi_create_double(env, r->id, &out);
  return out;
}

napi_value strait_js_relay_stop(napi_env env, napi_callback_info info) {
  strait_args a;
  int64_t id64;
  if (!strait_args_get(env, info, "tlsRelayStop", 1, 1, &a) || !strait_get_i64(&a, 0, "id", &id64)) return NULL;
  double id;
  napi_get_value_double(env, a.argv[0], &id); // a number (checked above)
  bool found = false;
  for (relay *r = relays; r; r = r->next) {
    if (r->id == id) {
      teardown(r);
      found = true;
      break;
    }
  }
  napi_value out;
  napi_get_boolean(env, found, &out);
  return out;
}

napi_value strait_js_relay_stats(napi_env env, napi_callback_info info) {
  strait_args a;
  napi_value ab, out;
  void *data;
  if (!strait_args_get(env, info, "tlsRelayStats", 0, 0, &a)) return NULL;
  if (napi_create_arraybuffer(env, sizeof stats, &data, &ab) != napi_ok) return strait_throw_errno(env, "tlsRelayStats", ENOMEM);
  memcpy(data, stats, sizeof stats);
  if (napi_create_typedarray(env, napi_float64_array, N_STATS, ab, 0, &out) != napi_ok) return strait_throw_errno(env, "tlsRelayStats", ENOMEM);
  return out;
}

// tlsTrafficKeys(suite, secret) -> key ‖ iv of a traffic secret (the hand-off's trial opens)
napi_value strait_js_traffic_keys(napi_env env, napi_callback_info info) {
  strait_args a;
  napi_value out;
  int32_t suite;
  unsigned char secret[48], kiv[32 + 12];
  if (!strait_args_get(env, info, "tlsTrafficKeys", 2, 2, &a) || !get_suite(&a, 0, &suite) || !get_secret(&a, 1, "secret", suite_hash(suite), secret))
    return NULL;
  size_t kl = suite == 2 ? 32 : 16;
  int ok = expand_label(suite, secret, "key", kiv, kl) && expand_label(suite, secret, "iv", kiv + kl, 12);
  OPENSSL_cleanse(secret, sizeof secret);
  if (!ok) {
    napi_throw_error(env, "STRAIT_ERR_SYSTEM_TOOL", "tlsTrafficKeys: HKDF failed");
    return NULL;
  }
  void *data;
  napi_create_buffer_copy(env, kl + 12, kiv, &data, &out);
  OPENSSL_cleanse(kiv, sizeof kiv);
  return out;
}

// tlsRecordOpen(suite, keyIv, seq, record) -> the record's TLSInnerPlaintext without padding
// (content ‖ type) when it opens under that key at that sequence number, else null: how the
// hand-off (JS) tells records under the handshake keys from application records
static EVP_CIPHER_CTX *trial_ctx[3];

napi_value strait_js_record_open(napi_env env, napi_callback_info info) {
  strait_args a;
  napi_value out;
  int32_t suite;
  void *rec, *kiv;
  size_t len, kiv_len;
  double seq_num;
  if (!strait_args_get(env, info, "tlsRecordOpen", 4, 4, &a) || !get_suite(&a, 0, &suite) || !strait_get_buffer(&a, 1, "keyIv", &kiv, &kiv_len) ||
      !strait_get_buffer(&a, 3, "record", &rec, &len))
    return NULL;
  if (kiv_len != (suite == 2 ? 44u : 28u))
    return strait_throw_usage(env, "tlsRecordOpen", "argument 2 (keyIv) must be %u bytes, got %zu", suite == 2 ? 44u : 28u, kiv_len);
  if (napi_get_value_double(env, a.argv[2], &seq_num) != napi_ok) return strait_throw_usage(env, "tlsRecordOpen", "argument 3 (seq) must be a number");
  keys k;
  memset(&k, 0, sizeof k);
  // a sequence number past 2^53 or not an integer opens nothing (null)
  int ok = seq_of(env, a.argv[2], &k.seq);
  unsigned char *copy = NULL;
  size_t n = 0;
  const unsigned char *h = rec;
  if (ok && len >= HDR + TAG + 1 && len <= REC_MAX && h[0] == 23 && ((size_t)h[3] << 8 | h[4]) == len - HDR) {
    if (!trial_ctx[suite]) {
      trial_ctx[suite] = EVP_CIPHER_CTX_new();
      if (trial_ctx[suite] && EVP_DecryptInit_ex(trial_ctx[suite], suite == 2 ? EVP_aes_256_gcm() : EVP_aes_128_gcm(), NULL, NULL, NULL) != 1) {
        EVP_CIPHER_CTX_free(trial_ctx[suite]);
        trial_ctx[suite] = NULL;
      }
    }
    k.ctx = trial_ctx[suite];
    size_t kl = suite == 2 ? 32 : 16;
    memcpy(k.iv, (unsigned char *)kiv + kl, 12);
    copy = malloc(len);
    ok = k.ctx && copy && EVP_DecryptInit_ex(k.ctx, NULL, NULL, kiv, NULL) == 1;
    if (ok) {
      memcpy(copy, rec, len);
      ok = open_rec(&k, copy, len - HDR);
      if (ok) stats[S_REC_IN]--; // a trial, not a relayed record
      n = len - HDR - TAG;
      while (ok && n > 0 && copy[HDR + n - 1] == 0) n--;
      ok = ok && n > 0;
    }
  } else {
    ok = 0;
  }
  OPENSSL_cleanse(&k, sizeof k);
  if (ok) {
    void *data;
    napi_create_buffer_copy(env, n, copy + HDR, &data, &out);
  } else {
    napi_get_null(env, &out);
  }
  free(copy);
  return out;
}

static void cleanup_env(void *arg) {
  napi_env env = (napi_env)arg;
  relay *r = relays;
  while (r) {
    relay *next = r->next;
    if (r->env == env) teardown(r);
    r = next;
  }
}

napi_status strait_init_tlsrec(napi_env env) {
  return napi_add_env_cleanup_hook(env, cleanup_env, env);
}
