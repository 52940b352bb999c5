// The embedded store on a full disk (docs/faults.md, "GitOps, the store and the world"): the
// store process (test/fixtures/store-server.ts: an embedded store served through the store
// API, as the world's supervisor serves it) keeps its store dir on a 4 MiB tmpfs mounted in a
// private mount namespace of its own (`unshare --mount --propagation private`): the machine's
// mount table never shows it, and it is gone when the namespace's last process ends (both
// processes die with this test: setpriv --pdeathsig KILL). The test fills the filesystem
// through /proc/<pid>/root, writes through the store API client until a write is refused, and
// checks: the refusal is STRAIT_ERR_STORE_FULL naming ENOSPC and the object not written; the
// store keeps answering; nothing acknowledged is lost or changed; once space returns the
// store takes writes again without a restart; after a kill -9 and a restart every
// acknowledged object is there and SQLite's integrity check passes.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import Database from 'better-sqlite3';
import { isStraitError } from '../../src/base/errors/index.js';
import { Kinds } from '../../src/platform/resources/index.js';
import { connectStore, type KubeObject, type ResourceStore } from '../../src/platform/store/index.js';
import { root } from '../helpers/world.js';

const SIZE = '4m';
const TOKEN = 'disk-full-token';
let tmp: string;
let mnt: string;
let holder: ChildProcess | undefined;
let server: ChildProcess | undefined;
let store: ResourceStore;
const measured: Record<string, number | string> = {};

/** the store dir as this process sees it: through the holder's root, inside its mount namespace */
const inside = (p: string): string => join(`/proc/${holder!.pid}/root`, p);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function firstLine(child: ChildProcess, what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(out.split('\n')[0] ?? '');
    });
    child.on('exit', (code) => reject(new Error(`${what} ended (${code}) before it was ready: ${err}`)));
  });
}

/** the store server, in the holder's mount namespace */
async function startServer(): Promise<void> {
  server = spawn(
    'nsenter',
    [
      '-t',
      String(holder!.pid),
      '-m',
      '--',
      'setpriv',
      '--pdeathsig',
      'KILL',
      '--',
      process.execPath,
      join(root, 'dist', 'test', 'fixtures', 'store-server.js'),
      mnt,
      join(tmp, 'store.sock'),
      TOKEN,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  assert.equal(await firstLine(server, 'the store server'), 'ready');
}

async function stopServer(signal: NodeJS.Signals): Promise<void> {
  const s = server;
  server = undefined;
  if (!s || s.exitCode !== null || s.signalCode !== null) return;
  const gone = new Promise((r) => s.once('exit', r));
  s.kill(signal);
  await gone;
}

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'strait-disk-full-'));
  mnt = join(tmp, 'store');
  mkdirSync(mnt);
  // the namespace lives as long as this process (sleep is the holder's last exec; it dies with us)
  holder = spawn(
    'unshare',
    [
      '--mount',
      '--propagation',
      'private',
      '--',
      'setpriv',
      '--pdeathsig',
      'KILL',
      '--',
      'sh',
      '-c',
      `mount -t tmpfs -o size=${SIZE},mode=0700 strait-disk-full "$1" && echo mounted && exec sleep 100000`,
      'sh',
      mnt,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  assert.equal(await firstLine(holder, 'the mount namespace'), 'mounted');
  await startServer();
  store = connectStore({ socketPath: join(tmp, 'store.sock'), token: TOKEN, cluster: 'cluster-a' });
});

after(async () => {
  await store?.close();
  await stopServer('SIGKILL');
  if (holder && holder.exitCode === null) {
    const gone = new Promise((r) => holder!.once('exit', r));
    holder.kill('SIGKILL');
    await gone;
  }
  if (tmp) rmSync(tmp, { recursive: true, force: true });
  console.log(`measured: ${JSON.stringify(measured)}`);
});

const cm = (name: string, fill: string): KubeObject & { data: Record<string, string> } => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'default' },
  data: { fill },
});
const payload = (i: number): string => `${i}:`.padEnd(4096, String.fromCharCode(97 + (i % 26)));

