{
  "targets": [
    {
      "target_name": "strait_native",
      "sources": ["src/main.c", "src/tun.c", "src/origdst.c", "src/netns.c", "src/udp.c", "src/writer.c", "src/common.c", "src/pump.c", "src/tlsrec.c", "src/lock.c", "src/session.c", "src/gwpath.c"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter"]
    }
  ]
}
