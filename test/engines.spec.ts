import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { minVersion, satisfies } from 'semver';

// The README's two commands must work on every Node the project supports (package.json `engines`,
// and the Node 24 that CI and the container image run), so no installed package may ask for a newer
// one: on Node 20 `npm ci` would warn (EBADENGINE), and the package may use what Node 20 lacks. Reads
// the lock file, so a new or upgraded dependency is checked here.

const root = join(import.meta.dirname, '..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');

/**
 * Packages that declare a newer Node than they need, kept because no older major fits, each with
 * its reason. Nothing else may refuse a supported Node.
 */
const ACCEPTED: Readonly<Record<string, string>> = {
  // @fastify/static 10 (the only major @nestjs/platform-fastify 12 accepts) calls `create` of
  // content-disposition 3, which earlier majors do not export. Version 3 is an ES module with no
  // import and no Node API (node_modules/content-disposition/dist/index.js); @fastify/static
  // require()s it, which Node has done since 20.19 (require of ES modules), the oldest we support.
  'node_modules/content-disposition': 'pure ES module, loaded by require() since Node 20.19',
  // nestjs-cls 7 is the first major that loads @nestjs/common 12 (an ES module) by import: 6
  // require()s it, which Jest cannot do on Node 20. The one Node 22 API it uses,
  // Promise.withResolvers, it brings a polyfill for (dist/*/utils/promise-with-resolvers.polyfill.js).
  'node_modules/nestjs-cls': 'polyfills its one Node 22 API; 6.x cannot load Nest 12 under Jest on Node 20',
};

interface LockedPackage {
  readonly version?: string;
  readonly engines?: { readonly node?: string } | string[];
}

describe('Node versions the dependencies accept', () => {
  const manifest = JSON.parse(read('package.json')) as { engines: { node: string } };
  const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, LockedPackage> };
  const oldest = minVersion(manifest.engines.node)!.version;
  const node24 = /^NODE24_VERSION=(\S+)$/m.exec(read('.ci/run'))![1];

  it.each([oldest, node24])('every installed package accepts Node %s', (node) => {
    const refusing: string[] = [];
    for (const [path, locked] of Object.entries(lock.packages)) {
      const range = Array.isArray(locked.engines) ? undefined : locked.engines?.node;
      if (path === '' || !range || path in ACCEPTED) continue;
      if (!satisfies(node, range)) refusing.push(`${path}@${locked.version} asks for node ${range}`);
    }
    expect(refusing).toEqual([]);
  });

  it('the project supports Node 20.19 and later, the Node 24 of CI among them', () => {
    expect(manifest.engines.node).toBe('>=20.19.0');
    expect(satisfies(node24, manifest.engines.node)).toBe(true);
  });
});
