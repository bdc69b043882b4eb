// Jest's node environment, plus a check that a test file closes what it opened. A socket, server,
// timer or child process a file leaves behind keeps its Jest worker alive after the run, and all
// Jest then says is "A worker process has failed to exit gracefully and has been force exited"
// (issue 25, item 19), without naming the file. Here the file that left it fails, naming what.
// Plain JavaScript because Jest loads test environments outside its ESM transform.
import { TestEnvironment } from 'jest-environment-node';

/** Resources that keep a process alive (process.getActiveResourcesInfo() names only those that do). */
const LASTING = new Set([
  'TCPSocketWrap',
  'TCPServerWrap',
  'TLSWrap',
  'PipeWrap',
  'PipeServerWrap',
  'ProcessWrap',
  'UDPWrap',
  'FSEventWrap',
  'StatWatcher',
  'Timeout',
]);

/** How long a closing socket (its FIN on the way) may take to go before it counts as left open. */
const GRACE_MS = 3000;

function lastingCounts() {
  const counts = new Map();
  for (const kind of process.getActiveResourcesInfo()) if (LASTING.has(kind)) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
}

export default class OpenHandlesEnvironment extends TestEnvironment {
  async setup() {
    // process.stdin, stdout and stderr open their pipe to Jest on first use, which can fall in
    // whichever file a worker runs first (a file that reads process.stdin, Node's warning about VM
    // modules on stderr): open them now, so they are in the baseline and not counted against it.
    void process.stdin;
    void process.stdout;
    void process.stderr;
    // What the worker held before this file (Jest's own, and anything an earlier file left).
    this.before = lastingCounts();
    await super.setup();
  }

  // A failing test often leaves things open on its way out; its own failure is the one to show then.
  handleTestEvent(event) {
    if ((event.name === 'test_done' && event.test.errors.length > 0) || event.name === 'hook_failure') this.failed = true;
  }

  async teardown() {
    await super.teardown();
    if (this.failed) return;
    const deadline = Date.now() + GRACE_MS;
    let left = this.leftOpen();
    while (left.length > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      left = this.leftOpen();
    }
    if (left.length > 0) {
      throw new Error(
        `This test file left open: ${left.join(', ')}. Close every server, socket, pool, client and timer it opens ` +
          '(in afterAll), or its Jest worker cannot exit. `npx jest --detectOpenHandles <file>` may show where one was made.',
      );
    }
  }

  leftOpen() {
    const left = [];
    for (const [kind, count] of lastingCounts()) {
      const extra = count - (this.before.get(kind) ?? 0);
      if (extra > 0) left.push(`${extra} × ${kind}`);
    }
    return left;
  }
}
