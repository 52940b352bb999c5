// Every subcommand of `strait`, one file each, one line each here (sorted by area).
// Modules load when needed: a subcommand listed in `commands` loads its group alone
// (`strait up` stays resident as the world's owner, `strait exec` starts sooner);
// anything else (help, resources, ...) loads every group.
import type { Command } from 'commander';

type Register = (program: Command) => void;

const GROUPS: { commands?: string[]; load: () => Promise<Register> }[] = [
  { load: async () => (await import('./version.js')).registerVersionCommand },
  { commands: ['up', 'down', 'status', 'exec'], load: async () => (await import('./world.js')).registerWorldCommands },
  { load: async () => (await import('./githost.js')).registerGithostCommand },
  { load: async () => (await import('./admin.js')).registerAdminCommand },
  // resources
  { load: async () => (await import('./apply.js')).registerApplyCommand },
  { load: async () => (await import('./get.js')).registerGetCommand },
  { load: async () => (await import('./describe.js')).registerDescribeCommand },
  { load: async () => (await import('./delete.js')).registerDeleteCommand },
  { load: async () => (await import('./api-resources.js')).registerApiResourcesCommand },
];

/** Register the commands; with `sub` (argv[2]), only its group when a group names it. */
export async function registerCommands(program: Command, sub?: string): Promise<void> {
  const own = sub === undefined ? [] : GROUPS.filter((g) => g.commands?.includes(sub));
  for (const register of await Promise.all((own.length ? own : GROUPS).map((g) => g.load()))) register(program);
}
