// Every subcommand of `strait`, one file each. Keep this list sorted by area.
import type { Command } from 'commander';
import { registerAdminCommand } from './admin.js';
import { registerApiResourcesCommand } from './api-resources.js';
import { registerAppCommand } from './app.js';
import { registerApplyCommand } from './apply.js';
import { registerDeleteCommand } from './delete.js';
import { registerDemoCommand } from './demo.js';
import { registerDescribeCommand } from './describe.js';
import { registerGetCommand } from './get.js';
import { registerGithostCommand } from './githost.js';
import { registerGpgCommand } from './gpg.js';
import { registerLoginCommand } from './login.js';
import { registerMeshCommand } from './mesh.js';
import { registerVersionCommand } from './version.js';
import { registerWorldCommands } from './world.js';

export function registerCommands(program: Command): void {
  registerVersionCommand(program);
  registerWorldCommands(program);
  // resources
  registerApplyCommand(program);
  registerGetCommand(program);
  registerDescribeCommand(program);
  registerDeleteCommand(program);
  registerApiResourcesCommand(program);
  // (A) code-hosting server
  registerGithostCommand(program);
  registerAdminCommand(program);
  // (A) GitOps: control module API
  registerLoginCommand(program);
  registerGpgCommand(program);
  registerAppCommand(program);
  registerDemoCommand(program);
  // mesh
  registerMeshCommand(program);
}
