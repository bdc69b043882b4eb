import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LoadResult } from './load.js';

export type Auth = 'jwt' | 'api-key';

export interface ScenarioRecord {
  scenario: string;
  description: string;
  auth: Auth;
  listPageOne: boolean;
  /** Built to be refused (400): its non-2xx count is the expected outcome, not a failure. */
  hostile?: boolean;
  /** A data-plane write (bench/scenarios.ts): held to its floor at 0.80. */
  dataPlane?: boolean;
  /** The scenario its CPU per request is held to. */
  comparedWith?: string;
  service: LoadResult;
  ceiling: LoadResult | null;
  /** service req/s ÷ ceiling req/s: the figure that counts (absolute numbers drift on a shared machine). */
  ratio: number | null;
  /** BENCH_FLOOR, the reads and the data plane's writes: the framework floor (bench/floor.ts) under the same load. */
  floor?: LoadResult;
  /** floor req/s ÷ ceiling req/s: what the required stack alone leaves of the ceiling. */
  floorRatio?: number | null;
}

export interface GrowthRecord {
  workspace: string;
  signals: number;
  page: number;
  label: 'page 1' | 'deep page';
  service: LoadResult;
  ceiling: LoadResult | null;
  ratio: number | null;
}

export interface TargetCheck {
  target: string;
  measured: string;
  met: boolean;
}

export interface Report {
  meta: Record<string, unknown>;
  scenarios: ScenarioRecord[];
  growth: GrowthRecord[];
  targets: TargetCheck[];
  explain: Record<string, string>;
  equivalence: { check: string; same: boolean; note?: string }[];
  /** BENCH_FLOOR: the floor's answers against the ceiling's (the service's without a ceiling). */
  floorEquivalence?: { check: string; same: boolean; note?: string }[];
}

/** Issue 6's targets, checked against what was measured. */
export function checkTargets(scenarios: ScenarioRecord[], growth: GrowthRecord[], connections: number): TargetCheck[] {
  const checks: TargetCheck[] = [];
  for (const record of scenarios.filter((entry) => entry.listPageOne)) {
    const name = `${record.scenario} (${record.auth})`;
    if (record.ratio !== null)
      checks.push({ target: `${name}: ≥ 60% of the ceiling's req/s`, measured: `${percent(record.ratio)}`, met: record.ratio >= 0.6 });
    checks.push({
      target: `${name}: p99 < 50 ms at ${connections} connections`,
      measured: `${record.service.latencyP99} ms`,
      met: record.service.latencyP99 < 50,
    });
    const failures = record.service.non2xx + record.service.errors;
    checks.push({ target: `${name}: zero non-2xx`, measured: `${failures}`, met: failures === 0 });
  }
  // Issue 32: the service within 10% of the framework floor on every read (20% on the data plane's
  // 1,000-row writes), p99 within 1.2× on the reads.
  for (const record of scenarios.filter((entry) => entry.floor !== undefined && entry.floor.requestsPerSecond > 0)) {
    const name = `${record.scenario} (${record.auth})`;
    const floor = record.floor!;
    const share = record.service.requestsPerSecond / floor.requestsPerSecond;
    const least = record.dataPlane ? 0.8 : 0.9;
    checks.push({ target: `${name}: ≥ ${percent(least)} of the floor's req/s`, measured: percent(share), met: share >= least });
    if (record.dataPlane) continue;
    const p99 = record.service.latencyP99 / Math.max(floor.latencyP99, 0.001);
    checks.push({
      target: `${name}: p99 ≤ 1.2× the floor's`,
      measured: `${record.service.latencyP99} ms vs ${floor.latencyP99} ms = ${p99.toFixed(2)}×`,
      met: p99 <= 1.2,
    });
  }
  for (const record of scenarios.filter((entry) => entry.hostile)) {
    const refused = record.service.statusCodes['400'] ?? 0;
    checks.push({
      target: `${record.scenario} (${record.auth}): every request refused with 400`,
      measured: `${refused} of ${record.service.requests}`,
      met: refused === record.service.requests && record.service.requests > 0,
    });
    const reference = scenarios.find((entry) => entry.scenario === record.comparedWith && entry.auth === record.auth);
    if (reference) {
      const factor = record.service.serverCpuMsPerRequest / Math.max(reference.service.serverCpuMsPerRequest, 0.001);
      checks.push({
        target: `${record.scenario} (${record.auth}): CPU per request ≤ 1.5× ${reference.scenario}`,
        measured: `${record.service.serverCpuMsPerRequest} ms vs ${reference.service.serverCpuMsPerRequest} ms = ${factor.toFixed(2)}×`,
        met: factor <= 1.5,
      });
    }
  }
  if (scenarios.length > 0) {
    // Hostile scenarios hold 32 bodies of 0.9 MB at once by design; the RSS target is about normal
    // traffic at 32 connections. The data plane's writes (4 connections of 1,000-row bodies) are
    // reported on a line of their own, held to the floor's peak rather than to a fixed figure.
    const normal = scenarios.filter((entry) => !entry.hostile && !entry.dataPlane);
    const peak = Math.max(...normal.map((entry) => entry.service.peakRssMb), ...growth.map((entry) => entry.service.peakRssMb));
    checks.push({ target: `service peak RSS under ${connections} connections ≤ 300 MB`, measured: `${peak} MB`, met: peak <= 300 });
    const writes = scenarios.filter((entry) => entry.dataPlane && entry.floor !== undefined);
    if (writes.length > 0) {
      const service = Math.max(...writes.map((entry) => entry.service.peakRssMb));
      const floor = Math.max(...writes.map((entry) => entry.floor!.peakRssMb));
      checks.push({
        target: "service peak RSS on the data plane's writes ≤ 1.2× the floor's",
        measured: `${service} MB vs ${floor} MB`,
        met: service <= floor * 1.2,
      });
    }
  }
  const pageOne = growth.filter((entry) => entry.label === 'page 1').sort((a, b) => a.signals - b.signals);
  if (pageOne.length >= 2) {
    const small = pageOne[0]!;
    const large = pageOne[pageOne.length - 1]!;
    const factor = large.service.latencyP50 / Math.max(small.service.latencyP50, 0.001);
    checks.push({
      target: `${large.signals.toLocaleString('en-US')}-signal page 1 p50 ≤ 3× the ${small.signals.toLocaleString('en-US')}-signal one`,
      measured: `${large.service.latencyP50} ms vs ${small.service.latencyP50} ms = ${factor.toFixed(1)}×`,
      met: factor <= 3,
    });
  }
  return checks;
}

