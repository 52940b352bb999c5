// The addon's module: registers every entry point of entries.h on exports, then the
// cleanup hooks of the parts that keep threads. Nothing else depends on this file.
#include "common.h"

static napi_value init(napi_env env, napi_value exports) {
  static const struct {
    const char *name;
    napi_callback fn;
  } entries[] = {
#define STRAIT_ENTRY(js, fn, file) {#js, fn},
#include "entries.h"
#undef STRAIT_ENTRY
  };
  for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
    napi_value f;
    if (napi_create_function(env, entries[i].name, NAPI_AUTO_LENGTH, entries[i].fn, NULL, &f) != napi_ok) return NULL;
    if (napi_set_named_property(env, exports, entries[i].name, f) != napi_ok) return NULL;
  }
  if (strait_init_pump(env) != napi_ok) return NULL;
  if (strait_init_tlsrec(env) != napi_ok) return NULL;
  if (strait_init_gwpath(env) != napi_ok) return NULL;
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
