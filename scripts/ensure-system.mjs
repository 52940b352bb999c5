#!/usr/bin/env node
// Checks that the Debian packages strait needs are present and installs the missing
// ones through scripts/setup-system.sh (idempotent; needs root to install).
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const r = spawnSync('bash', [join(root, 'scripts', 'setup-system.sh')], { stdio: 'inherit' });
process.exit(r.status ?? 1);
