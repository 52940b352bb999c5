// Batched UDP for the tunnel (4500) and VXLAN (4800) sockets: UDP GSO on send
// (UDP_SEGMENT: one sendmsg carries up to 64 equal-sized datagrams, the kernel splits
// them as late as possible) and UDP GRO on receive (one recvmsg returns a run of
// datagrams of one flow, all `segSize` bytes but the last). Every datagram on the wire
// is an ordinary UDP datagram of its own size: nothing depends on the peer doing GSO/GRO.
//
//   udpOpen(address, port, bufBytes) -> [fd, boundPort]   IPv4, non-blocking, UDP_GRO on if the kernel has it
//   udpStart(fd, buffer, onRecv)     read on Node's event loop (uv_poll); for every read
//                                    onRecv(length, segSize, addr, port) with the bytes in
//                                    `buffer` (shared: consume before returning); addr is the
//                                    IPv4 source as an unsigned integer
//   udpSend(fd, buffer, off, len, segSize, addr, port) -> bytes sent or -errno
//                                    segSize < len: `len` bytes are datagrams of segSize bytes
//                                    (the last may be shorter), sent with UDP_SEGMENT, or one
//                                    by one (sendmmsg) where the kernel refuses GSO
//   udpClose(fd)
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>
#include "common.h"

#define BURST 64
#define MAX_SEGS 64

napi_value strait_js_udp_open(napi_env env, napi_callback_info info) {
  strait_args a;
  char addr[64];
  size_t alen = 0;
  int32_t port = 0, bytes = 0;
  if (!strait_args_get(env, info, "udpOpen", 2, 3, &a) || !strait_get_string(&a, 0, "address", addr, sizeof addr, &alen) ||
      !strait_get_int_range(&a, 1, "port", 0, 65535, &port))
    return NULL;
  if (strait_has_arg(&a, 2) && !strait_get_int(&a, 2, "bufBytes", &bytes)) return NULL;
  struct sockaddr_in sa;
  memset(&sa, 0, sizeof sa);
  sa.sin_family = AF_INET;
  sa.sin_port = htons((uint16_t)port);
  if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) return strait_throw_usage(env, "udpOpen", "argument 1 (address) is not an IPv4 address: %s", addr);
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return strait_throw_errno(env, "socket", errno);
  if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
    int err = errno;
    close(fd);
    return strait_throw_errno(env, "bind", err);
  }
  if (bytes > 0) {
    // with CAP_NET_ADMIN the *FORCE options go past net.core.[rw]mem_max (often 208 KB:
    // three 64 KB messages, overflowed as soon as the reader is descheduled on a busy
    // machine, and a lost fragment loses its whole message); otherwise the kernel caps
    // SO_RCVBUF/SO_SNDBUF at the maximum and what we get is fine
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof bytes) < 0) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &bytes, sizeof bytes) < 0) setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes);
  }
  int one = 1;
  setsockopt(fd, SOL_UDP, UDP_GRO, &one, sizeof one);
  socklen_t sl = sizeof sa;
  getsockname(fd, (struct sockaddr *)&sa, &sl);
  napi_value result, jfd, jport;
  napi_create_array_with_length(env, 2, &result);
  napi_create_int32(env, fd, &jfd);
  napi_create_int32(env, ntohs(sa.sin_port), &jport);
  napi_set_element(env, result, 0, jfd);
  napi_set_element(env, result, 1, jport);
  return result;
}

// up to BURST reads per wake-up, each handed to cb(length, segSize, addr, port)
static void drain(strait_reader *r, napi_value global, napi_value cb) {
  for (int i = 0; i < BURST && !r->closing; i++) {
    struct sockaddr_in from;
    char control[CMSG_SPACE(sizeof(int))];
    struct iovec iov = {r->buf, r->buf_len};
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_name = &from;
    msg.msg_namelen = sizeof from;
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t n = recvmsg(r->fd, &msg, 0);
    if (n < 0) break;
    int seg = (int)strait_gro_size(&msg, (size_t)n);
    if (msg.msg_namelen < sizeof from || from.sin_family != AF_INET) continue;
    napi_value args[4], ret;
    napi_create_int32(r->env, (int32_t)n, &args[0]);
    napi_create_int32(r->env, seg, &args[1]);
    napi_create_uint32(r->env, ntohl(from.sin_addr.s_addr), &args[2]);
    napi_create_int32(r->env, ntohs(from.sin_port), &args[3]);
    if (napi_call_function(r->env, global, cb, 4, args, &ret) != napi_ok) break;
  }
}

