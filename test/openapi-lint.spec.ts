import { fileURLToPath } from 'node:url';
import { lintApiDocument } from './support/spectral.js';

const SEVERITY = ['error', 'warning', 'information', 'hint'];

/**
 * The API document as integration teams lint it: Spectral with the OpenAPI and OWASP API Top 10
 * rulesets (.spectral.yaml). No error may remain; the warnings left are listed in the ruleset
 * with the reason each is off.
 */
describe('openapi.json under Spectral (OWASP API Security Top 10 ruleset)', () => {
  it('has no error and no warning', async () => {
    const findings = await lintApiDocument(
      fileURLToPath(new URL('../openapi.json', import.meta.url)),
      fileURLToPath(new URL('../.spectral.yaml', import.meta.url)),
    );
    const readable = findings.map(
      (finding) => `${SEVERITY[finding.severity]} ${finding.code} at ${finding.path.join('.')}: ${finding.message}`,
    );
    expect(readable).toEqual([]);
  });
});
