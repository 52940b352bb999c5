// Configure a wireguard-go interface through its UAPI socket (no `wg` tool needed).
//   node wg-uapi.mjs IFACE PRIVATE_HEX LISTEN_PORT PEER_PUBLIC_HEX PEER_ENDPOINT ALLOWED_IPS (comma-separated)
import { connect } from 'node:net';
const [iface, priv, port, peerPub, endpoint, allowed] = process.argv.slice(2);
const msg = `set=1\nprivate_key=${priv}\nlisten_port=${port}\nreplace_peers=true\npublic_key=${peerPub}\nendpoint=${endpoint}\nreplace_allowed_ips=true\n${allowed
  .split(',')
  .map((a) => `allowed_ip=${a}\n`)
  .join('')}\n`;
const s = connect(`/run/wireguard/${iface}.sock`, () => s.write(msg));
let out = '';
s.on('data', (d) => {
  out += d;
  if (out.includes('\n\n')) {
    s.end();
    if (!out.includes('errno=0')) {
      console.error(out);
      process.exit(1);
    }
  }
});
s.on('error', (e) => {
  console.error(String(e));
  process.exit(1);
});
