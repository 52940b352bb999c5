// Entry of the code-hosting server process (systemd unit, container, `strait up`).
//   node dist/daemon/githost/main.js [--port N] [--host ADDR] [--state-dir DIR] [--config FILE]
// The same as `strait githost serve`.
import { main } from '../../src/cli/main.js';

process.env['STRAIT_PROC'] ??= 'githost';
main([process.argv[0] ?? 'node', 'strait', 'githost', 'serve', ...process.argv.slice(2)]).then((code) => {
  if (code !== 0) process.exitCode = code;
});
