import { createHash } from 'node:crypto';
import { type AddressInfo } from 'node:net';
import { createServer } from 'node:http';
import { ConnectionGrants } from '../src/connections/oauth/connection-grants.js';
import {
  type FakeGoogleAds,
  type FakeMetaAds,
  fakePlatformsEnv,
  startFakeGoogleAds,
  startFakeMetaAds,
} from './support/fake-ad-platforms.js';
import { bearer, createUser, createWorkspace, inWorkspace, login, send, type Workspace } from './support/factories.js';
import { startTestApp, type TestApp } from './support/test-app.js';

/**
 * Audience syncs (SPEC 10.3) end to end: the real app and its job workers against local servers
 * speaking the Data Manager API and Meta's custom-audience Graph over HTTP. Expected hashes are
 * computed here, by hand, from the platforms' published normal forms.
 */

const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const ADWORDS = 'https://www.googleapis.com/auth/adwords';
const DATAMANAGER = 'https://www.googleapis.com/auth/datamanager';
const GOOGLE_ACCOUNT = '1234567890';
const META_ACCOUNT = '555000111';

interface Run {
  id: number;
  audience: number;
  connection: number;
  status: string;
  trigger: string;
  dry_run: boolean;
  platform_audience_id: string | null;
  planned_add: number | null;
  planned_remove: number | null;
  added: number;
  removed: number;
  failed: number;
  skipped_consent: number;
  skipped_unmatchable: number;
  failed_by_reason: Record<string, number>;
  match_rate: number | null;
  error_code: string | null;
  error_detail: string | null;
  attempts: number;
}

const FINAL = ['succeeded', 'partially_failed', 'failed', 'cancelled'];

function platformEnv(google: FakeGoogleAds, meta: FakeMetaAds): Record<string, string> {
  return {
    ...fakePlatformsEnv(google, meta),
    CONNECTION_SWEEP_INTERVAL_SECONDS: '0',
    MEMBERSHIP_DEBOUNCE_SECONDS: '0',
    MEMBERSHIP_REFRESH_MINUTES: '0',
    SYNC_DEBOUNCE_SECONDS: '0',
    SYNC_INTERVAL_HOURS: '0',
    SYNC_RETRY_BASE_SECONDS: '0.05',
    GOOGLE_STATUS_POLL_DELAY_SECONDS: '0.2',
    GOOGLE_STATUS_POLL_BACKOFF_SECONDS: '0.2',
    JOB_POLL_INTERVAL_MS: '100',
  };
}

/** A workspace with an admin, a Google and a Meta connection holding live grants at the fakes. */
async function connectedWorkspace(
  api: TestApp,
  google: FakeGoogleAds,
  meta: FakeMetaAds,
  options: { googleScopes?: string[]; terms?: boolean } = {},
) {
  const workspace = await createWorkspace(api);
  const admin = await createUser(api, workspace, { role: 'admin' });
  const auth = bearer((await login(api, admin)).access);
  const googleScopes = options.googleScopes ?? [ADWORDS, DATAMANAGER];
  const grant = (platform: 'google_ads' | 'meta_ads', accountId: string, accessToken: string, scopes: string[]) =>
    inWorkspace(
      api,
      workspace.customerId,
      (grants) =>
        grants.connect(
          platform,
          [{ externalAccountId: accountId, name: `${platform} account` }],
          {
            accessToken,
            refreshToken: null,
            expiresAt: new Date(Date.now() + 24 * 3600 * 1000),
            scopes,
          },
          admin.id,
        ),
      ConnectionGrants,
    );
  const [googleConnection] = await grant('google_ads', GOOGLE_ACCOUNT, google.issueAccessToken(googleScopes), googleScopes);
  const [metaConnection] = await grant('meta_ads', META_ACCOUNT, meta.issueAccessToken(['ads_management', 'ads_read']), [
    'ads_management',
    'ads_read',
  ]);
  if (options.terms !== false) {
    const accepted = await api.request(
      `/api/v1/connections/${googleConnection!.id}/`,
      send('PATCH', { customer_match_terms_accepted: true }, auth),
    );
    expect(accepted.status).toBe(200);
  }
  return { workspace, auth, google: googleConnection!.id, meta: metaConnection!.id };
}

