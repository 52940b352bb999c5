import type { Command } from 'commander';
import { mkdirSync } from 'node:fs';
import { E } from '../../base/errors/index.js';
import { formatJson, parseOutputFormat, resolveStateDir, takesGlobals } from '../../platform/cli-kit/index.js';

interface UserCreateOptions {
  username?: string;
  password?: string;
  email?: string;
  admin?: boolean;
  mustChangePassword?: boolean;
  accessToken?: boolean;
  accessTokenName: string;
  stateDir?: string;
  output: string;
}

export function registerAdminCommand(program: Command): void {
  const admin = program.command('admin').description('local administration of the code-hosting server (works on its state dir)');
  const user = admin.command('user').description('manage githost users');
  takesGlobals(user.command('create'), 'stateDir')
    .description('create a user; the first administrator can only be created this way')
    .option('--username <name>', 'user name')
    .option('--password <password>', 'password (at least 8 characters)')
    .option('--email <email>', "e-mail address (must match the e-mail of the user's GPG keys)")
    .option('--admin', 'make the user a site administrator', false)
    .option('--must-change-password', 'require a password change before API use with the password', false)
    .option('--access-token', 'also create an access token (scope all) and print it', false)
    .option('--access-token-name <name>', 'name of that token', 'gitea-admin')
    .option('-o, --output <format>', 'output format: text or json', 'text')
    .action(async (_opts: unknown, cmd: Command) => {
      const opts = cmd.optsWithGlobals<UserCreateOptions>();
      const format = parseOutputFormat(opts.output, ['text', 'json']);
      for (const flag of ['username', 'password', 'email'] as const) {
        if (!opts[flag]) throw E.usage(`--${flag} is required: strait admin user create --username U --password P --email E [--admin]`, { flag });
      }
      // loaded on use: SQLite and the githost model are not needed by other commands
      const { GithostDb, createToken, createUser, githostPaths } = await import('../server/index.js');
      const paths = githostPaths(resolveStateDir(opts.stateDir));
      mkdirSync(paths.root, { recursive: true, mode: 0o700 });
      const db = new GithostDb(paths.db);
      try {
        const u = await createUser(db, {
          username: opts.username as string,
          password: opts.password as string,
          email: opts.email as string,
          admin: opts.admin,
          mustChangePassword: opts.mustChangePassword,
        });
        let token: string | undefined;
        if (opts.accessToken) token = createToken(db, u.id, opts.accessTokenName, ['all'])?.token;
        if (format === 'json') {
          process.stdout.write(formatJson({ id: u.id, username: u.name, email: u.email, admin: u.is_admin === 1, ...(token ? { token } : {}) }));
        } else {
          console.log(`New user '${u.name}' has been successfully created!`);
          if (token) console.log(token);
        }
      } finally {
        db.close();
      }
    });
}
