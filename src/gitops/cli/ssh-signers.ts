// strait ssh-signers list|add|rm: the control module's SSH allowed signers (a strait
// extension; git's allowed_signers format, docs/gitops.md "SSH signatures").
import type { Command } from 'commander';
import { E } from '../../base/errors/index.js';
import { formatJson, formatTable, formatYaml, parseOutputFormat, readInput } from '../../platform/cli-kit/index.js';
import type { SshSignerInfo } from '../control/index.js';
import { call } from './control-client.js';

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

const options = (s: SshSignerInfo): string =>
  [
    s.certAuthority ? 'cert-authority' : '',
    s.namespaces !== undefined ? `namespaces="${s.namespaces}"` : '',
    s.validAfter ? `valid-after=${s.validAfter}` : '',
    s.validBefore ? `valid-before=${s.validBefore}` : '',
  ]
    .filter(Boolean)
    .join(',') || '-';

/** One allowed_signers line from the flags (principals, options, a .pub file's key). */
function lineFromFlags(opts: {
  principals?: string;
  key?: string;
  namespaces?: string;
  validAfter?: string;
  validBefore?: string;
  certAuthority?: boolean;
}): string {
  if (!opts.principals || !opts.key) throw E.usage('give --from FILE (allowed_signers lines), or --principals LIST with --key FILE.pub');
  const key = readInput(opts.key).trim().split('\n')[0] ?? '';
  const o = [
    opts.certAuthority ? 'cert-authority' : '',
    opts.namespaces ? `namespaces="${opts.namespaces}"` : '',
    opts.validAfter ? `valid-after="${opts.validAfter}"` : '',
    opts.validBefore ? `valid-before="${opts.validBefore}"` : '',
  ]
    .filter(Boolean)
    .join(',');
  const principals = /[\s"]/.test(opts.principals) ? JSON.stringify(opts.principals) : opts.principals;
  return `${principals}${o ? ` ${o}` : ''} ${key}`;
}

export function registerSshSignersCommand(program: Command): void {
  const cmd = program.command('ssh-signers').description('manage the SSH allowed signers used to verify SSH-signed commits (git allowed_signers format)');
  cmd
    .command('list')
    .description('list the allowed signers')
    .option('-o, --output <format>', 'wide, json or yaml', 'wide')
    .option('--server <server>', 'control module (default: the current session)')
    .action(async (opts: { output: string; server?: string }) => {
      const format = parseOutputFormat(opts.output, ['wide', 'text', 'json', 'yaml']);
      const list = await call<{ items: SshSignerInfo[] }>('GET', '/api/v1/sshsigners', undefined, opts.server);
      if (print(list.items, format)) return;
      process.stdout.write(
        formatTable(
          ['FINGERPRINT', 'TYPE', 'PRINCIPALS', 'OPTIONS'],
          list.items.map((s) => [s.fingerprint, s.keyType, s.principals, options(s)]),
        ),
      );
    });
  cmd
    .command('add')
    .description('add allowed signers: the lines of an allowed_signers file, or one line built from flags')
    .option('-f, --from <file>', 'allowed_signers file ("-" for standard input)')
    .option('--principals <list>', 'comma-separated principal patterns, e.g. alice@example.com')
    .option('--key <file>', 'an SSH public key file (.pub)')
    .option('--namespaces <list>', 'namespaces option, e.g. git')
    .option('--valid-after <time>', 'YYYYMMDD[Z] or YYYYMMDDHHMM[SS][Z]')
    .option('--valid-before <time>', 'YYYYMMDD[Z] or YYYYMMDDHHMM[SS][Z]')
    .option('--cert-authority', 'the key is a CA whose user certificates are accepted', false)
    .option('--upsert', 'replace the lines of keys that are listed already', false)
    .option('--server <server>', 'control module (default: the current session)')
    .action(
      async (opts: {
        from?: string;
        principals?: string;
        key?: string;
        namespaces?: string;
        validAfter?: string;
        validBefore?: string;
        certAuthority: boolean;
        upsert: boolean;
        server?: string;
      }) => {
        const text = opts.from !== undefined ? readInput(opts.from) : lineFromFlags(opts);
        const r = await call<{ created: { items: SshSignerInfo[] }; skipped?: string[] }>(
          'POST',
          `/api/v1/sshsigners${opts.upsert ? '?upsert=true' : ''}`,
          { allowedSigners: text },
          opts.server,
        );
        let line = `Created ${r.created.items.length} allowed signer line(s)`;
        if ((r.skipped ?? []).length > 0)
          line += `, and skipped ${r.skipped!.length} key(s) that are listed already (${r.skipped!.join(', ')}; --upsert replaces them)`;
        console.log(`${line}.`);
      },
    );
  cmd
    .command('rm')
    .description('remove every allowed signer line of the key with this fingerprint')
    .argument('<fingerprint>', 'SHA256:… as ssh-keygen -l prints it')
    .option('--server <server>', 'control module (default: the current session)')
    .action(async (fingerprint: string, opts: { server?: string }) => {
      await call('DELETE', `/api/v1/sshsigners?fingerprint=${encodeURIComponent(fingerprint)}`, undefined, opts.server);
      console.log(`Deleted the allowed signer(s) with key ${fingerprint}`);
    });
}
