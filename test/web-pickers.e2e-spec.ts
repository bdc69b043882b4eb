import { jest } from '@jest/globals';
import type { Browser, Locator, Page } from 'playwright-core';
import {
  bearer,
  createConnection,
  createModelInstance,
  createUser,
  createWorkspace,
  login,
  send,
  type TestUser,
} from './support/factories.js';
import { startTestApp, type TestApp } from './support/test-app.js';
import { checkPage, describeWithBrowser, launchBrowser, signInInBrowser } from './support/web-browser.js';

/**
 * Issue 25, item 6: a field that refers to another object (a signal's audience, model and
 * connection; an audience's model and destinations) must show and offer every object of the
 * workspace, not only the newest 100 a single list page holds. Each workspace here has more than
 * 100 audiences and connections, and the objects the tests are about are the oldest.
 */
describeWithBrowser('web interface: picking a related object', () => {
  jest.setTimeout(90_000);
  let api: TestApp;
  let browser: Browser;
  let editor: TestUser;
  let auth: Record<string, string>;
  const oldest = { audience: 0, connection: 0, model: 0, signal: 0, otherAudience: 0 };

  const post = async (path: string, body: unknown): Promise<{ id: number }> => {
    const response = await api.request(path, send('POST', body, auth));
    expect(response.status).toBe(201);
    return (await response.json()) as { id: number };
  };
  const read = async (path: string) => (await api.request(path, { headers: auth })).json() as Promise<Record<string, unknown>>;

  beforeAll(async () => {
    api = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
    const workspace = await createWorkspace(api);
    editor = await createUser(api, workspace, { role: 'editor' });
    auth = bearer((await login(api, editor)).access);
    // The objects the tests are about come first, so 100 newer ones push them off any first page.
    oldest.model = (await createModelInstance(api, workspace, { name: 'Winback propensity 2019' })).id;
    oldest.connection = (await createConnection(api, workspace, { accountName: 'Archive shop DE' })).id;
    oldest.audience = (await post('/api/v1/audiences/', { name: 'Lapsed customers 2019', source_type: 'rules' })).id;
    oldest.otherAudience = (await post('/api/v1/audiences/', { name: 'Lapsed VIPs 2019', source_type: 'rules' })).id;
    for (let index = 1; index <= 101; index++) {
      await post('/api/v1/audiences/', { name: `Segment ${String(index).padStart(3, '0')}`, source_type: 'rules' });
      await createConnection(api, workspace, { accountName: `Shop ${String(index).padStart(3, '0')}` });
      await createModelInstance(api, workspace, { name: `Model ${String(index).padStart(3, '0')}` });
    }
    oldest.signal = (
      await post('/api/v1/signals/', {
        name: 'Winback conversions',
        signal_type: 'conversion',
        audience: oldest.audience,
        model_instance: oldest.model,
        connection: oldest.connection,
      })
    ).id;
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await api?.close();
  });

  const combobox = (page: Page, name: string) => page.getByRole('combobox', { name, exact: true });

  /** Waits until the field shows `expected` (a chosen object's name arrives after the page), then asserts it. */
  async function valueBecomes(field: Locator, expected: string): Promise<void> {
    const element = await field.elementHandle();
    await field
      .page()
      .waitForFunction(([input, text]) => (input as unknown as { value: string }).value === text, [element, expected] as const)
      .catch(() => undefined);
    expect(await field.inputValue()).toBe(expected);
  }

  /** The list requests the page sends for `apiPath` with a `search` parameter, as they go out. */
  function searchesOf(page: Page, apiPath: string): string[] {
    const seen: string[] = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.pathname === apiPath && url.searchParams.has('search')) seen.push(url.searchParams.get('search')!);
    });
    return seen;
  }

  it('shows a signal’s audience, model and connection although each is older than the newest 100', async () => {
    const { context, page } = await signInInBrowser(browser, api.baseUrl, editor);
    await page.goto(`${api.baseUrl}/app/signals/${oldest.signal}`);
    await page.getByRole('heading', { level: 1, name: 'Winback conversions' }).waitFor();
    await valueBecomes(combobox(page, 'Audience'), 'Lapsed customers 2019');
    await valueBecomes(combobox(page, 'Model'), 'Winback propensity 2019');
    await valueBecomes(combobox(page, 'Connection'), 'Archive shop DE');
    await checkPage(page, 'picker-01-signal-old-references');
    await context.close();
  });

  it('finds an old object by typing, asks the API once per pause, and chooses it with the keyboard', async () => {
    const { context, page } = await signInInBrowser(browser, api.baseUrl, editor);
    await page.goto(`${api.baseUrl}/app/signals/${oldest.signal}`);
    const audience = combobox(page, 'Audience');
    await valueBecomes(audience, 'Lapsed customers 2019');
    const searches = searchesOf(page, '/api/v1/audiences/');

    await audience.fill('');
    await audience.pressSequentially('vips', { delay: 40 });
    const listbox = page.getByRole('listbox', { name: 'Audience' });
    await listbox.getByRole('option', { name: /^Lapsed VIPs 2019/ }).waitFor();
    // Four keys typed faster than the pause: one request, for the whole text.
    expect(searches).toEqual(['vips']);
    expect(await audience.getAttribute('aria-expanded')).toBe('true');
    expect(await audience.getAttribute('aria-controls')).toBe(await listbox.getAttribute('id'));
    // "None" first, then the one match.
    expect(await listbox.getByRole('option').allTextContents()).toEqual(['None', expect.stringMatching(/^Lapsed VIPs 2019/)]);
    await page.getByText('1 audience found.', { exact: true }).first().waitFor();
    await checkPage(page, 'picker-02-signal-audience-search');

    await audience.press('ArrowDown');
    await audience.press('ArrowDown');
    const active = await audience.getAttribute('aria-activedescendant');
    expect(await page.locator(`[id="${active}"]`).textContent()).toMatch(/^Lapsed VIPs 2019/);
    expect(await page.locator(`[id="${active}"]`).getAttribute('aria-selected')).toBe('true');
    await audience.press('Enter');
    expect(await audience.inputValue()).toBe('Lapsed VIPs 2019');
    expect(await audience.getAttribute('aria-expanded')).toBe('false');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Changes saved.').waitFor();
    expect(await read(`/api/v1/signals/${oldest.signal}/`)).toMatchObject({ audience: oldest.otherAudience });
    await context.close();
  });

  it('chooses with the mouse, puts back the chosen name on Escape, and chooses none when the text is emptied', async () => {
    const { context, page } = await signInInBrowser(browser, api.baseUrl, editor);
    await page.goto(`${api.baseUrl}/app/signals/${oldest.signal}`);
    const connection = combobox(page, 'Connection');
    await valueBecomes(connection, 'Archive shop DE');

    // Typed but not chosen: Escape closes the list and the field shows the chosen connection again.
    await connection.fill('shop 00');
    await page
      .getByRole('listbox', { name: 'Connection' })
      .getByRole('option', { name: /^Shop 001/ })
      .waitFor();
    await connection.press('Escape');
    expect(await connection.inputValue()).toBe('Archive shop DE');

    // More matches than one answer holds: the list says so, and a narrower text finds the rest.
    await connection.fill('shop');
    await page.getByText('20 of 102 connections shown: type more of a name to find others.').first().waitFor();
    await connection.fill('shop 101');
    await page.getByRole('option', { name: /^Shop 101/ }).click();
    expect(await connection.inputValue()).toBe('Shop 101');

    // Emptied and left: none.
    const model = combobox(page, 'Model');
    await model.fill('');
    await model.press('Tab');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Changes saved.').waitFor();
    const saved = await read(`/api/v1/signals/${oldest.signal}/`);
    expect(saved).toMatchObject({ model_instance: null });
    const shop101 = (await read('/api/v1/connections/?search=shop 101')) as { results: { id: number }[] };
    expect(saved.connection).toBe(shop101.results[0]!.id);
    await context.close();
  });

  it('picks an audience’s model and adds and removes old destinations', async () => {
    const audience = await post('/api/v1/audiences/', {
      name: 'Scored winback',
      source_type: 'model',
      model_instance: oldest.model,
      connections: [oldest.connection],
    });
    const { context, page } = await signInInBrowser(browser, api.baseUrl, editor);
    await page.goto(`${api.baseUrl}/app/audiences/${audience.id}`);
    await valueBecomes(combobox(page, 'Model'), 'Winback propensity 2019');
    const destinations = page.getByRole('group', { name: 'Destinations' });
    await destinations.getByRole('button', { name: 'Remove Archive shop DE' }).waitFor();

    const add = combobox(page, 'Add a connection');
    await add.fill('shop 050');
    await page.getByRole('option', { name: /^Shop 050/ }).waitFor();
    await add.press('ArrowDown');
    await add.press('Enter');
    await destinations.getByRole('button', { name: 'Remove Shop 050' }).waitFor();
    expect(await add.inputValue()).toBe('');
    await checkPage(page, 'picker-03-audience-destinations');
    await destinations.getByRole('button', { name: 'Remove Archive shop DE' }).click();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Changes saved.').waitFor();
    const shop050 = (await read('/api/v1/connections/?search=shop 050')) as { results: { id: number }[] };
    expect(await read(`/api/v1/audiences/${audience.id}/`)).toMatchObject({
      model_instance: oldest.model,
      connections: [shop050.results[0]!.id],
    });
    await context.close();
  });
});
