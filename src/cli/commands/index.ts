// Every subcommand of `strait`, one file each. Keep this list sorted by area.
import type { Command } from 'commander';
import { registerAdminCommand } from './admin.js';
import { registerAppCommand } from './app.js';
import { registerDemoCommand } from './demo.js';
import { registerGithostCommand } from './githost.js';
import { registerGpgCommand } from './gpg.js';
import { registerLoginCommand } from './login.js';
import { registerVersionCommand } from './version.js';

export function registerCommands(program: Command): void {
  registerVersionCommand(program);
  // (A) code-hosting server
  registerGithostCommand(program);
  registerAdminCommand(program);
  // (A) GitOps: control module API
  registerLoginCommand(program);
  registerGpgCommand(program);
  registerAppCommand(program);
  registerDemoCommand(program);
}
