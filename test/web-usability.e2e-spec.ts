import { jest } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { bearer, createUser, createWorkspace, login, send, type TestUser } from './support/factories.js';
import { startTestApp, type TestApp } from './support/test-app.js';
import { checkPage, describeWithBrowser, launchBrowser, signInInBrowser } from './support/web-browser.js';

/** Issue 25, item 20: the smaller findings in the web interface, each in a real browser. */
describeWithBrowser('web interface: smaller findings', () => {
  jest.setTimeout(60_000);
  let api: TestApp;
  let browser: Browser;
  let editor: TestUser;
  let viewer: TestUser;
  let auth: Record<string, string>;

  const post = async (path: string, body: unknown): Promise<{ id: number }> => {
    const response = await api.request(path, send('POST', body, auth));
    expect(response.status).toBe(201);
    return (await response.json()) as { id: number };
  };

  beforeAll(async () => {
    api = await startTestApp();
    const workspace = await createWorkspace(api);
    editor = await createUser(api, workspace, { role: 'editor' });
    viewer = await createUser(api, workspace, { role: 'viewer' });
    auth = bearer((await login(api, editor)).access);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await api?.close();
  });

  it('fits a phone 375 px wide: no page wider than the screen, and every page reachable from the menu', async () => {
    const audienceName = 'Phone shoppers with a rather long audience name that has to wrap somewhere';
    const audience = await post('/api/v1/audiences/', {
      name: audienceName,
      description: 'Bought on a phone.',
      source_type: 'rules',
      rules: {
        all: [
          { trait: 'device', op: 'eq', value: 'phone' },
          { trait: 'visits_in_the_last_thirty_days', op: 'gte', value: 3 },
        ],
      },
    });
    const { context, page } = await signInInBrowser(browser, api.baseUrl, editor, { width: 375, height: 740 });
    /** How much wider than the screen the page is (0 when it fits), after the page has settled. */
    const overflow = async (): Promise<number> => {
      await page.waitForLoadState('networkidle');
      return page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    };
    const widths: Record<string, number> = {};
    const menu = page.getByRole('button', { name: 'Menu' });
    const navigation = page.getByRole('navigation', { name: 'Main' });
    // Every page of the navigation, through the menu: closed, it takes no room; open, it lists them all.
    for (const name of ['People', 'Imports', 'Signals', 'AI models', 'Connections', 'MCP tokens', 'Account', 'Audiences']) {
      expect(await menu.getAttribute('aria-expanded')).toBe('false');
      expect(await navigation.isVisible()).toBe(false);
      await menu.click();
      expect(await menu.getAttribute('aria-expanded')).toBe('true');
      await navigation.getByRole('link', { name, exact: true }).click();
      await page.getByRole('heading', { level: 1, name }).waitFor();
      widths[name] = await overflow();
    }
    await checkPage(page, 'usability-00-phone-audiences');
    await menu.click();
    await checkPage(page, 'usability-00-phone-menu');
    await menu.click();
    expect(await navigation.isVisible()).toBe(false);
    // Pages with more in them: an object's facts, a form with pickers, a list with every filter, a page not found.
    const pages: [string, string][] = [
      [audienceName, `/app/audiences/${audience.id}`],
      ['New signal', '/app/signals/new'],
      ['New audience', '/app/audiences/new'],
      ['Page not found', '/app/signals/987654'],
    ];
    for (const [heading, path] of pages) {
      await page.goto(`${api.baseUrl}${path}`);
      await page.getByRole('heading', { level: 1, name: heading }).waitFor();
      widths[path] = await overflow();
    }
    expect(widths).toEqual(Object.fromEntries(Object.keys(widths).map((key) => [key, 0])));
    await page.goto(`${api.baseUrl}/app/audiences/${audience.id}`);
    await page.getByRole('heading', { level: 1, name: audienceName }).waitFor();
    await checkPage(page, 'usability-00-phone-audience');
    await context.close();
  });

  it('tells a marketer on the Connections page whom to ask when no ad platform is set up, without the operator’s settings', async () => {
    const { context, page } = await signInInBrowser(browser, api.baseUrl, editor);
    await page.getByRole('link', { name: 'Connections' }).click();
    await page.getByRole('heading', { level: 1, name: 'Connections' }).waitFor();
    const notice = page.getByRole('status').filter({ hasText: 'ask your administrator' });
    await notice.waitFor();
    expect(await notice.textContent()).toMatch(/Ask your administrator to set up ad platform connections/);
    expect(await page.getByRole('button', { name: /^Connect / }).count()).toBe(0);
    const text = await page.locator('main').innerText();
    for (const operatorWord of ['GOOGLE_ADS', 'META_', 'docs/', 'operator', 'environment', 'server'])
      expect(text).not.toContain(operatorWord);
    await checkPage(page, 'usability-02-connections-not-set-up');

    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByRole('heading', { level: 1, name: 'Account' }).waitFor();
    expect(await page.locator('main').innerText()).not.toContain('server');
    await context.close();
  });

  it('offers a way back from a page that is not there', async () => {
    const { context, page } = await signInInBrowser(browser, api.baseUrl, editor);
    // An object the API does not find: back to its list.
    await page.goto(`${api.baseUrl}/app/signals/987654`);
    await page.getByRole('heading', { level: 1, name: 'Page not found' }).waitFor();
    await checkPage(page, 'usability-03-signal-not-found');
    await page.getByRole('link', { name: 'Back to the signals' }).click();
    await page.getByRole('heading', { level: 1, name: 'Signals' }).waitFor();

    await page.goto(`${api.baseUrl}/app/people/987654`);
    await page.getByRole('link', { name: 'Back to the people' }).click();
    await page.getByRole('heading', { level: 1, name: 'People' }).waitFor();

    // An address the app does not have: to the start page.
    await page.goto(`${api.baseUrl}/app/no-such-page`);
    await page.getByRole('heading', { level: 1, name: 'Page not found' }).waitFor();
    expect(await page.title()).toMatch(/^Page not found/);
    await page.getByRole('link', { name: /Go to the start page/ }).click();
    await page.getByRole('heading', { level: 1, name: 'Audiences' }).waitFor();
    await context.close();
  });

  it('links a refused delete to the objects in the way, and to the filtered list that shows them all', async () => {
    const model = await post('/api/v1/ai-model-instances/', { name: 'Churn 2024', model_type: 'churn', base_model: 'gbm-v3' });
    const audience = await post('/api/v1/audiences/', { name: 'Churners', source_type: 'model', model_instance: model.id });
    const signals: number[] = [];
    for (let index = 1; index <= 6; index++)
      signals.push(
        (
          await post('/api/v1/signals/', {
            name: `Churn signal ${index}`,
            signal_type: 'score',
            model_instance: model.id,
            audience: index === 1 ? audience.id : null,
          })
        ).id,
      );

    const { context, page } = await signInInBrowser(browser, api.baseUrl, editor);
    await page.goto(`${api.baseUrl}/app/models/${model.id}`);
    await page.getByRole('button', { name: 'Delete model' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete “Churn 2024”?' });
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await dialog
      .getByRole('alert')
      .getByText(/used by 1 audience\(s\) and 6 signal\(s\)/)
      .waitFor();
    const usedByAudiences = dialog.getByRole('region', { name: 'Used by 1 audience' });
    const usedBySignals = dialog.getByRole('region', { name: 'Used by 6 signals' });
    await usedBySignals.waitFor();
    expect(await usedByAudiences.getByRole('link').allTextContents()).toEqual(['Churners']);
    // Five by name (newest first), then the list of all six.
    expect(await usedBySignals.getByRole('link').allTextContents()).toEqual([
      'Churn signal 6',
      'Churn signal 5',
      'Churn signal 4',
      'Churn signal 3',
      'Churn signal 2',
      'All 6 signals that use it',
    ]);
    expect(await usedBySignals.getByRole('link', { name: 'Churn signal 6' }).getAttribute('href')).toBe(`/app/signals/${signals[5]}`);
    await checkPage(page, 'usability-04-model-delete-refused');

    await usedBySignals.getByRole('link', { name: 'All 6 signals that use it' }).click();
    await page.getByRole('heading', { level: 1, name: 'Signals' }).waitFor();
    expect(new URL(page.url()).search).toBe(`?model_instance=${model.id}`);
    await page.getByText('1–6 of 6').waitFor();
    // The filter shows the model by name, and clearing it shows every signal again.
    const filter = page.getByRole('combobox', { name: 'Model' });
    await filter
      .page()
      .waitForFunction((input) => (input as unknown as { value: string }).value === 'Churn 2024', await filter.elementHandle());
    await checkPage(page, 'usability-05-signals-of-a-model');
    await filter.fill('');
    await filter.press('Tab');
    await page.waitForURL(`${api.baseUrl}/app/signals`);

    await page.goto(`${api.baseUrl}/app/audiences/${audience.id}`);
    await page.getByRole('button', { name: 'Delete audience' }).click();
    const audienceDialog = page.getByRole('dialog', { name: 'Delete “Churners”?' });
    await audienceDialog.getByRole('button', { name: 'Delete' }).click();
    await audienceDialog.getByRole('region', { name: 'Used by 1 signal' }).getByRole('link', { name: 'Churn signal 1' }).click();
    await page.getByRole('heading', { level: 1, name: 'Churn signal 1' }).waitFor();
    expect(await page.getByRole('dialog').count()).toBe(0);

    // The audiences of a model, as a list page.
    await page.goto(`${api.baseUrl}/app/audiences?model_instance=${model.id}`);
    await page.getByText('1–1 of 1').waitFor();
    await page.getByRole('link', { name: 'Churners' }).waitFor();
    await context.close();
  });

  it('shows a viewer an object’s values as facts: no inputs, nothing disabled, no required marks', async () => {
    const audience = await post('/api/v1/audiences/', {
      name: 'Loyal readers',
      description: 'Opened ten newsletters.',
      source_type: 'rules',
      rules: { trait: 'newsletter_opens', op: 'gte', value: 10 },
    });
    const signal = await post('/api/v1/signals/', { name: 'Reader conversions', signal_type: 'conversion', audience: audience.id });

    const { context, page } = await signInInBrowser(browser, api.baseUrl, viewer);
    await page.goto(`${api.baseUrl}/app/audiences/${audience.id}`);
    await page.getByRole('heading', { level: 1, name: 'Loyal readers' }).waitFor();
    // The object's page is drawn at once, with its heading.
    expect(await page.locator('main input, main select, main textarea, main fieldset[disabled]').count()).toBe(0);
    expect(await page.locator('main .required').count()).toBe(0);
    expect(await page.getByRole('form').count()).toBe(0);
    const details = page.getByRole('region', { name: 'Details' });
    expect(await details.getByRole('term').allTextContents()).toEqual(['Name', 'Description', 'Source', 'Destinations', 'Rules']);
    expect(await details.getByRole('definition').allTextContents()).toEqual([
      'Loyal readers',
      'Opened ten newsletters.',
      'Rules',
      'None',
      // The rules in words (issue 28), then as stored: PostgreSQL's jsonb puts shorter keys first.
      'All of:newsletter_opens is at least 10' + JSON.stringify({ op: 'gte', trait: 'newsletter_opens', value: 10 }, null, 2),
    ]);
    await checkPage(page, 'usability-01-viewer-audience');

    // A reference is the object's name, a link to it.
    await page.goto(`${api.baseUrl}/app/signals/${signal.id}`);
    await page.getByRole('heading', { level: 1, name: 'Reader conversions' }).waitFor();
    await details.getByRole('link', { name: 'Loyal readers' }).click();
    await page.getByRole('heading', { level: 1, name: 'Loyal readers' }).waitFor();
    await context.close();
  });
});
