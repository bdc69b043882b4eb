import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type * as Axe from 'axe-core';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/**
 * A real browser for the web interface tests: Debian's Chromium (or CHROMIUM_PATH), driven by
 * playwright-core, which downloads no browser of its own. Where there is no Chromium, those
 * tests are skipped rather than failed, so the rest of the suite runs on any machine.
 */

/** Where Chromium is: CHROMIUM_PATH when set and present, else Debian's package, else none. */
export function chromiumPath(): string | undefined {
  const fromEnv = process.env.CHROMIUM_PATH;
  if (fromEnv && existsSync(fromEnv)) return fromEnv;
  return existsSync('/usr/bin/chromium') ? '/usr/bin/chromium' : undefined;
}

let skipNoticeWritten = false;

/** `describe`, or `describe.skip` with one line on stderr when there is no Chromium to run it in. */
export function describeWithBrowser(name: string, fn: () => void): void {
  if (chromiumPath()) {
    describe(name, fn);
    return;
  }
  if (!skipNoticeWritten) {
    skipNoticeWritten = true;
    process.stderr.write("web interface tests skipped: no Chromium (set CHROMIUM_PATH or install Debian's chromium)\n");
  }
  describe.skip(name, fn);
}

/**
 * Headless Chromium that stays off the network (the machine may have none, and a test must not
 * depend on Google's services): no background fetches, component updates, sync or QUIC. No
 * sandbox, because tests may run as root in a container. Close it in afterAll.
 */
export async function launchBrowser(): Promise<Browser> {
  const executablePath = chromiumPath();
  if (!executablePath) throw new Error("no Chromium (set CHROMIUM_PATH or install Debian's chromium)");
  return chromium.launch({
    executablePath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-quic',
      '--disable-sync',
    ],
  });
}

const artifacts = fileURLToPath(new URL('../../test-artifacts/web/', import.meta.url));

/** A full-page PNG in test-artifacts/web/<name>.png, to look at what a test saw; returns its path. */
export async function saveScreenshot(page: Page, name: string): Promise<string> {
  await mkdir(artifacts, { recursive: true });
  const path = `${artifacts}${name}.png`;
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** One axe violation, short enough to read in a failed assertion. */
export interface AxeViolation {
  id: string;
  impact: string;
  help: string;
  /** The first few elements at fault, as CSS selectors (iframe and shadow hosts first). */
  targets: string[];
}

let axeSource: Promise<string> | undefined;

/**
 * axe-core's violations in the page at the given impacts. The pages under test forbid inline
 * script (CSP `script-src 'self'`), so a script tag with axe's source would be blocked; a page
 * evaluation comes over the DevTools protocol, which CSP does not govern, so axe goes in that way.
 */
export async function axeViolations(page: Page, impacts: Axe.ImpactValue[] = ['serious', 'critical']): Promise<AxeViolation[]> {
  axeSource ??= readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  const source = await axeSource;
  // Once per document: a navigation drops it, a second copy in the same document is not needed.
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(source);
  const results = await page.evaluate(() => (globalThis as unknown as { axe: typeof Axe }).axe.run({ resultTypes: ['violations'] }));
  return results.violations
    .filter((violation) => violation.impact && impacts.includes(violation.impact))
    .map((violation) => ({
      id: violation.id,
      impact: violation.impact!,
      help: violation.help,
      targets: violation.nodes.slice(0, 3).map((node) => node.target.join(' ')),
    }));
}

/** Fails with the list of serious and critical accessibility violations in the page, if any. */
export async function expectNoSeriousAxeViolations(page: Page): Promise<void> {
  expect(await axeViolations(page)).toEqual([]);
}

/** A fresh browser profile (its own cookies) at `viewport`, signed in through the sign-in page of the app at `baseUrl`. */
export async function signInInBrowser(
  browser: Browser,
  baseUrl: string,
  user: { email: string; password: string },
  viewport = { width: 1366, height: 800 },
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport });
  context.setDefaultTimeout(10_000);
  const page = await context.newPage();
  await page.goto(`${baseUrl}/app/`);
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Audiences' }).waitFor();
  return { context, page };
}

/** The page, once its requests have settled, passes axe (no serious or critical violation) and is photographed as `name`. */
export async function checkPage(page: Page, name: string): Promise<void> {
  await page.waitForLoadState('networkidle');
  await saveScreenshot(page, name);
  await expectNoSeriousAxeViolations(page);
}
