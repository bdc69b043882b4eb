import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jest } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { bearer, createUser, createWorkspace, json, login, type TestUser } from './support/factories.js';
import { startTestApp, type TestApp } from './support/test-app.js';
import { checkPage, describeWithBrowser, launchBrowser, signInInBrowser } from './support/web-browser.js';

/**
 * Settings › Webhooks in headless Chromium (issue 31): an admin adds an endpoint, sees its secret
 * once, sends a test event to a real receiver and reads the outcome of each delivery in words; an
 * editor can read the page but not change anything.
 */
describeWithBrowser('web interface: webhooks', () => {
  jest.setTimeout(60_000);
  let api: TestApp;
  let browser: Browser;
  let receiver: Server;
  let receiverUrl: string;
  const received: { path: string; headers: IncomingHttpHeaders; body: string }[] = [];
  let admin: TestUser;
  let editor: TestUser;

  beforeAll(async () => {
    receiver = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.push({ path: request.url ?? '/', headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
        response.writeHead(request.url === '/broken' ? 500 : 200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    api = await startTestApp({ WORKER_CONCURRENCY: '1', JOB_POLL_INTERVAL_MS: '100', WEBHOOK_RETRY_BASE_SECONDS: '0' });
    const workspace = await createWorkspace(api);
    admin = await createUser(api, workspace, { role: 'admin' });
    editor = await createUser(api, workspace, { role: 'editor' });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await api?.close();
    receiver?.closeAllConnections();
    await new Promise((resolve) => receiver?.close(resolve));
  });

  it('lets an admin add an endpoint, shows its secret once, and sends a signed test event whose outcome it shows', async () => {
    const { context, page } = await signInInBrowser(browser, api.baseUrl, admin);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
    await page.getByText('No webhooks yet').waitFor();
    await checkPage(page, 'webhooks-01-empty');

    // Without an event the API's refusal shows under the field.
    await page.getByLabel('Endpoint URL').fill(`${receiverUrl}/hook`);
    await page.getByRole('button', { name: 'Add webhook' }).click();
    await page.getByText('This list may not be empty.').waitFor();

    await page.getByLabel('An import finished').check();
    await page.getByLabel('A signal failed').check();
    await page.getByLabel('Description').fill('Integration team');
    await page.getByRole('button', { name: 'Add webhook' }).click();
    const secretField = page.getByLabel('Signing secret');
    await secretField.waitFor();
    const secret = await secretField.inputValue();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    await checkPage(page, 'webhooks-02-secret-once');
    await page.getByRole('button', { name: 'Done' }).click();
    await expect(secretField.count()).resolves.toBe(0);

    const row = page.getByRole('row').filter({ hasText: `${receiverUrl}/hook` });
    await row.getByText('An import finished').waitFor();
    await row.getByRole('button', { name: 'Send test event' }).click();
    const delivery = page
      .getByRole('table', { name: `Recent deliveries to ${receiverUrl}/hook` })
      .getByRole('row')
      .nth(1);
    await delivery.getByText('Received (200)').waitFor();
    await expect(delivery.getByText('Test event').count()).resolves.toBe(1);
    await checkPage(page, 'webhooks-03-test-delivered');

    // The secret the page showed is the one that signs.
    const [request] = received.filter((entry) => entry.path === '/hook');
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    const signature = createHmac('sha256', key)
      .update(`${String(request!.headers['webhook-id'])}.${String(request!.headers['webhook-timestamp'])}.${request!.body}`)
      .digest('base64');
    expect(request!.headers['webhook-signature']).toBe(`v1,${signature}`);
    // Reading the list again never shows it.
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
    await expect(page.getByText(secret).count()).resolves.toBe(0);
    await context.close();
  });

  it("shows a failed delivery's error in words, and stops and starts an endpoint", async () => {
    const auth = bearer((await login(api, admin)).access);
    expect((await api.request('/api/v1/webhooks/', json({ url: `${receiverUrl}/broken`, events: ['sync.failed'] }, auth))).status).toBe(
      201,
    );
    const { context, page } = await signInInBrowser(browser, api.baseUrl, admin);
    await page.goto(`${api.baseUrl}/app/settings/webhooks`);
    const row = page.getByRole('row').filter({ hasText: `${receiverUrl}/broken` });
    await row.getByRole('button', { name: 'Send test event' }).click();
    const deliveries = page.getByRole('table', { name: `Recent deliveries to ${receiverUrl}/broken` });
    await deliveries.getByText('The endpoint answered 500; only a 2xx counts as received.').waitFor();
    await expect(deliveries.getByText('failed', { exact: true }).count()).resolves.toBe(1);
    await checkPage(page, 'webhooks-04-test-failed');

    await row.getByRole('button', { name: 'Disable' }).click();
    await row.getByText('Turned off by an admin').waitFor();
    await row.getByRole('button', { name: 'Enable' }).click();
    await row.getByText('Enabled').waitFor();
    await context.close();
  });

  it('lets an editor read the page but change nothing, and keeps it out of their menu', async () => {
    const { context, page } = await signInInBrowser(browser, api.baseUrl, editor);
    await expect(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Webhooks' }).count()).resolves.toBe(0);
    await page.goto(`${api.baseUrl}/app/settings/webhooks`);
    await page.getByText('Only admins add or change webhooks; you can see them and their deliveries.').waitFor();
    await page
      .getByRole('row')
      .filter({ hasText: `${receiverUrl}/hook` })
      .waitFor();
    await expect(page.getByRole('button', { name: 'Add webhook' }).count()).resolves.toBe(0);
    await expect(page.getByRole('button', { name: /Send test event|Rotate secret|Delete/ }).count()).resolves.toBe(0);
    await checkPage(page, 'webhooks-05-editor');
    await context.close();
  });
});
