import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { ISpectralDiagnostic, RulesetDefinition } from '@stoplight/spectral-core';
import { parse } from 'yaml';

const require = createRequire(import.meta.url);

/** .spectral.yaml: the rulesets it extends, rules set for the whole document, and exemptions scoped to parts of it. */
export interface SpectralConfig {
  extends: (string | [string, string])[];
  rules?: Record<string, string>;
  overrides?: { files: string[]; rules: Record<string, string> }[];
}

/**
 * Spectral run in-process on the committed ruleset (.spectral.yaml): the same file the Spectral
 * CLI reads (`npx @stoplight/spectral-cli lint openapi.json`), so a team can run either. Its
 * `extends` names map to the rulesets installed here; its `overrides` turn single rules off for
 * the parts of the document they name by JSON pointer, each group with its reason in a comment.
 */
export async function lintApiDocument(documentPath: string, rulesetPath: string): Promise<ISpectralDiagnostic[]> {
  const { Spectral, Document, Ruleset } = require('@stoplight/spectral-core') as typeof import('@stoplight/spectral-core');
  const { Json } = require('@stoplight/spectral-parsers') as typeof import('@stoplight/spectral-parsers');
  const { oas } = require('@stoplight/spectral-rulesets') as typeof import('@stoplight/spectral-rulesets');
  const owaspModule = (await import('@stoplight/spectral-owasp-ruleset')) as { default: unknown };
  const owasp = ((owaspModule.default as { default?: unknown }).default ?? owaspModule.default) as RulesetDefinition;
  const rulesets: Record<string, RulesetDefinition> = {
    'spectral:oas': oas as RulesetDefinition,
    '@stoplight/spectral-owasp-ruleset': owasp,
  };

  const config = parse(readFileSync(rulesetPath, 'utf8')) as SpectralConfig;
  const spectral = new Spectral();
  // The ruleset knows its own path, so its overrides' `files` (openapi.json#/pointer) resolve as the CLI resolves them.
  spectral.setRuleset(
    new Ruleset(
      {
        extends: config.extends.map((entry) => {
          const [name, mode] = Array.isArray(entry) ? entry : [entry, 'recommended'];
          const ruleset = rulesets[name];
          if (!ruleset) throw new Error(`.spectral.yaml extends ${name}, which is not installed here`);
          return [ruleset, mode as 'recommended' | 'all'];
        }),
        rules: config.rules ?? {},
        ...(config.overrides && { overrides: config.overrides }),
      },
      { source: rulesetPath },
    ),
  );
  return spectral.run(new Document(readFileSync(documentPath, 'utf8'), Json, documentPath));
}
