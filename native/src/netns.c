// Listening sockets inside another network namespace, so one process can serve many
// pods (the world's pod runtime):
//
//   netnsListen(netnsPath, address, port, backlog) -> fd
//       open netnsPath (/run/netns/NAME), setns(2) the calling thread into it,
//       socket() + SO_REUSEADDR + bind(address:port) + listen(backlog), setns back to the
//       thread's own namespace; returns the non-blocking, close-on-exec listening fd,
//       which Node adopts with net.Server.listen({ fd }). IPv4 addresses only
//       ("0.0.0.0" for every address of the namespace).
//
//   netnsCall(netnsPath, fn) -> fn()'s result
//       run fn synchronously with the calling thread inside the namespace, then setns
//       back (also when fn throws; its exception goes on). Whatever fn creates
//       synchronously on this thread (a TUN device with tunOpen, a native socket)
//       belongs to that namespace; asynchronous work started by fn does not.
//
// The socket belongs to the namespace it was created in for its whole life: accept()
// returns connections of that namespace and the peer addresses seen there.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "common.h"

// Moves the calling thread into the network namespace at path. Returns an fd of the
// thread's own namespace, for setns back, or -1 with a JS exception pending.
static int netns_enter(napi_env env, const char *path) {
  int self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (self < 0) {
    strait_throw_errno(env, "open /proc/thread-self/ns/net", errno);
    return -1;
  }
  int target = open(path, O_RDONLY | O_CLOEXEC);
  if (target < 0) {
    int e = errno;
    close(self);
    strait_throw_errno(env, path, e);
    return -1;
  }
  if (setns(target, CLONE_NEWNET) != 0) {
    int e = errno;
    close(target);
    close(self);
    strait_throw_errno(env, "setns into the network namespace", e);
    return -1;
  }
  close(target);
  return self;
}

static napi_value netns_listen(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  char path[512];
  char addr[64];
  size_t len = 0;
  int32_t port = 0;
  int32_t backlog = 511;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 3 ||
      napi_get_value_string_utf8(env, argv[0], path, sizeof path, &len) != napi_ok || len == 0 || len >= sizeof path - 1 ||
      napi_get_value_string_utf8(env, argv[1], addr, sizeof addr, &len) != napi_ok ||
      napi_get_value_int32(env, argv[2], &port) != napi_ok || port < 0 || port > 65535) {
    napi_throw_type_error(env, "STRAIT_ERR_SYSTEM_TOOL", "netnsListen(netnsPath, address, port[, backlog]): bad arguments");
    return NULL;
  }
  if (argc >= 4) napi_get_value_int32(env, argv[3], &backlog);
  struct sockaddr_in sa;
  memset(&sa, 0, sizeof sa);
  sa.sin_family = AF_INET;
  sa.sin_port = htons((uint16_t)port);
  if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
    napi_throw_type_error(env, "STRAIT_ERR_SYSTEM_TOOL", "netnsListen: address is not an IPv4 address");
    return NULL;
  }
  int self = netns_enter(env, path);
  if (self < 0) return NULL;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int err = fd < 0 ? errno : 0;
  const char *what = "socket";
  if (!err) {
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0) { err = errno; what = "bind"; }
    else if (listen(fd, backlog) != 0) { err = errno; what = "listen"; }
  }
  // always go home, whatever happened in there
  if (setns(self, CLONE_NEWNET) != 0) {
    int e = errno;
    close(self);
    if (fd >= 0) close(fd);
    return strait_throw_errno(env, "setns back to the process's network namespace", e);
  }
  close(self);
  if (err) {
    if (fd >= 0) close(fd);
    return strait_throw_errno(env, what, err);
  }
  napi_value out;
  napi_create_int32(env, fd, &out);
  return out;
}

static napi_value netns_call(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  char path[512];
  size_t len = 0;
  napi_valuetype t = napi_undefined;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2 ||
      napi_get_value_string_utf8(env, argv[0], path, sizeof path, &len) != napi_ok || len == 0 || len >= sizeof path - 1 ||
      napi_typeof(env, argv[1], &t) != napi_ok || t != napi_function) {
    napi_throw_type_error(env, "STRAIT_ERR_SYSTEM_TOOL", "netnsCall(netnsPath, fn): bad arguments");
    return NULL;
  }
  int self = netns_enter(env, path);
  if (self < 0) return NULL;
  napi_value global, result = NULL;
  napi_get_global(env, &global);
  napi_status st = napi_call_function(env, global, argv[1], 0, NULL, &result);
  if (setns(self, CLONE_NEWNET) != 0) {
    // cannot happen short of a kernel bug; a thread left in a pod's namespace must not go on
    close(self);
    napi_fatal_error("netnsCall", NAPI_AUTO_LENGTH, "setns back to the process's network namespace failed", NAPI_AUTO_LENGTH);
  }
  close(self);
  return st == napi_ok ? result : NULL; // on a JS exception, it stays pending and goes on
}

napi_status strait_init_netns(napi_env env, napi_value exports) {
  STRAIT_EXPORT(env, exports, "netnsListen", netns_listen);
  STRAIT_EXPORT(env, exports, "netnsCall", netns_call);
  return napi_ok;
}
