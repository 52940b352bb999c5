// Headless Debian Chromium driven by playwright-core (scripts/setup-system.sh installs
// `chromium`). The flags keep it off the network: only the loopback console is reached.
// playwright-core gives each launch a new empty profile of its own.
import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';

export const CHROMIUM = process.env['STRAIT_CHROMIUM'] ?? '/usr/bin/chromium';

/** why browser tests cannot run here, or undefined */
export function browserMissing(): string | undefined {
  return existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is not installed (scripts/setup-system.sh installs Debian's chromium)`;
}

export async function launchBrowser(): Promise<{ browser: Browser; close(): Promise<void> }> {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
  return {
    browser,
    async close() {
      await browser.close().catch(() => undefined);
    },
  };
}
