// The node agent's send path on one thread: TUN read (virtio_net_hdr + TCP super-packet)
// -> VXLAN frames to the active gateway -> UDP send with GSO (UDP_SEGMENT), with no
// hand-off to JS or to another thread and no copy of the payload (the frame headers and
// the payload leave through one iovec). JS keeps every decision: it builds the header
// templates, starts the pump only once a strait gateway answered the hello with the
// fragments feature, stops it when the active gateway changes (HA) or the agent stops,
// and reads the counters at scrape time. While the pump runs, the TUN device's reader on
// Node's event loop is paused; when it stops, that reader resumes.
// Frames are byte-identical to the JS path of src/multicluster/dataplane/node-agent/index.ts (fromNode with a
// gateway that takes fragments):
//   plain virtio_net_hdr (no GSO, no checksum) + IPv4 packet -> hdrIpv4 (22) | packet
//   other virtio_net_hdr + packet that fits one datagram      -> hdrVnet (22) | hdr | packet
//   bigger                                                    -> count = ceil(len / fragSize) datagrams
//       hdrStrait (22) | extension header (12: 3, index, count, 0, id, fragSize, 0) | fragSize bytes
//   a read that fits one datagram but is shorter than an IPv4 header or not IPv4,
//   or a bigger one of more than 64 fragments                         -> counted malformed, dropped
//   (a bigger read is sent in fragments as it is: the gateway checks what it reassembles)
//
//   pumpStart(tunFd, udpFd, hdrIpv4, hdrVnet, hdrStrait, fragSize, maxDatagram, addr, port, msgId, counters)
//       counters: Float64Array(PUMP_COUNTERS), added to by the pump thread (see enum below)
//   pumpStop(tunFd) -> the last message id used (JS continues from it), or -1 when none ran
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include "common.h"

#define MAX_PUMPS 8
#define HDR 22          // VXLAN header + inner Ethernet header
#define EXT 12          // strait extension header
#define VNET 10         // virtio_net_hdr
#define MAX_FRAGS 64    // EXT_MAX_FRAGMENTS
#define GSO_BYTES 65000 // bytes per GSO send (as the JS transport batches)
#define GSO_SEGS 64
#define MAX_SEG 1472 // bigger datagrams leave one by one (as the JS transport sends them)
#define READ_BYTES (65536 + VNET)
#define BURST 64

enum { C_TX_PACKETS, C_TX_BYTES, C_SUPER, C_FRAGMENTS, C_MALFORMED, C_SEND_ERRORS, C_READS, C_READ_BYTES, PUMP_COUNTERS };

typedef struct {
  int tun_fd, udp_fd, stop_fd;
  int stop; // set (atomically) by stop_slot before it signals stop_fd: the thread returns soon
  napi_env env;
  pthread_t thread;
  unsigned char h4[HDR], hv[HDR], hs[HDR];
  size_t frag_size, max_dgram;
  struct sockaddr_in to;
  uint32_t msg_id;
  double *counters; // PUMP_COUNTERS doubles in a JS Float64Array (referenced below)
  unsigned char frag_hdr[MAX_FRAGS][HDR + EXT];
  unsigned char buf[READ_BYTES];
} pump;

static pump *pumps[MAX_PUMPS];
static napi_ref counter_refs[MAX_PUMPS]; // keeps each pump's Float64Array alive

static int stopping(pump *p) {
  return __atomic_load_n(&p->stop, __ATOMIC_ACQUIRE);
}

static int send_run(pump *p, struct iovec *iov, unsigned n, size_t seg) {
  return strait_send_run(p->udp_fd, &p->to, p->stop_fd, &p->stop, iov, n, seg);
}

static void count_send(pump *p, int rc) {
  if (rc < 0 && rc != -ECANCELED) p->counters[C_SEND_ERRORS] += 1;
}

