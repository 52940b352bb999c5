// The gateway's bulk data path on one native thread (docs/gateway-and-agent.md, "Gateway
// data path: the native thread"):
//   receive: tunnel UDP (recvmmsg, UDP GRO runs split again) -> replay check -> AEAD open
//            (session.c, libcrypto) -> replay update -> the sender's allowed IPs -> deliver:
//            a super-packet (next header 3) into the TUN device whole (its virtio_net_hdr
//            first), a plain packet (0) over VXLAN to the node whose pod CIDRs hold its
//            destination, else into the TUN device; type-5 fragments reassembled first
//   send:    TUN read (virtio_net_hdr + packet) -> route by destination to a peer -> seal
//            once -> one datagram, or type-5 fragments of tunnel.mtu leaving in UDP GSO runs
// TypeScript keeps every decision: it installs the peers (address, features, subnets, the
// session to send on with its packet limit and lifetime), the sessions that may be opened
// here ("fast": confirmed, connected, from the peer's current address), the node table and
// the HA fence. Whatever this thread does not take goes up to TypeScript unchanged, through
// onUp(kind, bytes, addr, port): kind 0 a tunnel datagram (handshakes, cookies, probes and
// notices, unknown or expiring sessions, another source address, anything malformed),
// kind 1 a TUN packet (no route, no usable session, a peer without FEATURE_VNET). Drops
// decided here (replay, auth, fragment, reassembly, malformed body, fenced) are counted in
// `counters` (a Float64Array TypeScript folds into its own counters), as the TypeScript
// endpoint would count them for the same input (test/unit/gateway-native-path.test.ts).
//
//   tunnelPathStart(udpFd, tunFd, vxlanFd, vxlanHdr22, agentPort, maxDatagram, features,
//                   rejectAfterPackets, reassemblyTimeoutMs, counters, onUp) -> id
//   tunnelPathPeer(id, slot, addr, port, features, subnets[net, mask]*, sendSession (-1 none),
//                  sendSpi, sendLimit, sendTtlMs)
//   tunnelPathSession(id, session, peerSlot (-1: unregister), localIndex, fast, ttlMs)
//   tunnelPathNodes(id, [net, mask, addr]*)       tunnelPathFence(id, ttlMs (-1: no fence))
//   tunnelPathStop(id) -> whether it ran (the event-loop readers of both fds resume)
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
#include <time.h>
#include <unistd.h>
#include "common.h"
#include "session.h"

#define DP_MAX 4
#define DP_PEERS 16
#define DP_REG 64
#define DP_NODES 512
#define DP_SUBNETS 32
#define VNET 10
#define VXLAN_HDR 22
#define FRAG_HEADER 20
#define MAX_FRAGS 64
#define MIN_FRAGMENT 64
#define MAX_BODY (65536 + 64) // MAX_FRAGMENTED_BODY
#define R_SLOTS 8             // DEFAULT_LIMITS.reassemblySlots
#define VX_SLOTS 16           // the gateway's VXLAN_REASSEMBLY_SLOTS (all agents together)
#define VX_TIMEOUT_MS 1000    // VXLAN_REASSEMBLY_TIMEOUT_MS
#define EXT 12                // strait extension header (wire/vxlan EXT_HEADER)
#define RX_MSGS 8
#define RX_BYTES (65536 + 1024)
#define TUN_BYTES (65536 + VNET)
#define GSO_BYTES 65000
#define MAX_SEG 1472
#define BURST 64
#define UP_QUEUE 4096
#define FEATURE_VNET 1
#define FEATURE_FRAG 2

enum {
  C_REPLAY,
  C_AUTH,
  C_MALFORMED,
  C_FRAGMENT,
  C_REASSEMBLY,
  C_FRAGS_SENT,
  C_FRAGS_RECEIVED,
  C_REASSEMBLED,
  C_FENCED,
  C_VX_TX_PACKETS,
  C_VX_TX_BYTES,
  C_UP_TUNNEL,
  C_UP_TUN,
  C_UP_DROPPED,
  C_OPENED,
  C_SEALED,
  C_SEND_ERRORS,
  C_TUN_WRITE_ERRORS,
  C_UDP_READS,
  C_TUN_READS,
  C_NO_ROUTE,
  C_SPOOFED,
  C_VX_RX_PACKETS,
  C_VX_RX_BYTES,
  C_VX_FRAGMENTS,
  C_VX_REASSEMBLED,
  C_VX_READS,
  C_UP_VXLAN,
  C_BEATS,    // rounds of the receive (or only) thread's loop: one at least every 100 ms while it runs
  C_BEATS_TX, // the same for the send thread (two threads)
  C_EXITED,   // an errno when a thread ended without being told to stop (TypeScript then stops the path)
  C_GLOBAL
};
enum { P_RX_PACKETS, P_RX_BYTES, P_TX_PACKETS, P_TX_BYTES, P_AUTHENTICATED, P_STRIDE };
#define COUNTERS (C_GLOBAL + DP_PEERS * P_STRIDE)

typedef struct {
  int in_use;
  uint32_t spi;
  int64_t seq;
  double started;
  uint8_t count, got;
  uint16_t size;
  int32_t total;
  uint8_t seen[MAX_FRAGS];
  unsigned char *buf; // DATA_HEADER + MAX_BODY, allocated on first use
} rslot;

typedef struct {
  int used;
  uint32_t addr;
  uint16_t port;
  int features;
  int nsub;
  uint32_t net[DP_SUBNETS], mask[DP_SUBNETS];
  strait_sess *send; // NULL: TUN packets to this peer go up to TypeScript
  uint32_t send_spi;
  uint64_t send_limit;
  double send_deadline;
  rslot r[R_SLOTS];
} dpeer;

typedef struct {
  strait_sess *s; // NULL: free
  uint32_t local_index;
  int peer;
  int fast;
  double deadline;
} dreg;

typedef struct {
  int id;
  int udp_fd, tun_fd, vx_fd, stop_fd;
  int stop;
  int fault; // tunnelPathFault: 1 the threads end as on a poll error, 2 they stall (no beat) until stopped
  napi_env env;
  pthread_t thread, thread2;
  int threads; // 1: one thread for everything; 2: receive (tunnel socket) and send (TUN, VXLAN) apart
  napi_threadsafe_function up;
  unsigned char vxhdr[VXLAN_HDR];
  uint32_t vni;
  uint16_t agent_port;
  rslot vx[VX_SLOTS]; // the agents' super-packets (key: agent address, message id)
  size_t max_dgram;
  int features;
  uint64_t reject_packets;
  double reasm_timeout;
  int64_t fence_us; // CLOCK_MONOTONIC µs after which nothing is sent; 0: no fence
  dpeer peers[DP_PEERS];
  dreg reg[DP_REG];
  int nnodes;
  uint32_t node_net[DP_NODES], node_mask[DP_NODES], node_addr[DP_NODES];
  double *c;
  napi_ref counters_ref;
  // the thread's buffers
  unsigned char rx[RX_MSGS][RX_BYTES];
  unsigned char vxrx[RX_MSGS][RX_BYTES];
  unsigned char tun[TUN_BYTES];
  unsigned char sealed[MAX_BODY + 64];
  unsigned char plain[MAX_BODY + 64];
  unsigned char hdr[DATA_HEADER];
  unsigned char frag_hdr[MAX_FRAGS][FRAG_HEADER];
} gwpath;

