import { readFile } from 'node:fs/promises';
import { WEB_TYPES_PATH, webTypes } from '../scripts/web-types.mjs';

/**
 * The web interface types the API from web/src/api/schema.ts, generated from openapi.json: when
 * the contract changes and the file is not regenerated, the pages would type-check against the
 * old contract. Regenerate with `npm run web:types` and commit the diff with the change.
 */
describe('web interface API types', () => {
  it('equal what openapi-typescript generates from the committed openapi.json', async () => {
    const committed = await readFile(WEB_TYPES_PATH, 'utf8').catch(() => '');
    expect(committed).toBe(await webTypes());
  });
});
