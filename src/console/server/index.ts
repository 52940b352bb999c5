// The web console's server side: a mount of the control module's API port (page, bundle,
// and the store API behind the API's session). The page itself is src/console/web.
export { createConsole, CONSOLE_PATH, type ConsoleOptions } from './mount.js';
export { MESH_TRAFFIC, READ_KINDS, WRITE_KINDS, mayRead, mayWrite, kindTable } from './kinds.js';
export { BROWSER_WRITE_ROUTES, type BrowserWriteRoute } from './browser-writes.js';
