// One raw HTTP request (paths fetch would normalise, bodies of any shape) to a TCP
// port or a unix socket; the answer's status, headers and text.
import { request } from 'node:http';

export type HttpWhere = { socketPath: string } | { host: string; port: number };

export function rawRequest(
  where: HttpWhere,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string | Buffer,
): Promise<{ status: number; body: string; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const req = request({ ...where, method, path, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        text += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
