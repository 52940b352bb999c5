// A-queries over UDP to one DNS server, for `strait verify`.
import { createSocket } from 'node:dgram';
import { Packet } from 'dns2';
import type { ResolveA } from '../control/clusterset/index.js';

/** A UDP A-query to one DNS server, 2 s timeout. */
export function udpResolver(host: string, port: number): ResolveA {
  return (name) =>
    new Promise((resolve, reject) => {
      const sock = createSocket(host.includes(':') ? 'udp6' : 'udp4');
      const id = Math.floor(Math.random() * 65535);
      const q = new Packet();
      q.header.id = id;
      q.header.rd = 1;
      q.questions.push({ name, type: Packet.TYPE.A, class: Packet.CLASS.IN } as never);
      const timer = setTimeout(() => {
        sock.close();
        reject(new Error(`no answer from ${host}:${port}`));
      }, 2000);
      sock.on('message', (msg) => {
        if (msg.length < 2 || msg.readUInt16BE(0) !== id) return;
        clearTimeout(timer);
        sock.close();
        try {
          const r = Packet.parse(msg);
          resolve({
            rcode: r.header.rcode,
            addresses: (r.answers as { type: number; address?: string }[])
              .filter((a) => a.type === 1 && a.address)
              .map((a) => a.address!)
              .sort(),
          });
        } catch (err) {
          reject(err as Error);
        }
      });
      sock.send(q.toBuffer(), port, host);
    });
}
