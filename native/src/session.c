// Tunnel sessions (docs/tunnel-protocol.md, "Data packets"): one AES-256-GCM context per
// direction (libcrypto's EVP, set up once per session, not per packet), the 4-byte salts,
// the send counter and the RFC 6479 replay window of
// src/multicluster/dataplane/tunnel/replay-window.ts, bit for bit. The gateway's native
// data path (gwpath.c) seals and opens bulk packets with them on its thread; the
// TypeScript endpoint (src/multicluster/dataplane/tunnel/session.ts, NativeSessionCrypto)
// seals and opens everything else through the entry points below, on the same state, so
// sequence numbers and the window stay one. The keys are chosen by TypeScript (handshake,
// key schedule, rekey): nothing here decides anything.
//
//   tunnelSessionNew(sendKey, sendSalt, recvKey, recvSalt, sendSeq) -> id
//   tunnelSessionCtl(id, op, value) -> number
//       op 0: replay check(value) -> 1/0    op 1: replay update(value) -> 1/0
//       op 2: highest accepted (-1: none)   op 3: take `value` send sequence numbers -> the first
//       op 4: the next send sequence        op 5: close (keys wiped, unregistered) -> 1 if it was live
//   tunnelSeal(id, header16, payload) -> ciphertext ‖ tag
//   tunnelOpen(id, message) -> plaintext, or null when the tag fails
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include "common.h"
#include "session.h"

pthread_mutex_t strait_sess_mu = PTHREAD_MUTEX_INITIALIZER;
static strait_sess *sessions[SESS_MAX];
static uint32_t next_gen = 1;

strait_sess *strait_sess_get(double id) {
  if (!(id >= 0) || id > 9007199254740991.0) return NULL;
  uint64_t v = (uint64_t)id;
  strait_sess *s = sessions[v % SESS_MAX];
  return s && s->live && s->gen == v / SESS_MAX ? s : NULL;
}

int strait_sess_check(const strait_sess *s, int64_t seq) {
  if (seq > s->top) return 1;
  if (seq + SESS_WINDOW <= s->top) return 0;
  uint32_t word = (uint32_t)(seq / SESS_WORD_BITS) & (SESS_WORDS - 1);
  return (s->bitmap[word] & (1u << (seq % SESS_WORD_BITS))) == 0;
}

int strait_sess_update(strait_sess *s, int64_t seq) {
  if (seq > s->top) {
    int64_t cur = s->top < 0 ? -1 : s->top / SESS_WORD_BITS;
    int64_t diff = seq / SESS_WORD_BITS - cur;
    if (diff > SESS_WORDS) diff = SESS_WORDS;
    for (int64_t i = 1; i <= diff; i++) s->bitmap[(cur + i) & (SESS_WORDS - 1)] = 0;
    s->top = seq;
  } else if (seq + SESS_WINDOW <= s->top) {
    return 0;
  }
  uint32_t word = (uint32_t)(seq / SESS_WORD_BITS) & (SESS_WORDS - 1);
  uint32_t bit = 1u << (seq % SESS_WORD_BITS);
  if (s->bitmap[word] & bit) return 0;
  s->bitmap[word] |= bit;
  return 1;
}

static void nonce(unsigned char out[12], const unsigned char salt[4], const unsigned char *header) {
  memcpy(out, salt, 4);
  memcpy(out + 4, header + 8, 8);
}

int strait_sess_seal(strait_sess *s, const unsigned char *header, const unsigned char *payload, size_t plen, unsigned char *out) {
  unsigned char n[12];
  int outl;
  nonce(n, s->send_salt, header);
  return plen <= INT32_MAX && EVP_EncryptInit_ex(s->enc, NULL, NULL, NULL, n) == 1 && EVP_EncryptUpdate(s->enc, NULL, &outl, header, DATA_HEADER) == 1 &&
         (plen == 0 || EVP_EncryptUpdate(s->enc, out, &outl, payload, (int)plen) == 1) && EVP_EncryptFinal_ex(s->enc, out + plen, &outl) == 1 &&
         EVP_CIPHER_CTX_ctrl(s->enc, EVP_CTRL_GCM_GET_TAG, TAG_LEN, out + plen) == 1;
}

