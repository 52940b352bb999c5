// A DNS query written by dns2 (an independent encoder), for tests and benches of our DNS servers.
import { Packet } from 'dns2';

export interface DnsQueryOptions {
  id?: number;
  /** recursion desired (default true, as dig sends) */
  rd?: boolean;
  /** an EDNS OPT record (UDP size 4096) */
  edns?: boolean;
}

export function dnsQuery(name: string, type = 1, opts: DnsQueryOptions = {}): Buffer {
  const p = new Packet();
  p.header.id = opts.id ?? 1234;
  if (opts.rd !== false) p.header.rd = 1;
  p.questions.push({ name, type, class: 1 } as never);
  if (opts.edns) p.additionals.push((Packet.Resource.EDNS as unknown as (r: object[]) => object)([]) as never);
  return p.toBuffer();
}
