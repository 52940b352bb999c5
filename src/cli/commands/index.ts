// Every subcommand of `strait`, one file each. Keep this list sorted by area.
import type { Command } from 'commander';
import { registerMeshCommand } from './mesh.js';
import { registerVersionCommand } from './version.js';

export function registerCommands(program: Command): void {
  registerVersionCommand(program);
  registerMeshCommand(program);
}
