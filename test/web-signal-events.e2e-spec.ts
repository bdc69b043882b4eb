import { jest } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { bearer, createUser, createWorkspace, login, send, type TestUser, type Workspace } from './support/factories.js';
import { type FakeGoogleAds, type FakeMetaAds, startFakeGoogleAds, startFakeMetaAds } from './support/fake-ad-platforms.js';
import { createTokenConnection } from './support/signal-events.js';
import { startTestApp, type TestApp } from './support/test-app.js';
import { checkPage, describeWithBrowser, launchBrowser, signInInBrowser } from './support/web-browser.js';

/**
 * Issue 30 in the web interface, in a real browser: a marketer sends events and sees them arrive
 * and be delivered on the signal's page (counts, recent events with their status, the last error
 * in words), the test-mode mark of a Meta signal with a test event code, and a failed signal's
 * reason. Delivery runs in the app's own job worker against the local platform servers.
 */
describeWithBrowser('web interface: signal delivery (issue 30)', () => {
  jest.setTimeout(90_000);
  let api: TestApp;
  let browser: Browser;
  let google: FakeGoogleAds;
  let meta: FakeMetaAds;
  let workspace: Workspace;
  let editor: TestUser;
  let auth: Record<string, string>;

  const call = async (method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown) => {
    const response = await api.request(path, send(method, body, auth));
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };
  const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();

  beforeAll(async () => {
    google = await startFakeGoogleAds();
    meta = await startFakeMetaAds();
    api = await startTestApp({
      GOOGLE_DATA_MANAGER_URL: google.url,
      META_GRAPH_URL: `${meta.url}/v25.0`,
      META_APP_ID: meta.appId,
      META_APP_SECRET: meta.appSecret,
      WORKER_CONCURRENCY: '1',
      JOB_POLL_INTERVAL_MS: '100',
      SYNC_RETRY_BASE_SECONDS: '0',
    });
    workspace = await createWorkspace(api);
    editor = await createUser(api, workspace, { role: 'editor' });
    auth = bearer((await login(api, editor)).access);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await api?.close();
    await google?.close();
    await meta?.close();
  });

  it('shows events arriving and being delivered, the one Meta refused with its reason in words, and the test-mode mark', async () => {
    const connection = await createTokenConnection(api, workspace, 'meta_ads', meta.issueAccessToken());
    meta.conversions.pixels.add('4242424242');
    const signal = await call('POST', '/api/v1/signals/', {
      name: 'Purchases to Meta',
      signal_type: 'value',
      connection: connection.id,
      config: { pixel_id: '4242424242', event_name: 'Purchase', action_source: 'system_generated', test_event_code: 'TEST777' },
      status: 1,
    });
    expect(signal.status).toBe(201);

    const { page, context } = await signInInBrowser(browser, api.baseUrl, editor);
    await page.goto(`${api.baseUrl}/app/signals/${signal.body.id}`);
    const panel = page.getByRole('region', { name: /Delivery/ });
    await panel.getByText('Test mode', { exact: true }).waitFor();
    await panel.getByText(/No events yet/).waitFor();

    const sent = await call('POST', `/api/v1/signals/${signal.body.id}/events/`, {
      events: [
        { event_id: 'order-1', event_time: minutesAgo(5), value: 20, currency: 'EUR', identifiers: { email: 'ada@example.com' } },
        { event_id: 'order-2', event_time: minutesAgo(4), value: 35.5, currency: 'EUR', fbp: 'fb.1.1700000000000.42' },
        { event_id: 'order-3', event_time: minutesAgo(3), fbc: 'broken-click-id' },
      ],
    });
    expect(sent.body).toMatchObject({ accepted: 3, rejected: [] });

    // The page reads again by itself: the counts and statuses follow the worker.
    const count = (label: string) => panel.locator('dt', { hasText: label }).locator('xpath=following-sibling::dd[1]');
    await panel.locator('dt:has-text("Delivered") + dd', { hasText: /^2$/ }).waitFor({ timeout: 30_000 });
    expect(await count('Received').textContent()).toBe('3');
    expect(await count('Failed').textContent()).toBe('1');
    expect(await count('Pending').textContent()).toBe('0');
    const rows = panel.getByRole('table', { name: 'Recent events' }).locator('tbody tr');
    await rows.locator('.badge-delivered').nth(1).waitFor({ timeout: 30_000 });
    expect(await rows.count()).toBe(3);
    const refused = rows.filter({ hasText: 'order-3' });
    expect(await refused.locator('.badge').textContent()).toBe('failed');
    expect(await refused.textContent()).toContain('refused an event as invalid');
    await panel.getByText(/Last error:/).waitFor();
    expect(await panel.locator('.delivery-error').textContent()).toMatch(/refused an event as invalid.*fbc is malformed/);
    expect(meta.conversions.requests.every((request) => request.testEventCode === 'TEST777')).toBe(true);
    await checkPage(page, 'signals-01-delivery');
    await context.close();
  });

  it('explains in words why a signal failed when Google refuses its conversion action', async () => {
    const connection = await createTokenConnection(api, workspace, 'google_ads', google.issueAccessToken());
    google.accounts = [{ id: connection.externalAccountId, name: 'Shop' }];
    const signal = await call('POST', '/api/v1/signals/', {
      name: 'Purchases to Google',
      signal_type: 'conversion',
      connection: connection.id,
      config: { conversion_action_id: '999000111' },
      status: 1,
    });
    await call('POST', `/api/v1/signals/${signal.body.id}/events/`, {
      events: [{ event_id: 'lost-1', event_time: minutesAgo(1), gclid: 'gclid-1' }],
    });
    const { page, context } = await signInInBrowser(browser, api.baseUrl, editor);
    await page.goto(`${api.baseUrl}/app/signals/${signal.body.id}`);
    const panel = page.getByRole('region', { name: /Delivery/ });
    await panel.getByText('This signal failed.').waitFor({ timeout: 30_000 });
    expect(await panel.textContent()).toContain('the conversion action or pixel does not exist');
    expect(await panel.getByText('Test mode', { exact: true }).count()).toBe(0);
    await panel.locator('tbody .badge-held').first().waitFor({ timeout: 30_000 });
    await checkPage(page, 'signals-02-failed');
    await context.close();
  });
});
