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

napi_status strait_rethrow_pending(napi_env env) {
  bool pending = false;
  napi_is_exception_pending(env, &pending);
  if (!pending) return napi_ok;
  napi_value err;
  napi_get_and_clear_last_exception(env, &err);
  return napi_fatal_exception(env, err);
}

static napi_value init(napi_env env, napi_value exports) {
  if (strait_init_tun(env, exports) != napi_ok) return NULL;
  if (strait_init_origdst(env, exports) != napi_ok) return NULL;
  if (strait_init_netns(env, exports) != napi_ok) return NULL;
  if (strait_init_udp(env, exports) != napi_ok) return NULL;
  if (strait_init_pump(env, exports) != napi_ok) return NULL;
  if (strait_init_tlsrec(env, exports) != napi_ok) return NULL;
  if (strait_init_lock(env, exports) != napi_ok) return NULL;
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
