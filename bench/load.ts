import { readdirSync, readFileSync } from 'node:fs';
import autocannon, { type Request, type Result } from 'autocannon';

/** What one measured scenario produced. Latencies in ms; CPU in % of one core over the measured window. */
export interface LoadResult {
  requestsPerSecond: number;
  latencyP50: number;
  latencyP99: number;
  latencyAverage: number;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /** Highest VmRSS of the server process seen while the scenario ran (sampled every 200 ms). */
  peakRssMb: number;
  cpu: CpuShare;
  /**
   * CPU time per response, of the server and of PostgreSQL. Unlike req/s this barely moves when
   * other work shares the machine, so it is the steadier measure of what a request costs.
   */
  serverCpuMsPerRequest: number;
  postgresCpuMsPerRequest: number | null;
}

/**
 * Where the 2 cores went during the window: the server under test, PostgreSQL (the postmaster and
 * all its backends, when it runs on this machine), this process (autocannon), and everything else
 * on the machine (other users' work, the idle other server). 200 = both cores saturated.
 */
export interface CpuShare {
  server: number;
  postgres: number | null;
  loadGenerator: number;
  other: number;
  machine: number;
}

export interface LoadOptions {
  url: string;
  requests: Request[];
  connections: number;
  durationSeconds: number;
  warmupSeconds: number;
  serverPid: number;
  postmasterPid: number | undefined;
}

/** USER_HZ: what /proc/<pid>/stat counts CPU time in (100 on every Linux the bench runs on). */
export const CLOCK_TICKS_PER_SECOND = 100;
const SAMPLE_INTERVAL_MS = 200;

/**
 * A warm-up (discarded) then the measured run with the same requests. Autocannon runs in this
 * process; keep-alive connections, no pipelining (like real API clients), 10 s request timeout.
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  if (options.warmupSeconds > 0) {
    await autocannon({ url: options.url, connections: options.connections, duration: options.warmupSeconds, requests: options.requests });
  }
  const sampler = new Sampler(options.serverPid, options.postmasterPid);
  const latencies = new Latencies();
  sampler.start();
  let result: Result;
  try {
    const instance = autocannon({
      url: options.url,
      connections: options.connections,
      duration: options.durationSeconds,
      requests: options.requests,
    });
    instance.on('response', (_client, _status, _bytes, responseTime) => latencies.add(responseTime));
    result = await instance;
  } finally {
    sampler.stop();
  }
  const statusCodes: Record<string, number> = {};
  for (const [code, stats] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = Number(stats.count);
  const requests = Object.values(statusCodes).reduce((sum, count) => sum + count, 0);
  const cpu = sampler.cpuShare();
  // From the raw ticks, not the rounded percentages: 1% of a core is too coarse for a cheap request.
  const perRequest = (ticks: number) => (requests === 0 ? 0 : round(((ticks / CLOCK_TICKS_PER_SECOND) * 1000) / requests, 3));
  const postgresTicks = sampler.postgresTicksUsed();
  const latency = latencies.summary();
  return {
    // Completed responses over the window: autocannon's own per-second mean drops the partial last second.
    requestsPerSecond: round(requests / result.duration, 0),
    latencyP50: latency.p50,
    latencyP99: latency.p99,
    latencyAverage: latency.average,
    requests,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    peakRssMb: round(sampler.peakRssKb / 1024, 1),
    cpu,
    serverCpuMsPerRequest: perRequest(sampler.serverTicksUsed()),
    postgresCpuMsPerRequest: postgresTicks === null ? null : perRequest(postgresTicks),
  };
}

/**
 * Every response's time, to 0.01 ms. Autocannon's own percentiles are whole milliseconds, which
 * on a 2–5 ms detail request turns a difference of a few tenths into 4 against 5 ms (1.25×).
 */
class Latencies {
  private readonly values: number[] = [];

  add(milliseconds: number): void {
    this.values.push(milliseconds);
  }

  /** p50, p99 and the mean, sorted once; 0 each when nothing was answered. */
  summary(): { p50: number; p99: number; average: number } {
    const sorted = Float64Array.from(this.values).sort();
    const sum = sorted.reduce((total, value) => total + value, 0);
    return {
      p50: round(nearestRank(sorted, 0.5), 2),
      p99: round(nearestRank(sorted, 0.99), 2),
      average: sorted.length === 0 ? 0 : round(sum / sorted.length, 2),
    };
  }
}

