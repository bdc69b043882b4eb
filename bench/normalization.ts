import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { normalizeIdentifiers } from '../src/people/normalization/identifier-normalization.js';

/**
 * `node dist/bench/normalization.js [--rows N] [--rounds N]`: rows per second through
 * normalizeIdentifiers(), one thread, on synthetic identifiers (no real person's data), for the
 * row shapes an import meets. DATAPLANE-FACTS gives ~77,000/s for an email and ~18,000/s for a
 * libphonenumber-js parse on this kind of machine; the national-phone row is the one that pays
 * for the parse. Each scenario is warmed up, then timed over `rounds` passes; the best pass is
 * reported, since on a shared machine the slower ones measure the neighbours.
 */

type Row = Record<string, string>;

const SCENARIOS: { name: string; row: (index: number) => Row }[] = [
  { name: 'email', row: (index) => ({ email: ` Person.${index}+News@Example.com ` }) },
  { name: 'gmail email', row: (index) => ({ email: `Person.${index}+news@gmail.com` }) },
  { name: 'international phone (+)', row: (index) => ({ phone: `+1 (555) ${String(index % 10_000_000).padStart(7, '0')}` }) },
  {
    name: 'national phone + country',
    row: (index) => ({ phone: `020 79${String(index % 1_000_000).padStart(6, '0')}`, country_code: 'GB' }),
  },
  {
    name: 'full row (email, phone +, address)',
    row: (index) => ({
      email: `person.${index}@example.com`,
      phone: `+44 20 79${String(index % 1_000_000).padStart(6, '0')}`,
      first_name: 'Valéry',
      last_name: "O'Brien",
      country_code: 'US',
      postal_code: `${String(index % 100_000).padStart(5, '0')}-1234`,
    }),
  },
];

function timePass(rows: Row[]): number {
  const started = performance.now();
  let hashes = 0;
  for (const row of rows) hashes += normalizeIdentifiers(row).google.emails.length;
  const seconds = (performance.now() - started) / 1000;
  // Reading a result keeps the loop from being optimised away.
  if (hashes < 0) throw new Error('unreachable');
  return rows.length / seconds;
}

function main(): void {
  const { values } = parseArgs({ options: { rows: { type: 'string', default: '100000' }, rounds: { type: 'string', default: '3' } } });
  const rowCount = Number(values.rows);
  const rounds = Number(values.rounds);
  process.stdout.write(`node ${process.version}, ${rowCount} rows per pass, best of ${rounds}\n`);
  for (const scenario of SCENARIOS) {
    const rows = Array.from({ length: rowCount }, (_, index) => scenario.row(index));
    timePass(rows.slice(0, Math.min(rowCount, 20_000)));
    let best = 0;
    for (let round = 0; round < rounds; round++) best = Math.max(best, timePass(rows));
    process.stdout.write(`${scenario.name.padEnd(40)} ${Math.round(best).toLocaleString('en-US').padStart(10)} rows/s\n`);
  }
}

main();
