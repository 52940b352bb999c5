// Every subcommand of `strait`, one file each. Keep this list sorted by area.
import type { Command } from 'commander';
import { registerAdminCommand } from './admin.js';
import { registerApiResourcesCommand } from './api-resources.js';
import { registerApplyCommand } from './apply.js';
import { registerDeleteCommand } from './delete.js';
import { registerDescribeCommand } from './describe.js';
import { registerGetCommand } from './get.js';
import { registerGithostCommand } from './githost.js';
import { registerMeshCommand } from './mesh.js';
import { registerVersionCommand } from './version.js';
import { registerWorldCommands } from './world.js';

export function registerCommands(program: Command): void {
  registerVersionCommand(program);
  registerWorldCommands(program);
  registerGithostCommand(program);
  registerAdminCommand(program);
  // resources
  registerApplyCommand(program);
  registerGetCommand(program);
  registerDescribeCommand(program);
  registerDeleteCommand(program);
  registerApiResourcesCommand(program);
  // mesh
  registerMeshCommand(program);
}
