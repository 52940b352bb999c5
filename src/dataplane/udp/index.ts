// UDP transport over node:dgram for the tunnel (4500) and VXLAN (4800) sockets.
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';

export type DatagramHandler = (msg: Buffer, address: string, port: number) => void;

export class UdpTransport {
  private constructor(readonly socket: Socket, readonly address: string, readonly port: number) {}

  /** Bind `address:port` (port 0 = any) and call `onMessage` for every datagram. */
  static async bind(address: string, port: number, onMessage: DatagramHandler, opts: { bufferBytes?: number } = {}): Promise<UdpTransport> {
    const socket = createSocket({ type: 'udp4', reuseAddr: false });
    socket.on('message', (msg: Buffer, rinfo: RemoteInfo) => onMessage(msg, rinfo.address, rinfo.port));
    // a send to an unreachable peer surfaces as an 'error' on some kernels: never fatal for a data plane
    socket.on('error', () => undefined);
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(port, address, () => {
        socket.off('error', reject);
        resolve();
      });
    });
    const bytes = opts.bufferBytes ?? 4 * 1024 * 1024;
    try {
      socket.setRecvBufferSize(bytes);
      socket.setSendBufferSize(bytes);
    } catch {
      // the kernel caps these at net.core.[rw]mem_max; what we get is fine
    }
    const a = socket.address();
    return new UdpTransport(socket, a.address, a.port);
  }

  /** Send one datagram made of `chunks` (scatter/gather, no concatenation). */
  send(chunks: Buffer | Buffer[], port: number, address: string): void {
    this.socket.send(chunks, port, address);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }
}
