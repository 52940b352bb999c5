#!/usr/bin/env node
// Makes the README's bare `strait …` work after `npm ci` (npm links the bins of
// dependencies, never a package's own): as root, /usr/local/bin/strait becomes a symlink to
// this checkout's bin/strait.js. Idempotent, and it says what it did in one line. It never
// replaces a file it did not make, nor a link to another checkout that still exists; a link
// to a checkout that is gone is replaced. Not root: it prints the one command to run.
// Skipped when CI=true (a throwaway clone) or STRAIT_NO_LINK=1.
//   node scripts/link-bin.mjs [--dir DIR]     (DIR: where the link goes, default /usr/local/bin)
import { existsSync, lstatSync, readlinkSync, symlinkSync, unlinkSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(root, 'bin', 'strait.js');
const at = process.argv.indexOf('--dir');
const dir = at >= 0 && process.argv[at + 1] ? resolve(process.argv[at + 1]) : '/usr/local/bin';
const link = join(dir, 'strait');
const say = (msg) => console.error(`strait: ${msg}`);

if (process.env['CI'] === 'true' || process.env['STRAIT_NO_LINK'] === '1') process.exit(0);
if (process.getuid?.() !== 0 && at < 0) {
  say(`run \`sudo ln -s ${source} ${link}\` once to type \`strait\` as the README does (or \`npx strait …\` in this directory)`);
  process.exit(0);
}
if (!existsSync(dir)) {
  say(`${dir} does not exist; run \`node ${source} …\` or \`npx strait …\` in this directory`);
  process.exit(0);
}
let st;
try {
  st = lstatSync(link);
} catch {
  st = undefined;
}
if (!st) {
  symlinkSync(source, link);
  say(`linked ${link} → ${source}`);
  process.exit(0);
}
if (!st.isSymbolicLink()) {
  say(`${link} exists and is not a link strait made; left as is (run \`node ${source} …\` or \`npx strait …\` here)`);
  process.exit(0);
}
const current = resolve(dir, readlinkSync(link));
if (current === source) process.exit(0); // already this checkout's
if (/\/bin\/strait\.js$/.test(current) && !existsSync(current)) {
  unlinkSync(link);
  symlinkSync(source, link);
  say(`relinked ${link} → ${source} (it pointed to ${current}, which is gone)`);
  process.exit(0);
}
say(`${link} points to ${current}; left as is — \`sudo ln -sf ${source} ${link}\` to use this checkout`);
