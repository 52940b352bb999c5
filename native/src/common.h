// strait's C addon: only what Node cannot reach (TUN devices, the original
// destination of a redirected socket, network namespaces, batched UDP).
#ifndef STRAIT_NATIVE_COMMON_H
#define STRAIT_NATIVE_COMMON_H
#define NAPI_VERSION 8
#include <node_api.h>

// Throw a JS Error with code "STRAIT_ERR_SYSTEM_TOOL"-style errno details; returns NULL.
napi_value strait_throw_errno(napi_env env, const char *what, int err);

// An exception left by a JS callback called from a poll handler goes to 'uncaughtException'.
napi_status strait_rethrow_pending(napi_env env);

// Each part registers its functions on exports.
napi_status strait_init_tun(napi_env env, napi_value exports);
napi_status strait_init_origdst(napi_env env, napi_value exports);
napi_status strait_init_netns(napi_env env, napi_value exports);
napi_status strait_init_udp(napi_env env, napi_value exports);

#define STRAIT_EXPORT(env, exports, name, fn)                                   \
  do {                                                                          \
    napi_value f_;                                                              \
    if (napi_create_function(env, name, NAPI_AUTO_LENGTH, fn, NULL, &f_) != napi_ok) return napi_generic_failure; \
    if (napi_set_named_property(env, exports, name, f_) != napi_ok) return napi_generic_failure; \
  } while (0)
#endif
