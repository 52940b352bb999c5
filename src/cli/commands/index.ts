// Every subcommand of `strait`, one file each. Keep this list sorted by area.
import type { Command } from 'commander';
import { registerAdminCommand } from './admin.js';
import { registerCrdsCommand } from './crds.js';
import { registerApiResourcesCommand } from './api-resources.js';
import { registerAppCommand } from './app.js';
import { registerApplyCommand } from './apply.js';
import { registerBrokerCommands } from './broker.js';
import { registerDeleteCommand } from './delete.js';
import { registerDemoCommand } from './demo.js';
import { registerDescribeCommand } from './describe.js';
import { registerDiagnoseCommand } from './diagnose.js';
import { registerExportCommands } from './export.js';
import { registerGetCommand } from './get.js';
import { registerGithostCommand } from './githost.js';
import { registerGpgCommand } from './gpg.js';
import { registerJoinCommand } from './join.js';
import { registerLoginCommand } from './login.js';
import { registerShowCommands } from './show.js';
import { registerVerifyCommand } from './verify.js';
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
  // multicluster
  registerBrokerCommands(program);
  registerJoinCommand(program);
  registerExportCommands(program);
  registerShowCommands(program);
  registerDiagnoseCommand(program);
  registerVerifyCommand(program);
  // (A) code-hosting server
  registerGithostCommand(program);
  registerAdminCommand(program);
  // (A) GitOps: control module API
  registerLoginCommand(program);
  registerGpgCommand(program);
  registerAppCommand(program);
  registerDemoCommand(program);
  // Kubernetes mode
  registerCrdsCommand(program);
  // mesh
  registerMeshCommand(program);
}
