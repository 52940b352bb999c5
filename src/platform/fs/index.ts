export { watchFile, type FileWatch } from './watch-file.js';
export { tryLockFile } from './file-lock.js';
