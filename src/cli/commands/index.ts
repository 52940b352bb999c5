// Every subcommand of `strait`, one file each, one line each here (sorted by area).
// Modules load when needed: a subcommand listed in `commands` loads its group alone
// (`strait up` stays resident as the world's owner, `strait exec` starts sooner);
// anything else (help, resources, ...) loads every group.
import type { Command } from 'commander';
import { addGlobalOptions } from '../../platform/cli-kit/index.js';

type Register = (program: Command) => void;

const GROUPS: { commands?: string[]; load: () => Promise<Register> }[] = [
  { load: async () => (await import('./version.js')).registerVersionCommand },
  { commands: ['up', 'down', 'status', 'exec'], load: async () => (await import('./world.js')).registerWorldCommands },
  { commands: ['logs'], load: async () => (await import('./logs.js')).registerLogsCommand },
  { commands: ['console'], load: async () => (await import('./console.js')).registerConsoleCommand },
  // resources
  { load: async () => (await import('./apply.js')).registerApplyCommand },
  { load: async () => (await import('./get.js')).registerGetCommand },
  { load: async () => (await import('./describe.js')).registerDescribeCommand },
  { load: async () => (await import('./delete.js')).registerDeleteCommand },
  { load: async () => (await import('./api-resources.js')).registerApiResourcesCommand },
  // (C) multicluster
  { load: async () => (await import('../../multicluster/cli/index.js')).registerBrokerCommands },
  { load: async () => (await import('../../multicluster/cli/index.js')).registerJoinCommand },
  { load: async () => (await import('../../multicluster/cli/index.js')).registerExportCommands },
  { load: async () => (await import('../../multicluster/cli/index.js')).registerShowCommands },
  { load: async () => (await import('../../multicluster/cli/index.js')).registerDiagnoseCommand },
  { load: async () => (await import('./verify.js')).registerVerifyCommand },
  // (A) code-hosting server
  { load: async () => (await import('../../githost/cli/index.js')).registerGithostCommand },
  { load: async () => (await import('../../githost/cli/index.js')).registerAdminCommand },
  // (A) GitOps: control module API
  { load: async () => (await import('../../gitops/cli/index.js')).registerLoginCommand },
  { load: async () => (await import('../../gitops/cli/index.js')).registerGpgCommand },
  { load: async () => (await import('../../gitops/cli/index.js')).registerSshSignersCommand },
  { load: async () => (await import('../../gitops/cli/index.js')).registerAppCommand },
  { load: async () => (await import('./demo.js')).registerDemoCommand },
  // (B) mesh
  { load: async () => (await import('../../mesh/cli/index.js')).registerMeshCommand },
  // Kubernetes mode
  { load: async () => (await import('./crds.js')).registerCrdsCommand },
];

/** Register the commands; with `sub` (argv[2]), only its group when a group names it. */
export async function registerCommands(program: Command, sub?: string): Promise<void> {
  addGlobalOptions(program);
  const own = sub === undefined ? [] : GROUPS.filter((g) => g.commands?.includes(sub));
  for (const register of await Promise.all((own.length ? own : GROUPS).map((g) => g.load()))) register(program);
}