// A virtio_net_hdr + super-packet of len bytes in extension fragments.
static void send_fragments(pump *p, unsigned char *data, size_t len) {
  size_t size = p->frag_size;
  size_t count = (len + size - 1) / size;
  if (count > MAX_FRAGS) {
    p->counters[C_MALFORMED] += 1;
    return;
  }
  uint32_t id = ++p->msg_id;
  p->counters[C_TX_PACKETS] += 1;
  p->counters[C_TX_BYTES] += (double)len;
  p->counters[C_SUPER] += 1;
  p->counters[C_FRAGMENTS] += (double)count;
  struct iovec iov[2 * MAX_FRAGS];
  for (size_t i = 0; i < count; i++) {
    unsigned char *h = p->frag_hdr[i];
    memcpy(h, p->hs, HDR);
    unsigned char *e = h + HDR;
    e[0] = 3; // EXT_FRAGMENT
    e[1] = (unsigned char)i;
    e[2] = (unsigned char)count;
    e[3] = 0;
    e[4] = (unsigned char)(id >> 24);
    e[5] = (unsigned char)(id >> 16);
    e[6] = (unsigned char)(id >> 8);
    e[7] = (unsigned char)id;
    e[8] = (unsigned char)(size >> 8);
    e[9] = (unsigned char)size;
    e[10] = 0;
    e[11] = 0;
    size_t start = i * size;
    size_t end = start + size < len ? start + size : len;
    iov[2 * i].iov_base = h;
    iov[2 * i].iov_len = HDR + EXT;
    iov[2 * i + 1].iov_base = data + start;
    iov[2 * i + 1].iov_len = end - start;
  }
  size_t seg = HDR + EXT + size;
  size_t per = seg > MAX_SEG ? 1 : GSO_BYTES / seg;
  if (per > GSO_SEGS) per = GSO_SEGS;
  if (per < 1) per = 1;
  for (size_t i = 0; i < count && !stopping(p); i += per) {
    size_t n = count - i < per ? count - i : per;
    count_send(p, send_run(p, &iov[2 * i], (unsigned)n, seg));
  }
}

// One read from the TUN device (see the table at the top).
static void handle(pump *p, size_t n) {
  unsigned char *b = p->buf;
  const unsigned char *hdr;
  unsigned char *pkt;
  size_t len;
  if (n > VNET && b[0] == 0 && b[1] == 0) {
    hdr = p->h4; // plain packet: the virtio_net_hdr stays behind
    pkt = b + VNET;
    len = n - VNET;
  } else {
    hdr = p->hv;
    if (HDR + n > p->max_dgram) {
      send_fragments(p, b, n);
      return;
    }
    pkt = b;
    len = n;
  }
  // the IPv4 packet after the virtio_net_hdr (if it is sent along) must at least look like one
  const unsigned char *ip = hdr == p->hv ? b + VNET : pkt;
  size_t iplen = hdr == p->hv ? (n > VNET ? n - VNET : 0) : len;
  if (iplen < 20 || (ip[0] >> 4) != 4) {
    p->counters[C_MALFORMED] += 1;
    return;
  }
  p->counters[C_TX_PACKETS] += 1;
  p->counters[C_TX_BYTES] += (double)len;
  struct iovec iov[2] = {{(void *)hdr, HDR}, {pkt, len}};
  count_send(p, send_run(p, iov, 1, 0));
}

static void *run(void *arg) {
  pump *p = arg;
  struct pollfd fds[2] = {{p->tun_fd, POLLIN, 0}, {p->stop_fd, POLLIN, 0}};
  for (;;) {
    if (poll(fds, 2, -1) < 0 && errno != EINTR) break;
    if (fds[1].revents) break;
    if (fds[0].revents & (POLLERR | POLLHUP | POLLNVAL)) {
      // the device is down or gone: only JS decides to stop (pumpStop, or tunClose stops
      // the pump first); until then look again every 10 ms rather than spin
      if (poll(&fds[1], 1, 10) > 0) break;
      continue;
    }
    for (int i = 0; i < BURST && !stopping(p); i++) {
      ssize_t n = read(p->tun_fd, p->buf, sizeof p->buf);
      if (n < 0 && errno != EAGAIN && errno != EINTR) {
        poll(&fds[1], 1, 10); // an error other than "nothing to read": do not spin on it
        break;
      }
      if (n <= 0) break;
      p->counters[C_READS] += 1;
      p->counters[C_READ_BYTES] += (double)n;
      handle(p, (size_t)n);
    }
  }
  return NULL;
}

// Stop the thread of pump slot i and take the slot (on Node's thread): the thread returns
// within one send or poll (at most ~10 ms), as every wait also watches stop_fd.
static pump *join_slot(int i) {
  pump *p = pumps[i];
  strait_signal_stop(&p->stop, p->stop_fd);
  pthread_join(p->thread, NULL);
  close(p->stop_fd);
  pumps[i] = NULL;
  return p;
}

// Stop and free pump slot i (on Node's thread); the TUN reader on the event loop resumes.
static uint32_t stop_slot(napi_env env, int i) {
  pump *p = join_slot(i);
  uint32_t id = p->msg_id;
  int tun_fd = p->tun_fd;
  free(p);
  napi_delete_reference(env, counter_refs[i]);
  counter_refs[i] = NULL;
  strait_reader_pause(tun_fd, 0);
  return id;
}

void strait_pump_stop_fd(napi_env env, int fd) {
  for (int i = 0; i < MAX_PUMPS; i++)
    if (pumps[i] && (pumps[i]->tun_fd == fd || pumps[i]->udp_fd == fd)) stop_slot(env, i);
}

