// Lets a child process of a test run the TypeScript sources directly (node --import
// ./test/support/ts-loader.mjs file.ts), as the test itself does under ts-jest: each .ts file is
// transpiled alone with tsconfig.json's decorator options, and `./x.js` resolves to `./x.ts`.
// Plain JavaScript because it runs before any TypeScript can.
import { register } from 'node:module';

register('./ts-loader-hooks.mjs', import.meta.url);
