// strait gpg list|get|add|rm: the control module's key store (argocd gpg's shapes and texts).
import type { Command } from 'commander';
import type { KeyInfo } from '../../platform/signatures/index.js';
import { call } from './control-client.js';
import { formatJson, formatTable, formatYaml, parseOutputFormat, readInput } from '../../platform/cli-kit/index.js';

/** Key ID rules live with the signatures module; load it (and openpgp) only when a gpg command runs. */
async function normalizeKeyID(id: string): Promise<string> {
  return (await import('../../platform/signatures/index.js')).normalizeKeyID(id);
}

function print(value: unknown, format: string): boolean {
  if (format === 'json') {
    process.stdout.write(formatJson(value));
    return true;
  }
  if (format === 'yaml') {
    process.stdout.write(formatYaml(value));
    return true;
  }
  return false;
}

export function registerGpgCommand(program: Command): void {
  const gpg = program.command('gpg').description('manage the GnuPG public keys used to verify commit signatures');
  gpg
    .command('list')
    .description('list the configured GnuPG public keys')
    .option('-o, --output <format>', 'wide, json or yaml', 'wide')
    .option('--server <server>', 'control module (default: the current session)')
    .action(async (opts: { output: string; server?: string }) => {
      const format = parseOutputFormat(opts.output, ['wide', 'text', 'json', 'yaml']);
      const list = await call<{ items: KeyInfo[] }>('GET', '/api/v1/gpgkeys', undefined, opts.server);
      if (print(list.items, format)) return;
      process.stdout.write(
        formatTable(
          ['KEYID', 'TYPE', 'IDENTITY'],
          list.items.map((k) => [k.keyID, k.subType.toUpperCase(), k.owner]),
        ),
      );
    });
  gpg
    .command('get')
    .description('show the GnuPG public key with ID KEYID')
    .argument('<keyid>', '16 hex digits, or a 40-hex fingerprint')
    .option('-o, --output <format>', 'wide, json or yaml', 'wide')
    .option('--server <server>', 'control module (default: the current session)')
    .action(async (id: string, opts: { output: string; server?: string }) => {
      const format = parseOutputFormat(opts.output, ['wide', 'text', 'json', 'yaml']);
      const key = await call<KeyInfo>('GET', `/api/v1/gpgkeys/${await normalizeKeyID(id)}`, undefined, opts.server);
      if (print(key, format)) return;
      console.log(`Key ID:          ${key.keyID}`);
      console.log(`Key fingerprint: ${key.fingerprint}`);
      console.log(`Key subtype:     ${key.subType.toUpperCase()}`);
      console.log(`Key owner:       ${key.owner}`);
      console.log(`Key data follows until EOF:\n${key.keyData}`);
    });
  gpg
    .command('add')
    .description('add the GnuPG public keys of an ASCII-armored file to the key store')
    .requiredOption('-f, --from <file>', 'file with the ASCII-armored public key(s)')
    .option('--upsert', 'replace keys that exist already', false)
    .option('--server <server>', 'control module (default: the current session)')
    .action(async (opts: { from: string; upsert: boolean; server?: string }) => {
      const keyData = readInput(opts.from);
      const r = await call<{ created: { items: KeyInfo[] }; skipped?: string[] }>(
        'POST',
        `/api/v1/gpgkeys${opts.upsert ? '?upsert=true' : ''}`,
        { keyData },
        opts.server,
      );
      let line = `Created ${r.created.items.length} key(s) from input file`;
      if ((r.skipped ?? []).length > 0) line += `, and ${r.skipped!.length} key(s) were skipped because they exist already`;
      console.log(`${line}.`);
    });
  gpg
    .command('rm')
    .description('remove the GnuPG public key with ID KEYID from the key store')
    .argument('<keyid>', '16 hex digits, or a 40-hex fingerprint')
    .option('--server <server>', 'control module (default: the current session)')
    .action(async (id: string, opts: { server?: string }) => {
      const keyID = await normalizeKeyID(id);
      await call('DELETE', `/api/v1/gpgkeys?keyID=${keyID}`, undefined, opts.server);
      console.log(`Deleted key with key ID ${keyID}`);
    });
}
