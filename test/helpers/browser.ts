// Headless Debian Chromium driven by playwright-core (scripts/setup-system.sh installs
// `chromium`). The flags keep it off the network: only the loopback console is reached.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';

export const CHROMIUM = process.env['STRAIT_CHROMIUM'] ?? '/usr/bin/chromium';

/** why browser tests cannot run here, or undefined */
export function browserMissing(): string | undefined {
  return existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is not installed (scripts/setup-system.sh installs Debian's chromium)`;
}

export async function launchBrowser(): Promise<{ browser: Browser; close(): Promise<void> }> {
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), 'strait-chromium-'));
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage', `--user-data-dir=${profile}`],
  });
  return {
    browser,
    async close() {
      await browser.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
