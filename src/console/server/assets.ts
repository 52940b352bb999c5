// The console's files (dist/console: index.html, app.js, app.css, built by
// scripts/build-console.mjs), read once and kept with their gzip; index.html gets the
// page's configuration (kinds, clusters' roles) in a JSON script element.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { createHash } from 'node:crypto';

/** dist/console beside dist/src/console/server (this file, compiled) */
export const DEFAULT_ASSETS_DIR = fileURLToPath(new URL('../../../console/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json',
  '.map': 'application/json',
};

export interface Asset {
  type: string;
  body: Buffer;
  gzip: Buffer;
  etag: string;
}

export class Assets {
  private readonly files = new Map<string, Asset>();

  constructor(
    readonly dir: string,
    config: unknown,
  ) {
    for (const name of ['index.html', 'app.js', 'app.css']) {
      const file = join(dir, name);
      if (!existsSync(file) || !statSync(file).isFile()) continue;
      let body = readFileSync(file);
      if (name === 'index.html') {
        // "<" escaped: the JSON cannot close the script element
        const json = JSON.stringify(config).replace(/</g, '\\u003c');
        body = Buffer.from(body.toString('utf8').replace('<!--CONSOLE_CONFIG-->', `<script type="application/json" id="console-config">${json}</script>`));
      }
      const ext = name.slice(name.lastIndexOf('.'));
      this.files.set(name, {
        type: TYPES[ext] ?? 'application/octet-stream',
        body,
        gzip: gzipSync(body, { level: 9 }),
        etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
      });
    }
  }

  get built(): boolean {
    return this.files.has('index.html') && this.files.has('app.js');
  }

  get(name: string): Asset | undefined {
    return this.files.get(name);
  }
}
