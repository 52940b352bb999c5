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
//   netnsOpen(netnsPath) -> fd
//       open a network namespace (close-on-exec) and check that it is one (NS_GET_NSTYPE);
//       the fd keeps the namespace usable by the calls below without a path lookup each
//       time (a node-level proxy holds one per pod). Close it with fs.closeSync.
//
//   netnsSocket(nsFd, family, mark) -> fd
//       an unconnected, non-blocking, close-on-exec TCP socket (family 4 or 6) created
//       inside the namespace of nsFd, with SO_MARK = mark when mark != 0 (needs
//       CAP_NET_ADMIN); Node connects it with new net.Socket({ fd }).connect(...). Its
//       connections leave from that namespace (its routes, its addresses, its nftables,
//       which can spare them by the mark).
//
// netnsListen and netnsCall also take such an fd in place of the path, and netnsListen
// takes a fifth argument, the listening socket's SO_MARK.
//
// The socket belongs to the namespace it was created in for its whole life: accept()
// returns connections of that namespace and the peer addresses seen there.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include "common.h"

// Moves the calling thread into the network namespace at path, or of nsfd when path is
// NULL (nsfd stays open). Returns an fd of the thread's own namespace, for setns back, or
// -1 with a JS exception pending.
// The thread's own namespace, opened once per thread (a proxy makes one socket per
// connection: opening /proc/thread-self/ns/net each time cost more than the setns pair).
// Inside netnsCall's fn the thread is elsewhere: there a fresh fd is opened and closed.
static __thread int home_fd = -1;
static __thread int call_depth = 0;

static int netns_self(void) {
  if (call_depth > 0) return open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (home_fd < 0) home_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  return home_fd;
}

static void netns_self_done(int self) {
  if (self != home_fd) close(self);
}

static int netns_enter(napi_env env, const char *path, int nsfd) {
  int self = netns_self();
  if (self < 0) {
    strait_throw_errno(env, "open /proc/thread-self/ns/net", errno);
    return -1;
  }
  int target = nsfd;
  if (path) {
    target = open(path, O_RDONLY | O_CLOEXEC);
    if (target < 0) {
      int e = errno;
      netns_self_done(self);
      strait_throw_errno(env, path, e);
      return -1;
    }
  }
  if (setns(target, CLONE_NEWNET) != 0) {
    int e = errno;
    if (path) close(target);
    netns_self_done(self);
    strait_throw_errno(env, "setns into the network namespace", e);
    return -1;
  }
  if (path) close(target);
  return self;
}

// The namespace argument of netnsListen/netnsCall: a path (written to path, *nsfd = -1)
// or an fd from netnsOpen (path = ""), argument i. 1 when read; else 0 and the usage
// TypeError (common.h) is pending.
static int netns_target(strait_args *a, size_t i, char *path, size_t size, int *nsfd) {
  napi_valuetype t = napi_undefined;
  size_t len = 0;
  path[0] = 0;
  *nsfd = -1;
  if (i < a->argc && napi_typeof(a->env, a->argv[i], &t) == napi_ok && t == napi_number) {
    int32_t fd = -1;
    if (!strait_get_fd(a, i, "nsFd", &fd)) return 0;
    *nsfd = fd;
    return 1;
  }
  if (!strait_get_string(a, i, "netnsPath", path, size, &len)) return 0;
  if (len == 0) return strait_throw_usage(a->env, a->fn, "argument %zu (netnsPath) is empty", i + 1), 0;
  return 1;
}

// Back to the thread's own namespace; a thread left in a pod's namespace must not go on.
static void netns_leave(int self, const char *who) {
  if (setns(self, CLONE_NEWNET) != 0) {
    netns_self_done(self);
    napi_fatal_error(who, NAPI_AUTO_LENGTH, "setns back to the process's network namespace failed", NAPI_AUTO_LENGTH);
  }
  netns_self_done(self);
}

