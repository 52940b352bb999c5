// The original destination of a connection redirected by nftables (REDIRECT/DNAT), read
// from conntrack with getsockopt(SO_ORIGINAL_DST) / IP6T_SO_ORIGINAL_DST, as Envoy's
// original_dst listener filter does.
//   getOriginalDst(fd: number) -> { address: string, port: number, family: 4 | 6 }
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/netfilter_ipv4.h>
#include "common.h"

#ifndef IP6T_SO_ORIGINAL_DST
#define IP6T_SO_ORIGINAL_DST 80
#endif

static napi_value make_result(napi_env env, const char *addr, int port, int family) {
  napi_value obj, v;
  if (napi_create_object(env, &obj) != napi_ok) return NULL;
  if (napi_create_string_utf8(env, addr, NAPI_AUTO_LENGTH, &v) != napi_ok) return NULL;
  napi_set_named_property(env, obj, "address", v);
  napi_create_int32(env, port, &v);
  napi_set_named_property(env, obj, "port", v);
  napi_create_int32(env, family, &v);
  napi_set_named_property(env, obj, "family", v);
  return obj;
}

napi_value strait_js_get_original_dst(napi_env env, napi_callback_info info) {
  strait_args a;
  int32_t fd = -1;
  if (!strait_args_get(env, info, "getOriginalDst", 1, 1, &a) || !strait_get_fd(&a, 0, "fd", &fd)) return NULL;
  struct sockaddr_storage local;
  socklen_t llen = sizeof local;
  if (getsockname(fd, (struct sockaddr *)&local, &llen) != 0) return strait_throw_errno(env, "getsockname", errno);
  char buf[INET6_ADDRSTRLEN];
  if (local.ss_family == AF_INET6) {
    struct sockaddr_in6 dst;
    socklen_t len = sizeof dst;
    memset(&dst, 0, sizeof dst);
    if (getsockopt(fd, SOL_IPV6, IP6T_SO_ORIGINAL_DST, &dst, &len) == 0) {
      inet_ntop(AF_INET6, &dst.sin6_addr, buf, sizeof buf);
      return make_result(env, buf, ntohs(dst.sin6_port), 6);
    }
    // an IPv4 connection on a dual-stack socket: fall through to the IPv4 query
    if (!IN6_IS_ADDR_V4MAPPED(&((struct sockaddr_in6 *)&local)->sin6_addr)) return strait_throw_errno(env, "getsockopt(IP6T_SO_ORIGINAL_DST)", errno);
  }
  struct sockaddr_in dst4;
  socklen_t len4 = sizeof dst4;
  memset(&dst4, 0, sizeof dst4);
  if (getsockopt(fd, SOL_IP, SO_ORIGINAL_DST, &dst4, &len4) != 0) return strait_throw_errno(env, "getsockopt(SO_ORIGINAL_DST)", errno);
  inet_ntop(AF_INET, &dst4.sin_addr, buf, sizeof buf);
  return make_result(env, buf, ntohs(dst4.sin_port), 4);
}
