// The addon's entry points: one row each, STRAIT_ENTRY(JS name, C function, file).
// main.c declares each C function (napi_value fn(napi_env, napi_callback_info)) and
// registers it on the exports under its JS name; src/platform/native/index.ts
// (NativeAddon) types each one, and test/unit/native-args.test.ts calls each one with
// bad arguments. Adding an entry point: its function in a file under native/src, one
// row here, one member in NativeAddon, one case in that test.
STRAIT_ENTRY(tunWritev, strait_js_tun_writev, tun.c)
STRAIT_ENTRY(tunOpen, strait_js_tun_open, tun.c)
STRAIT_ENTRY(tunStart, strait_js_tun_start, tun.c)
STRAIT_ENTRY(tunWrite, strait_js_tun_write, tun.c)
STRAIT_ENTRY(tunClose, strait_js_tun_close, tun.c)
STRAIT_ENTRY(udpOpen, strait_js_udp_open, udp.c)
STRAIT_ENTRY(udpStart, strait_js_udp_start, udp.c)
STRAIT_ENTRY(udpSend, strait_js_udp_send, udp.c)
STRAIT_ENTRY(udpClose, strait_js_udp_close, udp.c)
STRAIT_ENTRY(netnsListen, strait_js_netns_listen, netns.c)
STRAIT_ENTRY(netnsCall, strait_js_netns_call, netns.c)
STRAIT_ENTRY(netnsOpen, strait_js_netns_open, netns.c)
STRAIT_ENTRY(netnsSocket, strait_js_netns_socket, netns.c)
STRAIT_ENTRY(getOriginalDst, strait_js_get_original_dst, origdst.c)
STRAIT_ENTRY(pumpStart, strait_js_pump_start, pump.c)
STRAIT_ENTRY(pumpStop, strait_js_pump_stop, pump.c)
STRAIT_ENTRY(tlsRelayStart, strait_js_relay_start, tlsrec.c)
STRAIT_ENTRY(tlsRelayStop, strait_js_relay_stop, tlsrec.c)
STRAIT_ENTRY(tlsRelayStats, strait_js_relay_stats, tlsrec.c)
STRAIT_ENTRY(tlsRecordOpen, strait_js_record_open, tlsrec.c)
STRAIT_ENTRY(tlsTrafficKeys, strait_js_traffic_keys, tlsrec.c)
STRAIT_ENTRY(flockTry, strait_js_flock_try, lock.c)
