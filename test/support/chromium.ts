import { existsSync } from 'node:fs';
import { chromium, type BrowserContext } from 'playwright-core';

/**
 * Debian's Chromium driven by playwright-core: the browser the web tests (the dashboard, the
 * backtest report) open pages in. `haveChromium` false skips them (apt-get install -y chromium).
 */
export const CHROMIUM = '/usr/bin/chromium';
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export const haveChromium = existsSync(CHROMIUM);

/** A headless Chromium with its profile in `profile` (a temporary directory the caller removes). */
export function launchChromium(profile: string, viewport = { width: 1280, height: 800 }): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, args: FLAGS, viewport });
}
