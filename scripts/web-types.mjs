// The web interface's API types (web/src/api/schema.ts), generated from the committed openapi.json
// so the pages cannot drift from the contract: `npm run web:types` writes the file, and
// test/web-types.spec.ts fails while the committed one differs from what this produces.
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import { format, resolveConfig } from 'prettier';

export const OPENAPI_PATH = fileURLToPath(new URL('../openapi.json', import.meta.url));
export const WEB_TYPES_PATH = fileURLToPath(new URL('../web/src/api/schema.ts', import.meta.url));

const BANNER = '// Generated from openapi.json by `npm run web:types` (scripts/web-types.mjs). Do not edit: regenerate.\n\n';

/** The text web/src/api/schema.ts should hold for the given openapi.json, formatted as the repository's Prettier formats it. */
export async function webTypes(openapiPath = OPENAPI_PATH) {
  const document = JSON.parse(await readFile(openapiPath, 'utf8'));
  // enumValues: each enum also as a runtime array, so pages list statuses and types from the
  // document instead of repeating them.
  const generated = astToString(await openapiTS(document, { enumValues: true }));
  // The enum arrays' helper type keeps `null` on a nullable object (openapi-typescript 7), so the
  // array of an enum inside one (a destination's `last_run.status`) fails the type check: the
  // helper steps into the object without its null.
  const helper = 'Extract<T[K], unknown[]>[number] : T[K]>';
  if (!generated.includes(helper)) throw new Error('web-types: the enum helper type changed; review the null fix');
  const source = BANNER + generated.replace(helper, 'Extract<T[K], unknown[]>[number] : NonNullable<T[K]>>');
  const options = await resolveConfig(WEB_TYPES_PATH);
  return format(source, { ...options, filepath: WEB_TYPES_PATH });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await writeFile(WEB_TYPES_PATH, await webTypes());
  process.stdout.write(`wrote ${WEB_TYPES_PATH}\n`);
}
