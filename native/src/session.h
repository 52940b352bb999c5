// Tunnel sessions in C (session.c): the keys, salts, send counter and RFC 6479 replay
// window of one session of docs/tunnel-protocol.md, for the gateway's native data path
// (gwpath.c) and for the TypeScript endpoint, which seals and opens through the same
// state while the native path runs. Every field is guarded by strait_sess_mu.
#ifndef STRAIT_NATIVE_SESSION_H
#define STRAIT_NATIVE_SESSION_H
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <openssl/evp.h>

#define SESS_MAX 1024
#define SESS_WORDS 64
#define SESS_WORD_BITS 32
#define SESS_WINDOW ((SESS_WORDS - 1) * SESS_WORD_BITS) // 2016, REPLAY_WINDOW_SIZE
#define DATA_HEADER 16
#define TAG_LEN 16

typedef struct strait_sess {
  uint32_t gen; // id = gen * SESS_MAX + slot
  int live;
  EVP_CIPHER_CTX *enc, *dec;
  unsigned char send_salt[4], recv_salt[4];
  uint64_t send_seq;
  int64_t top; // highest sequence accepted, -1 before the first
  uint32_t bitmap[SESS_WORDS];
} strait_sess;

extern pthread_mutex_t strait_sess_mu;

// the live session of `id`, or NULL (call with strait_sess_mu held)
strait_sess *strait_sess_get(double id);
// replay-window.ts, exactly: check() has no side effect, update() marks (false: too old or seen)
int strait_sess_check(const strait_sess *s, int64_t seq);
int strait_sess_update(strait_sess *s, int64_t seq);
// AES-256-GCM: seal payload (plen bytes) with the 16-byte header as associated data (its
// bytes 8..16 are the sequence of the nonce) into out (plen + TAG_LEN bytes); 1 on success
int strait_sess_seal(strait_sess *s, const unsigned char *header, const unsigned char *payload, size_t plen, unsigned char *out);
// open msg (header ‖ ciphertext ‖ tag, len >= DATA_HEADER + TAG_LEN) into out (len - 32
// bytes); 1 when the tag is good
int strait_sess_open(strait_sess *s, const unsigned char *msg, size_t len, unsigned char *out);
// gwpath.c: forget every data path's reference to s (it is closing; strait_sess_mu held)
void strait_gwpath_forget(const strait_sess *s);
#endif