describe('audience syncs (SPEC 10.3) with workers', () => {
  let google: FakeGoogleAds;
  let meta: FakeMetaAds;
  let api: TestApp;
  let auth: Record<string, string>;
  let connections: { google: number; meta: number };

  beforeAll(async () => {
    google = await startFakeGoogleAds();
    meta = await startFakeMetaAds();
    google.accounts = [{ id: GOOGLE_ACCOUNT, name: 'Shop' }];
    meta.accounts = [{ account_id: META_ACCOUNT, name: 'Shop' }];
    // A membership change syncs after 2 s: a test's own POST right after an audience is computed comes first.
    api = await startTestApp({
      ...platformEnv(google, meta),
      WORKER_CONCURRENCY: '2',
      SYNC_DEBOUNCE_SECONDS: '2',
      META_MAX_REQUEST_BYTES: '2000000',
    });
    ({ auth, ...connections } = await connectedWorkspace(api, google, meta));
  });
  // Closing lets running sync jobs finish (SHUTDOWN_TIMEOUT_MS, 10 s) after the requests drain (10 s):
  // more than Jest's 30 s on a loaded machine, which failed this hook once while the app was still closing.
  afterAll(async () => {
    await api.close();
    await google.close();
    await meta.close();
  }, 60_000);

  const call = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown, headers = auth) => {
    const response = await api.request(path, send(method, body, headers));
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };

  async function writePeople(people: object[]): Promise<void> {
    const { status, body } = await call('POST', '/api/v1/people/batch/', { people });
    expect(status).toBe(200);
    expect(body.rejected).toEqual([]);
  }

  async function personId(externalId: string): Promise<number> {
    const { body } = await call('GET', `/api/v1/people/?external_id=${externalId}`);
    return body.results[0].id as number;
  }

  /** An active rules audience over `plan`, sending to both connections, with its members computed. */
  async function activeAudience(plan: string, destinations = [connections.google, connections.meta]): Promise<number> {
    const { status, body } = await call('POST', '/api/v1/audiences/', {
      name: `Plan ${plan} ${Math.random()}`,
      source_type: 'rules',
      rules: { trait: 'plan', op: 'eq', value: plan },
      connections: destinations,
      status: 'active',
    });
    expect(status).toBe(201);
    await waitFor(async () => (await call('GET', `/api/v1/audiences/${body.id}/`)).body.members_updated_at !== null);
    return body.id as number;
  }

  async function waitFor(check: () => Promise<boolean>, what = 'condition'): Promise<void> {
    const deadline = Date.now() + 60_000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async function finished(runId: number): Promise<Run> {
    let run: Run | undefined;
    try {
      await waitFor(async () => {
        run = (await call('GET', `/api/v1/syncs/${runId}/`)).body as Run;
        return FINAL.includes(run.status);
      }, `run ${runId}`);
    } catch (error) {
      throw new Error(`${(error as Error).message}: ${JSON.stringify(run)}`);
    }
    return run!;
  }

  async function syncNow(audience: number, body: object = {}): Promise<Run[]> {
    const { status, body: answer } = await call('POST', '/api/v1/syncs/', { audience, ...body });
    expect(status).toBe(201);
    return Promise.all((answer.runs as Run[]).map((run) => finished(run.id)));
  }

  /** Waits for every run of the audience to end and for no run to be queued or running. */
  async function settled(audience: number): Promise<Run[]> {
    let runs: Run[] = [];
    await waitFor(async () => {
      runs = (await call('GET', `/api/v1/syncs/?audience=${audience}&page_size=100`)).body.results as Run[];
      return runs.every((run) => FINAL.includes(run.status));
    }, `runs of audience ${audience}`);
    return runs;
  }

  const byConnection = (runs: Run[], connection: number) => runs.find((run) => run.connection === connection)!;

  it('first sync creates each list and sends the exact hashes each platform wants; a person who denied consent reaches neither', async () => {
    await writePeople([
      {
        external_id: 'sync-ada',
        identifiers: { email: 'Ada.Lovelace+news@GMAIL.com', phone: '+44 7700 900123' },
        traits: { plan: 'gold' },
        consent: { ad_user_data: 'granted', ad_personalization: 'granted' },
      },
      { external_id: 'sync-bob', identifiers: { email: 'bob@example.org' }, traits: { plan: 'gold' } },
      {
        external_id: 'sync-cyd',
        identifiers: { email: 'cyd@example.org' },
        traits: { plan: 'gold' },
        consent: { ad_user_data: 'denied', ad_personalization: 'granted' },
      },
      { external_id: 'sync-dee', traits: { plan: 'gold' }, identifiers: { first_name: 'Dee' } },
    ]);
    const audience = await activeAudience('gold');
    const googleRequestsBefore = google.dataManager.requests.length;
    const runs = await syncNow(audience);
    const googleRun = byConnection(runs, connections.google);
    const metaRun = byConnection(runs, connections.meta);
    for (const run of [googleRun, metaRun])
      expect(run).toMatchObject({
        status: 'succeeded',
        trigger: 'manual',
        planned_add: 2,
        planned_remove: 0,
        added: 2,
        removed: 0,
        failed: 0,
        skipped_consent: 1,
        skipped_unmatchable: 1,
        error_code: null,
        attempts: 1,
      });
    expect(googleRun.match_rate).toBe(0.62);

    // Google: the Gmail rule, E.164 with +, consent per member, encoding HEX, terms declared.
    const list = google.dataManager.userLists.get(googleRun.platform_audience_id!)!;
    expect(list.displayName).toContain(`audience ${audience}`);
    const sent = google.dataManager.requests.slice(googleRequestsBefore).filter((request) => request.operation === 'ingest');
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ encoding: 'HEX', termsOfService: { customerMatchTermsOfServiceStatus: 'ACCEPTED' } });
    const identifiers = sent[0]!.members.flatMap((member) => member.userData.userIdentifiers);
    expect(identifiers).toEqual(
      expect.arrayContaining([
        { emailAddress: sha('adalovelace@gmail.com') },
        { phoneNumber: sha('+447700900123') },
        { emailAddress: sha('bob@example.org') },
      ]),
    );
    expect(identifiers).not.toContainEqual({ emailAddress: sha('cyd@example.org') });
    const ada = sent[0]!.members.find((member) => JSON.stringify(member).includes(sha('adalovelace@gmail.com')))!;
    expect(ada.consent).toEqual({ adUserData: 'CONSENT_GRANTED', adPersonalization: 'CONSENT_GRANTED' });
    const bob = sent[0]!.members.find((member) => JSON.stringify(member).includes(sha('bob@example.org')))!;
    expect(bob.consent).toEqual({ adUserData: 'CONSENT_STATUS_UNSPECIFIED', adPersonalization: 'CONSENT_STATUS_UNSPECIFIED' });

    // Meta: no Gmail rule, the phone's digits without +, one session closed by its last batch.
    const audienceRows = meta.customAudiences.audiences.get(metaRun.platform_audience_id!)!;
    expect([...audienceRows.rows].join('\n')).toContain(`EMAIL=${sha('ada.lovelace+news@gmail.com')}`);
    expect([...audienceRows.rows].join('\n')).toContain(`PHONE=${sha('447700900123')}`);
    expect([...audienceRows.rows].join('\n')).not.toContain(sha('cyd@example.org'));
    const metaRequests = meta.customAudiences.requests.filter((request) => request.audienceId === metaRun.platform_audience_id);
    expect(metaRequests.at(-1)!.session.last_batch_flag).toBe(true);

    // The audience shows both destinations with their lists, last runs and members sent.
    const { body: detail } = await call('GET', `/api/v1/audiences/${audience}/`);
    expect(detail.destinations).toEqual([
      expect.objectContaining({
        connection: connections.google,
        platform: 'google_ads',
        platform_audience_id: googleRun.platform_audience_id,
        status_reason: null,
        last_run: { id: googleRun.id, status: 'succeeded' },
        members_sent: 2,
        match_rate: 0.62,
      }),
      expect.objectContaining({
        connection: connections.meta,
        platform: 'meta_ads',
        platform_audience_id: metaRun.platform_audience_id,
        last_run: { id: metaRun.id, status: 'succeeded' },
        members_sent: 2,
      }),
    ]);
    expect(detail.destinations[0].last_synced_at).not.toBeNull();

    // Nothing changed: a second sync plans nothing and sends nothing.
    const requestsBefore = google.dataManager.requests.length;
    const again = await syncNow(audience);
    for (const run of again) expect(run).toMatchObject({ status: 'succeeded', planned_add: 0, planned_remove: 0, added: 0, removed: 0 });
    expect(google.dataManager.requests.length).toBe(requestsBefore);
  });

  it('second sync sends only the difference: joiners, leavers, a changed email and a consent turned denied (removed where it was)', async () => {
    await writePeople([
      { external_id: 'diff-1', identifiers: { email: 'one@example.org' }, traits: { plan: 'silver' } },
      { external_id: 'diff-2', identifiers: { email: 'two@example.org' }, traits: { plan: 'silver' } },
      { external_id: 'diff-3', identifiers: { email: 'three@example.org' }, traits: { plan: 'silver' } },
      { external_id: 'diff-4', identifiers: { email: 'four@example.org' }, traits: { plan: 'silver' } },
    ]);
    const audience = await activeAudience('silver', [connections.google]);
    const [first] = await syncNow(audience);
    expect(first).toMatchObject({ status: 'succeeded', added: 4 });
    const listId = first!.platform_audience_id!;

    await writePeople([
      { external_id: 'diff-1', traits: { plan: 'bronze' } },
      { external_id: 'diff-2', identifiers: { email: 'two-new@example.org' } },
      { external_id: 'diff-3', consent: { ad_user_data: 'denied' } },
      { external_id: 'diff-5', identifiers: { email: 'five@example.org' }, traits: { plan: 'silver' } },
    ]);
    // The membership change triggers a sync of its own (SYNC_DEBOUNCE_SECONDS=0): wait for it.
    const before = google.dataManager.requests.length;
    await waitFor(async () => {
      const runs = await settled(audience);
      return runs.some((run) => run.trigger === 'membership_change' && run.status === 'succeeded');
    }, 'the membership-change run');
    const runs = await settled(audience);
    const changed = runs.filter((run) => run.trigger === 'membership_change');
    const totals = changed.reduce(
      (sum, run) => ({
        added: sum.added + run.added,
        removed: sum.removed + run.removed,
        consent: Math.max(sum.consent, run.skipped_consent),
      }),
      { added: 0, removed: 0, consent: 0 },
    );
    expect(totals).toEqual({ added: 2, removed: 2, consent: 1 });
    const requests = google.dataManager.requests.slice(before).filter((request) => request.userListId === listId);
    const ingested = requests.filter((request) => request.operation === 'ingest').flatMap((request) => request.members);
    const removed = requests.filter((request) => request.operation === 'remove').flatMap((request) => request.members);
    const emails = (members: typeof ingested) =>
      members.flatMap((member) => member.userData.userIdentifiers.map((identifier) => identifier.emailAddress)).sort();
    expect(emails(ingested)).toEqual([sha('five@example.org'), sha('two-new@example.org')].sort());
    // diff-1 left, diff-3 denied consent, and diff-2's old email is gone from the list.
    expect(emails(removed)).toEqual([sha('one@example.org'), sha('three@example.org'), sha('two@example.org')].sort());
    const held = [...google.dataManager.userLists.get(listId)!.members.keys()].join('|');
    expect(held).toContain(sha('four@example.org'));
    expect(held).not.toContain(sha('one@example.org'));
  });

  it('erasure removes the person from every destination that had them, after which no hash of them is left', async () => {
    await writePeople([
      { external_id: 'erase-sync', identifiers: { email: 'erase.me@example.org', phone: '+1 415 555 0100' }, traits: { plan: 'iron' } },
      { external_id: 'stay-sync', identifiers: { email: 'stay@example.org' }, traits: { plan: 'iron' } },
    ]);
    const audience = await activeAudience('iron');
    await syncNow(audience);
    const id = await personId('erase-sync');
    const [sentBefore] = await api.dataSource.query('SELECT count(*)::int AS count FROM sync_sent_members WHERE person_id = $1', [id]);
    expect(sentBefore.count).toBe(2);
    expect((await call('DELETE', `/api/v1/people/${id}/`)).status).toBe(204);
    await waitFor(async () => {
      const runs = await settled(audience);
      return runs.filter((run) => run.trigger === 'membership_change' && run.removed === 1).length === 2;
    }, 'the erasure runs');
    const [sentAfter] = await api.dataSource.query('SELECT count(*)::int AS count FROM sync_sent_members WHERE person_id = $1', [id]);
    expect(sentAfter.count).toBe(0);
    const metaAudience = (await call('GET', `/api/v1/audiences/${audience}/`)).body.destinations[1].platform_audience_id as string;
    expect([...meta.customAudiences.audiences.get(metaAudience)!.rows].join('\n')).not.toContain(sha('erase.me@example.org'));
    // No row of any table holds the person's hashes any more.
    const [hex] = await api.dataSource.query(
      `SELECT count(*)::int AS count FROM sync_sent_members WHERE position(decode($1, 'hex') IN identifiers) > 0`,
      [sha('erase.me@example.org')],
    );
    expect(hex.count).toBe(0);
  });

  it('erasure leaves no hash of the person with a destination that will not sync again: an archived audience, a removed destination', async () => {
    await writePeople([
      { external_id: 'erase-archived', identifiers: { email: 'erase.archived@example.org' }, traits: { plan: 'erasure-archived' } },
      { external_id: 'erase-removed', identifiers: { email: 'erase.removed@example.org' }, traits: { plan: 'erasure-trimmed' } },
    ]);
    const archived = await activeAudience('erasure-archived');
    const trimmed = await activeAudience('erasure-trimmed');
    await syncNow(archived);
    await syncNow(trimmed);
    const archivedId = await personId('erase-archived');
    const removedId = await personId('erase-removed');
    const sent = async (person: number) =>
      (
        await api.dataSource.query('SELECT connection_id::int AS connection FROM sync_sent_members WHERE person_id = $1 ORDER BY 1', [
          person,
        ])
      ).map((row: { connection: number }) => row.connection);
    expect(await sent(archivedId)).toEqual([connections.google, connections.meta].sort((a, b) => a - b));
    expect((await call('PATCH', `/api/v1/audiences/${archived}/`, { status: 'archived' })).status).toBe(200);
    expect((await call('PATCH', `/api/v1/audiences/${trimmed}/`, { connections: [connections.google] })).status).toBe(200);

    expect((await call('DELETE', `/api/v1/people/${archivedId}/`)).status).toBe(204);
    expect((await call('DELETE', `/api/v1/people/${removedId}/`)).status).toBe(204);
    // At once for what will never sync again; the Google destination still on the audience removes its own.
    expect(await sent(archivedId)).toEqual([]);
    expect(await sent(removedId)).not.toContain(connections.meta);
    await waitFor(async () => (await sent(removedId)).length === 0, 'the erasure run to Google');
  });

  it('a removal Google fails after accepting it keeps the person as sent, and the next sync removes them again', async () => {
    await writePeople([
      { external_id: 'stays-copper', identifiers: { email: 'stays.copper@example.org' }, traits: { plan: 'copper' } },
      { external_id: 'leaves-copper', identifiers: { email: 'leaves.copper@example.org' }, traits: { plan: 'copper' } },
    ]);
    const audience = await activeAudience('copper', [connections.google]);
    const [first] = await syncNow(audience);
    expect(first).toMatchObject({ status: 'succeeded', added: 2 });
    const list = google.dataManager.userLists.get(first!.platform_audience_id!)!;
    const held = () => [...list.members.keys()].join('|');
    const leaver = await personId('leaves-copper');
    const sentRows = async () =>
      (await api.dataSource.query(
        'SELECT removal_request_id AS "removalRequestId" FROM sync_sent_members WHERE audience_id = $1 AND person_id = $2',
        [audience, leaver],
      )) as { removalRequestId: string | null }[];

    // The leaver's removal is accepted, then failed whole by Google's verdict.
    google.dataManager.failNextAccepted('remove');
    await writePeople([{ external_id: 'leaves-copper', traits: { plan: 'copper-gone' } }]);
    await waitFor(async () => (await settled(audience)).some((run) => run.trigger === 'membership_change'), 'the membership-change run');
    const failedRun = (await settled(audience)).find((run) => run.trigger === 'membership_change')!;
    expect(failedRun).toMatchObject({
      status: 'failed',
      planned_remove: 1,
      removed: 0,
      failed: 1,
      failed_by_reason: { request_failed: 1 },
    });
    // Still on the list, so still sent, with no removal waiting: the destination holds 2.
    expect(held()).toContain(sha('leaves.copper@example.org'));
    expect(await sentRows()).toEqual([{ removalRequestId: null }]);
    expect((await call('GET', `/api/v1/audiences/${audience}/`)).body.destinations[0].members_sent).toBe(2);

    // The next sync removes the leaver again; Google's verdict is a success this time.
    const [again] = await syncNow(audience);
    expect(again).toMatchObject({ status: 'succeeded', planned_remove: 1, removed: 1, added: 0 });
    expect(held()).not.toContain(sha('leaves.copper@example.org'));
    expect(held()).toContain(sha('stays.copper@example.org'));
    expect(await sentRows()).toEqual([]);
    expect((await call('GET', `/api/v1/audiences/${audience}/`)).body.destinations[0].members_sent).toBe(1);
  });

  it('a dry run counts and sends nothing; it is never coalesced with a real run', async () => {
    await writePeople([{ external_id: 'dry-1', identifiers: { email: 'dry@example.org' }, traits: { plan: 'tin' } }]);
    const audience = await activeAudience('tin', [connections.google]);
    const before = google.dataManager.requests.length;
    const lists = google.dataManager.userLists.size;
    const [run] = await syncNow(audience, { dry_run: true });
    expect(run).toMatchObject({
      dry_run: true,
      status: 'succeeded',
      planned_add: 1,
      planned_remove: 0,
      added: 0,
      platform_audience_id: null,
    });
    expect(google.dataManager.requests.length).toBe(before);
    expect(google.dataManager.userLists.size).toBe(lists);
  });

  it('a person with only a phone_sha256 is unmatchable for Meta in the plan as in the send, and is never planned again', async () => {
    // SPEC 10.1: a phone_sha256 is Google's form (E.164 with +), sent to Google only; Meta gets nothing of it.
    await writePeople([
      { external_id: 'platinum-phone-hash', identifiers: { phone_sha256: sha('+14155550123') }, traits: { plan: 'platinum' } },
      { external_id: 'platinum-email', identifiers: { email: 'platinum@example.org' }, traits: { plan: 'platinum' } },
    ]);
    const audience = await activeAudience('platinum', [connections.meta]);
    const [dry] = await syncNow(audience, { dry_run: true });
    expect(dry).toMatchObject({ status: 'succeeded', planned_add: 1, planned_remove: 0, skipped_unmatchable: 1, added: 0 });

    const [first] = await syncNow(audience);
    expect(first).toMatchObject({ status: 'succeeded', planned_add: 1, added: 1, failed: 0, skipped_unmatchable: 1 });
    const rows = [...meta.customAudiences.audiences.get(first!.platform_audience_id!)!.rows].join('\n');
    expect(rows).toContain(`EMAIL=${sha('platinum@example.org')}`);
    expect(rows).not.toContain(sha('+14155550123'));

    const [again] = await syncNow(audience);
    expect(again).toMatchObject({ status: 'succeeded', planned_add: 0, planned_remove: 0, added: 0, skipped_unmatchable: 1 });

    // A membership change plans only what Meta can take: the joiner, not the phone-hash person again.
    const known = new Set((await settled(audience)).map((run) => run.id));
    await writePeople([
      { external_id: 'platinum-phone-hash', traits: { tier: 'changed' } },
      { external_id: 'platinum-joiner', identifiers: { email: 'platinum.joiner@example.org' }, traits: { plan: 'platinum' } },
    ]);
    const changed = async () => (await settled(audience)).filter((run) => !known.has(run.id) && run.trigger === 'membership_change');
    await waitFor(async () => (await changed()).some((run) => run.added === 1), 'the membership-change run');
    const runs = await changed();
    expect(runs.reduce((sum, run) => sum + (run.planned_add ?? 0), 0)).toBe(1);
    for (const run of runs) expect(run).toMatchObject({ status: 'succeeded', skipped_unmatchable: 1 });
  });

  it('a person with only a mobile ad id is unmatchable for Google and sent to Meta (SPEC 10.1: mobile ad ids go to Meta only)', async () => {
    await writePeople([
      {
        external_id: 'tungsten-madid',
        identifiers: { mobile_ad_id: '6D92078A-8246-4BA4-AE5B-76104861E7DC' },
        traits: { plan: 'tungsten' },
      },
      { external_id: 'tungsten-email', identifiers: { email: 'tungsten@example.org' }, traits: { plan: 'tungsten' } },
    ]);
    const audience = await activeAudience('tungsten');
    const dry = await syncNow(audience, { dry_run: true });
    expect(byConnection(dry, connections.google)).toMatchObject({ status: 'succeeded', planned_add: 1, skipped_unmatchable: 1 });
    expect(byConnection(dry, connections.meta)).toMatchObject({ status: 'succeeded', planned_add: 2, skipped_unmatchable: 0 });

    const first = await syncNow(audience);
    expect(byConnection(first, connections.google)).toMatchObject({
      status: 'succeeded',
      planned_add: 1,
      added: 1,
      skipped_unmatchable: 1,
    });
    const metaRun = byConnection(first, connections.meta);
    expect(metaRun).toMatchObject({ status: 'succeeded', planned_add: 2, added: 2, skipped_unmatchable: 0 });
    expect([...meta.customAudiences.audiences.get(metaRun.platform_audience_id!)!.rows].join('\n')).toContain(
      'MADID=6d92078a-8246-4ba4-ae5b-76104861e7dc',
    );

    const again = await syncNow(audience);
    for (const run of again) expect(run).toMatchObject({ status: 'succeeded', planned_add: 0, planned_remove: 0, added: 0 });
    expect(byConnection(again, connections.google).skipped_unmatchable).toBe(1);
  });

  it('retries a 429 with Retry-After and a 503, then succeeds; five failed tries fail the run', async () => {
    await writePeople([{ external_id: 'retry-1', identifiers: { email: 'retry@example.org' }, traits: { plan: 'zinc' } }]);
    const audience = await activeAudience('zinc', [connections.google]);
    google.dataManager.failNext({ kind: 'rate_limited', retryAfterSeconds: 1 }, { route: 'ingest' });
    google.dataManager.failNext({ kind: 'server_error', status: 503 }, { route: 'ingest' });
    const started = Date.now();
    const [run] = await syncNow(audience);
    expect(run).toMatchObject({ status: 'succeeded', added: 1, attempts: 1 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);

    await writePeople([{ external_id: 'retry-2', identifiers: { email: 'retry2@example.org' }, traits: { plan: 'nickel' } }]);
    const second = await activeAudience('nickel', [connections.google]);
    google.dataManager.failNext({ kind: 'server_error', status: 503 }, { route: 'ingest', times: 5 });
    const [failed] = await syncNow(second);
    expect(failed).toMatchObject({ status: 'failed', error_code: 'platform_unavailable', added: 0 });
    expect(failed!.error_detail).toContain('after 5 tries');
    // Nothing was recorded as sent: the membership change's own run (2 s later) sends the member.
    await waitFor(
      async () => (await settled(second)).some((next) => next.trigger === 'membership_change' && next.added === 1),
      'the next run',
    );
  });

  it('a platform that rejects the grant turns the connection expired and fails the run reauthorize_required', async () => {
    const other = await connectedWorkspace(api, google, meta);
    const people = [{ external_id: 'grant-1', identifiers: { email: 'grant@example.org' }, traits: { plan: 'lead' } }];
    expect((await api.request('/api/v1/people/batch/', send('POST', { people }, other.auth))).status).toBe(200);
    const created = await api.request(
      '/api/v1/audiences/',
      send(
        'POST',
        {
          name: 'Lead',
          source_type: 'rules',
          rules: { trait: 'plan', op: 'eq', value: 'lead' },
          connections: [other.google],
          status: 'active',
        },
        other.auth,
      ),
    );
    const audience = ((await created.json()) as { id: number }).id;
    google.dataManager.failNext({ kind: 'unauthenticated' }, { route: 'userLists' });
    const started = await api.request('/api/v1/syncs/', send('POST', { audience }, other.auth));
    const runId = ((await started.json()) as { runs: Run[] }).runs[0]!.id;
    let run: Run | undefined;
    await waitFor(async () => {
      run = (await (await api.request(`/api/v1/syncs/${runId}/`, { headers: other.auth })).json()) as Run;
      return FINAL.includes(run.status);
    });
    expect(run).toMatchObject({ status: 'failed', error_code: 'reauthorize_required' });
    const connection = (await (await api.request(`/api/v1/connections/${other.google}/`, { headers: other.auth })).json()) as {
      status: string;
      reauthorize_required: boolean;
    };
    expect(connection).toMatchObject({ status: 'expired', reauthorize_required: true });
  });

  it('a Google grant without the Data Manager scope, or without the terms, fails with what fixes it, and the audience says so', async () => {
    for (const [options, code, reason] of [
      [{ googleScopes: [ADWORDS] as string[] }, 'reauthorize_required', 'scope_missing'],
      [{ terms: false }, 'terms_not_accepted', 'terms_not_accepted'],
    ] as const) {
      const other = await connectedWorkspace(api, google, meta, options);
      const people = [{ external_id: 'scope-1', identifiers: { email: 'scope@example.org' }, traits: { plan: 'tin' } }];
      expect((await api.request('/api/v1/people/batch/', send('POST', { people }, other.auth))).status).toBe(200);
      const created = await api.request(
        '/api/v1/audiences/',
        send(
          'POST',
          {
            name: 'Tin',
            source_type: 'rules',
            rules: { trait: 'plan', op: 'eq', value: 'tin' },
            connections: [other.google],
            status: 'active',
          },
          other.auth,
        ),
      );
      const audience = ((await created.json()) as { id: number }).id;
      const detail = (await (await api.request(`/api/v1/audiences/${audience}/`, { headers: other.auth })).json()) as {
        destinations: { status_reason: string | null }[];
      };
      expect(detail.destinations[0]!.status_reason).toBe(reason);
      const started = await api.request('/api/v1/syncs/', send('POST', { audience }, other.auth));
      const runId = ((await started.json()) as { runs: Run[] }).runs[0]!.id;
      let run: Run | undefined;
      await waitFor(async () => {
        run = (await (await api.request(`/api/v1/syncs/${runId}/`, { headers: other.auth })).json()) as Run;
        return FINAL.includes(run.status);
      });
      expect(run).toMatchObject({ status: 'failed', error_code: code, added: 0 });
    }
  });

  it('tells a webhook when a run ends: sync.succeeded, and sync.failed for a run that failed, with the run as the API shows it', async () => {
    const received: { type: string; data: Run; headers: Record<string, unknown> }[] = [];
    const receiver = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        received.push({ ...(JSON.parse(body) as { type: string; data: Run }), headers: request.headers });
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = receiver.address() as AddressInfo;
      const hook = await call('POST', '/api/v1/webhooks/', {
        url: `http://127.0.0.1:${port}/hook`,
        events: ['sync.succeeded', 'sync.failed'],
      });
      expect(hook.status).toBe(201);
      await writePeople([{ external_id: 'hooked-1', identifiers: { email: 'hooked@example.org' }, traits: { plan: 'cobalt' } }]);
      const audience = await activeAudience('cobalt', [connections.google]);
      const [succeeded] = await syncNow(audience);
      await writePeople([{ external_id: 'hooked-2', identifiers: { email: 'hooked2@example.org' }, traits: { plan: 'cobalt' } }]);
      await waitFor(async () => (await call('GET', `/api/v1/audiences/${audience}/`)).body.size === 2, 'the second member');
      google.dataManager.failNext({ kind: 'server_error', status: 503 }, { route: 'ingest', times: 5 });
      const [failed] = await syncNow(audience);
      expect(failed!.status).toBe('failed');
      await waitFor(async () => received.length >= 2, 'two deliveries');
      const byRun = new Map(received.map((delivery) => [delivery.data.id, delivery]));
      expect(byRun.get(succeeded!.id)).toMatchObject({
        type: 'sync.succeeded',
        data: { id: succeeded!.id, status: 'succeeded', added: 1 },
      });
      expect(byRun.get(failed!.id)).toMatchObject({
        type: 'sync.failed',
        data: { id: failed!.id, status: 'failed', error_code: 'platform_unavailable' },
      });
      expect(byRun.get(failed!.id)!.headers['webhook-signature']).toMatch(/^v1,/);
    } finally {
      receiver.closeAllConnections();
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

  it('sends 10,050 Meta members as 10,000-row requests of one session, numbered from 1, whose last batch closes it', async () => {
    // Bodies as large as the rows need, so the 10,000-row limit is the one that cuts (the byte limit has its own test).
    meta.customAudiences.maxBodyBytes = 10_000_000;
    const people = Array.from({ length: 10_050 }, (_, index) => ({
      external_id: `meta-bulk-${index}`,
      identifiers: { email: `bulk${index}@example.org` },
      traits: { plan: 'bulk' },
    }));
    for (let start = 0; start < people.length; start += 1000) await writePeople(people.slice(start, start + 1000));
    const audience = await activeAudience('bulk', [connections.meta]);
    const [run] = await syncNow(audience);
    expect(run).toMatchObject({ status: 'succeeded', added: 10_050, failed: 0 });
    const requests = meta.customAudiences.requests.filter((request) => request.audienceId === run!.platform_audience_id);
    expect(requests.map((request) => request.data.length)).toEqual([10_000, 50]);
    expect(new Set(requests.map((request) => request.session.session_id)).size).toBe(1);
    expect(requests.map((request) => request.session.batch_seq)).toEqual(requests.map((_, index) => index + 1));
    expect(requests.map((request) => request.session.last_batch_flag)).toEqual(requests.map((_, index) => index === requests.length - 1));
    expect(requests.reduce((sum, request) => sum + request.data.length, 0)).toBe(10_050);
    expect(meta.customAudiences.sessions.get(requests[0]!.session.session_id)!.closed).toBe(true);
  }, 120_000);
});

describe('audience syncs (SPEC 10.3) without workers: the runs resource', () => {
  let google: FakeGoogleAds;
  let meta: FakeMetaAds;
  let api: TestApp;
  let auth: Record<string, string>;
  let connections: { google: number; meta: number };
  let workspace: Workspace;

  beforeAll(async () => {
    google = await startFakeGoogleAds();
    meta = await startFakeMetaAds();
    google.accounts = [{ id: GOOGLE_ACCOUNT, name: 'Shop' }];
    meta.accounts = [{ account_id: META_ACCOUNT, name: 'Shop' }];
    // No worker: runs stay queued, so coalescing and cancelling can be seen.
    api = await startTestApp(platformEnv(google, meta));
    ({ workspace, auth, ...connections } = await connectedWorkspace(api, google, meta));
  });
  // As above: closing may wait for running sync jobs.
  afterAll(async () => {
    await api.close();
    await google.close();
    await meta.close();
  }, 60_000);

  const call = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown, headers = auth) => {
    const response = await api.request(path, send(method, body, headers));
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };

  async function audienceWith(status: 'draft' | 'active', destinations: number[]): Promise<number> {
    const { status: code, body } = await call('POST', '/api/v1/audiences/', {
      name: `Res ${Math.random()}`,
      source_type: 'rules',
      rules: { trait: 'plan', op: 'eq', value: 'x' },
      connections: destinations,
      status,
    });
    expect(code).toBe(201);
    return body.id as number;
  }

  it('concurrent POSTs give one run per destination; a dry run is a run of its own', async () => {
    const audience = await audienceWith('active', [connections.google, connections.meta]);
    const answers = await Promise.all(Array.from({ length: 8 }, () => call('POST', '/api/v1/syncs/', { audience })));
    expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(201));
    const ids = new Set(answers.flatMap((answer) => (answer.body.runs as Run[]).map((run) => run.id)));
    expect(ids.size).toBe(2);
    const run = answers[0]!.body.runs[0] as Run;
    expect(run).toMatchObject({ status: 'queued', trigger: 'manual', dry_run: false, planned_add: null, attempts: 0, audience });
    const dry = await call('POST', '/api/v1/syncs/', { audience, connection: connections.google, dry_run: true });
    expect(dry.status).toBe(201);
    expect(dry.body.runs).toHaveLength(1);
    expect(ids.has(dry.body.runs[0].id)).toBe(false);
    const listed = await call('GET', `/api/v1/syncs/?audience=${audience}&status=queued&connection=${connections.google}`);
    expect(listed.body.count).toBe(2);
  });

  it('cancels a queued run (200) and refuses to cancel it again (409)', async () => {
    const audience = await audienceWith('active', [connections.google]);
    const { body } = await call('POST', '/api/v1/syncs/', { audience });
    const run = body.runs[0] as Run;
    const cancelled = await call('POST', `/api/v1/syncs/${run.id}/cancel/`);
    expect(cancelled).toMatchObject({ status: 200, body: { id: run.id, status: 'cancelled' } });
    expect(cancelled.body.finished_at).not.toBeNull();
    const again = await call('POST', `/api/v1/syncs/${run.id}/cancel/`);
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ status: 409, code: 'conflict' });
    // A cancelled run no longer holds the destination: a new POST makes a new run.
    const next = await call('POST', '/api/v1/syncs/', { audience });
    expect(next.body.runs[0].id).not.toBe(run.id);
  });

  it('answers 400 for an audience that is not active, one with no destination, and a connection that is not its destination', async () => {
    const draft = await audienceWith('draft', [connections.google]);
    const notActive = await call('POST', '/api/v1/syncs/', { audience: draft });
    expect(notActive.status).toBe(400);
    expect(Object.keys(notActive.body.errors)).toEqual(['audience']);
    const bare = await audienceWith('active', []);
    expect((await call('POST', '/api/v1/syncs/', { audience: bare })).body.errors).toHaveProperty('audience');
    const googleOnly = await audienceWith('active', [connections.google]);
    const wrong = await call('POST', '/api/v1/syncs/', { audience: googleOnly, connection: connections.meta });
    expect(wrong.status).toBe(400);
    expect(Object.keys(wrong.body.errors)).toEqual(['connection']);
    const missing = await call('POST', '/api/v1/syncs/', { audience: 999_999_999 });
    expect(missing.status).toBe(400);
    const bad = await call('POST', '/api/v1/syncs/', { audience: '1', dry_run: 'yes', extra: 1 });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.errors).sort()).toEqual(['audience', 'dry_run', 'extra']);
  });

  it('lets viewers read runs and refuses their POSTs; another workspace sees none of them', async () => {
    const audience = await audienceWith('active', [connections.google]);
    const { body } = await call('POST', '/api/v1/syncs/', { audience });
    const viewer = bearer((await login(api, await createUser(api, workspace, { role: 'viewer' }))).access);
    expect((await call('GET', `/api/v1/syncs/${body.runs[0].id}/`, undefined, viewer)).status).toBe(200);
    expect((await call('POST', '/api/v1/syncs/', { audience }, viewer)).status).toBe(403);
    const stranger = await createWorkspace(api);
    const outsider = bearer((await login(api, await createUser(api, stranger, { role: 'admin' }))).access);
    expect((await call('GET', `/api/v1/syncs/${body.runs[0].id}/`, undefined, outsider)).status).toBe(404);
    expect((await call('GET', '/api/v1/syncs/', undefined, outsider)).body.count).toBe(0);
    expect((await call('POST', '/api/v1/syncs/', { audience }, outsider)).status).toBe(400);
    expect((await call('POST', `/api/v1/syncs/${body.runs[0].id}/cancel/`, undefined, outsider)).status).toBe(404);
  });
});
