import { jest } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { bearer, createUser, createWorkspace, login, send, type TestUser } from './support/factories.js';
import { startTestApp, type TestApp } from './support/test-app.js';
import { checkPage, describeWithBrowser, launchBrowser, signInInBrowser } from './support/web-browser.js';

interface AudienceBody {
  id: number;
  size: number | null;
  members_updated_at: string | null;
  rules: object;
}

/**
 * Issue 28 in the web interface, in a real browser: an audience's size and when it was computed,
 * the rules editor (the JSON it sends, the API's errors at their condition, stored rules outside
 * the grammar), the members list, the upload form of an upload audience, and a person's audiences.
 * Membership is recomputed by the job worker, at once (no debounce).
 */
describeWithBrowser('web interface: audience members (issue 28)', () => {
  jest.setTimeout(90_000);
  let api: TestApp;
  let browser: Browser;
  let editor: TestUser;
  let viewer: TestUser;
  let auth: Record<string, string>;

  const call = async (method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown) => {
    const response = await api.request(path, send(method, body, auth));
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };

  /** The audience once its members were computed (by the worker, after its creation or last change). */
  async function computed(id: number): Promise<AudienceBody> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const audience = (await call('GET', `/api/v1/audiences/${id}/`)).body as AudienceBody;
      if (audience.members_updated_at !== null) return audience;
      if (Date.now() > deadline) throw new Error(`audience ${id} was not computed`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  beforeAll(async () => {
    api = await startTestApp({ WORKER_CONCURRENCY: '1', MEMBERSHIP_DEBOUNCE_SECONDS: '0', JOB_POLL_INTERVAL_MS: '100' });
    const workspace = await createWorkspace(api);
    editor = await createUser(api, workspace, { role: 'editor' });
    viewer = await createUser(api, workspace, { role: 'viewer' });
    auth = bearer((await login(api, editor)).access);
    const people = [
      // Matched by the tree the first test builds: country DE, or consent to personalization not granted.
      { external_id: 'm-a', traits: { plan: 'pro', ltv: 80, country: 'DE', vip: true }, consent: { ad_personalization: 'granted' } },
      { external_id: 'm-b', traits: { plan: 'pro', ltv: 60, country: 'FR', vip: true }, consent: { ad_personalization: 'denied' } },
      // Not matched: neither DE/AT nor a missing consent; an ltv of another type; another plan; an opt-out trait.
      { external_id: 'x-c', traits: { plan: 'pro', ltv: 60, country: 'FR', vip: true }, consent: { ad_personalization: 'granted' } },
      { external_id: 'x-d', traits: { plan: 'pro', ltv: '90', country: 'DE', vip: true } },
      { external_id: 'x-e', traits: { plan: 'free', ltv: 90, country: 'DE', vip: true } },
      { external_id: 'x-f', traits: { plan: 'pro', ltv: 70, country: 'AT', vip: true, email_opt_out: true } },
      ...Array.from({ length: 25 }, (_, index) => ({
        external_id: `bulk-${String(index + 1).padStart(2, '0')}`,
        identifiers: { email: `bulk${index + 1}@example.com` },
        traits: { segment: 'bulk', rank: index + 1, city: 'Lyon', tier: 'b' },
      })),
    ];
    const written = await call('POST', '/api/v1/people/batch/', { people });
    expect(written.body).toMatchObject({ created: people.length, rejected: [] });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await api?.close();
  });

  /** A condition or group of the rules editor, by its position ("Condition 2", "Group 3", "Condition 3.1"). */
  const row = (page: Page, name: string) => page.getByRole('group', { name, exact: true });
  const errorsIn = (page: Page, rowName: string, label: string) =>
    row(page, rowName)
      .locator('.field', { has: page.getByLabel(label, { exact: true }) })
      .locator('[data-field-error]');

  it('builds a condition tree with the editor, sends exactly the grammar’s JSON, and shows the size and the members it computes', async () => {
    const { context, page } = await signInInBrowser(browser, api.baseUrl, editor);
    await page.goto(`${api.baseUrl}/app/audiences/new`);
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('Engaged pros');
    await page.getByText('No condition yet: this audience selects nobody.').waitFor();

    await page.getByRole('button', { name: 'Add condition', exact: true }).click();
    await row(page, 'Condition 1').getByLabel('Trait', { exact: true }).fill('plan');
    await row(page, 'Condition 1').getByLabel('Value', { exact: true }).fill('pro');

    await page.getByRole('button', { name: 'Add condition', exact: true }).click();
    await row(page, 'Condition 2').getByLabel('Trait', { exact: true }).fill('ltv');
    await row(page, 'Condition 2').getByLabel('Operator').selectOption('gte');
    // An ordering compares numbers or strings only: no "True or false" here.
    expect(await row(page, 'Condition 2').getByLabel('Type').locator('option').allTextContents()).toEqual(['Number', 'Text']);
    await row(page, 'Condition 2').getByLabel('Type').selectOption('number');
    await row(page, 'Condition 2').getByLabel('Value', { exact: true }).fill('50');

    // A nested group (it comes with one condition), matching any, with a negated consent condition.
    await page.getByRole('button', { name: 'Add group', exact: true }).click();
    await row(page, 'Group 3').getByLabel('Match').first().selectOption('any');
    await row(page, 'Condition 3.1').getByLabel('Trait', { exact: true }).fill('country');
    await row(page, 'Condition 3.1').getByLabel('Operator').selectOption('in');
    await row(page, 'Condition 3.1').getByLabel('Values', { exact: true }).fill('DE\nAT');
    await page.getByRole('button', { name: 'Add consent condition to group 3' }).click();
    await row(page, 'Condition 3.2').getByLabel('Consent', { exact: true }).selectOption('ad_personalization');
    await row(page, 'Condition 3.2').getByLabel('Value', { exact: true }).selectOption('granted');
    await row(page, 'Condition 3.2')
      .getByLabel(/^Negate/)
      .check();

    // Typed values: a boolean is chosen, not typed; exists and not_exists take no value at all.
    await page.getByRole('button', { name: 'Add condition', exact: true }).click();
    await row(page, 'Condition 4').getByLabel('Trait', { exact: true }).fill('vip');
    await row(page, 'Condition 4').getByLabel('Type').selectOption('boolean');
    expect(await row(page, 'Condition 4').getByRole('combobox', { name: 'Value', exact: true }).count()).toBe(1);
    expect(await row(page, 'Condition 4').getByRole('textbox', { name: 'Value', exact: true }).count()).toBe(0);
    await page.getByRole('button', { name: 'Add condition', exact: true }).click();
    await row(page, 'Condition 5').getByLabel('Trait', { exact: true }).fill('email_opt_out');
    await row(page, 'Condition 5').getByLabel('Operator').selectOption('not_exists');
    expect(
      await row(page, 'Condition 5')
        .getByLabel(/^Values?$/)
        .count(),
    ).toBe(0);
    expect(await row(page, 'Condition 5').getByLabel('Type').count()).toBe(0);

    // One condition too many, then removed by its own button.
    await page.getByRole('button', { name: 'Add condition', exact: true }).click();
    await page.getByRole('button', { name: 'Remove condition 6' }).click();
    expect(await row(page, 'Condition 6').count()).toBe(0);

    const expected = {
      all: [
        { trait: 'plan', op: 'eq', value: 'pro' },
        { trait: 'ltv', op: 'gte', value: 50 },
        {
          any: [
            { trait: 'country', op: 'in', value: ['DE', 'AT'] },
            { not: { consent: 'ad_personalization', op: 'eq', value: 'granted' } },
          ],
        },
        { trait: 'vip', op: 'eq', value: true },
        { trait: 'email_opt_out', op: 'not_exists' },
      ],
    };
    await page.getByText('The JSON of these rules').click();
    expect(JSON.parse((await page.locator('.rules-json').textContent())!)).toEqual(expected);
    await checkPage(page, 'audiences-01-rules-editor');

    const request = page.waitForRequest((sent) => sent.method() === 'POST' && sent.url().endsWith('/api/v1/audiences/'));
    await page.getByRole('button', { name: 'Create audience' }).click();
    expect(JSON.parse((await request).postData()!).rules).toEqual(expected);
    await page.getByRole('heading', { level: 1, name: 'Engaged pros' }).waitFor();
    const id = Number(new URL(page.url()).pathname.split('/').pop());

    // The recompute runs in the background; the page looks again until it has, with no reload.
    const outcome = page.locator('.outcome');
    await outcome.getByText('2 members, computed just now.').waitFor();
    expect(await outcome.locator('time').getAttribute('datetime')).toBe((await computed(id)).members_updated_at);
    const members = page.getByRole('region', { name: 'Members', exact: true });
    await members.getByText('1–2 of 2 members, by external id.').waitFor();
    expect(await members.getByRole('row').allTextContents()).toEqual([
      'External idMatched keysTraits',
      'm-aNonecountry: DE, ltv: 80, plan: pro, and 1 more',
      'm-bNonecountry: FR, ltv: 60, plan: pro, and 1 more',
    ]);
    // The editor shows the stored tree again, row for row.
    expect(await row(page, 'Condition 3.1').getByLabel('Values', { exact: true }).inputValue()).toBe('DE\nAT');
    expect(
      await row(page, 'Condition 3.2')
        .getByLabel(/^Negate/)
        .isChecked(),
    ).toBe(true);
    await checkPage(page, 'audiences-02-computed');

    // A member links to their page, which lists their audiences by name.
    await members.getByRole('link', { name: 'm-a' }).click();
    await page.getByRole('heading', { level: 1, name: 'm-a' }).waitFor();
    await page.getByRole('region', { name: 'Audiences' }).getByRole('link', { name: 'Engaged pros' }).click();
    await page.getByRole('heading', { level: 1, name: 'Engaged pros' }).waitFor();

    // An edit of the rules is computed again, and the page follows it.
    await row(page, 'Condition 1').getByLabel('Operator').selectOption('neq');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Changes saved.').waitFor();
    await outcome.getByText('1 member, computed just now.').waitFor();
    await members.getByText('1–1 of 1 member, by external id.').waitFor();
    await members.getByRole('link', { name: 'x-e' }).waitFor();

    // The list keeps its Size column.
    await page.goto(`${api.baseUrl}/app/audiences?search=engaged`);
    const listed = page.getByRole('row', { name: /Engaged pros/ });
    await listed.waitFor();
    expect(await listed.getByRole('cell').nth(3).textContent()).toBe('1');
    await context.close();
  });

  it('shows the API’s errors at the condition they belong to, and a number that is not one before sending', async () => {
    const { context, page } = await signInInBrowser(browser, api.baseUrl, editor);
    await page.goto(`${api.baseUrl}/app/audiences/new`);
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('Typos');
    for (let index = 0; index < 3; index++) await page.getByRole('button', { name: 'Add condition', exact: true }).click();
    await row(page, 'Condition 1').getByLabel('Trait', { exact: true }).fill('plan');
    await row(page, 'Condition 1').getByLabel('Value', { exact: true }).fill('pro');
    // Negated: its error comes under rules.all.1.not.trait.
    await row(page, 'Condition 2').getByLabel('Trait', { exact: true }).fill('bad name!');
    await row(page, 'Condition 2').getByLabel('Value', { exact: true }).fill('x');
    await row(page, 'Condition 2')
      .getByLabel(/^Negate/)
      .check();
    // An empty list: rules.all.2.value.
    await row(page, 'Condition 3').getByLabel('Trait', { exact: true }).fill('tags');
    await row(page, 'Condition 3').getByLabel('Operator').selectOption('in');

    const answer = page.waitForResponse(
      (response) => response.request().method() === 'POST' && response.url().endsWith('/api/v1/audiences/'),
    );
    await page.getByRole('button', { name: 'Create audience' }).click();
    const refused = await answer;
    expect(refused.status()).toBe(400);
    expect(Object.keys(((await refused.json()) as { errors: object }).errors).sort()).toEqual([
      'rules.all.1.not.trait',
      'rules.all.2.value',
    ]);
    await errorsIn(page, 'Condition 2', 'Trait').waitFor();
    expect(await errorsIn(page, 'Condition 2', 'Trait').textContent()).toBe('Must be 1–64 characters of letters, digits, "_", "." or "-".');
    expect(await row(page, 'Condition 2').getByLabel('Trait', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    expect(await errorsIn(page, 'Condition 3', 'Values').textContent()).toBe('Must be a non-empty list of at most 1000 values.');
    expect(await row(page, 'Condition 1').locator('[data-field-error]').count()).toBe(0);
    await page.getByRole('alert').getByText('Some fields need attention: see the messages below them.').waitFor();
    await checkPage(page, 'audiences-03-rules-errors');

    // A number that is not one is said at its field, and nothing is sent.
    let posted = 0;
    page.on('request', (sent) => {
      if (sent.method() === 'POST' && sent.url().endsWith('/api/v1/audiences/')) posted++;
    });
    await row(page, 'Condition 1').getByLabel('Type').selectOption('number');
    await row(page, 'Condition 1').getByLabel('Value', { exact: true }).fill('a lot');
    await page.getByRole('button', { name: 'Create audience' }).click();
    await errorsIn(page, 'Condition 1', 'Value').getByText('Enter a number.').waitFor();
    expect(posted).toBe(0);

    // Fixed, it is created.
    await row(page, 'Condition 1').getByLabel('Value', { exact: true }).fill('3');
    await row(page, 'Condition 2').getByLabel('Trait', { exact: true }).fill('bad_name');
    await row(page, 'Condition 3').getByLabel('Values', { exact: true }).fill('a\nb');
    await page.getByRole('button', { name: 'Create audience' }).click();
    await page.getByRole('heading', { level: 1, name: 'Typos' }).waitFor();
    expect(posted).toBe(1);
    await context.close();
  });

  it('opens an audience whose stored rules are outside the grammar as JSON, says it must be fixed, and saves it once fixed', async () => {
    const created = await call('POST', '/api/v1/audiences/', { name: 'From before the grammar', source_type: 'rules' });
    const id = (created.body as AudienceBody).id;
    // After its first computation, so that no recompute runs after the rules are made old.
    await computed(id);
    await api.dataSource.query(`UPDATE audiences SET rules = '{"country": "DE"}', size = NULL, members_updated_at = NULL WHERE id = $1`, [
      id,
    ]);

    const { context, page } = await signInInBrowser(browser, api.baseUrl, editor);
    await page.goto(`${api.baseUrl}/app/audiences/${id}`);
    await page.getByRole('heading', { level: 1, name: 'From before the grammar' }).waitFor();
    await page.getByText('Not computed: the rules must be fixed first.').waitFor();
    await page
      .getByRole('alert')
      .getByText(/do not follow the rules grammar.*cannot be saved or activated until they are fixed/)
      .waitFor();
    const json = page.getByLabel('Rules (JSON)');
    expect(JSON.parse(await json.inputValue())).toEqual({ country: 'DE' });
    await checkPage(page, 'audiences-04-rules-outside-grammar');

    // The editor cannot show it, and the API refuses it as it is.
    await page.getByRole('button', { name: 'Use the editor' }).click();
    await page.getByText('This JSON does not follow the rules grammar, so the editor cannot show it: fix it here first.').waitFor();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page
      .locator('.field', { has: json })
      .locator('[data-field-error]')
      .getByText(/Use exactly one of/)
      .waitFor();

    // Fixed as JSON, then shown by the editor, and saved.
    await json.fill('{"trait": "country", "op": "eq", "value": "DE"}');
    await page.getByRole('button', { name: 'Use the editor' }).click();
    expect(await row(page, 'Condition 1').getByLabel('Trait', { exact: true }).inputValue()).toBe('country');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Changes saved.').waitFor();
    expect(((await call('GET', `/api/v1/audiences/${id}/`)).body as AudienceBody).rules).toEqual({
      all: [{ trait: 'country', op: 'eq', value: 'DE' }],
    });
    // Members: m-a, x-d and x-e have the country DE.
    await page.locator('.outcome').getByText('3 members, computed just now.').waitFor();

    // And the other way: the tree as JSON, editable as text.
    await page.getByRole('button', { name: 'Edit as JSON' }).click();
    expect(JSON.parse(await page.getByLabel('Rules (JSON)').inputValue())).toEqual({ all: [{ trait: 'country', op: 'eq', value: 'DE' }] });
    await context.close();
  });

  it('pages through the members, says when there are none, and shows a viewer the rules in words', async () => {
    const bulk = (
      await call('POST', '/api/v1/audiences/', { name: 'Bulk', source_type: 'rules', rules: { trait: 'segment', op: 'eq', value: 'bulk' } })
    ).body as AudienceBody;
    const nobody = (await call('POST', '/api/v1/audiences/', { name: 'Nobody', source_type: 'rules', rules: {} })).body as AudienceBody;
    expect((await computed(bulk.id)).size).toBe(25);
    expect((await computed(nobody.id)).size).toBe(0);

    const { context, page } = await signInInBrowser(browser, api.baseUrl, editor);
    await page.goto(`${api.baseUrl}/app/audiences/${bulk.id}`);
    await page.locator('.outcome').getByText('25 members, computed just now.').waitFor();
    const members = page.getByRole('region', { name: 'Members', exact: true });
    await members.getByText('1–20 of 25 members, by external id.').waitFor();
    expect(await members.getByRole('row').count()).toBe(21);
    expect(await members.getByRole('row').nth(1).textContent()).toBe('bulk-01Emailcity: Lyon, rank: 1, segment: bulk, and 1 more');
    await members.getByText('Page 1 of 2').waitFor();
    await members.getByRole('button', { name: 'Next' }).click();
    await members.getByText('21–25 of 25 members, by external id.').waitFor();
    expect(await members.getByRole('link').allTextContents()).toEqual(['bulk-21', 'bulk-22', 'bulk-23', 'bulk-24', 'bulk-25']);
    expect(await members.getByRole('button', { name: 'Next' }).isDisabled()).toBe(true);
    await checkPage(page, 'audiences-05-members-page-2');

    await page.goto(`${api.baseUrl}/app/audiences/${nobody.id}`);
    await page.locator('.outcome').getByText('0 members, computed just now.').waitFor();
    await page.getByText('No members: nobody matches these rules, or they have not been computed yet.').waitFor();
    await page.getByText('No condition yet: this audience selects nobody.').waitFor();
    await context.close();

    const viewing = await signInInBrowser(browser, api.baseUrl, viewer);
    await viewing.page.goto(`${api.baseUrl}/app/audiences/${bulk.id}`);
    await viewing.page.locator('.outcome').getByText('25 members, computed just now.').waitFor();
    const rules = viewing.page.getByRole('region', { name: 'Details' }).getByRole('definition').last();
    expect(await rules.locator('.rules-in-words').textContent()).toBe('All of:segment is “bulk”');
    expect(await viewing.page.getByRole('button').allTextContents()).toEqual(['Sign out', 'Previous', 'Next']);
    await checkPage(viewing.page, 'audiences-06-viewer-rules');
    await viewing.context.close();
  });

  it('offers an upload audience’s editors a CSV upload with add, remove or replace, and lists the members uploaded', async () => {
    const audience = (await call('POST', '/api/v1/audiences/', { name: 'Newsletter list', source_type: 'upload' })).body as AudienceBody;
    await computed(audience.id);
    const { context, page } = await signInInBrowser(browser, api.baseUrl, editor);
    await page.goto(`${api.baseUrl}/app/audiences/${audience.id}`);
    await page.locator('.outcome').getByText('0 members, computed').waitFor();
    const members = page.getByRole('region', { name: 'Members', exact: true });
    await members.getByText('No members yet: upload a CSV file of people below.').waitFor();
    // No rules for an upload audience.
    expect(await page.getByRole('group', { name: 'Conditions' }).count()).toBe(0);
    const upload = page.getByRole('form', { name: 'Upload members' });
    const radios = upload.getByRole('radio');
    expect(await radios.count()).toBe(3);
    expect(await Promise.all([0, 1, 2].map((index) => radios.nth(index).getAttribute('value')))).toEqual(['add', 'remove', 'replace']);
    expect(await upload.getByRole('radio', { name: /^Add/ }).isChecked()).toBe(true);
    await upload.getByRole('radio', { name: /^Replace: the file’s people become the members; members not in it leave/ }).check();
    await upload.getByRole('button', { name: 'Upload members' }).click();
    await upload.getByRole('alert').getByText('Choose a CSV file to upload.').waitFor();
    await checkPage(page, 'audiences-07-upload-form');

    // Members added through the API are listed, with the size counted by the upload.
    const added = await call('POST', `/api/v1/audiences/${audience.id}/members/`, {
      action: 'add',
      people: [{ external_id: 'm-a' }, { external_id: 'new-1', identifiers: { email: 'new.one@example.com' } }],
    });
    expect(added.body).toMatchObject({ added: 2, removed: 0, rejected: [] });
    await page.reload();
    await page.locator('.outcome').getByText('2 members, computed').waitFor();
    // The members are a second read of the page: wait for their list before reading it.
    await members.getByText('1–2 of 2 members, by external id.').waitFor();
    expect(await members.getByRole('link').allTextContents()).toEqual(['m-a', 'new-1']);

    // A CSV file replaces the members: m-a stays, new-1 leaves, csv-1 and csv-2 arrive (created as people).
    const csv = 'external_id,email,plan\nm-a,,\ncsv-1,csv.one@example.com,gold\ncsv-2,,silver\n';
    await upload.getByLabel('CSV file').setInputFiles({ name: 'members.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await upload.getByRole('radio', { name: /^Replace/ }).check();
    await upload.getByRole('button', { name: 'Upload members' }).click();
    const progress = page.getByRole('region', { name: 'Upload' });
    await progress.getByText('Succeeded: every accepted row was applied').waitFor({ timeout: 30_000 });
    await page.locator('.outcome').getByText('3 members, computed').waitFor();
    await members.getByRole('link', { name: 'csv-2' }).waitFor();
    // The members' links (the upload's own link to its import is in the same section).
    const memberLinks = (await members.getByRole('link').allTextContents()).filter((text) => !/^Import \d+$/.test(text));
    expect(memberLinks).toEqual(['csv-1', 'csv-2', 'm-a']);
    expect(await page.content()).not.toContain('csv.one@example.com');
    const imports = (await call('GET', '/api/v1/imports/')).body as {
      results: { target: string; audience: number; mode: string; status: string }[];
    };
    expect(imports.results[0]).toMatchObject({ target: 'audience', audience: audience.id, mode: 'replace', status: 'succeeded' });
    await checkPage(page, 'audiences-08-upload-replaced');
    await context.close();

    // A viewer sees the members, not the upload.
    const viewing = await signInInBrowser(browser, api.baseUrl, viewer);
    await viewing.page.goto(`${api.baseUrl}/app/audiences/${audience.id}`);
    await viewing.page.getByRole('region', { name: 'Members', exact: true }).getByRole('link', { name: 'csv-2' }).waitFor();
    expect(await viewing.page.getByRole('form', { name: 'Upload members' }).count()).toBe(0);
    expect(await viewing.page.locator('input[type=file]').count()).toBe(0);
    await viewing.context.close();
  });
});
