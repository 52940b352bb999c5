// Every subcommand of `strait`, one file each. Keep this list sorted by area.
import type { Command } from 'commander';
import { registerAdminCommand } from './admin.js';
import { registerCrdsCommand } from './crds.js';
import { registerGithostCommand } from './githost.js';
import { registerVersionCommand } from './version.js';

export function registerCommands(program: Command): void {
  registerVersionCommand(program);
  registerGithostCommand(program);
  registerAdminCommand(program);
  registerCrdsCommand(program);
}
