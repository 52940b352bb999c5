// Every subcommand of `strait`, one file each. Keep this list sorted by area.
import type { Command } from 'commander';
import { registerAdminCommand } from './admin.js';
import { registerGithostCommand } from './githost.js';
import { registerMeshCommand } from './mesh.js';
import { registerVersionCommand } from './version.js';

export function registerCommands(program: Command): void {
  registerVersionCommand(program);
  registerGithostCommand(program);
  registerAdminCommand(program);
  registerMeshCommand(program);
}
