// TUN devices for the node agent and the gateway.
//
//   tunOpen(name, offload?)            -> [fd, actualName]   (IFF_TUN | IFF_NO_PI, O_NONBLOCK);
//                                      offload: IFF_VNET_HDR + TSO/checksum offload, every
//                                      packet read or written starts with a 10-byte virtio_net_hdr
//   tunWritev(fd, hdr, buf, off, len)  -> like tunWrite, with `hdr` (10 bytes) written first
//   tunStart(fd, buffer, onPacket)     read packets on Node's event loop (uv_poll); for each
//                                      packet onPacket(length) is called with the packet in
//                                      `buffer` (shared, zero-copy: consume it before returning)
//   tunWrite(fd, buffer, offset, len)  -> bytes written, or -errno (EAGAIN: queue full, drop)
//   tunClose(fd)                       stop reading and close
//
// Reading runs on the main loop without threads: the fd is non-blocking, uv_poll tells
// when it is readable and up to 64 packets are read per wake-up.
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>
#include <uv.h>
#include "common.h"

#define BURST 64

static ssize_t tun_xmit(int fd, char *p, size_t len, size_t seg, size_t split, const struct sockaddr_in *to) {
  ssize_t n = write(fd, p, len);
  return n < 0 ? -errno : n;
}

// Large writes (super-packets: the kernel forwards or delivers them inside the write) go
// through the device's writer thread; small ones inline unless writes are queued. -2 = not taken.
static ssize_t threaded_write(int fd, const char *hdr, size_t hlen, const char *p, size_t len) {
  if (!strait_io_threads()) return -2;
  strait_writer **ws = strait_writer_slot(fd, 0);
  if (hlen + len < STRAIT_THREAD_MIN && !(ws && *ws && !strait_writer_idle(*ws))) return -2;
  strait_writer *w = strait_writer_for(fd, tun_xmit);
  if (!w) return -2;
  return strait_writer_push(w, hdr, hlen, p, len, 0, NULL);
}

napi_value strait_js_tun_open(napi_env env, napi_callback_info info) {
  strait_args a;
  char name[IFNAMSIZ + 1];
  size_t len = 0;
  bool offload = false;
  if (!strait_args_get(env, info, "tunOpen", 1, 2, &a) || !strait_get_string(&a, 0, "name", name, sizeof name, &len)) return NULL;
  if (strait_has_arg(&a, 1) && !strait_get_bool(&a, 1, "offload", &offload)) return NULL;
  int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return strait_throw_errno(env, "open /dev/net/tun", errno);
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  ifr.ifr_flags = IFF_TUN | IFF_NO_PI | (offload ? IFF_VNET_HDR : 0);
  memcpy(ifr.ifr_name, name, len < IFNAMSIZ - 1 ? len : IFNAMSIZ - 1);
  if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
    int err = errno;
    close(fd);
    return strait_throw_errno(env, "ioctl TUNSETIFF", err);
  }
  if (offload) {
    int hdrsz = 10;
    if (ioctl(fd, TUNSETVNETHDRSZ, &hdrsz) < 0 || ioctl(fd, TUNSETOFFLOAD, TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6) < 0) {
      int err = errno;
      close(fd);
      return strait_throw_errno(env, "ioctl TUNSETOFFLOAD", err);
    }
  }
  napi_value result, jfd, jname;
  napi_create_array_with_length(env, 2, &result);
  napi_create_int32(env, fd, &jfd);
  napi_create_string_utf8(env, ifr.ifr_name, NAPI_AUTO_LENGTH, &jname);
  napi_set_element(env, result, 0, jfd);
  napi_set_element(env, result, 1, jname);
  return result;
}

// up to BURST packets per wake-up, each handed to cb(length) in the shared buffer
static void drain(strait_reader *r, napi_value global, napi_value cb) {
  for (int i = 0; i < BURST && !r->closing; i++) {
    ssize_t n = read(r->fd, r->buf, r->buf_len);
    if (n <= 0) break;
    napi_value arg, ret;
    napi_create_int32(r->env, (int32_t)n, &arg);
    if (napi_call_function(r->env, global, cb, 1, &arg, &ret) != napi_ok) break;
  }
}

napi_value strait_js_tun_start(napi_env env, napi_callback_info info) {
  strait_args a;
  int32_t fd;
  void *data;
  size_t blen;
  if (!strait_args_get(env, info, "tunStart", 3, 3, &a) || !strait_get_fd(&a, 0, "fd", &fd) || !strait_get_buffer(&a, 1, "buffer", &data, &blen) ||
      !strait_get_function(&a, 2, "onPacket"))
    return NULL;
  return strait_reader_start(env, fd, a.argv[1], a.argv[2], "strait:tun", drain);
}

napi_value strait_js_tun_close(napi_env env, napi_callback_info info) {
  strait_args a;
  int32_t fd;
  if (!strait_args_get(env, info, "tunClose", 1, 1, &a) || !strait_get_fd(&a, 0, "fd", &fd)) return NULL;
  strait_fd_release(env, fd);
  close(fd);
  return NULL;
}

napi_value strait_js_tun_write(napi_env env, napi_callback_info info) {
  strait_args a;
  int32_t fd, off, len;
  void *data;
  size_t blen;
  if (!strait_args_get(env, info, "tunWrite", 4, 4, &a) || !strait_get_fd(&a, 0, "fd", &fd) || !strait_get_buffer(&a, 1, "buffer", &data, &blen) ||
      !strait_get_int_range(&a, 2, "offset", 0, INT32_MAX, &off) || !strait_get_int_range(&a, 3, "length", 0, INT32_MAX, &len))
    return NULL;
  if ((size_t)off + (size_t)len > blen) return strait_throw_usage(env, "tunWrite", "offset %d + length %d past the buffer's %zu bytes", off, len, blen);
  ssize_t n = threaded_write(fd, NULL, 0, (char *)data + off, (size_t)len);
  if (n == -2) {
    n = write(fd, (char *)data + off, (size_t)len);
    if (n < 0) n = -errno;
  }
  napi_value out;
  napi_create_int32(env, (int32_t)n, &out);
  return out;
}

napi_value strait_js_tun_writev(napi_env env, napi_callback_info info) {
  strait_args a;
  int32_t fd, off, len;
  void *hdr, *data;
  size_t hlen, blen;
  if (!strait_args_get(env, info, "tunWritev", 5, 5, &a) || !strait_get_fd(&a, 0, "fd", &fd) || !strait_get_buffer(&a, 1, "hdr", &hdr, &hlen) ||
      !strait_get_buffer(&a, 2, "buffer", &data, &blen) || !strait_get_int_range(&a, 3, "offset", 0, INT32_MAX, &off) ||
      !strait_get_int_range(&a, 4, "length", 0, INT32_MAX, &len))
    return NULL;
  if ((size_t)off + (size_t)len > blen) return strait_throw_usage(env, "tunWritev", "offset %d + length %d past the buffer's %zu bytes", off, len, blen);
  ssize_t n = threaded_write(fd, hdr, hlen, (char *)data + off, (size_t)len);
  if (n == -2) {
    struct iovec iov[2] = {{hdr, hlen}, {(char *)data + off, (size_t)len}};
    n = writev(fd, iov, 2);
    if (n < 0) n = -errno;
  }
  napi_value out;
  napi_create_int32(env, (int32_t)n, &out);
  return out;
}
