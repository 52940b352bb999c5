// The GitOps CLI: login, gpg, ssh-signers and app commands against the control module's API.
export { ask, registerLoginCommand } from './login.js';
export { registerGpgCommand } from './gpg.js';
export { registerSshSignersCommand } from './ssh-signers.js';
export { lastGoodRevision, lastSync, registerAppCommand, syncText } from './app.js';
export * from './control-client.js';
