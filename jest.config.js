import { readFileSync } from 'node:fs';

/**
 * Jest in native ESM mode (NestJS 12 is ESM-only), run with NODE_OPTIONS=--experimental-vm-modules
 * (see package.json scripts): ts-jest with useESM for the files the @nestjs/swagger plugin
 * rewrites, a file-by-file transpile for the rest.
 * Unit tests sit next to the code (src/**\/*.spec.ts); end-to-end tests in test/ go through HTTP
 * into the real app and a real PostgreSQL, one database per test file.
 */

// The @nestjs/swagger CLI plugin runs in tests with the options `nest build` uses, so the document
// the tests generate (and compare with openapi.json) is the one the built service serves.
const nestCli = JSON.parse(readFileSync(new URL('./nest-cli.json', import.meta.url), 'utf8'));
const swaggerPlugin = nestCli.compilerOptions.plugins.find((plugin) => plugin.name === '@nestjs/swagger');

const pluginSuffixes = [
  ...swaggerPlugin.options.dtoFileNameSuffix,
  ...(swaggerPlugin.options.controllerFileNameSuffix ?? ['.controller.ts']),
];
const pluginFiles = `(${pluginSuffixes.map((suffix) => suffix.replace(/\./g, '\\.')).join('|')})$`;

export default {
  // Node's environment, and a file that leaves a socket, server, timer or process open fails, naming it.
  testEnvironment: '<rootDir>/test/support/open-handles-environment.mjs',
  extensionsToTreatAsEsm: ['.ts'],
  // `./x.js` in our TypeScript is `./x.ts` on disk; a package's own `x.json.js` (libphonenumber-js's
  // metadata, a JavaScript module) is a real file and stays as written, or Jest would load the JSON.
  moduleNameMapper: { '^(\\.{1,2}/(?!.*\\.json\\.js$).*)\\.js$': '$1' },
  transform: {
    // What the @nestjs/swagger plugin rewrites under `nest build` (nest-cli.json's DTO suffixes, and
    // controllers by the plugin's default): tsconfig.json, but compiled as one program, not file by
    // file, since the plugin reads types a DTO or controller imports from other files.
    [pluginFiles]: [
      'ts-jest',
      {
        useESM: true,
        tsconfig: { isolatedModules: false },
        // TS151002 ("hybrid module kind … isolatedModules") is the warning for exactly the setting above, chosen on purpose.
        diagnostics: { ignoreCodes: [151002], exclude: ['**'] },
        astTransformers: { before: [{ path: '<rootDir>/src/openapi/swagger-plugin.jest.js', options: swaggerPlugin.options }] },
      },
    ],
    // Every other file on its own (see the file): much faster than through the program.
    '^.+\\.ts$': '<rootDir>/test/support/ts-transpile.mjs',
    // ESM only, required by @fastify/static: compiled to CommonJS where Node needs it (see the file).
    '/node_modules/content-disposition/.+\\.js$': '<rootDir>/test/support/esm-package-transform.mjs',
  },
  transformIgnorePatterns: ['/node_modules/(?!content-disposition/)'],
  testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/**/*.e2e-spec.ts', '<rootDir>/test/**/*.spec.ts'],
  globalSetup: '<rootDir>/test/support/global-setup.mjs',
  globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
  maxWorkers: 2,
  // A worker keeps about 55 MB of heap per test file it has run (each file's ESM module graph): 3.3 GB
  // by the end of a whole run. So much heap took Node longer than Jest's default 500 ms to free at
  // exit, after the last file, and Jest force-killed the worker with "A worker process has failed
  // to exit gracefully" although nothing was left open (the environment checks that). A worker now
  // starts afresh once it holds 1 GB after a file, and has 5 s to exit; a handle truly left open
  // keeps it alive for good, so the warning still names a leak.
  workerIdleMemoryLimit: '1GB',
  workerGracefulExitTimeout: 5000,
  testTimeout: 30000,
};