int strait_sess_open(strait_sess *s, const unsigned char *msg, size_t len, unsigned char *out) {
  unsigned char n[12];
  int outl;
  if (len < DATA_HEADER + TAG_LEN || len > INT32_MAX) return 0;
  size_t clen = len - DATA_HEADER - TAG_LEN;
  nonce(n, s->recv_salt, msg);
  return EVP_DecryptInit_ex(s->dec, NULL, NULL, NULL, n) == 1 && EVP_DecryptUpdate(s->dec, NULL, &outl, msg, DATA_HEADER) == 1 &&
         (clen == 0 || EVP_DecryptUpdate(s->dec, out, &outl, msg + DATA_HEADER, (int)clen) == 1) &&
         EVP_CIPHER_CTX_ctrl(s->dec, EVP_CTRL_GCM_SET_TAG, TAG_LEN, (void *)(msg + len - TAG_LEN)) == 1 && EVP_DecryptFinal_ex(s->dec, out + clen, &outl) > 0;
}

static void sess_free(strait_sess *s) {
  EVP_CIPHER_CTX_free(s->enc);
  EVP_CIPHER_CTX_free(s->dec);
  OPENSSL_cleanse(s, sizeof *s);
  free(s);
}

static int get_bytes(strait_args *a, size_t i, const char *name, size_t want, unsigned char *out) {
  void *data;
  size_t len;
  if (!strait_get_buffer(a, i, name, &data, &len)) return 0;
  if (len != want) return strait_throw_usage(a->env, a->fn, "argument %zu (%s) must be %zu bytes, got %zu", i + 1, name, want, len), 0;
  memcpy(out, data, want);
  return 1;
}

// a sequence number: an integer in [0, 2^53)
static int get_seq(strait_args *a, size_t i, const char *name, int64_t *out) {
  double v;
  napi_valuetype t;
  if (i >= a->argc || napi_typeof(a->env, a->argv[i], &t) != napi_ok || t != napi_number || napi_get_value_double(a->env, a->argv[i], &v) != napi_ok ||
      !(v >= 0) || v > 9007199254740991.0 || v != (double)(int64_t)v)
    return strait_throw_usage(a->env, a->fn, "argument %zu (%s) must be an integer in [0, 2^53)", i + 1, name), 0;
  *out = (int64_t)v;
  return 1;
}

// argument i: the id of a live session, returned with strait_sess_mu held (NULL: thrown, not held)
static strait_sess *get_sess(strait_args *a, size_t i) {
  double id;
  napi_valuetype t;
  if (i >= a->argc || napi_typeof(a->env, a->argv[i], &t) != napi_ok || t != napi_number || napi_get_value_double(a->env, a->argv[i], &id) != napi_ok)
    return strait_throw_usage(a->env, a->fn, "argument %zu (id) must be a session id", i + 1), NULL;
  pthread_mutex_lock(&strait_sess_mu);
  strait_sess *s = strait_sess_get(id);
  if (!s) {
    pthread_mutex_unlock(&strait_sess_mu);
    return strait_throw_usage(a->env, a->fn, "argument %zu (id) is no live session: %.0f", i + 1, id), NULL;
  }
  return s;
}

napi_value strait_js_session_new(napi_env env, napi_callback_info info) {
  strait_args a;
  unsigned char sk[32], ss[4], rk[32], rs[4];
  int64_t seq;
  if (!strait_args_get(env, info, "tunnelSessionNew", 5, 5, &a) || !get_bytes(&a, 0, "sendKey", 32, sk) || !get_bytes(&a, 1, "sendSalt", 4, ss) ||
      !get_bytes(&a, 2, "recvKey", 32, rk) || !get_bytes(&a, 3, "recvSalt", 4, rs) || !get_seq(&a, 4, "sendSeq", &seq)) {
    OPENSSL_cleanse(sk, sizeof sk);
    OPENSSL_cleanse(rk, sizeof rk);
    return NULL;
  }
  strait_sess *s = calloc(1, sizeof *s);
  if (s) {
    s->enc = EVP_CIPHER_CTX_new();
    s->dec = EVP_CIPHER_CTX_new();
  }
  int ok = s && s->enc && s->dec && EVP_EncryptInit_ex(s->enc, EVP_aes_256_gcm(), NULL, sk, NULL) == 1 &&
           EVP_DecryptInit_ex(s->dec, EVP_aes_256_gcm(), NULL, rk, NULL) == 1;
  OPENSSL_cleanse(sk, sizeof sk);
  OPENSSL_cleanse(rk, sizeof rk);
  if (!ok) {
    if (s) sess_free(s);
    return strait_throw_errno(env, "tunnelSessionNew: libcrypto AES-256-GCM", ENOMEM);
  }
  memcpy(s->send_salt, ss, 4);
  memcpy(s->recv_salt, rs, 4);
  s->send_seq = (uint64_t)seq;
  s->top = -1;
  s->live = 1;
  pthread_mutex_lock(&strait_sess_mu);
  int slot = -1;
  for (int i = 0; i < SESS_MAX; i++)
    if (!sessions[i]) {
      slot = i;
      break;
    }
  if (slot < 0) {
    pthread_mutex_unlock(&strait_sess_mu);
    sess_free(s);
    return strait_throw_errno(env, "tunnelSessionNew: too many sessions", EMFILE);
  }
  s->gen = next_gen++;
  sessions[slot] = s;
  double id = (double)s->gen * SESS_MAX + slot;
  pthread_mutex_unlock(&strait_sess_mu);
  napi_value out;
  napi_create_double(env, id, &out);
  return out;
}

