// A writer thread per descriptor (UDP socket or TUN device): large writes are copied into
// a bounded ring and a pthread makes the syscall, so the kernel work behind it (UDP GSO
// segmentation, and on veth the receiving namespace's whole network stack, or the
// forwarding and TCP delivery behind a TUN write) runs on another core while Node's
// thread seals the next message. Small writes go inline when the ring is empty (an ACK
// must not pay a thread wake-up), and through the ring otherwise, so the order of writes
// on a descriptor is always kept. The ring is bounded (RING slots): when it is full Node's
// thread waits (back-pressure); a full socket buffer is waited out by the writer thread
// with poll(), never by Node's thread. STRAIT_IO_THREADS=0
// turns it off (every write inline).
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"

#define RING 64

typedef struct {
  char *data;
  size_t cap;
  size_t len;
  size_t seg;
  size_t split; // tun: bytes of header before the packet (for writev); 0 otherwise
  struct sockaddr_in to;
} wslot;

struct strait_writer {
  int fd;
  strait_write_fn fn;
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  unsigned head; // next slot the producer fills
  unsigned tail; // slot the writer thread is writing (or next)
  int stop;
  long errors;
  wslot slots[RING];
};

static int threads_enabled = -1;

int strait_io_threads(void) {
  if (threads_enabled < 0) {
    const char *e = getenv("STRAIT_IO_THREADS");
    threads_enabled = !(e && e[0] == '0');
  }
  return threads_enabled;
}

static void *run(void *arg) {
  strait_writer *w = arg;
  for (;;) {
    pthread_mutex_lock(&w->mu);
    while (w->head == w->tail && !w->stop) pthread_cond_wait(&w->cv, &w->mu);
    if (w->head == w->tail && w->stop) {
      pthread_mutex_unlock(&w->mu);
      return NULL;
    }
    wslot *s = &w->slots[w->tail % RING];
    pthread_mutex_unlock(&w->mu);
    ssize_t n = w->fn(w->fd, s->data, s->len, s->seg, s->split, &s->to);
    // a full socket or device queue: wait for room here (only this thread waits) rather
    // than lose a fragment, which would lose its whole message
    for (int tries = 0; (n == -EAGAIN || n == -ENOBUFS) && tries < 20 && !w->stop; tries++) {
      struct pollfd pfd = {w->fd, POLLOUT, 0};
      poll(&pfd, 1, 10);
      n = w->fn(w->fd, s->data, s->len, s->seg, s->split, &s->to);
    }
    pthread_mutex_lock(&w->mu);
    if (n < 0) w->errors++;
    w->tail++;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
  }
}

strait_writer *strait_writer_new(int fd, strait_write_fn fn) {
  strait_writer *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  w->fd = fd;
  w->fn = fn;
  pthread_mutex_init(&w->mu, NULL);
  pthread_cond_init(&w->cv, NULL);
  if (pthread_create(&w->thread, NULL, run, w) != 0) {
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    free(w);
    return NULL;
  }
  return w;
}

int strait_writer_idle(strait_writer *w) {
  pthread_mutex_lock(&w->mu);
  int idle = w->head == w->tail;
  pthread_mutex_unlock(&w->mu);
  return idle;
}

int strait_writer_push(strait_writer *w, const char *a, size_t alen, const char *b, size_t blen, size_t seg, const struct sockaddr_in *to) {
  // back-pressure: when the ring is full, Node's thread waits for the writer (as a
  // blocking write would) instead of dropping
  pthread_mutex_lock(&w->mu);
  while (w->head - w->tail >= RING && !w->stop) pthread_cond_wait(&w->cv, &w->mu);
  unsigned at = w->head;
  pthread_mutex_unlock(&w->mu);
  // only this (Node's) thread writes slot `at` until head moves past it
  wslot *s = &w->slots[at % RING];
  size_t len = alen + blen;
  if (s->cap < len) {
    char *d = realloc(s->data, len < 65536 + 2048 ? 65536 + 2048 : len);
    if (!d) return -ENOMEM;
    s->data = d;
    s->cap = len < 65536 + 2048 ? 65536 + 2048 : len;
  }
  if (alen) memcpy(s->data, a, alen);
  if (blen) memcpy(s->data + alen, b, blen);
  s->len = len;
  s->seg = seg;
  s->split = alen;
  if (to) s->to = *to;
  pthread_mutex_lock(&w->mu);
  w->head++;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
  return (int)len;
}

long strait_writer_errors(strait_writer *w) {
  pthread_mutex_lock(&w->mu);
  long e = w->errors;
  pthread_mutex_unlock(&w->mu);
  return e;
}

void strait_writer_free(strait_writer *w) {
  if (!w) return;
  pthread_mutex_lock(&w->mu);
  w->stop = 1;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
  pthread_join(w->thread, NULL);
  for (int i = 0; i < RING; i++) free(w->slots[i].data);
  pthread_mutex_destroy(&w->mu);
  pthread_cond_destroy(&w->cv);
  free(w);
}
