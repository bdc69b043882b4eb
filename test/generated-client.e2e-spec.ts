import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createUser, createWorkspace, login } from './support/factories.js';
import { type TestApp, startTestApp } from './support/test-app.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
// Inside node_modules, so the script resolves openapi-fetch as an integrator's project would.
const WORK = `${ROOT}node_modules/.cache/generated-client/`;

/**
 * What an integration team does with openapi.json (issue 15, README "Generating a client"):
 * generate TypeScript types with openapi-typescript at its default settings, write a plain CRUD
 * script with openapi-fetch, type-check it in strict mode, and run it against the real app.
 */
const SCRIPT = `
import createClient from 'openapi-fetch';
import type { paths } from './api.js';

const [baseUrl, access] = process.argv.slice(2);
const client = createClient<paths>({ baseUrl, headers: { Authorization: \`Bearer \${access}\` } });

const created = await client.POST('/api/v1/audiences/', { body: { name: 'Generated client', source_type: 'rules', rules: { trait: 'country', op: 'eq', value: 'DE' } } });
if (!created.data) throw new Error(\`create failed: \${JSON.stringify(created.error)}\`);
const id: number = created.data.id;
const read = await client.GET('/api/v1/audiences/{id}/', { params: { path: { id } } });
const updated = await client.PATCH('/api/v1/audiences/{id}/', { params: { path: { id } }, body: { description: 'Renamed by a script' } });
const listed = await client.GET('/api/v1/audiences/', { params: { query: { search: 'generated', ordering: '-name', page_size: 5 } } });
const invalid = await client.POST('/api/v1/audiences/', { body: { name: '', source_type: 'rules' } });
const removed = await client.DELETE('/api/v1/audiences/{id}/', { params: { path: { id } } });
const gone = await client.GET('/api/v1/audiences/{id}/', { params: { path: { id } } });

console.log(JSON.stringify({
  created: { status: created.response.status, name: created.data.name, status_field: created.data.status },
  read: { status: read.response.status, id: read.data?.id },
  updated: { status: updated.response.status, description: updated.data?.description },
  listed: { status: listed.response.status, count: listed.data?.count, names: listed.data?.results.map((audience) => audience.name) },
  invalid: { status: invalid.response.status, code: invalid.error?.code, errors: invalid.error?.errors },
  removed: { status: removed.response.status },
  gone: { status: gone.response.status, code: gone.error?.code },
}));
`;

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    skipLibCheck: true,
    types: ['node'],
    typeRoots: [`${ROOT}node_modules/@types`],
    outDir: 'out',
  },
  files: ['crud.ts', 'api.d.ts'],
};

describe('a client generated from openapi.json at default settings', () => {
  let api: TestApp;

  beforeAll(async () => {
    api = await startTestApp();
    rmSync(WORK, { recursive: true, force: true });
    mkdirSync(WORK, { recursive: true });
    writeFileSync(`${WORK}package.json`, JSON.stringify({ type: 'module', private: true }));
    writeFileSync(`${WORK}tsconfig.json`, JSON.stringify(TSCONFIG));
    writeFileSync(`${WORK}crud.ts`, SCRIPT);
  });
  afterAll(async () => {
    await api.close();
  });

  it('generates the types and type-checks a CRUD script against them in strict mode', () => {
    // The README's commands: `npx openapi-typescript openapi.json -o api.d.ts`, then tsc.
    execFileSync(process.execPath, [`${ROOT}node_modules/openapi-typescript/bin/cli.js`, `${ROOT}openapi.json`, '-o', `${WORK}api.d.ts`], {
      stdio: 'pipe',
    });
    try {
      execFileSync(process.execPath, [`${ROOT}node_modules/typescript/bin/tsc`, '-p', `${WORK}tsconfig.json`], {
        stdio: 'pipe',
        cwd: WORK,
      });
    } catch (error) {
      throw new Error(`the generated client does not type-check:\n${String((error as { stdout?: Buffer }).stdout ?? error)}`);
    }
  }, 60_000);

  it('does a CRUD round trip and reads a typed problem body against the real app', async () => {
    const user = await createUser(api, await createWorkspace(api), { role: 'editor' });
    const { access } = await login(api, user);
    // Asynchronously: the app answers from this same process.
    const { stdout: output } = await promisify(execFile)(process.execPath, [`${WORK}out/crud.js`, api.baseUrl, access], {
      encoding: 'utf8',
    });
    expect(JSON.parse(output)).toEqual({
      created: { status: 201, name: 'Generated client', status_field: 'draft' },
      read: { status: 200, id: expect.any(Number) },
      updated: { status: 200, description: 'Renamed by a script' },
      listed: { status: 200, count: 1, names: ['Generated client'] },
      invalid: { status: 400, code: 'validation_error', errors: { name: ['This field may not be blank.'] } },
      removed: { status: 204 },
      gone: { status: 404, code: 'not_found' },
    });
  }, 60_000);
});
