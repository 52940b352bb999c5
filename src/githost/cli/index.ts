// The code-hosting CLI: `strait githost serve` and `strait admin`.
export { registerGithostCommand } from './githost.js';
export { registerAdminCommand } from './admin.js';
