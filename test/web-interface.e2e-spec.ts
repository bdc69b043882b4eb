import { jest } from '@jest/globals';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { type FakeGoogleAds, startFakeGoogleAds } from './support/fake-ad-platforms.js';
import { bearer, createConnection, createUser, createWorkspace, login, send, type TestUser, type Workspace } from './support/factories.js';
import { authorizeInBrowser } from './support/browser.js';
import { startOidcProvider, type TestOidcProvider } from './support/oidc-provider.js';
import { freePort, type TestApp, startTestApp } from './support/test-app.js';
import { checkPage, describeWithBrowser, launchBrowser, saveScreenshot, signInInBrowser } from './support/web-browser.js';

/**
 * The web interface in a real browser (issue 14): headless Chromium against the real app, with
 * Google Ads played by the local fake of the connections suite. Every page is checked with axe
 * and photographed into test-artifacts/web/.
 */
describeWithBrowser('web interface in a browser', () => {
  jest.setTimeout(60_000);
  let google: FakeGoogleAds;
  let googleLogin: TestOidcProvider;
  let api: TestApp;
  let browser: Browser;
  let workspace: Workspace;
  let editor: TestUser;
  let viewer: TestUser;

  beforeAll(async () => {
    google = await startFakeGoogleAds();
    // Google sign-in is a real OpenID provider, which must know the app's callback page beforehand.
    const port = await freePort();
    const callback = `http://127.0.0.1:${port}/app/auth/callback/google-oauth2`;
    googleLogin = await startOidcProvider([callback]);
    api = await startTestApp(
      {
        SOCIAL_AUTH_ALLOWED_REDIRECT_URIS: callback,
        GOOGLE_OAUTH2_CLIENT_ID: googleLogin.clientId,
        GOOGLE_OAUTH2_CLIENT_SECRET: googleLogin.clientSecret,
        GOOGLE_OIDC_ISSUER: googleLogin.issuer,
        GOOGLE_ADS_CLIENT_ID: google.clientId,
        GOOGLE_ADS_CLIENT_SECRET: google.clientSecret,
        GOOGLE_ADS_DEVELOPER_TOKEN: google.developerToken,
        GOOGLE_ADS_AUTHORIZATION_URL: `${google.url}/o/oauth2/v2/auth`,
        GOOGLE_ADS_TOKEN_URL: `${google.url}/token`,
        GOOGLE_ADS_API_URL: google.url,
        GOOGLE_OAUTH_REVOKE_URL: `${google.url}/revoke`,
        CONNECTION_SWEEP_INTERVAL_SECONDS: '0',
        // An import's merge is a job: the Import page is watched until a worker has finished it.
        WORKER_CONCURRENCY: '1',
      },
      { port },
    );
    workspace = await createWorkspace(api);
    editor = await createUser(api, workspace, { role: 'editor' });
    viewer = await createUser(api, workspace, { role: 'viewer' });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await api?.close();
    await google?.close();
    await googleLogin?.close();
  });

  /** A fresh browser profile (its own cookies), signed in through the sign-in page. */
  const signedIn = (user: TestUser): Promise<{ context: BrowserContext; page: Page }> => signInInBrowser(browser, api.baseUrl, user);

  /** The page passes axe (no serious or critical violation) and is photographed as `name`. */
  const check = checkPage;

  const errorsOf = (page: Page, label: string) =>
    page.locator('.field', { has: page.getByRole('textbox', { name: label, exact: true }) }).locator('[data-field-error]');

  it('signs in with a password, and a wrong one is refused on the page', async () => {
    const context = await browser.newContext({ viewport: { width: 1366, height: 800 } });
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    await page.goto(`${api.baseUrl}/app/audiences`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await page.title()).toBe('Sign in · Audience and Signal Platform');
    await check(page, '01-sign-in');

    await page.getByLabel('Email').fill(editor.email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').getByText('No active account found with the given credentials.').waitFor();

    await page.getByLabel('Password').fill(editor.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Audiences' }).waitFor();
    await page.getByText('No audiences yet').waitFor();
    // The access token lives in memory only: nothing in web storage, and the cookie is HttpOnly.
    // (Evaluated in the page, as text: this file is compiled without the DOM's types.)
    expect(await page.evaluate('[localStorage.length, sessionStorage.length, document.cookie]')).toEqual([0, 0, '']);
    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({ name: 'audience_session', httpOnly: true, sameSite: 'Strict', path: '/app/session/' });
    await check(page, '02-audiences-empty');

    // A reload restores the session from the cookie.
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Audiences' }).waitFor();
    await context.close();
  });

  it('creates an audience, with the API’s validation messages beside their fields', async () => {
    const { context, page } = await signedIn(editor);
    await page.getByRole('link', { name: 'New audience' }).first().click();
    await page.getByRole('heading', { level: 1, name: 'New audience' }).waitFor();

    // The rules editor (issue 28): one condition, country is DE.
    await page.getByRole('button', { name: 'Add condition', exact: true }).click();
    const condition = page.getByRole('group', { name: 'Condition 1', exact: true });
    await condition.getByLabel('Trait', { exact: true }).fill('country');
    await condition.getByLabel('Value', { exact: true }).fill('DE');
    await page.getByRole('button', { name: 'Create audience' }).click();
    await errorsOf(page, 'Name').waitFor();
    expect(await errorsOf(page, 'Name').textContent()).toBe('This field may not be blank.');
    expect(await page.getByRole('textbox', { name: 'Name', exact: true }).getAttribute('aria-invalid')).toBe('true');
    await check(page, '03-audience-form-errors');

    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('Frequent buyers');
    await page.getByLabel('Description').fill('Bought three times in 90 days.');
    await page.getByRole('button', { name: 'Create audience' }).click();
    await page.getByRole('heading', { level: 1, name: 'Frequent buyers' }).waitFor();
    await page.getByText('The audience was created.').waitFor();
    await check(page, '04-audience-detail');

    // The same name again (unique per workspace, ignoring case): the API's message, beside the name.
    await page.goto(`${api.baseUrl}/app/audiences/new`);
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('FREQUENT BUYERS');
    await page.getByRole('button', { name: 'Create audience' }).click();
    await errorsOf(page, 'Name').waitFor();
    expect(await errorsOf(page, 'Name').textContent()).toMatch(/already/i);

    await page.getByRole('link', { name: 'Audiences', exact: true }).click();
    await page.getByRole('link', { name: 'Frequent buyers' }).waitFor();
    await page.getByLabel('Status').selectOption('archived');
    await page.getByText('Nothing matches').waitFor();
    await page.getByLabel('Status').selectOption('');
    await page.getByLabel('Search by name').fill('frequent');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: 'Frequent buyers' }).waitFor();
    expect(new URL(page.url()).search).toBe('?search=frequent');
    await check(page, '05-audiences-list');
    await context.close();
  });

  it('changes a signal’s status only as its state machine allows, and explains a refusal', async () => {
    const connection = await createConnection(api, workspace, { accountName: 'Shop DE' });
    const { access } = await login(api, editor);
    const created = await api.request('/api/v1/signals/', send('POST', { name: 'Purchases', signal_type: 'conversion' }, bearer(access)));
    const signal = (await created.json()) as { id: number };

    const { context, page } = await signedIn(editor);
    await page.getByRole('link', { name: 'Signals' }).click();
    await page.getByRole('link', { name: 'Purchases' }).click();
    await page.getByRole('heading', { level: 1, name: 'Purchases' }).waitFor();
    const statusButtons = () => page.getByRole('region', { name: 'Status' }).getByRole('button').allTextContents();
    expect(await statusButtons()).toEqual(['Activate', 'Archive']);

    // No connection yet: the API refuses, and says why.
    await page.getByRole('button', { name: 'Activate' }).click();
    await page.getByRole('region', { name: 'Status' }).getByRole('alert').waitFor();
    expect(await page.getByRole('region', { name: 'Status' }).getByRole('alert').textContent()).toMatch(/connection/i);
    await check(page, '06-signal-refused');

    await page.getByRole('combobox', { name: 'Connection' }).fill('shop de');
    await page.getByRole('option', { name: /^Shop DE/ }).click();
    // A Google connection's signal names its conversion action before it can be active (SPEC 10.4).
    await page.getByRole('textbox', { name: 'Configuration (JSON)' }).fill('{"conversion_action_id": "123456789"}');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Changes saved.').waitFor();
    await page.getByRole('button', { name: 'Activate' }).click();
    await page.getByText('Status changed to active.').waitFor();
    expect(await statusButtons()).toEqual(['Pause', 'Archive']);
    await page.getByRole('button', { name: 'Pause' }).click();
    await page.getByText('Status changed to paused.').waitFor();
    expect(await statusButtons()).toEqual(['Resume', 'Archive']);
    const stored = await api.request(`/api/v1/signals/${signal.id}/`, { headers: bearer(access) });
    expect(await stored.json()).toMatchObject({ status: 2, connection: connection.id });

    // Archiving asks first, then the signal is read-only.
    await page.getByRole('button', { name: 'Archive' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Archive' }).click();
    await page.getByText('Status changed to archived.').waitFor();
    expect(await statusButtons().catch(() => [])).toEqual([]);
    // Final: its values are shown as facts, not as a form.
    expect(await page.getByRole('textbox').count()).toBe(0);
    await page.getByRole('region', { name: 'Details' }).getByRole('definition').filter({ hasText: 'Purchases' }).waitFor();
    await check(page, '07-signal-archived');
    await context.close();
  });

  it('connects Google Ads through the provider and shows the new connections', async () => {
    google.accounts = [
      { id: '1111111111', name: 'Browser Shop DE' },
      { id: '2222222222', name: 'Browser Shop FR' },
    ];
    const { context, page } = await signedIn(editor);
    await page.getByRole('link', { name: 'Connections' }).click();
    await page.getByRole('heading', { level: 1, name: 'Connections' }).waitFor();
    await page.getByRole('button', { name: 'Connect Google Ads' }).click();
    await page.getByText('Connected 2 Google Ads accounts.').waitFor();
    await page.getByRole('cell', { name: /^Browser Shop DE/ }).waitFor();
    await page.getByRole('cell', { name: /^Browser Shop FR/ }).waitFor();
    // The outcome is shown once; the address is the plain page again, listing every platform.
    expect(new URL(page.url()).href).toBe(`${api.baseUrl}/app/connections`);
    expect(await page.getByLabel('Platform').inputValue()).toBe('');
    await check(page, '08-connections-connected');

    await page.getByRole('button', { name: 'Rename Browser Shop FR' }).click();
    await page.getByRole('dialog').getByLabel('Account name').fill('Shop France');
    await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click();
    await page.getByText('Connection renamed.').waitFor();
    await page.getByRole('cell', { name: /^Shop France/ }).waitFor();
    // Found by part of the account name, in any letter case.
    await page.getByLabel('Search by account name').fill('FRANCE');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/\?search=FRANCE$/);
    await page.getByText('1–1 of 1').waitFor();
    await page.getByRole('cell', { name: /^Shop France/ }).waitFor();
    await context.close();
  });

  it('creates an MCP token, copies its client configuration, and revokes it', async () => {
    const { context, page } = await signedIn(editor);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: api.baseUrl });
    await page.getByRole('link', { name: 'MCP tokens' }).click();
    await page.getByText('No tokens yet').waitFor();
    await page.getByLabel('Token name').fill('Claude on my laptop');
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.getByRole('heading', { name: 'Token “Claude on my laptop” created' }).waitFor();
    await check(page, '09-mcp-token-created');

    await page.getByRole('button', { name: 'Copy configuration' }).click();
    await page.getByText('Configuration copied to the clipboard.').waitFor();
    const copied = JSON.parse(await page.evaluate<string>('navigator.clipboard.readText()')) as {
      mcpServers: Record<string, { type: string; url: string; headers: { Authorization: string } }>;
    };
    const server = copied.mcpServers['audience-platform']!;
    expect(server.url).toBe(`${api.baseUrl}/mcp`);
    expect(server.headers.Authorization).toMatch(/^Bearer mcp_[A-Za-z0-9]+_[A-Za-z0-9_-]+$/);
    const tools = () =>
      api.request('/mcp', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: server.headers.Authorization,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
      });
    expect((await tools()).status).toBe(200);

    await page.getByRole('button', { name: 'Revoke Claude on my laptop' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
    await page.getByText('Token “Claude on my laptop” revoked').waitFor();
    await page.getByText('No tokens yet').waitFor();
    expect((await tools()).status).toBe(401);
    await context.close();
  });

  it('shows the account, and the models page', async () => {
    const { context, page } = await signedIn(editor);
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByText(editor.email, { exact: true }).first().waitFor();
    await check(page, '10-account');
    await page.getByRole('link', { name: 'AI models' }).click();
    await page.getByRole('link', { name: 'New model' }).first().click();
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('Churn Q4');
    await page.getByRole('textbox', { name: 'Base model' }).fill('gbm-v3');
    await page.getByLabel('Type').selectOption('churn');
    await page.getByRole('button', { name: 'Create model' }).click();
    await page.getByText('The model was created.').waitFor();
    await page.getByRole('button', { name: 'Start training' }).click();
    await page.getByText('Status changed to training.').waitFor();
    await check(page, '11-model-detail');
    await context.close();
  });

  it('signs out, after which the refresh cookie no longer works', async () => {
    const { context, page } = await signedIn(editor);
    const [cookie] = await context.cookies();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You are signed out.').waitFor();
    expect(await context.cookies()).toEqual([]);
    const refresh = await api.request('/app/session/refresh', {
      method: 'POST',
      headers: { 'x-requested-with': 'fetch', cookie: `${cookie!.name}=${cookie!.value}` },
    });
    expect(refresh.status).toBe(401);
    // And a reload lands on the sign-in page.
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await context.close();
  });

  /** The provider's own sign-in and consent pages, as a person fills them in. */
  async function signInAtGoogle(page: Page, login: string): Promise<void> {
    await page.locator('input[name="login"]').fill(login);
    await page.locator('input[name="password"]').fill('any password');
    await page.locator('button[type="submit"]').click();
    await page.getByRole('button', { name: 'Continue' }).click();
  }

  it('signs in with Google, and links a Google account from the Account page', async () => {
    googleLogin.accounts.set('ana-google', { email: editor.email, email_verified: true });
    const context = await browser.newContext({ viewport: { width: 1366, height: 800 } });
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    await page.goto(`${api.baseUrl}/app/`);
    await page.getByRole('button', { name: 'Continue with Google' }).click();
    await signInAtGoogle(page, 'ana-google');
    await page.getByRole('heading', { level: 1, name: 'Audiences' }).waitFor();
    await page.getByText(editor.email).first().waitFor();
    // The provider's code is not left in the address or the history.
    expect(new URL(page.url()).search).toBe('');
    // (The provider's own cookies sit beside it: cookies ignore ports, and both run on 127.0.0.1.)
    expect((await context.cookies()).map((cookie) => cookie.name)).toContain('audience_session');
    await context.close();

    // A viewer links a Google account whose email is not theirs, then signs in with it.
    googleLogin.accounts.set('vic-google', { email: 'vic.private@example.org', email_verified: true });
    const linking = await signedIn(viewer);
    await linking.page.getByRole('link', { name: 'Account' }).click();
    await linking.page.getByRole('button', { name: 'Link Google' }).click();
    await signInAtGoogle(linking.page, 'vic-google');
    await linking.page.getByText('Your Google account is linked').waitFor();
    await check(linking.page, '12-account-linked');
    await linking.page.getByRole('button', { name: 'Sign out' }).click();
    await linking.page.getByRole('button', { name: 'Continue with Google' }).click();
    // The provider remembers its own session now: it may ask only for consent, or nothing.
    await linking.page.waitForURL(/\/app\/(audiences|auth)|\/interaction\//);
    if (linking.page.url().includes('/interaction/')) {
      if (await linking.page.locator('input[name="login"]').count()) await signInAtGoogle(linking.page, 'vic-google');
      else await linking.page.getByRole('button', { name: 'Continue' }).click();
    }
    await linking.page.getByRole('heading', { level: 1, name: 'Audiences' }).waitFor();
    await linking.page.getByText(viewer.email).first().waitFor();
    await linking.context.close();
  });

  it('refuses a callback this browser did not start: another person’s code and state do not sign it in', async () => {
    // Mallory starts a sign-in with her own Google account and stops before her page finishes it.
    googleLogin.accounts.set('mallory-google', { email: editor.email, email_verified: true });
    const redirect = `${api.baseUrl}/app/auth/callback/google-oauth2`;
    const start = await api.request(`/api/v1/auth/o/google-oauth2/?redirect_uri=${encodeURIComponent(redirect)}`);
    const { authorization_url } = (await start.json()) as { authorization_url: string };
    const forged = await authorizeInBrowser(authorization_url, redirect, { login: 'mallory-google' });
    // The victim opens her link.
    const context = await browser.newContext({ viewport: { width: 1366, height: 800 } });
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    await page.goto(forged.href);
    await page.getByRole('alert').getByText('was not started here').waitFor();
    expect(new URL(page.url()).search).toBe('');
    expect((await context.cookies()).map((cookie) => cookie.name)).not.toContain('audience_session');
    await saveScreenshot(page, '13-social-callback-refused');
    // Its Back button starts the app afresh, at the sign-in page.
    await page.getByRole('button', { name: 'Back' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await context.close();
  });

  it('takes only a number as an object’s id in the address', async () => {
    const { context, page } = await signedIn(editor);
    await page.goto(`${api.baseUrl}/app/signals/..%2Fconnections%2F1`);
    await page.getByRole('heading', { name: 'Page not found' }).waitFor();
    expect(await page.getByRole('button', { name: /Delete/ }).count()).toBe(0);
    await context.close();
  });

  it('finds a person by external id, shows none of their identifiers, and erases them after a confirmation', async () => {
    const { access } = await login(api, editor);
    const identifiers = {
      email: 'ada.lovelace@example.com',
      phone: '+15551234567',
      first_name: 'Augusta',
      last_name: 'Lovelace',
      country_code: 'US',
      postal_code: '94043',
    };
    const seeded = await api.request(
      '/api/v1/people/batch/',
      send(
        'POST',
        {
          people: [
            {
              external_id: 'crm-1001',
              identifiers,
              traits: { plan: 'pro', ltv: 420.5 },
              consent: { ad_user_data: 'granted', ad_personalization: 'denied' },
            },
            { external_id: 'crm-1002', identifiers: { email: 'grace.hopper@example.com' } },
            { external_id: 'crm-1003', identifiers: { phone: '+447700900123' } },
          ],
        },
        bearer(access),
      ),
    );
    expect(await seeded.json()).toMatchObject({ created: 3, updated: 0, rejected: [] });
    const raw = [...Object.values(identifiers).slice(0, 4), '5551234567', 'grace.hopper@example.com', '447700900123'];
    const showsNoIdentifier = async (page: Page) => {
      const html = await page.content();
      for (const value of raw) expect(html).not.toContain(value);
    };

    const { context, page } = await signedIn(editor);
    await page.getByRole('link', { name: 'People' }).click();
    await page.getByRole('link', { name: 'crm-1003' }).waitFor();
    await page.getByLabel('Find by external id').fill('crm-1001');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/\?external_id=crm-1001$/);
    await page.getByText('1–1 of 1').waitFor();
    await showsNoIdentifier(page);
    await check(page, '16-people-found');

    await page.getByRole('link', { name: 'crm-1001' }).click();
    await page.getByRole('heading', { level: 1, name: 'crm-1001' }).waitFor();
    const keys = page.getByRole('region', { name: 'Matched keys' }).getByRole('listitem');
    expect(await keys.allTextContents()).toEqual(['Email', 'Phone', 'Name and address']);
    await page.getByRole('region', { name: 'Traits' }).getByRole('row', { name: 'plan pro' }).waitFor();
    await showsNoIdentifier(page);
    await check(page, '17-person-detail');

    // The API answers codes; the page says them in words, beside their field.
    await page.getByRole('textbox', { name: 'External id' }).fill('crm-1002');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await errorsOf(page, 'External id').waitFor();
    expect(await errorsOf(page, 'External id').textContent()).toBe('Another person in this workspace already has this external id.');
    await page.getByRole('textbox', { name: 'External id' }).fill('crm-1001');

    // An edit through PATCH: a trait taken out of the text is removed, consent changes.
    await page.getByLabel('Ad personalization').selectOption('granted');
    await page.getByLabel('Traits (JSON)').fill('{"plan": "team"}');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Changes saved.').waitFor();
    const person = (await (await api.request('/api/v1/people/?external_id=crm-1001', { headers: bearer(access) })).json()) as {
      results: { id: number; traits: object; consent: object }[];
    };
    expect(person.results[0]).toMatchObject({
      traits: { plan: 'team' },
      consent: { ad_user_data: 'granted', ad_personalization: 'granted' },
    });
    expect(person.results[0]!.traits).not.toHaveProperty('ltv');
    const { id } = person.results[0]!;

    // A viewer reads the same person with no way to change or delete them.
    const viewing = await signedIn(viewer);
    await viewing.page.goto(`${api.baseUrl}/app/people/${id}`);
    await viewing.page.getByRole('heading', { level: 1, name: 'crm-1001' }).waitFor();
    expect(await viewing.page.getByRole('button').allTextContents()).toEqual(['Sign out']);
    await showsNoIdentifier(viewing.page);
    await check(viewing.page, '18-viewer-person');
    await viewing.context.close();

    await page.getByRole('button', { name: 'Delete person' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete “crm-1001”?' });
    await dialog.getByText(/leave every audience.*next sync removes them.*no hash of them is kept/).waitFor();
    await check(page, '19-person-erase-dialog');
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('The person was erased.').waitFor();
    await page.getByRole('link', { name: 'crm-1002' }).waitFor();
    expect(await page.getByRole('link', { name: 'crm-1001' }).count()).toBe(0);
    expect((await api.request(`/api/v1/people/${id}/`, { headers: bearer(access) })).status).toBe(404);
    await context.close();
  });

  it('imports a CSV file from the People page, follows it to the end, and shows the rejects without an identifier', async () => {
    const csv = [
      'external_id,email,phone,first_name,last_name,country_code,plan,ltv:number',
      'imp-1,lin.clark@example.com,,Lin,Clark,US,gold,12.5',
      'imp-2,,+15557654321,,,,silver,',
      'imp-3,mo.diaz@example.org,,,,,bronze,3',
      'imp-4,not-an-email,,,,,gold,',
      ',,,,,,silver,',
    ].join('\n');
    const raw = ['lin.clark@example.com', 'mo.diaz@example.org', 'not-an-email', '5557654321'];

    const { context, page } = await signedIn(editor);
    await page.getByRole('link', { name: 'People', exact: true }).click();
    await page.getByRole('link', { name: 'Import people' }).click();
    await page.getByRole('heading', { level: 1, name: 'Imports' }).waitFor();
    await page.getByText('No imports yet').waitFor();
    await check(page, '20-imports-empty');

    // No file chosen: the page says so instead of sending an empty body.
    await page.getByRole('button', { name: 'Upload and import' }).click();
    await page.getByRole('alert').getByText('Choose a CSV file to import.').waitFor();

    await page.getByLabel('CSV file').setInputFiles({ name: 'people.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.getByRole('button', { name: 'Upload and import' }).click();
    await page.waitForURL(/\/app\/imports\/\d+$/);
    await page.getByText('Succeeded: every accepted row was applied').waitFor({ timeout: 30_000 });
    const facts = page.getByRole('region', { name: 'Progress' });
    const counts = await facts.locator('dt, dd').allTextContents();
    expect(counts.slice(0, 6)).toEqual(['Rows read', '5', 'Accepted', '3', 'Rejected', '2']);
    const reasons = page.getByRole('region', { name: 'Rejected rows by reason' });
    await reasons.getByRole('row', { name: 'Invalid email address 1' }).waitFor();
    await reasons.getByRole('row', { name: 'No external id, and no email or phone to derive one from 1' }).waitFor();
    const lines = page.getByRole('region', { name: 'Rejected lines' }).getByRole('rowheader');
    expect(await lines.allTextContents()).toEqual(['5', '6']);
    const html = await page.content();
    for (const value of raw) expect(html).not.toContain(value);
    await check(page, '21-import-succeeded');

    const { access } = await login(api, editor);
    const imported = (await (await api.request('/api/v1/people/?external_id=imp-1', { headers: bearer(access) })).json()) as {
      results: { traits: object }[];
    };
    expect(imported.results[0]).toMatchObject({ traits: { plan: 'gold', ltv: 12.5 } });

    await page.getByRole('link', { name: 'All imports' }).click();
    const listed = page.getByRole('region', { name: 'Recent imports' }).getByRole('row').nth(1);
    // The list loads after the navigation: wait for its first row before reading the cells.
    await listed.getByRole('link', { name: /^Import \d+$/ }).waitFor();
    expect(await listed.getByRole('cell').allTextContents()).toEqual([
      expect.stringMatching(/^Import \d+$/),
      'Succeeded',
      '5',
      '3',
      '2',
      expect.any(String),
    ]);
    await check(page, '22-imports-list');
    await context.close();

    // A viewer reads the imports, with no way to upload one.
    const viewing = await signedIn(viewer);
    await viewing.page.getByRole('link', { name: 'People', exact: true }).click();
    await viewing.page.getByRole('heading', { level: 1, name: 'People' }).waitFor();
    expect(await viewing.page.getByRole('link', { name: 'Import people' }).count()).toBe(0);
    await viewing.page.getByRole('link', { name: 'Imports', exact: true }).click();
    await viewing.page.getByRole('link', { name: /^Import \d+$/ }).waitFor();
    expect(await viewing.page.locator('input[type=file]').count()).toBe(0);
    expect(await viewing.page.getByRole('button', { name: 'Upload and import' }).count()).toBe(0);
    await check(viewing.page, '23-viewer-imports');
    await viewing.context.close();
  });

  it('shows a viewer no write controls', async () => {
    const { context, page } = await signedIn(viewer);
    await page.getByRole('link', { name: 'Frequent buyers' }).waitFor();
    expect(await page.getByRole('link', { name: 'New audience' }).count()).toBe(0);
    await check(page, '14-viewer-audiences');

    await page.getByRole('link', { name: 'Frequent buyers' }).click();
    await page.getByRole('heading', { level: 1, name: 'Frequent buyers' }).waitFor();
    expect(await page.getByRole('button').allTextContents()).toEqual(['Sign out']);
    expect(await page.getByRole('textbox').count()).toBe(0);

    await page.getByRole('link', { name: 'Connections' }).click();
    await page.getByRole('cell', { name: /^Shop France/ }).waitFor();
    expect(await page.getByRole('button').allTextContents()).toEqual(['Sign out', 'Search', 'Previous', 'Next']);
    await check(page, '15-viewer-connections');

    // A page a viewer cannot use is refused cleanly, not broken.
    await page.goto(`${api.baseUrl}/app/signals/new`);
    await page.getByRole('alert').getByText('Viewers cannot create items.').waitFor();
    await context.close();
  });
});
