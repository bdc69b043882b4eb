import { jest } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import {
  type FakeGoogleAds,
  type FakeMetaAds,
  fakePlatformsEnv,
  startFakeGoogleAds,
  startFakeMetaAds,
} from './support/fake-ad-platforms.js';
import { ConnectionsRepository } from '../src/connections/connections.repository.js';
import {
  bearer,
  createConnection,
  createUser,
  createWorkspace,
  inWorkspace,
  login,
  send,
  type TestUser,
  type Workspace,
} from './support/factories.js';
import { startTestApp, type TestApp } from './support/test-app.js';
import { checkPage, describeWithBrowser, launchBrowser, signInInBrowser } from './support/web-browser.js';

interface Run {
  id: number;
  connection: number;
  status: string;
  trigger: string;
  dry_run: boolean;
  added: number;
  match_rate: number | null;
}

interface Destination {
  connection: number;
  platform: string;
  last_run: { id: number; status: string } | null;
  members_sent: number;
  match_rate: number | null;
}

const FINAL = ['succeeded', 'partially_failed', 'failed', 'cancelled'];
const GOOGLE_SHOP = 'Browser Google Shop';
const TRIGGER_WORDS: Record<string, string> = { manual: 'Sync now', membership_change: 'After a membership change', schedule: 'Scheduled' };
/** A rate as the pages show it. */
const percent = (rate: number | null) => (rate === null ? '—' : `${Math.round(rate * 100)}%`);
const META_SHOP = 'Browser Meta Shop';

/**
 * Issue 29 in the web interface, in a real browser: a marketer connects a Google and a Meta
 * account through their OAuth flows (the local fakes, which answer the consent at once), builds a
 * rules audience, sees the Google destination wait for the Customer Match terms, activates the
 * audience, presses Sync now and follows the runs to their end with their counts and match rate,
 * then finds them on the Syncs page. The job workers run in the app; syncs also start on their
 * own 2 s after a membership change, and the pages show those runs too.
 */
