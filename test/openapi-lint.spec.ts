import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isMap, isScalar, isSeq, parseDocument } from 'yaml';
import { lintApiDocument } from './support/spectral.js';

const SEVERITY = ['error', 'warning', 'information', 'hint'];
const DOCUMENT = fileURLToPath(new URL('../openapi.json', import.meta.url));
const RULESET = fileURLToPath(new URL('../.spectral.yaml', import.meta.url));

/** The node a JSON pointer (`#/paths/~1api~1v1~1audiences~1/get`, percent-encoded as Spectral writes it) names, or undefined. */
function resolvePointer(document: unknown, pointer: string): unknown {
  return pointer
    .replace(/^#\//, '')
    .split('/')
    .map((part) => decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>(
      (node, key) => (node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined),
      document,
    );
}

/**
 * The API document as integration teams lint it: Spectral with the OpenAPI and OWASP API Top 10
 * rulesets (.spectral.yaml). No error may remain; every rule is on for the whole document, and an
 * exemption names the parts of the document it is for, with its reason (issue 25, item 15).
 */
describe('openapi.json under Spectral (OWASP API Security Top 10 ruleset)', () => {
  it('has no error and no warning', async () => {
    const findings = await lintApiDocument(DOCUMENT, RULESET);
    const readable = findings.map(
      (finding) => `${SEVERITY[finding.severity]} ${finding.code} at ${finding.path.join('.')}: ${finding.message}`,
    );
    expect(readable).toEqual([]);
  });

  it('turns no rule off for the whole document, only for the parts of it each exemption names', () => {
    const ruleset = parseDocument(readFileSync(RULESET, 'utf8'));
    const rules = ruleset.get('rules');
    expect(isMap(rules) ? rules.items.map((pair) => `${String(pair.key)}: ${String(pair.value)}`) : []).toEqual([]);
    const overrides = ruleset.get('overrides');
    expect(isSeq(overrides) && overrides.items.length > 0).toBe(true);
    for (const override of isSeq(overrides) ? overrides.items : []) {
      const files = isMap(override) ? override.get('files') : undefined;
      expect(isSeq(files) && files.items.length > 0).toBe(true);
      for (const entry of isSeq(files) ? files.items : [])
        expect(String(isScalar(entry) ? entry.value : entry)).toMatch(/^openapi\.json#\/./);
    }
  });

  it('names only parts of the document that exist, and each parameter by its name, so no exemption drifts onto something else', () => {
    const document = JSON.parse(readFileSync(DOCUMENT, 'utf8')) as unknown;
    const ruleset = parseDocument(readFileSync(RULESET, 'utf8'));
    const stale: string[] = [];
    let checked = 0;
    for (const override of (ruleset.get('overrides') as { items: unknown[] }).items) {
      for (const entry of ((override as { get(key: string): unknown }).get('files') as { items: unknown[] }).items) {
        if (!isScalar(entry)) continue;
        const pointer = String(entry.value).slice('openapi.json'.length);
        const target = resolvePointer(document, pointer);
        checked++;
        if (target === undefined) stale.push(`${pointer}: not in openapi.json`);
        // A parameter is named by its place in the list; the line's comment says which one it must be.
        else if (/\/parameters\/\d+$/.test(pointer) && (target as { name?: string }).name !== entry.comment?.trim())
          stale.push(`${pointer}: is ${(target as { name?: string }).name}, the comment says ${entry.comment?.trim()}`);
      }
    }
    expect(stale).toEqual([]);
    expect(checked).toBeGreaterThan(50);
  });
});
