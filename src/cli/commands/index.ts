// Every subcommand of `strait`, one file each. Keep this list sorted by area.
import type { Command } from 'commander';
import { registerAppCommand } from './app.js';
import { registerGpgCommand } from './gpg.js';
import { registerLoginCommand } from './login.js';
import { registerVersionCommand } from './version.js';

export function registerCommands(program: Command): void {
  registerVersionCommand(program);
  // (A) GitOps: control module API
  registerLoginCommand(program);
  registerGpgCommand(program);
  registerAppCommand(program);
}