napi_value strait_js_session_ctl(napi_env env, napi_callback_info info) {
  strait_args a;
  int32_t op;
  int64_t v;
  if (!strait_args_get(env, info, "tunnelSessionCtl", 3, 3, &a) || !strait_get_int_range(&a, 1, "op", 0, 5, &op) || !get_seq(&a, 2, "value", &v)) return NULL;
  strait_sess *s = get_sess(&a, 0);
  if (!s) return NULL;
  double r = 0;
  switch (op) {
    case 0: r = strait_sess_check(s, v); break;
    case 1: r = strait_sess_update(s, v); break;
    case 2: r = (double)s->top; break;
    case 3:
      r = (double)s->send_seq;
      s->send_seq += (uint64_t)v;
      break;
    case 4: r = (double)s->send_seq; break;
    default: {
      // close: the data path forgets it at once (a packet in flight on its thread finishes
      // under this lock first), the memory goes now
      for (int i = 0; i < SESS_MAX; i++)
        if (sessions[i] == s) {
          strait_gwpath_forget(s);
          sessions[i] = NULL;
        }
      sess_free(s);
      r = 1;
    }
  }
  pthread_mutex_unlock(&strait_sess_mu);
  napi_value out;
  napi_create_double(env, r, &out);
  return out;
}

napi_value strait_js_session_seal(napi_env env, napi_callback_info info) {
  strait_args a;
  void *hdr, *payload;
  size_t hlen, plen;
  if (!strait_args_get(env, info, "tunnelSeal", 3, 3, &a) || !strait_get_buffer(&a, 1, "header", &hdr, &hlen) ||
      !strait_get_buffer(&a, 2, "payload", &payload, &plen))
    return NULL;
  if (hlen != DATA_HEADER) return strait_throw_usage(env, "tunnelSeal", "argument 2 (header) must be %d bytes, got %zu", DATA_HEADER, hlen);
  napi_value out;
  void *data;
  if (napi_create_buffer(env, plen + TAG_LEN, &data, &out) != napi_ok) return strait_throw_errno(env, "tunnelSeal", ENOMEM);
  strait_sess *s = get_sess(&a, 0);
  if (!s) return NULL;
  int ok = strait_sess_seal(s, hdr, payload, plen, data);
  pthread_mutex_unlock(&strait_sess_mu);
  if (!ok) return strait_throw_errno(env, "tunnelSeal: libcrypto", EIO);
  return out;
}

napi_value strait_js_session_open(napi_env env, napi_callback_info info) {
  strait_args a;
  void *msg;
  size_t len;
  if (!strait_args_get(env, info, "tunnelOpen", 2, 2, &a) || !strait_get_buffer(&a, 1, "message", &msg, &len)) return NULL;
  napi_value out;
  if (len < DATA_HEADER + TAG_LEN) {
    napi_get_null(env, &out);
    return out;
  }
  void *data;
  if (napi_create_buffer(env, len - DATA_HEADER - TAG_LEN, &data, &out) != napi_ok) return strait_throw_errno(env, "tunnelOpen", ENOMEM);
  strait_sess *s = get_sess(&a, 0);
  if (!s) return NULL;
  int ok = strait_sess_open(s, msg, len, data);
  pthread_mutex_unlock(&strait_sess_mu);
  if (!ok) napi_get_null(env, &out);
  return out;
}
