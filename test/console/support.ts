import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser as Chromium, BrowserContext, Page } from 'playwright-core';
import type { OAuthGateway } from '../oauth/support.ts';
import { Browser, PASSWORD, setPassword, startOAuthGateway } from '../oauth/support.ts';
import { seedOrg } from '../support/gateway.ts';
import { s3GatewayEnv } from '../support/harness.ts';
import type { StoreBackend, TestStore } from '../support/stores.ts';
import { drainedOutbox } from '../support/gateway.ts';

/**
 * The console under test: a gateway listening on a real port whose public URL is its address
 * (so Origin checks and cookies are real), over a seeded store, and people with passwords.
 * Browser suites drive it in headless Chromium; the rest with the fetch `Browser` of the OAuth
 * suites (one cookie, redirects left to the test). On PostgreSQL it keeps file bytes in S3 where
 * the suites have one (KGW_TEST_S3_ENDPOINT, as CI does), so a browser's uploads go to S3's
 * presigned URLs, across origins, as they do in production.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface ConsoleGateway extends OAuthGateway {
  readonly store: TestStore;
}

export async function startConsole(backend: StoreBackend, org: string, people: readonly { tenant: string; email: string }[]): Promise<ConsoleGateway> {
  const store = await backend.open({ migrated: true });
  await seedOrg(store.db, org);
  for (const person of people) await setPassword(store.db, person.tenant, person.email, PASSWORD);
  const gateway = await startOAuthGateway(store.db, s3GatewayEnv(backend));
  await drainedOutbox(store.db);
  return {
    ...gateway,
    store,
    async close() {
      await gateway.close();
      await store.dispose();
    },
  };
}

/** A fetch browser signed in to the console as `email`. */
export async function signedInFetch(base: string, tenant: string, email: string): Promise<Browser> {
  const browser = new Browser(base);
  const signedIn = await browser.request('/console/signin', { form: { tenant, email, password: PASSWORD }, headers: { origin: new URL(base).origin } });
  assert.equal(signedIn.status, 303, signedIn.text);
  assert.equal(signedIn.location, `${base}/console/inbox`);
  return browser;
}

/** The hidden csrf field of a console page. */
export function csrfOf(page: string): string {
  const match = /name="csrf" value="([^"]+)"/.exec(page);
  assert.ok(match, 'a csrf field on the page');
  return match[1]!;
}

/** A Chromium page signed in to the console as `email` (through the sign-in form, as a person would). */
export async function signedInPage(chromium: Chromium, base: string, tenant: string, email: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await chromium.newContext();
  const page = await context.newPage();
  await page.goto(`${base}/console`);
  await page.getByLabel(/Organisation/).fill(tenant);
  await page.getByLabel(/^(Email|E-Mail)/).fill(email);
  await page.getByLabel(/^(Password|Passwort)/).fill(PASSWORD);
  await page.getByRole('button', { name: /^(Sign in|Anmelden)$/ }).click();
  await page.waitForURL(`${base}/console/inbox`);
  return { context, page };
}

const AXE = await readFile(path.join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

interface AxeViolation {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly nodes: readonly { readonly target: readonly string[] }[];
}

/**
 * axe-core's serious and critical violations on the page (WCAG 2.2 A and AA rules). axe is
 * evaluated through the DevTools protocol, which the page's CSP does not govern, so the page
 * is checked exactly as it is served.
 */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(options: object): Promise<{ violations: AxeViolation[] }> } }).axe;
    const result = await axe.run({ runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'] } });
    return result.violations;
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** Keeps a screenshot of the page as a test artefact (test-artifacts/console/NAME.png). */
export async function keepScreenshot(page: Page, name: string): Promise<void> {
  const folder = path.join(ROOT, 'test-artifacts', 'console');
  await mkdir(folder, { recursive: true });
  await writeFile(path.join(folder, `${name}.png`), await page.screenshot({ fullPage: true }));
}
