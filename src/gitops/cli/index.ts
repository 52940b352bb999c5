// The GitOps CLI: login, gpg and app commands against the control module's API.
export { registerLoginCommand } from './login.js';
export { registerGpgCommand } from './gpg.js';
export { lastSync, registerAppCommand } from './app.js';
export * from './control-client.js';