function percent(ratio: number): string {
  return `${Math.round(ratio * 100)}%`;
}

/** A plain-text table: columns padded to their widest cell; numbers right-aligned. */
export function table(header: string[], rows: (string | number)[][]): string {
  const cells = [header, ...rows.map((row) => row.map(String))];
  const widths = header.map((_, column) => Math.max(...cells.map((row) => row[column]!.length)));
  const numeric = header.map((_, column) =>
    rows.every((row) => typeof row[column] === 'number' || /^[\d.,%×-]+$/.test(String(row[column]))),
  );
  const line = (row: string[]) =>
    `| ${row.map((cell, column) => (numeric[column] ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!))).join(' | ')} |`;
  const rule = `|${widths.map((width, column) => (numeric[column] ? `${'-'.repeat(width + 1)}:` : '-'.repeat(width + 2))).join('|')}|`;
  return [line(header), rule, ...cells.slice(1).map(line)].join('\n');
}

const cpuCell = (result: LoadResult) =>
  `${result.cpu.server}/${result.cpu.postgres ?? '?'}/${result.cpu.loadGenerator}/${result.cpu.other}`;
const costCell = (service: LoadResult, ceiling: LoadResult | null) =>
  `${service.serverCpuMsPerRequest.toFixed(2)} (${ceiling ? ceiling.serverCpuMsPerRequest.toFixed(2) : '-'})`;
const ratioCell = (ratio: number | null) => (ratio === null ? '-' : percent(ratio));