// Env teardown (process exit, a worker ending): stop this env's pumps before their
// Float64Array's backing store is freed. Only the threads: the references and readers
// go with the env.
static void cleanup_env(void *arg) {
  napi_env env = arg;
  for (int i = 0; i < MAX_PUMPS; i++) {
    if (pumps[i] && pumps[i]->env == env) {
      free(join_slot(i));
      counter_refs[i] = NULL;
    }
  }
}

// argument i: a Buffer of HDR bytes, copied to out (1), or the usage TypeError (0)
static int get_header(strait_args *a, size_t i, const char *name, unsigned char *out) {
  void *data;
  size_t len;
  if (!strait_get_buffer(a, i, name, &data, &len)) return 0;
  if (len != HDR) return strait_throw_usage(a->env, a->fn, "argument %zu (%s) must be %d bytes, got %zu", i + 1, name, HDR, len), 0;
  memcpy(out, data, HDR);
  return 1;
}

napi_value strait_js_pump_start(napi_env env, napi_callback_info info) {
  strait_args a;
  int32_t tun_fd, udp_fd, frag, maxd, port;
  uint32_t addr, msg_id;
  unsigned char h4[HDR], hv[HDR], hs[HDR];
  size_t tlen;
  double *tdata;
  // fragments: at least 64 bytes (EXT_MIN_FRAGMENT), a datagram of at most 65507 bytes
  if (!strait_args_get(env, info, "pumpStart", 11, 11, &a) || !strait_get_fd(&a, 0, "tunFd", &tun_fd) || !strait_get_fd(&a, 1, "udpFd", &udp_fd) ||
      !get_header(&a, 2, "hdrIpv4", h4) || !get_header(&a, 3, "hdrVnet", hv) || !get_header(&a, 4, "hdrStrait", hs) ||
      !strait_get_int_range(&a, 5, "fragSize", 64, 65000, &frag) || !strait_get_int_range(&a, 6, "maxDatagram", HDR + EXT + frag, 65507, &maxd) ||
      !strait_get_u32(&a, 7, "addr", &addr) || !strait_get_int_range(&a, 8, "port", 1, 65535, &port) || !strait_get_u32(&a, 9, "msgId", &msg_id) ||
      !strait_get_f64array(&a, 10, "counters", PUMP_COUNTERS, &tdata, &tlen))
    return NULL;
  int slot = -1;
  for (int i = 0; i < MAX_PUMPS; i++) {
    if (pumps[i] && pumps[i]->tun_fd == tun_fd) return strait_throw_errno(env, "pumpStart: this TUN device is pumped already", EBUSY);
    if (!pumps[i] && slot < 0) slot = i;
  }
  if (slot < 0) return strait_throw_errno(env, "pumpStart: too many pumps", EMFILE);
  pump *p = calloc(1, sizeof *p);
  if (!p) return strait_throw_errno(env, "pumpStart", ENOMEM);
  p->tun_fd = tun_fd;
  p->udp_fd = udp_fd;
  p->env = env;
  memcpy(p->h4, h4, HDR);
  memcpy(p->hv, hv, HDR);
  memcpy(p->hs, hs, HDR);
  p->frag_size = (size_t)frag;
  p->max_dgram = (size_t)maxd;
  p->to.sin_family = AF_INET;
  p->to.sin_port = htons((uint16_t)port);
  p->to.sin_addr.s_addr = htonl(addr);
  p->msg_id = msg_id;
  p->counters = tdata;
  p->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (p->stop_fd < 0) {
    int err = errno;
    free(p);
    return strait_throw_errno(env, "pumpStart: eventfd", err);
  }
  // the pump reads the device from now on; the event-loop reader waits
  strait_reader_pause(tun_fd, 1);
  int rc = pthread_create(&p->thread, NULL, run, p);
  if (rc != 0) {
    strait_reader_pause(tun_fd, 0);
    close(p->stop_fd);
    free(p);
    return strait_throw_errno(env, "pumpStart: pthread_create", rc);
  }
  napi_create_reference(env, a.argv[10], 1, &counter_refs[slot]);
  pumps[slot] = p;
  return NULL;
}

napi_value strait_js_pump_stop(napi_env env, napi_callback_info info) {
  strait_args a;
  int32_t fd;
  // -1 (no device) stops nothing
  if (!strait_args_get(env, info, "pumpStop", 1, 1, &a) || !strait_get_int(&a, 0, "tunFd", &fd)) return NULL;
  double id = -1;
  for (int i = 0; i < MAX_PUMPS; i++) {
    if (pumps[i] && pumps[i]->tun_fd == fd) {
      id = stop_slot(env, i);
    }
  }
  napi_value out;
  napi_create_double(env, id, &out);
  return out;
}

napi_status strait_init_pump(napi_env env) {
  return napi_add_env_cleanup_hook(env, cleanup_env, env);
}
