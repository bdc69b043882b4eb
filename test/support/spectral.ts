import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { ISpectralDiagnostic, RulesetDefinition } from '@stoplight/spectral-core';
import { parse } from 'yaml';

const require = createRequire(import.meta.url);

/**
 * Spectral run in-process on the committed ruleset (.spectral.yaml): the same file the Spectral
 * CLI reads (`npx @stoplight/spectral-cli lint openapi.json`), so a team can run either. Its
 * `extends` names map to the rulesets installed here; its `rules` turn single rules off, each with
 * its reason in a comment.
 */
export async function lintApiDocument(documentPath: string, rulesetPath: string): Promise<ISpectralDiagnostic[]> {
  const { Spectral, Document } = require('@stoplight/spectral-core') as typeof import('@stoplight/spectral-core');
  const { Json } = require('@stoplight/spectral-parsers') as typeof import('@stoplight/spectral-parsers');
  const { oas } = require('@stoplight/spectral-rulesets') as typeof import('@stoplight/spectral-rulesets');
  const owaspModule = (await import('@stoplight/spectral-owasp-ruleset')) as { default: unknown };
  const owasp = ((owaspModule.default as { default?: unknown }).default ?? owaspModule.default) as RulesetDefinition;
  const rulesets: Record<string, RulesetDefinition> = {
    'spectral:oas': oas as RulesetDefinition,
    '@stoplight/spectral-owasp-ruleset': owasp,
  };

  const config = parse(readFileSync(rulesetPath, 'utf8')) as { extends: (string | [string, string])[]; rules?: Record<string, string> };
  const spectral = new Spectral();
  spectral.setRuleset({
    extends: config.extends.map((entry) => {
      const [name, mode] = Array.isArray(entry) ? entry : [entry, 'recommended'];
      const ruleset = rulesets[name];
      if (!ruleset) throw new Error(`.spectral.yaml extends ${name}, which is not installed here`);
      return [ruleset, mode as 'recommended' | 'all'];
    }),
    rules: config.rules ?? {},
  } as RulesetDefinition);
  return spectral.run(new Document(readFileSync(documentPath, 'utf8'), Json, documentPath));
}
