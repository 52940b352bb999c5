export { watchFile, type FileWatch } from './watch-file.js';