napi_value strait_js_netns_listen(napi_env env, napi_callback_info info) {
  strait_args a;
  char path[512];
  char addr[64];
  size_t len = 0;
  int nsfd = -1;
  int32_t port = 0;
  int32_t backlog = 511;
  int32_t mark = 0;
  if (!strait_args_get(env, info, "netnsListen", 3, 5, &a) || !netns_target(&a, 0, path, sizeof path, &nsfd) ||
      !strait_get_string(&a, 1, "address", addr, sizeof addr, &len) || !strait_get_int_range(&a, 2, "port", 0, 65535, &port))
    return NULL;
  if (strait_has_arg(&a, 3) && !strait_get_int(&a, 3, "backlog", &backlog)) return NULL;
  if (strait_has_arg(&a, 4) && !strait_get_int(&a, 4, "mark", &mark)) return NULL;
  struct sockaddr_in sa;
  memset(&sa, 0, sizeof sa);
  sa.sin_family = AF_INET;
  sa.sin_port = htons((uint16_t)port);
  if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) return strait_throw_usage(env, "netnsListen", "argument 2 (address) is not an IPv4 address: %s", addr);
  int self = netns_enter(env, nsfd < 0 ? path : NULL, nsfd);
  if (self < 0) return NULL;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int err = fd < 0 ? errno : 0;
  const char *what = "socket";
  if (!err) {
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (mark != 0 && setsockopt(fd, SOL_SOCKET, SO_MARK, &mark, sizeof mark) != 0) {
      err = errno;
      what = "setsockopt(SO_MARK)";
    } else if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
      err = errno;
      what = "bind";
    } else if (listen(fd, backlog) != 0) {
      err = errno;
      what = "listen";
    }
  }
  // always go home, whatever happened in there
  if (setns(self, CLONE_NEWNET) != 0) {
    int e = errno;
    netns_self_done(self);
    if (fd >= 0) close(fd);
    return strait_throw_errno(env, "setns back to the process's network namespace", e);
  }
  netns_self_done(self);
  if (err) {
    if (fd >= 0) close(fd);
    return strait_throw_errno(env, what, err);
  }
  napi_value out;
  napi_create_int32(env, fd, &out);
  return out;
}

napi_value strait_js_netns_call(napi_env env, napi_callback_info info) {
  strait_args a;
  char path[512];
  int nsfd = -1;
  if (!strait_args_get(env, info, "netnsCall", 2, 2, &a) || !netns_target(&a, 0, path, sizeof path, &nsfd) || !strait_get_function(&a, 1, "fn")) return NULL;
  int self = netns_enter(env, nsfd < 0 ? path : NULL, nsfd);
  if (self < 0) return NULL;
  napi_value global, result = NULL;
  napi_get_global(env, &global);
  call_depth++;
  napi_status st = napi_call_function(env, global, a.argv[1], 0, NULL, &result);
  call_depth--;
  // cannot fail short of a kernel bug
  netns_leave(self, "netnsCall");
  return st == napi_ok ? result : NULL; // on a JS exception, it stays pending and goes on
}

napi_value strait_js_netns_open(napi_env env, napi_callback_info info) {
  strait_args a;
  char path[512];
  size_t len = 0;
  if (!strait_args_get(env, info, "netnsOpen", 1, 1, &a) || !strait_get_string(&a, 0, "netnsPath", path, sizeof path, &len)) return NULL;
  if (len == 0) return strait_throw_usage(env, "netnsOpen", "argument 1 (netnsPath) is empty");
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return strait_throw_errno(env, path, errno);
  int type = ioctl(fd, NS_GET_NSTYPE);
  if (type != CLONE_NEWNET) {
    int e = type < 0 ? errno : EINVAL;
    close(fd);
    return strait_throw_errno(env, "not a network namespace (NS_GET_NSTYPE)", e);
  }
  napi_value out;
  napi_create_int32(env, fd, &out);
  return out;
}

napi_value strait_js_netns_socket(napi_env env, napi_callback_info info) {
  strait_args a;
  int32_t nsfd = -1, family = 4, mark = 0;
  if (!strait_args_get(env, info, "netnsSocket", 3, 3, &a) || !strait_get_fd(&a, 0, "nsFd", &nsfd) || !strait_get_int_range(&a, 1, "family", 4, 6, &family) ||
      !strait_get_int(&a, 2, "mark", &mark))
    return NULL;
  if (family == 5) return strait_throw_usage(env, "netnsSocket", "argument 2 (family) must be 4 or 6, got 5");
  int self = netns_enter(env, NULL, nsfd);
  if (self < 0) return NULL;
  int fd = socket(family == 6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int err = fd < 0 ? errno : 0;
  const char *what = "socket";
  if (!err && mark != 0 && setsockopt(fd, SOL_SOCKET, SO_MARK, &mark, sizeof mark) != 0) {
    err = errno;
    what = "setsockopt(SO_MARK)";
  }
  netns_leave(self, "netnsSocket");
  if (err) {
    if (fd >= 0) close(fd);
    return strait_throw_errno(env, what, err);
  }
  napi_value out;
  napi_create_int32(env, fd, &out);
  return out;
}