static gwpath *paths[DP_MAX];
static int next_id = 1;
static const unsigned char zero_vnet[VNET];

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1000.0 + (double)t.tv_nsec / 1e6;
}

static uint32_t be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put32(unsigned char *p, uint32_t v) {
  p[0] = (unsigned char)(v >> 24);
  p[1] = (unsigned char)(v >> 16);
  p[2] = (unsigned char)(v >> 8);
  p[3] = (unsigned char)v;
}

static void put64(unsigned char *p, uint64_t v) {
  put32(p, (uint32_t)(v >> 32));
  put32(p + 4, (uint32_t)v);
}

// wire/ipv4 peekSource / peekDestination: -1 when not an IPv4 header
static int64_t peek_addr(const unsigned char *ip, size_t len, int at) {
  if (len < 20 || ip[0] >> 4 != 4) return -1;
  return be32(ip + at);
}

static int stopping(gwpath *p) {
  return __atomic_load_n(&p->stop, __ATOMIC_ACQUIRE);
}

// add to a counter; with two threads, counters either may touch are added atomically
static void cadd(gwpath *p, int i, double v) {
  if (p->threads == 1) {
    p->c[i] += v;
    return;
  }
  uint64_t *w = (uint64_t *)&p->c[i];
  uint64_t old = __atomic_load_n(w, __ATOMIC_RELAXED), nu;
  do {
    double d;
    memcpy(&d, &old, sizeof d);
    d += v;
    memcpy(&nu, &d, sizeof nu);
  } while (!__atomic_compare_exchange_n(w, &old, nu, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}

// --- up to TypeScript ------------------------------------------------------------------

typedef struct {
  int kind;
  uint32_t addr;
  uint16_t port;
  size_t len;
  unsigned char data[];
} up_item;

static void call_up(napi_env env, napi_value fn, void *ctx, void *data) {
  up_item *it = data;
  if (env != NULL && fn != NULL) {
    napi_value args[4], buf, ret;
    void *dst;
    if (napi_create_buffer_copy(env, it->len, it->data, &dst, &buf) == napi_ok) {
      napi_create_int32(env, it->kind, &args[0]);
      args[1] = buf;
      napi_create_uint32(env, it->addr, &args[2]);
      napi_create_int32(env, it->port, &args[3]);
      napi_value global;
      napi_get_global(env, &global);
      napi_call_function(env, global, fn, 4, args, &ret);
    }
  }
  free(it);
}

static void up(gwpath *p, int kind, const unsigned char *data, size_t len, uint32_t addr, uint16_t port) {
  up_item *it = malloc(sizeof *it + len);
  if (!it) {
    cadd(p, C_UP_DROPPED, 1);
    return;
  }
  it->kind = kind;
  it->addr = addr;
  it->port = port;
  it->len = len;
  memcpy(it->data, data, len);
  if (napi_call_threadsafe_function(p->up, it, napi_tsfn_nonblocking) != napi_ok) {
    free(it);
    cadd(p, C_UP_DROPPED, 1);
    return;
  }
  cadd(p, kind == 0 ? C_UP_TUNNEL : kind == 1 ? C_UP_TUN : C_UP_VXLAN, 1);
}

// --- receive ---------------------------------------------------------------------------

// the registered session of spi that this thread may open for a datagram from addr:port
// (strait_sess_mu held); NULL: TypeScript decides
static dreg *fast_session(gwpath *p, uint32_t spi, uint32_t addr, uint16_t port, int64_t seq, double now) {
  for (int i = 0; i < DP_REG; i++) {
    dreg *r = &p->reg[i];
    if (r->s == NULL || r->local_index != spi) continue;
    dpeer *peer = &p->peers[r->peer];
    if (!r->fast || !peer->used || peer->addr != addr || peer->port != port || now >= r->deadline || (uint64_t)seq >= p->reject_packets) return NULL;
    return r;
  }
  return NULL;
}

static int in_subnets(const dpeer *peer, uint32_t ip) {
  for (int i = 0; i < peer->nsub; i++)
    if ((ip & peer->mask[i]) == peer->net[i]) return 1;
  return 0;
}

static void tun_write(gwpath *p, const unsigned char *a, size_t alen, const unsigned char *b, size_t blen) {
  struct iovec iov[2] = {{(void *)a, alen}, {(void *)b, blen}};
  for (int tries = 0; tries < 100 && !stopping(p); tries++) {
    ssize_t n = writev(p->tun_fd, iov, blen ? 2 : 1);
    if (n >= 0) return;
    if (errno == EINTR) continue;
    if (errno != EAGAIN) break;
    struct pollfd pfd[2] = {{p->tun_fd, POLLOUT, 0}, {p->stop_fd, POLLIN, 0}};
    poll(pfd, 2, 10);
  }
  cadd(p, C_TUN_WRITE_ERRORS, 1);
}

// Gateway.deliver(): the sender's allowed IPs, then VXLAN to the node or into the TUN device.
static void deliver(gwpath *p, int pi, int next, const unsigned char *plain, size_t len) {
  dpeer *peer = &p->peers[pi];
  double *pc = p->c + C_GLOBAL + pi * P_STRIDE;
  pc[P_RX_PACKETS] += 1;
  pc[P_RX_BYTES] += (double)len;
  size_t ip_off = next == 3 ? VNET : 0;
  int64_t src = len >= ip_off ? peek_addr(plain + ip_off, len - ip_off, 12) : -1;
  // the peer's subnets and the node table are rewritten by JS (tunnelPathPeer, tunnelPathNodes)
  // under strait_sess_mu: read under it too, never a new mask with an old net
  pthread_mutex_lock(&strait_sess_mu);
  int allowed = src >= 0 && in_subnets(peer, (uint32_t)src);
  uint32_t dst = next == 3 ? 0 : (uint32_t)peek_addr(plain, len, 16);
  int64_t node = -1;
  for (int i = 0; allowed && next != 3 && i < p->nnodes && node < 0; i++)
    if ((dst & p->node_mask[i]) == p->node_net[i]) node = p->node_addr[i];
  pthread_mutex_unlock(&strait_sess_mu);
  if (!allowed) {
    cadd(p, C_AUTH, 1);
    return;
  }
  if (next == 3) {
    tun_write(p, plain, len, NULL, 0);
    return;
  }
  if (node >= 0) {
    struct sockaddr_in to = {0};
    to.sin_family = AF_INET;
    to.sin_port = htons(p->agent_port);
    to.sin_addr.s_addr = htonl((uint32_t)node);
    struct iovec iov[2] = {{p->vxhdr, VXLAN_HDR}, {(void *)plain, len}};
    cadd(p, C_VX_TX_PACKETS, 1);
    cadd(p, C_VX_TX_BYTES, (double)len);
    if (strait_send_run(p->vx_fd, &to, p->stop_fd, &p->stop, iov, 1, 0) < 0) cadd(p, C_SEND_ERRORS, 1);
    return;
  }
  tun_write(p, zero_vnet, VNET, plain, len);
}

// The session a message names (SPI, sequence from its header), with strait_sess_mu held; none
// (unknown, unconfirmed, another source, ...): the lock released and the message up to JS (raw).
static dreg *locked_session(gwpath *p, const unsigned char *m, size_t len, uint32_t addr, uint16_t port, int64_t *seq, double *now) {
  uint32_t spi = be32(m + 4);
  *seq = (int64_t)((uint64_t)be32(m + 8) << 32 | be32(m + 12));
  *now = now_ms();
  pthread_mutex_lock(&strait_sess_mu);
  dreg *r = fast_session(p, spi, addr, port, *seq, *now);
  if (r == NULL) {
    pthread_mutex_unlock(&strait_sess_mu);
    up(p, 0, m, len, addr, port);
  }
  return r;
}

// TunnelEndpoint.accept() for a message (header ‖ ciphertext ‖ tag) of a fast session:
// replay check, open, replay update, then deliver. A session gone meanwhile: up (raw).
static void accept_msg(gwpath *p, const unsigned char *msg, size_t len, uint32_t addr, uint16_t port) {
  int64_t seq;
  double now;
  dreg *r = locked_session(p, msg, len, addr, port, &seq, &now);
  if (r == NULL) return;
  int pi = r->peer;
  int ok = 0;
  if (!strait_sess_check(r->s, seq)) cadd(p, C_REPLAY, 1);
  else if (!strait_sess_open(r->s, msg, len, p->plain)) cadd(p, C_AUTH, 1);
  else if (!strait_sess_update(r->s, seq)) cadd(p, C_REPLAY, 1);
  else ok = 1;
  pthread_mutex_unlock(&strait_sess_mu);
  if (!ok) return;
  cadd(p, C_OPENED, 1);
  p->c[C_GLOBAL + pi * P_STRIDE + P_AUTHENTICATED] += 1;
  deliver(p, pi, msg[1], p->plain, len - DATA_HEADER - TAG_LEN);
}

// wire/tunnel fragmentRule(): 1 when the fragment header and its length are valid
static int fragment_ok(const unsigned char *d, size_t len) {
  if (len < FRAG_HEADER + 1 || d[0] != 5 || (d[1] != 0 && d[1] != 3)) return 0;
  unsigned index = d[2], count = d[3];
  if (count < 2 || count > MAX_FRAGS || index >= count || be32(d + 8) >= 0x200000) return 0;
  unsigned size = (unsigned)d[16] << 8 | d[17];
  if (size < MIN_FRAGMENT || (count - 1) * size >= MAX_BODY || d[18] || d[19]) return 0;
  size_t data = len - FRAG_HEADER;
  return index < count - 1 ? data == size : data <= size;
}

// Reassembler.add() with its rules: the slot index when complete, -1 pending, -2 duplicate, -3 inconsistent
// (`r`: n slots; a message given up to make room is counted in *given_up when not NULL)
static int reasm_add(rslot *r, int n, double *given_up, uint32_t spi, int64_t seq, unsigned index, unsigned count, unsigned size, const unsigned char *src,
    size_t len, double now) {
  int slot = -1;
  for (int i = 0; i < n; i++)
    if (r[i].in_use && r[i].seq == seq && r[i].spi == spi) {
      slot = i;
      break;
    }
  rslot *s;
  if (slot < 0) {
    // claim: a free slot, else the one started longest ago
    int oldest = 0;
    for (int i = 0; i < n; i++) {
      if (!r[i].in_use) {
        slot = i;
        break;
      }
      if (r[i].started < r[oldest].started) oldest = i;
    }
    if (slot < 0) {
      slot = oldest;
      if (given_up) *given_up += 1; // evicted or expired: a message given up either way
    }
    s = &r[slot];
    s->spi = spi;
    s->seq = seq;
    s->started = now;
    s->count = (uint8_t)count;
    s->size = (uint16_t)size;
    s->got = 0;
    s->total = -1;
    s->in_use = 1;
    memset(s->seen, 0, sizeof s->seen);
  } else {
    s = &r[slot];
    if (s->count != count || s->size != size) return -3;
  }
  if (s->seen[index]) return -2;
  size_t at = (size_t)index * size;
  if (at + len > MAX_BODY) return -3;
  if (!s->buf) {
    s->buf = malloc(DATA_HEADER + MAX_BODY);
    if (!s->buf) return -3;
  }
  memcpy(s->buf + DATA_HEADER + at, src, len);
  s->seen[index] = 1;
  if (index == count - 1) s->total = (int32_t)(at + len);
  if (++s->got < count) return -1;
  return slot;
}

static void vx_expire(gwpath *p, double now) {
  for (int j = 0; j < VX_SLOTS; j++)
    if (p->vx[j].in_use && now - p->vx[j].started >= VX_TIMEOUT_MS) p->vx[j].in_use = 0;
}

static void reasm_expire(gwpath *p, double now) {
  for (int i = 0; i < DP_PEERS; i++)
    for (int j = 0; j < R_SLOTS; j++) {
      rslot *s = &p->peers[i].r[j];
      if (s->in_use && now - s->started >= p->reasm_timeout) {
        s->in_use = 0;
        cadd(p, C_REASSEMBLY, 1);
      }
    }
}

// TunnelEndpoint.receiveFragment() for a fragment of a fast session
static void rx_fragment(gwpath *p, const unsigned char *d, size_t len, uint32_t addr, uint16_t port) {
  // as rx_one: a super-packet (next header 3) only with FEATURE_VNET; else JS, the reference, decides
  if (!(p->features & FEATURE_FRAG) || !fragment_ok(d, len) || (d[1] == 3 && !(p->features & FEATURE_VNET))) {
    up(p, 0, d, len, addr, port);
    return;
  }
  int64_t seq;
  double now;
  dreg *r = locked_session(p, d, len, addr, port, &seq, &now);
  if (r == NULL) return;
  int replay = !strait_sess_check(r->s, seq);
  int pi = r->peer;
  pthread_mutex_unlock(&strait_sess_mu);
  if (replay) {
    cadd(p, C_REPLAY, 1);
    return;
  }
  cadd(p, C_FRAGS_RECEIVED, 1);
  dpeer *peer = &p->peers[pi];
  int slot =
      reasm_add(peer->r, R_SLOTS, &p->c[C_REASSEMBLY], be32(d + 4), seq, d[2], d[3], (unsigned)d[16] << 8 | d[17], d + FRAG_HEADER, len - FRAG_HEADER, now);
  if (slot < 0) {
    if (slot != -1) cadd(p, C_FRAGMENT, 1);
    return;
  }
  rslot *s = &peer->r[slot];
  s->in_use = 0;
  size_t body = (size_t)s->total;
  if (body < TAG_LEN) {
    cadd(p, C_MALFORMED, 1);
    return;
  }
  // the associated data: the type-4 header this message would have had unfragmented
  s->buf[0] = 4;
  s->buf[1] = d[1];
  s->buf[2] = s->buf[3] = 0;
  memcpy(s->buf + 4, d + 4, 12);
  cadd(p, C_REASSEMBLED, 1);
  accept_msg(p, s->buf, DATA_HEADER + body, addr, port);
}

static void rx_one(gwpath *p, const unsigned char *d, size_t len, uint32_t addr, uint16_t port) {
  if (len > 0 && d[0] == 4) {
    // TunnelEndpoint.receiveData(): anything it would not hand to accept() goes up as it came
    if (len < DATA_HEADER + TAG_LEN || d[2] || d[3] || (d[1] != 0 && d[1] != 3) || be32(d + 8) >= 0x200000 || (d[1] == 3 && !(p->features & FEATURE_VNET))) {
      up(p, 0, d, len, addr, port);
      return;
    }
    accept_msg(p, d, len, addr, port);
  } else if (len > 0 && d[0] == 5) {
    rx_fragment(p, d, len, addr, port);
  } else {
    up(p, 0, d, len, addr, port);
  }
}

// One socket's datagrams in bursts (recvmmsg, UDP GRO split into its segments): each to
// `one`; an empty datagram goes up to JS as `kind`. The tunnel socket and the VXLAN socket.
typedef void (*datagram_fn)(gwpath *p, const unsigned char *d, size_t len, uint32_t addr, uint16_t port);

static void read_burst(gwpath *p, int fd, unsigned char (*bufs)[RX_BYTES], int counter, int kind, datagram_fn one) {
  struct mmsghdr mm[RX_MSGS];
  struct iovec iov[RX_MSGS];
  struct sockaddr_in from[RX_MSGS];
  char control[RX_MSGS][CMSG_SPACE(sizeof(int))];
  for (int round = 0; round < 8 && !stopping(p); round++) {
    memset(mm, 0, sizeof mm);
    for (int i = 0; i < RX_MSGS; i++) {
      iov[i].iov_base = bufs[i];
      iov[i].iov_len = RX_BYTES;
      mm[i].msg_hdr.msg_name = &from[i];
      mm[i].msg_hdr.msg_namelen = sizeof from[i];
      mm[i].msg_hdr.msg_iov = &iov[i];
      mm[i].msg_hdr.msg_iovlen = 1;
      mm[i].msg_hdr.msg_control = control[i];
      mm[i].msg_hdr.msg_controllen = sizeof control[i];
    }
    int n = recvmmsg(fd, mm, RX_MSGS, MSG_DONTWAIT, NULL);
    if (n <= 0) return;
    for (int i = 0; i < n; i++) {
      size_t len = mm[i].msg_len;
      size_t seg = strait_gro_size(&mm[i].msg_hdr, len);
      if (mm[i].msg_hdr.msg_namelen < sizeof from[i] || from[i].sin_family != AF_INET) continue;
      cadd(p, counter, 1);
      uint32_t addr = ntohl(from[i].sin_addr.s_addr);
      uint16_t port = ntohs(from[i].sin_port);
      if (len == 0) {
        up(p, kind, bufs[i], 0, addr, port);
        continue;
      }
      for (size_t o = 0; o < len; o += seg) one(p, bufs[i] + o, o + seg < len ? seg : len - o, addr, port);
    }
    if (n < RX_MSGS) return;
  }
}

static void rx_burst(gwpath *p) {
  read_burst(p, p->udp_fd, p->rx, C_UDP_READS, 0, rx_one);
}

// --- send ------------------------------------------------------------------------------

static int fenced(gwpath *p, unsigned datagrams) {
  int64_t f = __atomic_load_n(&p->fence_us, __ATOMIC_ACQUIRE);
  if (f == 0 || now_ms() * 1000.0 <= (double)f) return 0;
  cadd(p, C_FENCED, datagrams);
  return 1;
}

enum { SENT = 0, BAD_DST = -1, NO_ROUTE = -2, NOT_MINE = -3 };

// Gateway.forward()/forwardVnet() + TunnelEndpoint.sendPacket() + seal() + sendFragments():
// the payload (an IPv4 packet, or virtio_net_hdr + packet for next 3) to the peer whose
// subnets hold its destination, when that peer has a session this thread may send on.
// SENT (or dropped by the fence, counted), or why the caller must decide (nothing counted).
static int seal_send(gwpath *p, int next, const unsigned char *payload, size_t plen) {
  size_t ip = next == 3 ? VNET : 0;
  int64_t dst = plen > ip ? peek_addr(payload + ip, plen - ip, 16) : -1;
  if (dst < 0) return BAD_DST;
  // more fragments than a message may have (a small tunnel MTU with a 64 KiB super-packet):
  // never into frag_hdr / iov past MAX_FRAGS; JS, the reference, decides what happens to it
  if (DATA_HEADER + plen + TAG_LEN > p->max_dgram && (plen + TAG_LEN + (p->max_dgram - FRAG_HEADER) - 1) / (p->max_dgram - FRAG_HEADER) > MAX_FRAGS)
    return NOT_MINE;
  double now = now_ms();
  pthread_mutex_lock(&strait_sess_mu);
  int pi = -1;
  for (int i = 0; i < DP_PEERS && pi < 0; i++)
    if (p->peers[i].used && in_subnets(&p->peers[i], (uint32_t)dst)) pi = i;
  dpeer *peer = pi >= 0 ? &p->peers[pi] : NULL;
  if (!peer) {
    pthread_mutex_unlock(&strait_sess_mu);
    return NO_ROUTE;
  }
  if (!peer->send || peer->send->send_seq >= peer->send_limit || now >= peer->send_deadline || (next == 3 && !(peer->features & FEATURE_VNET)) ||
      plen + TAG_LEN > MAX_BODY) {
    pthread_mutex_unlock(&strait_sess_mu);
    return NOT_MINE;
  }
  uint64_t seq = peer->send->send_seq++;
  unsigned char *h = p->hdr;
  h[0] = 4;
  h[1] = (unsigned char)next;
  h[2] = h[3] = 0;
  put32(h + 4, peer->send_spi);
  put64(h + 8, seq);
  int ok = strait_sess_seal(peer->send, h, payload, plen, p->sealed);
  struct sockaddr_in to = {0};
  to.sin_family = AF_INET;
  to.sin_port = htons(peer->port);
  to.sin_addr.s_addr = htonl(peer->addr);
  int frag = (peer->features & FEATURE_FRAG) != 0;
  pthread_mutex_unlock(&strait_sess_mu);
  if (!ok) {
    cadd(p, C_SEND_ERRORS, 1);
    return SENT;
  }
  double *pc = p->c + C_GLOBAL + pi * P_STRIDE;
  pc[P_TX_PACKETS] += 1;
  pc[P_TX_BYTES] += (double)plen;
  cadd(p, C_SEALED, 1);
  size_t body = plen + TAG_LEN;
  if (DATA_HEADER + body <= p->max_dgram || !frag) {
    if (fenced(p, 1)) return SENT;
    struct iovec iov[2] = {{h, DATA_HEADER}, {p->sealed, body}};
    if (strait_send_run(p->udp_fd, &to, p->stop_fd, &p->stop, iov, 1, 0) < 0) cadd(p, C_SEND_ERRORS, 1);
    return SENT;
  }
  size_t size = p->max_dgram - FRAG_HEADER;
  size_t count = (body + size - 1) / size;
  if (count > MAX_FRAGS) return SENT; // not reached: refused before the seal above
  if (fenced(p, (unsigned)count)) return SENT;
  struct iovec iov[2 * MAX_FRAGS];
  for (size_t i = 0; i < count; i++) {
    unsigned char *f = p->frag_hdr[i];
    f[0] = 5;
    f[1] = (unsigned char)next;
    f[2] = (unsigned char)i;
    f[3] = (unsigned char)count;
    memcpy(f + 4, h + 4, 12);
    f[16] = (unsigned char)(size >> 8);
    f[17] = (unsigned char)size;
    f[18] = f[19] = 0;
    size_t start = i * size;
    size_t end = start + size < body ? start + size : body;
    iov[2 * i].iov_base = f;
    iov[2 * i].iov_len = FRAG_HEADER;
    iov[2 * i + 1].iov_base = p->sealed + start;
    iov[2 * i + 1].iov_len = end - start;
  }
  cadd(p, C_FRAGS_SENT, (double)count);
  size_t seg = FRAG_HEADER + size;
  size_t per = seg > MAX_SEG ? 1 : GSO_BYTES / seg;
  if (per > 64) per = 64;
  if (per < 1) per = 1;
  for (size_t i = 0; i < count && !stopping(p); i += per) {
    size_t k = count - i < per ? count - i : per;
    if (strait_send_run(p->udp_fd, &to, p->stop_fd, &p->stop, &iov[2 * i], (unsigned)k, seg) < 0) cadd(p, C_SEND_ERRORS, 1);
  }
  return SENT;
}

// Gateway.fromTun(): a TUN read (virtio_net_hdr + packet); what the thread cannot send goes up as read
static void tx_one(gwpath *p, const unsigned char *b, size_t n) {
  int plain = n > VNET && b[0] == 0 && b[1] == 0;
  if (n <= VNET || seal_send(p, plain ? 0 : 3, plain ? b + VNET : b, plain ? n - VNET : n) != SENT) up(p, 1, b, n, 0, 0);
}

// --- VXLAN from the node agents ----------------------------------------------------------

// the node table's rows of `addr` hold ip (NodeTable inPodCidrs): 1, 0; -1: addr is no node with pods
static int node_has(gwpath *p, uint32_t addr, uint32_t ip) {
  int known = -1;
  pthread_mutex_lock(&strait_sess_mu); // the node table is rewritten under it (tunnelPathNodes)
  for (int i = 0; i < p->nnodes && known != 1; i++) {
    if (p->node_addr[i] != addr) continue;
    known = (ip & p->node_mask[i]) == p->node_net[i] ? 1 : 0;
  }
  pthread_mutex_unlock(&strait_sess_mu);
  return known;
}

// wire/vxlan extRule() for a fragment (kind 3): 1 when valid
static int ext_fragment_ok(const unsigned char *e, size_t len) {
  if (len < EXT || e[10] || e[11] || e[0] != 3 || e[3]) return 0;
  unsigned index = e[1], count = e[2], size = (unsigned)e[8] << 8 | e[9];
  if (count < 2 || count > MAX_FRAGS || index >= count || size < MIN_FRAGMENT || (count - 1) * size >= MAX_BODY) return 0;
  size_t data = len - EXT;
  return index < count - 1 ? data == size : data >= 1 && data <= size;
}

// Gateway.fromVxlan() / fromAgentExt() / reassembledFromAgent() for a frame from a node
// agent (the gateway is active while the thread runs). Hellos, announcements, frames from
// senders that are no node with pods, malformed frames, and packets this thread cannot
// send go up as they came (the JS path decides and counts).
static void vx_one(gwpath *p, const unsigned char *d, size_t len, uint32_t addr, uint16_t port) {
  if (len < VXLAN_HDR || !(d[0] & 0x08) || ((uint32_t)d[4] << 16 | (uint32_t)d[5] << 8 | d[6]) != p->vni || node_has(p, addr, 0) < 0) {
    up(p, 2, d, len, addr, port);
    return;
  }
  unsigned et = (unsigned)d[20] << 8 | d[21];
  if (et == 0x88b6) {
    const unsigned char *e = d + VXLAN_HDR;
    if (!ext_fragment_ok(e, len - VXLAN_HDR)) {
      up(p, 2, d, len, addr, port); // a hello, or anything malformed
      return;
    }
    cadd(p, C_VX_FRAGMENTS, 1);
    int slot = reasm_add(p->vx, VX_SLOTS, NULL, addr, be32(e + 4), e[1], e[2], (unsigned)e[8] << 8 | e[9], e + EXT, len - VXLAN_HDR - EXT, now_ms());
    if (slot < 0) return;
    rslot *s = &p->vx[slot];
    s->in_use = 0;
    size_t total = (size_t)s->total;
    const unsigned char *b = s->buf + DATA_HEADER;
    cadd(p, C_VX_REASSEMBLED, 1);
    cadd(p, C_VX_RX_PACKETS, 1);
    cadd(p, C_VX_RX_BYTES, (double)total);
    // a super-packet, too, must come from a pod of the node that sent its fragments
    int64_t src = total > VNET ? peek_addr(b + VNET, total - VNET, 12) : -1;
    if (src >= 0 && node_has(p, addr, (uint32_t)src) != 1) {
      cadd(p, C_SPOOFED, 1);
      return;
    }
    int rc = seal_send(p, 3, b, total);
    if (rc == BAD_DST) cadd(p, C_MALFORMED, 1);
    else if (rc == NO_ROUTE) cadd(p, C_NO_ROUTE, 1);
    else if (rc == NOT_MINE) up(p, 1, b, total, 0, 0); // as the TUN device would give it (Gateway.fromTun)
    return;
  }
  if (len < VXLAN_HDR + 20 || (et != 0x0800 && et != 0x88b5)) {
    up(p, 2, d, len, addr, port);
    return;
  }
  size_t ip = et == 0x0800 ? VXLAN_HDR : VXLAN_HDR + VNET;
  int64_t src = len > ip ? peek_addr(d + ip, len - ip, 12) : -1;
  if (src >= 0 && node_has(p, addr, (uint32_t)src) != 1) {
    cadd(p, C_VX_RX_PACKETS, 1);
    cadd(p, C_VX_RX_BYTES, (double)(len - VXLAN_HDR));
    cadd(p, C_SPOOFED, 1);
    return;
  }
  if (seal_send(p, et == 0x0800 ? 0 : 3, d + VXLAN_HDR, len - VXLAN_HDR) != SENT) {
    up(p, 2, d, len, addr, port);
    return;
  }
  cadd(p, C_VX_RX_PACKETS, 1);
  cadd(p, C_VX_RX_BYTES, (double)(len - VXLAN_HDR));
}

static void vx_burst(gwpath *p) {
  read_burst(p, p->vx_fd, p->vxrx, C_VX_READS, 2, vx_one);
}

// role 3: everything (one thread); 1: the tunnel socket (receive); 2: TUN and VXLAN (send)
static void loop(gwpath *p, int role) {
  struct pollfd fds[4] = {
      {p->stop_fd, POLLIN, 0}, {role & 1 ? p->udp_fd : -1, POLLIN, 0}, {role & 2 ? p->tun_fd : -1, POLLIN, 0}, {role & 2 ? p->vx_fd : -1, POLLIN, 0}};
  double last_expire = now_ms();
  int beat = role == 2 ? C_BEATS_TX : C_BEATS, err = 0;
  while (!stopping(p)) {
    cadd(p, beat, 1);
    int fault = __atomic_load_n(&p->fault, __ATOMIC_ACQUIRE);
    if (fault == 1) {
      err = EBADF;
      break;
    }
    while (fault == 2 && !stopping(p)) poll(&fds[0], 1, 100);
    int rc = poll(fds, 4, 100);
    if (rc < 0 && errno != EINTR) {
      err = errno;
      break;
    }
    if (fds[0].revents) {
      if (!stopping(p)) err = fds[0].revents & POLLNVAL ? EBADF : EIO;
      break;
    }
    if (fds[1].revents & POLLIN) rx_burst(p);
    if (fds[3].revents & POLLIN) vx_burst(p);
    if (fds[2].revents & POLLIN) {
      for (int i = 0; i < BURST && !stopping(p); i++) {
        ssize_t n = read(p->tun_fd, p->tun, sizeof p->tun);
        if (n <= 0) break;
        cadd(p, C_TUN_READS, 1);
        tx_one(p, p->tun, (size_t)n);
      }
    }
    if ((fds[1].revents | fds[2].revents | fds[3].revents) & (POLLERR | POLLHUP | POLLNVAL)) {
      // a device gone: only TypeScript decides to stop; do not spin meanwhile
      if (poll(&fds[0], 1, 10) > 0) break;
    }
    double now = now_ms();
    if (now - last_expire >= 100) {
      last_expire = now;
      if (role & 1) reasm_expire(p, now);
      if (role & 2) vx_expire(p, now);
    }
  }
  // an end nobody asked for: TypeScript sees it at its next fold and stops the path (its readers resume)
  if (err != 0) cadd(p, C_EXITED, err);
}

static void *run(void *arg) {
  gwpath *p = arg;
  pthread_setname_np(pthread_self(), p->threads == 1 ? "strait-gwpath" : "strait-gw-rx"); // per-thread CPU in /proc, perf
  loop(p, p->threads == 1 ? 3 : 1);
  return NULL;
}

static void *run_tx(void *arg) {
  gwpath *p = arg;
  pthread_setname_np(pthread_self(), "strait-gw-tx");
  loop(p, 2);
  return NULL;
}

// --- lifecycle and configuration (Node's thread) --------------------------------------

void strait_gwpath_forget(const strait_sess *s) {
  for (int i = 0; i < DP_MAX; i++) {
    gwpath *p = paths[i];
    if (!p) continue;
    for (int j = 0; j < DP_REG; j++)
      if (p->reg[j].s == s) p->reg[j].s = NULL;
    for (int j = 0; j < DP_PEERS; j++)
      if (p->peers[j].send == s) p->peers[j].send = NULL;
  }
}

static gwpath *join_slot(int i) {
  gwpath *p = paths[i];
  strait_signal_stop(&p->stop, p->stop_fd);
  pthread_join(p->thread, NULL);
  if (p->threads == 2) pthread_join(p->thread2, NULL);
  close(p->stop_fd);
  pthread_mutex_lock(&strait_sess_mu);
  paths[i] = NULL;
  pthread_mutex_unlock(&strait_sess_mu);
  return p;
}

static void free_path(gwpath *p) {
  for (int j = 0; j < VX_SLOTS; j++) free(p->vx[j].buf);
  for (int i = 0; i < DP_PEERS; i++)
    for (int j = 0; j < R_SLOTS; j++) free(p->peers[i].r[j].buf);
  free(p);
}

static void stop_slot(napi_env env, int i) {
  gwpath *p = join_slot(i);
  strait_reader_pause(p->udp_fd, 0);
  strait_reader_pause(p->tun_fd, 0);
  strait_reader_pause(p->vx_fd, 0);
  napi_release_threadsafe_function(p->up, napi_tsfn_release);
  napi_delete_reference(env, p->counters_ref);
  free_path(p);
}

void strait_gwpath_stop_fd(napi_env env, int fd) {
  for (int i = 0; i < DP_MAX; i++)
    if (paths[i] && (paths[i]->udp_fd == fd || paths[i]->tun_fd == fd || paths[i]->vx_fd == fd)) stop_slot(env, i);
}

static void cleanup_env(void *arg) {
  napi_env env = arg;
  for (int i = 0; i < DP_MAX; i++)
    if (paths[i] && paths[i]->env == env) free_path(join_slot(i));
}

napi_status strait_init_gwpath(napi_env env) {
  return napi_add_env_cleanup_hook(env, cleanup_env, env);
}

// argument i: the id of a running path
static gwpath *get_path(strait_args *a, size_t i) {
  int32_t id;
  if (!strait_get_int(a, i, "id", &id)) return NULL;
  for (int j = 0; j < DP_MAX; j++)
    if (paths[j] && paths[j]->id == id) return paths[j];
  strait_throw_usage(a->env, a->fn, "argument %zu (id) is no running data path: %d", i + 1, id);
  return NULL;
}

// argument i: a Float64Array of `per`-tuples of unsigned 32-bit integers, at most max tuples
static int get_tuples(strait_args *a, size_t i, const char *name, size_t per, size_t max, double **data, size_t *n) {
  size_t len;
  if (!strait_get_f64array(a, i, name, 0, data, &len)) return 0;
  if (len % per != 0 || len / per > max)
    return strait_throw_usage(a->env, a->fn, "argument %zu (%s) must hold at most %zu groups of %zu numbers, got %zu numbers", i + 1, name, max, per, len), 0;
  for (size_t k = 0; k < len; k++)
    if (!((*data)[k] >= 0) || (*data)[k] > 4294967295.0)
      return strait_throw_usage(a->env, a->fn, "argument %zu (%s) must hold unsigned 32-bit integers, got %g", i + 1, name, (*data)[k]), 0;
  *n = len / per;
  return 1;
}

// a TTL that is negative or not finite (NaN, Infinity): deadline 0, i.e. expired (fail closed)
static double ttl_deadline(double ttl) {
  return !__builtin_isfinite(ttl) || ttl < 0 ? 0 : now_ms() + ttl;
}

napi_value strait_js_gwpath_start(napi_env env, napi_callback_info info) {
  strait_args a;
  int32_t udp_fd, tun_fd, vx_fd, agent_port, maxd, features, timeout;
  int64_t reject;
  void *vx;
  size_t vxlen, clen;
  double *counters;
  int32_t threads = 1;
  if (!strait_args_get(env, info, "tunnelPathStart", 11, 12, &a) || !strait_get_fd(&a, 0, "udpFd", &udp_fd) || !strait_get_fd(&a, 1, "tunFd", &tun_fd) ||
      !strait_get_fd(&a, 2, "vxlanFd", &vx_fd) || !strait_get_buffer(&a, 3, "vxlanHdr", &vx, &vxlen) ||
      !strait_get_int_range(&a, 4, "agentPort", 1, 65535, &agent_port) ||
      !strait_get_int_range(&a, 5, "maxDatagram", FRAG_HEADER + MIN_FRAGMENT, 65507, &maxd) || !strait_get_int_range(&a, 6, "features", 0, 255, &features) ||
      !strait_get_i64(&a, 7, "rejectAfterPackets", &reject) || !strait_get_int_range(&a, 8, "reassemblyTimeoutMs", 1, 3600000, &timeout) ||
      !strait_get_f64array(&a, 9, "counters", COUNTERS, &counters, &clen) || !strait_get_function(&a, 10, "onUp"))
    return NULL;
  if (strait_has_arg(&a, 11) && !strait_get_int_range(&a, 11, "threads", 1, 2, &threads)) return NULL;
  if (vxlen != VXLAN_HDR) return strait_throw_usage(env, "tunnelPathStart", "argument 4 (vxlanHdr) must be %d bytes, got %zu", VXLAN_HDR, vxlen);
  if (reject < 1) return strait_throw_usage(env, "tunnelPathStart", "argument 8 (rejectAfterPackets) must be at least 1, got %lld", (long long)reject);
  int slot = -1;
  for (int i = 0; i < DP_MAX; i++) {
    if (paths[i] && (paths[i]->udp_fd == udp_fd || paths[i]->tun_fd == tun_fd || paths[i]->vx_fd == vx_fd))
      return strait_throw_errno(env, "tunnelPathStart: this socket or device has a data path already", EBUSY);
    if (!paths[i] && slot < 0) slot = i;
  }
  if (slot < 0) return strait_throw_errno(env, "tunnelPathStart: too many data paths", EMFILE);
  gwpath *p = calloc(1, sizeof *p);
  if (!p) return strait_throw_errno(env, "tunnelPathStart", ENOMEM);
  p->udp_fd = udp_fd;
  p->tun_fd = tun_fd;
  p->vx_fd = vx_fd;
  p->env = env;
  memcpy(p->vxhdr, vx, VXLAN_HDR);
  p->vni = (uint32_t)p->vxhdr[4] << 16 | (uint32_t)p->vxhdr[5] << 8 | p->vxhdr[6];
  p->agent_port = (uint16_t)agent_port;
  p->max_dgram = (size_t)maxd;
  p->features = features;
  p->threads = threads;
  p->reject_packets = (uint64_t)reject;
  p->reasm_timeout = timeout;
  p->c = counters;
  p->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  napi_value name;
  napi_create_string_utf8(env, "strait:gwpath", NAPI_AUTO_LENGTH, &name);
  if (p->stop_fd < 0 || napi_create_threadsafe_function(env, a.argv[10], NULL, name, UP_QUEUE, 1, NULL, NULL, NULL, call_up, &p->up) != napi_ok) {
    int err = p->stop_fd < 0 ? errno : ENOMEM;
    if (p->stop_fd >= 0) close(p->stop_fd);
    free(p);
    return strait_throw_errno(env, "tunnelPathStart: eventfd/threadsafe function", err);
  }
  napi_unref_threadsafe_function(env, p->up);
  napi_create_reference(env, a.argv[9], 1, &p->counters_ref);
  p->id = next_id++;
  // the thread reads both descriptors from now on; the event-loop readers wait
  strait_reader_pause(udp_fd, 1);
  strait_reader_pause(tun_fd, 1);
  strait_reader_pause(vx_fd, 1);
  pthread_mutex_lock(&strait_sess_mu);
  paths[slot] = p;
  pthread_mutex_unlock(&strait_sess_mu);
  int rc = pthread_create(&p->thread, NULL, run, p);
  if (rc == 0 && threads == 2) {
    rc = pthread_create(&p->thread2, NULL, run_tx, p);
    if (rc != 0) {
      // the first thread is running: stop it before giving up
      uint64_t one = 1;
      __atomic_store_n(&p->stop, 1, __ATOMIC_RELEASE);
      if (write(p->stop_fd, &one, sizeof one) < 0) {}
      pthread_join(p->thread, NULL);
    }
  }
  if (rc != 0) {
    pthread_mutex_lock(&strait_sess_mu);
    paths[slot] = NULL;
    pthread_mutex_unlock(&strait_sess_mu);
    strait_reader_pause(udp_fd, 0);
    strait_reader_pause(tun_fd, 0);
    strait_reader_pause(vx_fd, 0);
    napi_release_threadsafe_function(p->up, napi_tsfn_release);
    napi_delete_reference(env, p->counters_ref);
    close(p->stop_fd);
    free(p);
    return strait_throw_errno(env, "tunnelPathStart: pthread_create", rc);
  }
  napi_value out;
  napi_create_int32(env, p->id, &out);
  return out;
}

napi_value strait_js_gwpath_stop(napi_env env, napi_callback_info info) {
  strait_args a;
  int32_t id;
  if (!strait_args_get(env, info, "tunnelPathStop", 1, 1, &a) || !strait_get_int(&a, 0, "id", &id)) return NULL;
  bool ran = false;
  for (int i = 0; i < DP_MAX; i++)
    if (paths[i] && paths[i]->id == id) {
      stop_slot(env, i);
      ran = true;
    }
  napi_value out;
  napi_get_boolean(env, ran, &out);
  return out;
}

// tunnelPathFault(id, kind): fault injection for tests (STRAIT_GATEWAY_NATIVE_FAULT): 1 the
// threads end as on a poll error, 2 they stall without beating until the path is stopped
napi_value strait_js_gwpath_fault(napi_env env, napi_callback_info info) {
  strait_args a;
  int32_t kind;
  if (!strait_args_get(env, info, "tunnelPathFault", 2, 2, &a) || !strait_get_int_range(&a, 1, "kind", 1, 2, &kind)) return NULL;
  gwpath *p = get_path(&a, 0);
  if (!p) return NULL;
  __atomic_store_n(&p->fault, kind, __ATOMIC_RELEASE);
  return NULL;
}

napi_value strait_js_gwpath_peer(napi_env env, napi_callback_info info) {
  strait_args a;
  int32_t slot, port, features;
  uint32_t addr, spi;
  double *subnets, sess_id, limit, ttl;
  size_t nsub;
  if (!strait_args_get(env, info, "tunnelPathPeer", 10, 10, &a) || !strait_get_int_range(&a, 1, "slot", 0, DP_PEERS - 1, &slot) ||
      !strait_get_u32(&a, 2, "addr", &addr) || !strait_get_int_range(&a, 3, "port", 0, 65535, &port) ||
      !strait_get_int_range(&a, 4, "features", 0, 255, &features) || !get_tuples(&a, 5, "subnets", 2, DP_SUBNETS, &subnets, &nsub) ||
      !strait_get_u32(&a, 7, "sendSpi", &spi))
    return NULL;
  if (napi_get_value_double(env, a.argv[6], &sess_id) != napi_ok || napi_get_value_double(env, a.argv[8], &limit) != napi_ok ||
      napi_get_value_double(env, a.argv[9], &ttl) != napi_ok || !(limit >= 0))
    return strait_throw_usage(env, "tunnelPathPeer", "arguments 7, 9, 10 (sendSession, sendLimit, sendTtlMs) must be numbers, sendLimit >= 0");
  gwpath *p = get_path(&a, 0);
  if (!p) return NULL;
  pthread_mutex_lock(&strait_sess_mu);
  strait_sess *s = sess_id < 0 ? NULL : strait_sess_get(sess_id);
  if (sess_id >= 0 && !s) {
    pthread_mutex_unlock(&strait_sess_mu);
    return strait_throw_usage(env, "tunnelPathPeer", "argument 7 (sendSession) is no live session: %.0f", sess_id);
  }
  dpeer *peer = &p->peers[slot];
  peer->used = 1;
  peer->addr = addr;
  peer->port = (uint16_t)port;
  peer->features = features;
  peer->nsub = (int)nsub;
  for (size_t k = 0; k < nsub; k++) {
    peer->mask[k] = (uint32_t)subnets[2 * k + 1];
    peer->net[k] = (uint32_t)subnets[2 * k] & peer->mask[k];
  }
  peer->send = s;
  peer->send_spi = spi;
  peer->send_limit = limit > 1.8e19 ? UINT64_MAX : (uint64_t)limit;
  peer->send_deadline = s ? ttl_deadline(ttl) : 0;
  pthread_mutex_unlock(&strait_sess_mu);
  return NULL;
}

napi_value strait_js_gwpath_session(napi_env env, napi_callback_info info) {
  strait_args a;
  int32_t peer_slot;
  uint32_t local;
  bool fast;
  double sess_id, ttl;
  if (!strait_args_get(env, info, "tunnelPathSession", 6, 6, &a) || !strait_get_int_range(&a, 2, "peerSlot", -1, DP_PEERS - 1, &peer_slot) ||
      !strait_get_u32(&a, 3, "localIndex", &local) || !strait_get_bool(&a, 4, "fast", &fast))
    return NULL;
  if (napi_get_value_double(env, a.argv[1], &sess_id) != napi_ok || napi_get_value_double(env, a.argv[5], &ttl) != napi_ok)
    return strait_throw_usage(env, "tunnelPathSession", "arguments 2 and 6 (session, ttlMs) must be numbers");
  gwpath *p = get_path(&a, 0);
  if (!p) return NULL;
  pthread_mutex_lock(&strait_sess_mu);
  strait_sess *s = strait_sess_get(sess_id);
  if (!s) {
    pthread_mutex_unlock(&strait_sess_mu);
    return strait_throw_usage(env, "tunnelPathSession", "argument 2 (session) is no live session: %.0f", sess_id);
  }
  int at = -1, free_at = -1;
  for (int i = 0; i < DP_REG; i++) {
    if (p->reg[i].s == s) at = i;
    if (!p->reg[i].s && free_at < 0) free_at = i;
  }
  if (peer_slot < 0) {
    if (at >= 0) p->reg[at].s = NULL;
  } else {
    if (at < 0) at = free_at;
    if (at < 0) {
      pthread_mutex_unlock(&strait_sess_mu);
      return strait_throw_errno(env, "tunnelPathSession: too many sessions", EMFILE);
    }
    p->reg[at].s = s;
    p->reg[at].local_index = local;
    p->reg[at].peer = peer_slot;
    p->reg[at].fast = fast;
    p->reg[at].deadline = ttl_deadline(ttl);
  }
  pthread_mutex_unlock(&strait_sess_mu);
  return NULL;
}

napi_value strait_js_gwpath_nodes(napi_env env, napi_callback_info info) {
  strait_args a;
  double *rows;
  size_t n;
  if (!strait_args_get(env, info, "tunnelPathNodes", 2, 2, &a) || !get_tuples(&a, 1, "nodes", 3, DP_NODES, &rows, &n)) return NULL;
  gwpath *p = get_path(&a, 0);
  if (!p) return NULL;
  pthread_mutex_lock(&strait_sess_mu);
  for (size_t k = 0; k < n; k++) {
    p->node_mask[k] = (uint32_t)rows[3 * k + 1];
    p->node_net[k] = (uint32_t)rows[3 * k] & p->node_mask[k];
    p->node_addr[k] = (uint32_t)rows[3 * k + 2];
  }
  p->nnodes = (int)n;
  pthread_mutex_unlock(&strait_sess_mu);
  return NULL;
}

napi_value strait_js_gwpath_fence(napi_env env, napi_callback_info info) {
  strait_args a;
  double ttl;
  if (!strait_args_get(env, info, "tunnelPathFence", 2, 2, &a)) return NULL;
  napi_valuetype t;
  if (napi_typeof(env, a.argv[1], &t) != napi_ok || t != napi_number || napi_get_value_double(env, a.argv[1], &ttl) != napi_ok || !__builtin_isfinite(ttl))
    return strait_throw_usage(env, "tunnelPathFence", "argument 2 (ttlMs) must be a finite number");
  gwpath *p = get_path(&a, 0);
  if (!p) return NULL;
  // ttl 0: the deadline is now (a deadline never reads as 0, which means no fence)
  int64_t f = ttl < 0 ? 0 : (int64_t)((now_ms() + ttl) * 1000.0);
  if (ttl >= 0 && f == 0) f = 1;
  __atomic_store_n(&p->fence_us, f, __ATOMIC_RELEASE);
  return NULL;
}
