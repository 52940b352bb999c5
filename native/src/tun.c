#include "common.h"

napi_status strait_init_tun(napi_env env, napi_value exports) {
  return napi_ok;
}
