import { existsSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { chromium } from 'playwright-core';

/** Debian's Chromium (test/services/chromium.sh installs it in CI). */
export const CHROMIUM = '/usr/bin/chromium';

/** Locally a missing browser skips a suite; CI installs it and must run it. */
export const browserSkip: string | false =
  !existsSync(CHROMIUM) && process.env.CI !== 'true' ? `${CHROMIUM} is not installed (run test/services/chromium.sh)` : false;

/** Headless Chromium with nothing of its own going to the network. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export interface Person {
  readonly tenant: string;
  readonly email: string;
  readonly password: string;
}

/**
 * What a person does on the gateway's pages once a client opened its authorization URL: sign
 * in, then on the consent page connect the client as `agent` and allow. Returns the consent
 * page's scope list as shown.
 */
export async function signInAndConsent(page: Page, clientName: string, person: Person, agent: string): Promise<string> {
  await page.waitForSelector(`text=Sign in to connect ${clientName}`);
  await page.fill('input[name=tenant]', person.tenant);
  await page.fill('input[name=email]', person.email);
  await page.fill('input[name=password]', person.password);
  await page.click('button[type=submit]');
  await page.waitForSelector(`text=Connect ${clientName}?`);
  const scopes = (await page.locator('.scopes').textContent()) ?? '';
  await page.check(`label.choice:has-text(${JSON.stringify(agent)}) input[type=radio]`);
  await page.click('button[value=approve]');
  return scopes;
}