describeWithBrowser('web interface: audience syncs (issue 29)', () => {
  jest.setTimeout(120_000);
  let google: FakeGoogleAds;
  let meta: FakeMetaAds;
  let api: TestApp;
  let browser: Browser;
  let admin: TestUser;
  let editor: TestUser;
  let viewer: TestUser;
  let adminAuth: Record<string, string>;
  let audienceId: number;

  const call = async (method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown) => {
    const response = await api.request(path, send(method, body, adminAuth));
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };

  async function waitFor(check: () => Promise<boolean>, what: string): Promise<void> {
    const deadline = Date.now() + 60_000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** The audience's runs once none is queued, running or awaiting the platform. */
  async function settled(audience: number): Promise<Run[]> {
    let runs: Run[] = [];
    await waitFor(async () => {
      runs = (await call('GET', `/api/v1/syncs/?audience=${audience}&page_size=100`)).body.results as Run[];
      return runs.every((run) => FINAL.includes(run.status));
    }, `the runs of audience ${audience}`);
    return runs;
  }

  beforeAll(async () => {
    google = await startFakeGoogleAds();
    meta = await startFakeMetaAds();
    google.accounts = [{ id: '4040404040', name: GOOGLE_SHOP }];
    meta.accounts = [{ account_id: '707070707', name: META_SHOP }];
    api = await startTestApp({
      ...fakePlatformsEnv(google, meta),
      CONNECTION_SWEEP_INTERVAL_SECONDS: '0',
      WORKER_CONCURRENCY: '2',
      JOB_POLL_INTERVAL_MS: '100',
      MEMBERSHIP_DEBOUNCE_SECONDS: '0',
      MEMBERSHIP_REFRESH_MINUTES: '0',
      SYNC_DEBOUNCE_SECONDS: '2',
      SYNC_INTERVAL_HOURS: '0',
      SYNC_RETRY_BASE_SECONDS: '0.05',
      GOOGLE_STATUS_POLL_DELAY_SECONDS: '0.2',
      GOOGLE_STATUS_POLL_BACKOFF_SECONDS: '0.2',
    });
    const workspace = await createWorkspace(api);
    admin = await createUser(api, workspace, { role: 'admin' });
    editor = await createUser(api, workspace, { role: 'editor' });
    viewer = await createUser(api, workspace, { role: 'viewer' });
    adminAuth = bearer((await login(api, admin)).access);
    // Two people each platform can match, one who denied consent to ad data, one with no key a platform takes.
    const people = [
      {
        external_id: 'web-ada',
        identifiers: { email: 'ada@example.org', phone: '+44 7700 900123' },
        traits: { plan: 'gold' },
        consent: { ad_user_data: 'granted', ad_personalization: 'granted' },
      },
      { external_id: 'web-bob', identifiers: { email: 'bob@example.org' }, traits: { plan: 'gold' } },
      {
        external_id: 'web-cyd',
        identifiers: { email: 'cyd@example.org' },
        traits: { plan: 'gold' },
        consent: { ad_user_data: 'denied' },
      },
      { external_id: 'web-dee', identifiers: { first_name: 'Dee' }, traits: { plan: 'gold' } },
      { external_id: 'web-eve', identifiers: { email: 'eve@example.org' }, traits: { plan: 'free' } },
    ];
    const written = await call('POST', '/api/v1/people/batch/', { people });
    expect(written.body).toMatchObject({ created: people.length, rejected: [] });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await api?.close();
    await google?.close();
    await meta?.close();
  });

  /** Adds a connection to the audience form's destinations through its picker. */
  async function addDestination(page: Page, name: string): Promise<void> {
    const add = page.getByRole('combobox', { name: 'Add a connection' });
    await add.fill(name);
    await page.getByRole('option', { name: new RegExp(`^${name}`) }).waitFor();
    await add.press('ArrowDown');
    await add.press('Enter');
    await page
      .getByRole('group', { name: 'Destinations' })
      .getByRole('button', { name: `Remove ${name}` })
      .waitFor();
  }

  /** Presses a button that creates runs, and answers the runs the service created (or returned, when one was queued already). */
  async function pressForRuns(page: Page, button: string): Promise<Run[]> {
    const answer = page.waitForResponse((response) => response.request().method() === 'POST' && response.url().endsWith('/api/v1/syncs/'));
    await page.getByRole('button', { name: button }).click();
    const response = await answer;
    expect(response.status()).toBe(201);
    return ((await response.json()) as { runs: Run[] }).runs;
  }

  it('connects both platforms, builds and activates a rules audience, syncs it now, and follows the runs to their counts and match rate', async () => {
    const { context, page } = await signInInBrowser(browser, api.baseUrl, editor);
    await page.getByRole('link', { name: 'Connections' }).click();
    await page.getByRole('button', { name: 'Connect Google Ads' }).click();
    await page.getByText('Connected 1 Google Ads account.').waitFor();
    await page.getByRole('button', { name: 'Connect Meta Ads' }).click();
    await page.getByText('Connected 1 Meta Ads account.').waitFor();
    // The editor may not accept Google's Customer Match terms: the page says who must.
    await page
      .getByRole('row', { name: new RegExp(GOOGLE_SHOP) })
      .getByText('until an admin accepts them')
      .waitFor();

    await page.getByRole('link', { name: 'Audiences' }).click();
    await page.getByRole('link', { name: 'New audience' }).click();
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('Gold customers');
    await page.getByRole('button', { name: 'Add condition', exact: true }).click();
    const condition = page.getByRole('group', { name: 'Condition 1', exact: true });
    await condition.getByLabel('Trait', { exact: true }).fill('plan');
    await condition.getByLabel('Value', { exact: true }).fill('gold');
    await addDestination(page, GOOGLE_SHOP);
    await addDestination(page, META_SHOP);
    await page.getByRole('button', { name: 'Create audience' }).click();
    await page.getByRole('heading', { level: 1, name: 'Gold customers' }).waitFor();
    audienceId = Number(new URL(page.url()).pathname.split('/').pop());
    await page.locator('.outcome').getByText('4 members, computed just now.').waitFor();

    // A draft does not sync, and the Google destination waits for the terms, said with where to accept them.
    const section = page.getByRole('region', { name: 'Destinations and syncs' });
    await section.getByText('Only an active audience syncs').waitFor();
    const destinationsTable = section.getByRole('table', { name: 'Destinations', exact: true });
    const googleRow = destinationsTable.getByRole('row', { name: new RegExp(GOOGLE_SHOP) });
    const metaRow = destinationsTable.getByRole('row', { name: new RegExp(META_SHOP) });
    await googleRow.getByText('An admin must accept Google’s Customer Match terms on this connection.').waitFor();
    expect(await googleRow.getByRole('link', { name: 'Open the connection' }).getAttribute('href')).toBe(
      `/app/connections?${new URLSearchParams({ search: GOOGLE_SHOP })}`,
    );
    expect(await metaRow.getByText(/Customer Match/).count()).toBe(0);
    expect(await section.getByRole('button', { name: /Sync now/ }).count()).toBe(0);
    await checkPage(page, 'syncs-01-destinations-terms-missing');

    // An admin accepts the terms (the Connections page's dialog, tested on its own); the marketer activates.
    const googleConnection = (await call('GET', `/api/v1/connections/?search=${encodeURIComponent(GOOGLE_SHOP)}`)).body.results[0];
    expect((await call('PATCH', `/api/v1/connections/${googleConnection.id}/`, { customer_match_terms_accepted: true })).status).toBe(200);
    await page.reload();
    await page.getByRole('button', { name: 'Activate' }).click();
    await page.getByText('Status changed to active.').waitFor();
    expect(await googleRow.getByText(/Customer Match/).count()).toBe(0);

    const googleRuns = await pressForRuns(page, `Sync now to ${GOOGLE_SHOP}`);
    const metaRuns = await pressForRuns(page, `Sync now to ${META_SHOP}`);
    expect(googleRuns).toHaveLength(1);
    expect(metaRuns).toHaveLength(1);
    const googleRun = googleRuns[0]!;
    const metaRun = metaRuns[0]!;
    await section
      .getByRole('link', { name: `Run ${googleRun.id}` })
      .first()
      .waitFor();

    // The recent runs follow each run to its end, with no reload: Google's verdict comes after its upload.
    const recent = section.getByRole('table', { name: 'Recent runs' });
    const googleRunRow = recent.getByRole('row', { name: new RegExp(`^Run ${googleRun.id}\\b`) });
    const metaRunRow = recent.getByRole('row', { name: new RegExp(`^Run ${metaRun.id}\\b`) });
    await googleRunRow.getByText('Succeeded').waitFor({ timeout: 30_000 });
    await metaRunRow.getByText('Succeeded').waitFor({ timeout: 30_000 });
    await googleRunRow.getByRole('cell', { name: '2 / 0 / 0', exact: true }).waitFor();
    await googleRunRow.getByRole('cell', { name: '62%', exact: true }).waitFor();
    await metaRunRow.getByRole('cell', { name: '2 / 0 / 0', exact: true }).waitFor();
    const metaRate = ((await call('GET', `/api/v1/syncs/${metaRun.id}/`)).body as Run).match_rate;
    await metaRunRow.getByRole('cell', { name: percent(metaRate), exact: true }).waitFor();

    // The destinations show what they hold, once every run (the automatic ones too) has ended.
    const runs = await settled(audienceId);
    expect(runs.map((run) => run.id)).toEqual(expect.arrayContaining([googleRun.id, metaRun.id]));
    const destinations = (await call('GET', `/api/v1/audiences/${audienceId}/`)).body.destinations as Destination[];
    for (const [row, destination] of [
      [googleRow, destinations.find((candidate) => candidate.platform === 'google_ads')!],
      [metaRow, destinations.find((candidate) => candidate.platform === 'meta_ads')!],
    ] as const) {
      expect(destination).toMatchObject({ members_sent: 2, last_run: { status: 'succeeded' } });
      await row.getByRole('link', { name: `Succeeded run ${destination.last_run!.id}` }).waitFor();
      await row.getByRole('cell', { name: '2', exact: true }).waitFor();
      await row.getByRole('cell', { name: percent(destination.match_rate), exact: true }).waitFor();
    }
    await checkPage(page, 'syncs-02-destinations-synced');

    // A dry run of every destination counts and sends nothing: nothing changed since.
    const dry = await pressForRuns(page, 'Dry run');
    expect(dry.map((run) => run.dry_run)).toEqual([true, true]);
    for (const run of dry)
      await recent
        .getByRole('row', { name: new RegExp(`^Run ${run.id}\\b`) })
        .getByRole('cell', { name: 'would add 0, remove 0', exact: true })
        .waitFor();
    await settled(audienceId);

    // The Syncs page lists the runs; filtered by status, then one run's detail.
    await page.getByRole('link', { name: 'Syncs', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Syncs' }).waitFor();
    const list = page.getByRole('region', { name: 'Sync runs' });
    await list.getByRole('link', { name: `Run ${googleRun.id}`, exact: true }).waitFor();
    await page.getByLabel('Status', { exact: true }).selectOption('succeeded');
    await page.waitForURL((url) => url.searchParams.get('status') === 'succeeded');
    const listed = list.getByRole('row', { name: new RegExp(`^Run ${googleRun.id}\\b`) });
    await listed.getByRole('cell', { name: 'Gold customers' }).waitFor();
    await listed.getByRole('cell', { name: `Google Ads · ${GOOGLE_SHOP}` }).waitFor();
    // Pressed right after the activation, the run is Sync now's own, or the membership change's it was coalesced with.
    await listed.getByRole('cell', { name: TRIGGER_WORDS[googleRun.trigger], exact: true }).waitFor();
    const statuses = await list.locator('tbody tr td:nth-child(5)').allTextContents();
    expect(statuses.length).toBeGreaterThanOrEqual(4);
    expect(new Set(statuses)).toEqual(new Set(['Succeeded']));
    await checkPage(page, 'syncs-03-list-succeeded');
    await page.getByLabel('Status', { exact: true }).selectOption('failed');
    await page.getByText('No item matches these filters.').waitFor();
    await page.getByLabel('Status', { exact: true }).selectOption('succeeded');

    await list.getByRole('link', { name: `Run ${googleRun.id}`, exact: true }).click();
    await page.getByRole('heading', { level: 1, name: `Sync run ${googleRun.id}` }).waitFor();
    await page.getByRole('status').getByText('Succeeded: the platform accepted every member sent.').waitFor();
    const facts = Object.fromEntries(
      await page
        .getByRole('region', { name: 'Counts' })
        .locator('dt')
        .evaluateAll((terms) => terms.map((term) => [term.textContent, term.nextElementSibling?.textContent])),
    );
    expect(facts).toEqual({
      'Planned additions': '2',
      'Planned removals': '0',
      Added: '2',
      Removed: '0',
      Failed: '0',
      'Skipped for consent': '1',
      'Skipped, nothing to match on': '1',
      'Match rate': '62%',
    });
    await page.getByText('No member failed.').waitFor();
    await page.getByRole('link', { name: 'Gold customers' }).waitFor();
    // A finished run cannot be cancelled.
    expect(await page.getByRole('button', { name: 'Cancel run' }).count()).toBe(0);
    await checkPage(page, 'syncs-04-run-detail');
    await context.close();
  });

  it('shows the run a membership change starts on its own, and the members it sent, while the page stays open', async () => {
    const { context, page } = await signInInBrowser(browser, api.baseUrl, editor);
    await page.goto(`${api.baseUrl}/app/audiences/${audienceId}`);
    const section = page.getByRole('region', { name: 'Destinations and syncs' });
    const googleRow = section.getByRole('table', { name: 'Destinations', exact: true }).getByRole('row', { name: new RegExp(GOOGLE_SHOP) });
    await googleRow.getByRole('cell', { name: '2', exact: true }).waitFor();
    const before = new Set((await settled(audienceId)).map((run) => run.id));

    // A new member: the audience is computed again at once, and syncs SYNC_DEBOUNCE_SECONDS (2 s) later.
    const written = await call('POST', '/api/v1/people/batch/', {
      people: [{ external_id: 'web-fay', identifiers: { email: 'fay@example.org' }, traits: { plan: 'gold' } }],
    });
    expect(written.body).toMatchObject({ created: 1, rejected: [] });
    let automatic: Run[] = [];
    await waitFor(async () => {
      automatic = (await settled(audienceId)).filter((run) => !before.has(run.id));
      return automatic.length === 2;
    }, 'the runs after the membership change');
    expect(automatic.map((run) => ({ trigger: run.trigger, status: run.status, added: run.added }))).toEqual([
      { trigger: 'membership_change', status: 'succeeded', added: 1 },
      { trigger: 'membership_change', status: 'succeeded', added: 1 },
    ]);
    const recent = section.getByRole('table', { name: 'Recent runs' });
    for (const run of automatic) {
      const row = recent.getByRole('row', { name: new RegExp(`^Run ${run.id}\\b`) });
      await row.getByRole('cell', { name: 'After a membership change', exact: true }).waitFor({ timeout: 15_000 });
      await row.getByRole('cell', { name: '1 / 0 / 0', exact: true }).waitFor({ timeout: 15_000 });
    }
    await googleRow.getByRole('cell', { name: '3', exact: true }).waitFor({ timeout: 15_000 });
    await context.close();
  });

  it('shows a viewer the destinations and runs without any Sync now', async () => {
    const { context, page } = await signInInBrowser(browser, api.baseUrl, viewer);
    await page.goto(`${api.baseUrl}/app/audiences/${audienceId}`);
    const section = page.getByRole('region', { name: 'Destinations and syncs' });
    await section
      .getByRole('table', { name: 'Destinations', exact: true })
      .getByRole('row', { name: new RegExp(GOOGLE_SHOP) })
      .waitFor();
    await section.getByRole('table', { name: 'Recent runs' }).waitFor();
    expect(await page.getByRole('button', { name: /Sync now|Sync all now|Dry run/ }).count()).toBe(0);
    await checkPage(page, 'syncs-05-viewer');
    await context.close();
  });
  it('shows a run that failed because the terms were withdrawn, with the reason in words', async () => {
    const googleConnection = (await call('GET', `/api/v1/connections/?search=${encodeURIComponent(GOOGLE_SHOP)}`)).body.results[0];
    expect((await call('PATCH', `/api/v1/connections/${googleConnection.id}/`, { customer_match_terms_accepted: false })).status).toBe(200);
    const { context, page } = await signInInBrowser(browser, api.baseUrl, editor);
    await page.goto(`${api.baseUrl}/app/audiences/${audienceId}`);
    const section = page.getByRole('region', { name: 'Destinations and syncs' });
    const googleRow = section.getByRole('table', { name: 'Destinations', exact: true }).getByRole('row', { name: new RegExp(GOOGLE_SHOP) });
    await googleRow.getByText('An admin must accept Google’s Customer Match terms on this connection.').waitFor();
    const [run] = await pressForRuns(page, `Sync now to ${GOOGLE_SHOP}`);
    await googleRow.getByRole('link', { name: `Failed run ${run!.id}` }).waitFor({ timeout: 30_000 });
    await googleRow.getByRole('link', { name: `Failed run ${run!.id}` }).click();
    await page.getByRole('heading', { level: 1, name: `Sync run ${run!.id}` }).waitFor();
    await page.getByRole('status').getByText('Failed: see the error below.').waitFor();
    await page.getByText('An admin must accept Google’s Customer Match terms on this connection first.').waitFor();
    expect((await call('GET', `/api/v1/syncs/${run!.id}/`)).body).toMatchObject({ status: 'failed', error_code: 'terms_not_accepted' });
    await checkPage(page, 'syncs-08-run-failed');
    await context.close();
  });
});

/**
 * What needs a run to stay queued, or a grant to lack a permission: an API-only app (no job
 * worker, WORKER_CONCURRENCY=0), so a run pressed into being waits until it is cancelled; and a
 * Google connection granted without the Data Manager scope, fixed by Reconnect from the audience's
 * page through the fake's OAuth flow, keeping its id.
 */
describeWithBrowser('web interface: a queued run cancelled, and a destination reconnected (issue 29)', () => {
  jest.setTimeout(90_000);
  let google: FakeGoogleAds;
  let api: TestApp;
  let browser: Browser;
  let workspace: Workspace;
  let editor: TestUser;
  let viewer: TestUser;
  let auth: Record<string, string>;

  const call = async (method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown) => {
    const response = await api.request(path, send(method, body, auth));
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };

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
      GOOGLE_DATA_MANAGER_URL: google.url,
      CONNECTION_SWEEP_INTERVAL_SECONDS: '0',
      WORKER_CONCURRENCY: '0',
    });
    workspace = await createWorkspace(api);
    editor = await createUser(api, workspace, { role: 'editor' });
    viewer = await createUser(api, workspace, { role: 'viewer' });
    auth = bearer((await login(api, editor)).access);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await api?.close();
    await google?.close();
  });

  it('shows a run pressed into being as queued, hides Cancel from a viewer, and cancels it for an editor', async () => {
    const meta = await createConnection(api, workspace, { platform: 'meta_ads', accountName: 'Queue Meta Shop' });
    const created = await call('POST', '/api/v1/audiences/', {
      name: 'Waiting list',
      source_type: 'rules',
      rules: { trait: 'plan', op: 'eq', value: 'gold' },
      connections: [meta.id],
      status: 'active',
    });
    expect(created.status).toBe(201);

    const { context, page } = await signInInBrowser(browser, api.baseUrl, editor);
    await page.goto(`${api.baseUrl}/app/audiences/${created.body.id}`);
    const section = page.getByRole('region', { name: 'Destinations and syncs' });
    await section.getByRole('cell', { name: 'Never synced' }).waitFor();
    await section.getByRole('button', { name: 'Sync now to Queue Meta Shop' }).click();
    const notice = section.getByText(/^Run \d+ to Queue Meta Shop: queued\.$/);
    await notice.waitFor();
    const runId = Number((await notice.textContent())!.match(/^Run (\d+)/)![1]);
    await section
      .getByRole('table', { name: 'Recent runs' })
      .getByRole('row', { name: new RegExp(`^Run ${runId}\\b`) })
      .getByText('Queued')
      .waitFor();

    const viewing = await signInInBrowser(browser, api.baseUrl, viewer);
    await viewing.page.goto(`${api.baseUrl}/app/syncs/${runId}`);
    await viewing.page.getByRole('status').getByText('Queued: the run waits for a worker.').waitFor();
    expect(await viewing.page.getByRole('button', { name: 'Cancel run' }).count()).toBe(0);
    await viewing.context.close();

    await section
      .getByRole('link', { name: `Run ${runId}`, exact: true })
      .first()
      .click();
    await page.getByRole('heading', { level: 1, name: `Sync run ${runId}` }).waitFor();
    await page.getByText('Checked again every second.').waitFor();
    await page.getByRole('button', { name: 'Cancel run' }).click();
    const dialog = page.getByRole('dialog', { name: 'Cancel this run?' });
    await checkPage(page, 'syncs-06-cancel-dialog');
    // A read of the run that started before the cancel answers after it, with the run still queued:
    // the page keeps what the cancel answered.
    let releaseRead!: () => void;
    const cancelAnswered = new Promise<void>((resolve) => (releaseRead = resolve));
    let readHeld!: () => void;
    const held = new Promise<void>((resolve) => (readHeld = resolve));
    let staleDelivered!: () => void;
    const delivered = new Promise<void>((resolve) => (staleDelivered = resolve));
    await page.route(`**/api/v1/syncs/${runId}/`, async (route) => {
      const response = await route.fetch();
      readHeld();
      await cancelAnswered;
      await route.fulfill({ response });
      staleDelivered();
    });
    await held;
    const cancelResponse = page.waitForResponse((response) => response.url().endsWith(`/api/v1/syncs/${runId}/cancel/`));
    await dialog.getByRole('button', { name: 'Cancel run' }).click();
    expect((await cancelResponse).status()).toBe(200);
    await page.getByText('The run was cancelled.').waitFor();
    releaseRead();
    await delivered;
    // Time for the page to take in the late answer, had it any use for it.
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 100)));
    expect(await page.getByRole('status').getByText('Cancelled before it started: nothing was sent.').count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Cancel run' }).count()).toBe(0);
    await page.unrouteAll();
    expect((await call('GET', `/api/v1/syncs/${runId}/`)).body.status).toBe('cancelled');
    await context.close();
  });

  it('says a Google destination lacks the Data Manager permission, and Reconnect on the audience’s page fixes the same connection', async () => {
    const ADWORDS = 'https://www.googleapis.com/auth/adwords';
    const connection = await inWorkspace(
      api,
      workspace.customerId,
      (connections) =>
        connections.insert({
          platform: 'google_ads',
          externalAccountId: '5050505050',
          accountName: 'Half Shop',
          status: 'active',
          scopes: [ADWORDS],
        }),
      ConnectionsRepository,
    );
    google.accounts = [{ id: '5050505050', name: 'Half Shop' }];
    const created = await call('POST', '/api/v1/audiences/', {
      name: 'Half granted',
      source_type: 'rules',
      rules: { trait: 'plan', op: 'eq', value: 'gold' },
      connections: [connection.id],
    });
    expect(created.status).toBe(201);

    const { context, page } = await signInInBrowser(browser, api.baseUrl, editor);
    await page.goto(`${api.baseUrl}/app/audiences/${created.body.id}`);
    const row = page.getByRole('table', { name: 'Destinations', exact: true }).getByRole('row', { name: /Half Shop/ });
    await row.getByText('This Google connection was granted without the Data Manager permission. Reconnect it.').waitFor();
    await checkPage(page, 'syncs-07-destination-scope-missing');
    await row.getByRole('button', { name: 'Reconnect Half Shop' }).click();
    await page.getByText('Connected 1 Google Ads account.').waitFor();
    const after = (await call('GET', `/api/v1/connections/${connection.id}/`)).body;
    expect(after).toMatchObject({ status_reason: null, reauthorize_required: false });

    await page.goto(`${api.baseUrl}/app/audiences/${created.body.id}`);
    await row.waitFor();
    // The Data Manager permission is there; what is left is the admin's Customer Match terms.
    await row.getByText('An admin must accept Google’s Customer Match terms on this connection.').waitFor();
    expect(await row.getByText('Data Manager permission').count()).toBe(0);
    await context.close();
  });
});