test('disk full under the embedded store: writes refused with STRAIT_ERR_STORE_FULL (ENOSPC, the object named), nothing corrupted, writes again once space returns, intact after kill -9', async () => {
  assert.ok(!readFileSync('/proc/self/mounts', 'utf8').includes(mnt), "the machine's mount table does not show the test's filesystem");
  const acked = new Map<string, string>();
  for (let i = 0; i < 40; i++) {
    await store.apply(cm(`before-${i}`, payload(i)));
    acked.set(`before-${i}`, payload(i));
  }
  const watched = new Set<string>();
  const w = store.watch(
    Kinds.ConfigMap,
    { namespace: 'default', resourceVersion: (await store.list(Kinds.ConfigMap, { namespace: 'default' })).resourceVersion },
    (ev) => watched.add(ev.object.metadata.name),
  );

  // fill the filesystem
  const filler = inside(join(mnt, 'filler'));
  const fd = openSync(filler, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  let filled = 0;
  try {
    for (;;) filled += writeSync(fd, chunk);
  } catch (err) {
    assert.equal((err as NodeJS.ErrnoException).code, 'ENOSPC');
  } finally {
    closeSync(fd);
  }
  measured['filler bytes'] = filled;

  // writes until the store cannot grow any more (SQLite reuses the space its WAL already has)
  let refused: unknown;
  let refusedName = '';
  let writtenWhileFull = 0;
  for (let i = 0; i < 2000 && !refused; i++) {
    const name = `full-${i}`;
    try {
      await store.apply(cm(name, payload(1000 + i)));
      acked.set(name, payload(1000 + i));
      writtenWhileFull++;
    } catch (err) {
      refused = err;
      refusedName = name;
    }
  }
  measured['acknowledged after the filler, before the first refusal'] = writtenWhileFull;
  assert.ok(refused, 'a write was refused');
  assert.ok(isStraitError(refused, 'STRAIT_ERR_STORE_FULL'), `STRAIT_ERR_STORE_FULL: ${String(refused)}`);
  const message = (refused as Error).message;
  measured['refusal'] = message;
  assert.match(message, /out of disk space \(ENOSPC\)/);
  assert.match(message, new RegExp(`the create of ConfigMap default/${refusedName} was not written`));
  assert.match(message, new RegExp(mnt.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));

  // still full: more writes refused the same way (several in one commit group), the store still answers reads
  const more = await Promise.allSettled([1, 2, 3].map((k) => store.apply(cm(`more-${k}`, payload(2000 + k)))));
  for (const r of more) {
    if (r.status === 'fulfilled') acked.set(r.value.metadata.name, (r.value as ReturnType<typeof cm>).data.fill ?? '');
    else assert.ok(isStraitError(r.reason, 'STRAIT_ERR_STORE_FULL'), String(r.reason));
  }
  assert.ok(
    more.some((r) => r.status === 'rejected'),
    'writes while the disk is full are refused',
  );
  assert.equal(await store.get(Kinds.ConfigMap, refusedName, 'default'), undefined, 'the refused object is not there');
  const listed = (await store.list<ReturnType<typeof cm>>(Kinds.ConfigMap, { namespace: 'default' })).items;
  assert.deepEqual(new Map(listed.map((o) => [o.metadata.name, o.data.fill])), acked, 'every acknowledged object, unchanged, and nothing else');
  assert.ok(server && server.exitCode === null, 'the store process runs on');

  // space returns: writes go through again without a restart
  unlinkSync(filler);
  const t0 = Date.now();
  let again: KubeObject | undefined;
  for (let tries = 0; !again && tries < 50; tries++) {
    again = await store.apply(cm(refusedName, payload(3000))).catch(async () => {
      await sleep(100);
      return undefined;
    });
  }
  measured['first write after space returned (ms)'] = Date.now() - t0;
  assert.ok(again, 'the store takes writes again once there is room');
  acked.set(refusedName, payload(3000));
  await store.apply(cm('after', payload(4000)));
  acked.set('after', payload(4000));
  await sleep(200);
  w.stop();
  const unwatched = [...acked.keys()].filter((n) => !n.startsWith('before-') && !watched.has(n));
  assert.deepEqual(unwatched, [], 'watchers saw every acknowledged write');
  assert.ok(!watched.has('more-1') || acked.has('more-1'), 'watchers were not told of refused writes');

  // kill -9 and restart: everything acknowledged is there, the database is sound
  await stopServer('SIGKILL');
  const db = new Database(inside(join(mnt, 'store.db')), { readonly: false });
  const check = db.pragma('integrity_check', { simple: true });
  db.close();
  assert.equal(check, 'ok');
  await startServer();
  const back = (await store.list<ReturnType<typeof cm>>(Kinds.ConfigMap, { namespace: 'default' })).items;
  assert.deepEqual(new Map(back.map((o) => [o.metadata.name, o.data.fill])), acked, 'after kill -9 and a restart: every acknowledged object, nothing else');
  measured['objects kept'] = back.length;
});
