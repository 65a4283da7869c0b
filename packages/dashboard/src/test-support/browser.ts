// Headless Chromium for the dashboard's browser tests: Debian's /usr/bin/chromium driven by playwright-core
// (scripts/install-services.sh installs it when missing).
import { type Browser, chromium } from 'playwright-core';

/** Where Debian installs Chromium. */
export const CHROMIUM_PATH = process.env.KEEL_CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Launches one headless browser (close it in afterAll). */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true });
}
