import { jest } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { type FakeGoogleAds, startFakeGoogleAds } from './support/fake-ad-platforms.js';
import { bearer, createConnection, createUser, createWorkspace, login, type TestUser, type Workspace } from './support/factories.js';
import { type TestApp, startTestApp } from './support/test-app.js';
import { checkPage, describeWithBrowser, launchBrowser, signInInBrowser } from './support/web-browser.js';

const ADWORDS = 'https://www.googleapis.com/auth/adwords';
const DATAMANAGER = 'https://www.googleapis.com/auth/datamanager';

interface ConnectionBody {
  id: number;
  external_account_id: string;
  status_reason: string | null;
  reauthorize_required: boolean;
  scopes: string[];
  customer_match_terms_accepted: boolean;
}

/**
 * The Connections page and SPEC 10.3 in a real browser: a Google grant without the Data Manager
 * permission is explained to the marketer with the Reconnect button that fixes it, and an admin
 * accepts the Customer Match terms with a checkbox. Google is the local fake; the policy link is
 * checked, never followed.
 */
describeWithBrowser('the Connections page: Google permissions and Customer Match terms', () => {
  jest.setTimeout(60_000);
  let google: FakeGoogleAds;
  let api: TestApp;
  let browser: Browser;
  let workspace: Workspace;
  let editor: TestUser;
  let admin: TestUser;

  beforeAll(async () => {
    google = await startFakeGoogleAds();
    api = await startTestApp({
      GOOGLE_ADS_CLIENT_ID: google.clientId,
      GOOGLE_ADS_CLIENT_SECRET: google.clientSecret,
      GOOGLE_ADS_DEVELOPER_TOKEN: google.developerToken,
      GOOGLE_ADS_AUTHORIZATION_URL: `${google.url}/o/oauth2/v2/auth`,
      GOOGLE_ADS_TOKEN_URL: `${google.url}/token`,
      GOOGLE_ADS_API_URL: google.url,
      GOOGLE_OAUTH_REVOKE_URL: `${google.url}/revoke`,
      CONNECTION_SWEEP_INTERVAL_SECONDS: '0',
    });
    workspace = await createWorkspace(api);
    editor = await createUser(api, workspace, { role: 'editor' });
    admin = await createUser(api, workspace, { role: 'admin' });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await api?.close();
    await google?.close();
  });

  async function connectionOf(accountId: string): Promise<ConnectionBody> {
    const response = await api.request('/api/v1/connections/?page_size=100', { headers: bearer((await login(api, admin)).access) });
    return ((await response.json()) as { results: ConnectionBody[] }).results.find((row) => row.external_account_id === accountId)!;
  }

  it('says a Google account lacks the audience permission, and Reconnect with every permission fixes the same connection', async () => {
    google.accounts = [{ id: '3131313131', name: 'Half Granted Shop' }];
    google.consent = [ADWORDS];
    const { context, page } = await signedIn(editor);
    await page.getByRole('link', { name: 'Connections' }).click();
    await page.getByRole('button', { name: 'Connect Google Ads' }).click();
    await page.getByText('Connected 1 Google Ads account.').waitFor();
    const row = page.getByRole('row', { name: /Half Granted Shop/ });
    await row.getByText('Google did not give us permission to upload audience lists. Reconnect and allow every permission').waitFor();
    await row.getByText('until an admin accepts them').waitFor();
    // An editor may reconnect, but the terms are an admin's.
    expect(await row.getByRole('button', { name: /Customer Match terms/ }).count()).toBe(0);
    await checkPage(page, '30-connections-scope-missing');
    const before = await connectionOf('3131313131');
    expect(before).toMatchObject({ status_reason: 'scope_missing', reauthorize_required: true, scopes: [ADWORDS] });

    google.consent = [ADWORDS, DATAMANAGER];
    // The first connect's notice is still on this page: wait for the page Google's callback sends back to.
    const returned = page.waitForURL(/[?&]connected=1(&|$)/, { waitUntil: 'commit' });
    await row.getByRole('button', { name: 'Reconnect Half Granted Shop' }).click();
    await returned;
    await page.getByText('Connected 1 Google Ads account.').waitFor();
    await page.getByRole('cell', { name: /^Half Granted Shop/ }).waitFor();
    expect(await page.getByText('permission to upload audience lists').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Reconnect Half Granted Shop' }).count()).toBe(0);
    expect(await connectionOf('3131313131')).toMatchObject({
      id: before.id,
      status_reason: null,
      reauthorize_required: false,
      scopes: [ADWORDS, DATAMANAGER],
    });
    await context.close();
  });

  it('lets an admin accept the Customer Match terms with a checkbox, after reading where Google’s policy is', async () => {
    await createConnection(api, workspace, { accountName: 'Terms Shop' });
    await createConnection(api, workspace, { accountName: 'Meta Shop', platform: 'meta_ads' });
    const { context, page } = await signedIn(admin);
    await page.goto(`${api.baseUrl}/app/connections`);
    const row = page.getByRole('row', { name: /Terms Shop/ });
    await row.getByText('Customer Match terms not accepted yet: audiences cannot sync to this account until you accept them.').waitFor();
    // Meta has no Customer Match terms: nothing to accept there.
    const metaRow = page.getByRole('row', { name: /Meta Shop/ });
    await metaRow.waitFor();
    expect(await metaRow.getByText(/Customer Match/).count()).toBe(0);

    await row.getByRole('button', { name: 'Customer Match terms of Terms Shop' }).click();
    const dialog = page.getByRole('dialog', { name: 'Customer Match terms' });
    const policy = dialog.getByRole('link', { name: 'Google’s Customer Match policy' });
    expect(await policy.getAttribute('href')).toBe('https://support.google.com/adspolicy/answer/6299717');
    expect(await policy.getAttribute('rel')).toBe('noopener noreferrer');
    const checkbox = dialog.getByRole('checkbox', { name: 'My organisation accepts Google’s Customer Match terms for this account' });
    expect(await checkbox.isChecked()).toBe(false);
    await checkPage(page, '31-connections-customer-match-terms');
    await checkbox.check();
    await dialog.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Customer Match terms accepted.', { exact: true }).first().waitFor();
    await row.getByText('Customer Match terms accepted.').waitFor();
    const accountId = (await page.getByRole('cell', { name: /^Terms Shop/ }).textContent())!.match(/(\d{5,})/)![1]!;
    expect((await connectionOf(accountId)).customer_match_terms_accepted).toBe(true);

    // Opened again, it shows the accepted state, and unticking withdraws it.
    await row.getByRole('button', { name: 'Customer Match terms of Terms Shop' }).click();
    expect(await checkbox.isChecked()).toBe(true);
    await checkbox.uncheck();
    await dialog.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Customer Match terms withdrawn.').waitFor();
    expect((await connectionOf(accountId)).customer_match_terms_accepted).toBe(false);
    await context.close();
  });

  const signedIn = (user: TestUser) => signInInBrowser(browser, api.baseUrl, user);
});