/** The nearest-rank percentile of ascending values (`fraction` 0.99 for p99), 0 when there are none. */
export function nearestRank(sorted: ArrayLike<number>, fraction: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.max(0, Math.ceil(fraction * sorted.length) - 1)]!;
}

/** One request with a fixed target, for checks outside the load (login, equivalence of answers). */
export async function fetchJson(url: string, init: RequestInit = {}): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, init);
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, body };
}

class Sampler {
  peakRssKb = 0;
  private timer: NodeJS.Timeout | undefined;
  private startedAt = 0;
  private stoppedAt = 0;
  private serverTicks: [number, number] = [0, 0];
  private postgresTicks: [Map<number, number>, Map<number, number>] = [new Map(), new Map()];
  private machineTicks: [number, number] = [0, 0];
  private generatorCpu: NodeJS.CpuUsage = { user: 0, system: 0 };
  private generatorDelta: NodeJS.CpuUsage = { user: 0, system: 0 };

  constructor(
    private readonly serverPid: number,
    private readonly postmasterPid: number | undefined,
  ) {}

  start(): void {
    this.startedAt = performance.now();
    this.serverTicks[0] = processTicks(this.serverPid) ?? 0;
    this.postgresTicks[0] = this.postgresTree();
    this.machineTicks[0] = machineBusyTicks();
    this.generatorCpu = process.cpuUsage();
    this.timer = setInterval(() => this.sampleRss(), SAMPLE_INTERVAL_MS);
    this.sampleRss();
  }

  stop(): void {
    clearInterval(this.timer);
    this.sampleRss();
    this.stoppedAt = performance.now();
    this.serverTicks[1] = processTicks(this.serverPid) ?? 0;
    this.postgresTicks[1] = this.postgresTree();
    this.machineTicks[1] = machineBusyTicks();
    this.generatorDelta = process.cpuUsage(this.generatorCpu);
  }

  serverTicksUsed(): number {
    return this.serverTicks[1] - this.serverTicks[0];
  }

  postgresTicksUsed(): number | null {
    if (this.postmasterPid === undefined) return null;
    let ticks = 0;
    for (const [pid, end] of this.postgresTicks[1]) ticks += end - (this.postgresTicks[0].get(pid) ?? 0);
    return ticks;
  }

  cpuShare(): CpuShare {
    const seconds = (this.stoppedAt - this.startedAt) / 1000;
    const percent = (ticks: number) => round((ticks / CLOCK_TICKS_PER_SECOND / seconds) * 100, 0);
    const server = percent(this.serverTicksUsed());
    const postgresTicks = this.postgresTicksUsed();
    const postgres = postgresTicks === null ? null : percent(postgresTicks);
    const loadGenerator = round(((this.generatorDelta.user + this.generatorDelta.system) / 1e6 / seconds) * 100, 0);
    const machine = percent(this.machineTicks[1] - this.machineTicks[0]);
    return { server, postgres, loadGenerator, machine, other: Math.max(0, machine - server - (postgres ?? 0) - loadGenerator) };
  }

  private sampleRss(): void {
    const rss = readRssKb(this.serverPid);
    if (rss !== undefined && rss > this.peakRssKb) this.peakRssKb = rss;
  }

  /** CPU ticks of the postmaster and every process it forked (backends, autovacuum, walwriter…). */
  private postgresTree(): Map<number, number> {
    const ticks = new Map<number, number>();
    if (this.postmasterPid === undefined) return ticks;
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const stat = readStat(Number(entry));
      if (stat && (stat.pid === this.postmasterPid || stat.ppid === this.postmasterPid)) ticks.set(stat.pid, stat.ticks);
    }
    return ticks;
  }
}

function readStat(pid: number): { pid: number; ppid: number; ticks: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may contain spaces and parentheses: fields are counted after the last ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { pid, ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return undefined;
  }
}

/** utime + stime of the process, all its threads, in clock ticks (CLOCK_TICKS_PER_SECOND). */
export function processTicks(pid: number): number | undefined {
  return readStat(pid)?.ticks;
}

/** Busy ticks of all cores together (everything but idle and iowait), from /proc/stat. */
export function machineBusyTicks(): number {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = fields.slice(0, 8).reduce((sum, value) => sum + value, 0);
  return total - fields[3]! - fields[4]!;
}

export function readRssKb(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number | undefined {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

export function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
