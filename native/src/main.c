#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "common.h"

napi_value strait_throw_errno(napi_env env, const char *what, int err) {
  char msg[256];
  snprintf(msg, sizeof msg, "%s: %s (errno %d)", what, strerror(err), err);
  napi_throw_error(env, "STRAIT_ERR_SYSTEM_TOOL", msg);
  return NULL;
}

static napi_value init(napi_env env, napi_value exports) {
  if (strait_init_tun(env, exports) != napi_ok) return NULL;
  if (strait_init_origdst(env, exports) != napi_ok) return NULL;
  if (strait_init_netns(env, exports) != napi_ok) return NULL;
  if (strait_init_udp(env, exports) != napi_ok) return NULL;
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