napi_value strait_js_udp_start(napi_env env, napi_callback_info info) {
  strait_args a;
  int32_t fd;
  void *data;
  size_t blen;
  if (!strait_args_get(env, info, "udpStart", 3, 3, &a) || !strait_get_fd(&a, 0, "fd", &fd) || !strait_get_buffer(&a, 1, "buffer", &data, &blen) ||
      !strait_get_function(&a, 2, "onRecv"))
    return NULL;
  return strait_reader_start(env, fd, a.argv[1], a.argv[2], "strait:udp", drain);
}

napi_value strait_js_udp_close(napi_env env, napi_callback_info info) {
  strait_args a;
  int32_t fd;
  if (!strait_args_get(env, info, "udpClose", 1, 1, &a) || !strait_get_fd(&a, 0, "fd", &fd)) return NULL;
  strait_fd_release(env, fd);
  close(fd);
  return NULL;
}

// One by one, in one sendmmsg.
static ssize_t send_each(int fd, char *p, size_t len, size_t seg, struct sockaddr_in *to) {
  struct mmsghdr mm[MAX_SEGS];
  struct iovec iov[MAX_SEGS];
  unsigned n = 0;
  for (size_t o = 0; o < len && n < MAX_SEGS; o += seg, n++) {
    size_t l = len - o < seg ? len - o : seg;
    iov[n].iov_base = p + o;
    iov[n].iov_len = l;
    memset(&mm[n], 0, sizeof mm[n]);
    mm[n].msg_hdr.msg_name = to;
    mm[n].msg_hdr.msg_namelen = sizeof *to;
    mm[n].msg_hdr.msg_iov = &iov[n];
    mm[n].msg_hdr.msg_iovlen = 1;
  }
  int sent = sendmmsg(fd, mm, n, 0);
  if (sent < 0) return -errno;
  ssize_t bytes = 0;
  for (int i = 0; i < sent; i++) bytes += (ssize_t)iov[i].iov_len;
  return bytes;
}

// One send: a single datagram, or a GSO run of `seg`-byte datagrams (one by one where the
// kernel refuses GSO). Runs on Node's thread or on the socket's writer thread.
static ssize_t udp_xmit(int fd, char *p, size_t len, size_t seg, size_t split, const struct sockaddr_in *cto) {
  struct sockaddr_in to = *cto;
  ssize_t n;
  if (seg == 0 || seg >= len) {
    n = sendto(fd, p, len, 0, (struct sockaddr *)&to, sizeof to);
    if (n < 0) n = -errno;
  } else if (strait_gso_broken) {
    n = send_each(fd, p, len, seg, &to);
  } else {
    struct iovec iov = {p, len};
    n = strait_send_gso(fd, &iov, 1, seg, &to);
    // EAGAIN/ENOBUFS: the caller waits; anything else (no GSO, EINVAL): one by one
    if (n < 0 && n != -EAGAIN && n != -ENOBUFS) n = send_each(fd, p, len, seg, &to);
  }
  return n;
}

napi_value strait_js_udp_send(napi_env env, napi_callback_info info) {
  strait_args a;
  int32_t fd, off, len, seg, port;
  uint32_t addr;
  void *data;
  size_t blen;
  if (!strait_args_get(env, info, "udpSend", 7, 7, &a) || !strait_get_fd(&a, 0, "fd", &fd) || !strait_get_buffer(&a, 1, "buffer", &data, &blen) ||
      !strait_get_int_range(&a, 2, "offset", 0, INT32_MAX, &off) || !strait_get_int_range(&a, 3, "length", 0, INT32_MAX, &len) ||
      !strait_get_int(&a, 4, "segSize", &seg) || !strait_get_u32(&a, 5, "addr", &addr) || !strait_get_int_range(&a, 6, "port", 0, 65535, &port))
    return NULL;
  if ((size_t)off + (size_t)len > blen) return strait_throw_usage(env, "udpSend", "offset %d + length %d past the buffer's %zu bytes", off, len, blen);
  struct sockaddr_in to;
  memset(&to, 0, sizeof to);
  to.sin_family = AF_INET;
  to.sin_port = htons((uint16_t)port);
  to.sin_addr.s_addr = htonl(addr);
  char *p = (char *)data + off;
  size_t sg = seg > 0 ? (size_t)seg : 0;
  ssize_t n;
  strait_writer **ws = strait_writer_slot(fd, 0);
  if (strait_io_threads() && (len >= STRAIT_THREAD_MIN || (ws && *ws && !strait_writer_idle(*ws)))) {
    strait_writer *w = strait_writer_for(fd, udp_xmit);
    if (w) {
      n = strait_writer_push(w, p, (size_t)len, NULL, 0, sg, &to);
      goto out;
    }
  }
  n = udp_xmit(fd, p, (size_t)len, sg, 0, &to);
out:;
  napi_value out;
  napi_create_int32(env, (int32_t)n, &out);
  return out;
}