/** The tables printed at the end (and pasted into docs/benchmarks.md): markdown, readable as text too. */
export function renderReport(report: Report): string {
  const meta = report.meta as Record<string, string>;
  const parts: string[] = [];
  parts.push(
    [
      `Benchmark ${meta.date} — commit ${meta.commit}`,
      `machine: ${meta.machine}`,
      `PostgreSQL: ${meta.postgres} (${meta.database})`,
      `data: ${meta.dataSizes}`,
      `load: ${meta.load}`,
    ].join('\n'),
  );
  parts.push(
    table(
      [
        'scenario',
        'auth',
        'service req/s',
        'p50 ms',
        'p99 ms',
        'non-2xx',
        'peak RSS MB',
        'ceiling req/s',
        'p50 ms',
        'p99 ms',
        'service/ceiling',
        'CPU ms/req svc (ceil)',
        'CPU% svc/pg/gen/other',
      ],
      report.scenarios.map((entry) => [
        entry.scenario,
        entry.auth,
        entry.service.requestsPerSecond,
        entry.service.latencyP50,
        entry.service.latencyP99,
        entry.service.non2xx + entry.service.errors,
        entry.service.peakRssMb,
        entry.ceiling?.requestsPerSecond ?? '-',
        entry.ceiling?.latencyP50 ?? '-',
        entry.ceiling?.latencyP99 ?? '-',
        ratioCell(entry.ratio),
        costCell(entry.service, entry.ceiling),
        cpuCell(entry.service),
      ]),
    ),
  );
  const withFloor = report.scenarios.filter((entry) => entry.floor !== undefined);
  if (withFloor.length > 0) {
    parts.push(
      table(
        [
          'floor',
          'auth',
          'floor req/s',
          'p50 ms',
          'p99 ms',
          'non-2xx',
          'peak RSS MB',
          'floor/ceiling',
          'service/floor',
          'service/ceiling',
          'CPU ms/req svc/floor/ceil',
          'CPU% floor/pg/gen/other',
        ],
        withFloor.map((entry) => {
          const floor = entry.floor!;
          return [
            entry.scenario,
            entry.auth,
            floor.requestsPerSecond,
            floor.latencyP50,
            floor.latencyP99,
            floor.non2xx + floor.errors,
            floor.peakRssMb,
            ratioCell(entry.floorRatio ?? null),
            ratioCell(floor.requestsPerSecond > 0 ? entry.service.requestsPerSecond / floor.requestsPerSecond : null),
            ratioCell(entry.ratio),
            [entry.service, floor, entry.ceiling].map((result) => (result ? result.serverCpuMsPerRequest.toFixed(2) : '-')).join(' / '),
            cpuCell(floor),
          ];
        }),
      ),
    );
  }
  if (report.growth.length > 0) {
    parts.push(
      table(
        [
          'growth (JWT)',
          'page',
          'service p50 ms',
          'p99 ms',
          'req/s',
          'non-2xx',
          'ceiling p50 ms',
          'p99 ms',
          'req/s',
          'service/ceiling',
          'CPU ms/req svc (ceil)',
          'pg CPU ms/req',
          'CPU% svc/pg/gen/other',
        ],
        report.growth.map((entry) => [
          `${entry.signals.toLocaleString('en-US')} signals`,
          `${entry.label} (${entry.page})`,
          entry.service.latencyP50,
          entry.service.latencyP99,
          entry.service.requestsPerSecond,
          entry.service.non2xx + entry.service.errors,
          entry.ceiling?.latencyP50 ?? '-',
          entry.ceiling?.latencyP99 ?? '-',
          entry.ceiling?.requestsPerSecond ?? '-',
          ratioCell(entry.ratio),
          costCell(entry.service, entry.ceiling),
          entry.service.postgresCpuMsPerRequest ?? '-',
          cpuCell(entry.service),
        ]),
      ),
    );
  }
  if (report.targets.length > 0) {
    parts.push(
      table(
        ['target (issues 6 and 32)', 'measured', 'met'],
        report.targets.map((check) => [check.target, check.measured, check.met ? 'met' : 'MISSED']),
      ),
    );
  }
  const different = report.equivalence.filter((check) => !check.same);
  parts.push(
    different.length === 0
      ? `service and ceiling answered ${report.equivalence.length} sample requests with the same JSON`
      : `WARNING: service and ceiling answers differ for ${different.map((check) => check.check).join(', ')}`,
  );
  if (report.floorEquivalence) {
    // The equivalence list is empty exactly when no ceiling ran; the floor is then held to the service.
    const reference = report.equivalence.length > 0 ? 'ceiling' : 'service';
    const differentOnFloor = report.floorEquivalence.filter((check) => !check.same);
    parts.push(
      differentOnFloor.length === 0
        ? `floor and ${reference} answered ${report.floorEquivalence.length} sample requests with the same JSON`
        : `WARNING: floor and ${reference} answers differ for ${differentOnFloor.map((check) => check.check).join(', ')}`,
    );
  }
  return `${parts.join('\n\n')}\n`;
}

export function writeReport(report: Report, resultsDir: string): string {
  mkdirSync(resultsDir, { recursive: true });
  const file = join(resultsDir, `bench-${String(report.meta.date).replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}

/** The checkout's commit, marked when its tracked files have uncommitted changes. */
export function gitCommit(cwd: string): string {
  try {
    const git = (args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const commit = git(['rev-parse', '--short=12', 'HEAD']);
    const dirty = git(['status', '--porcelain', '--untracked-files=no']) !== '';
    return dirty ? `${commit} (+ uncommitted changes)` : commit;
  } catch {
    return 'unknown';
  }
}
