// `npm run build`: the service (nest build) and the web interface (vite build), then the stamp
// that `npm start`'s prestart (build-if-stale.mjs) compares with the build inputs, so a start
// right after a build does not build again. The stamp carries the build's start time, so an edit
// made during the build triggers the next one.
import { spawnSync } from 'node:child_process';
import { utimesSync, writeFileSync } from 'node:fs';

const STAMP = 'dist/.build-stamp';

const started = new Date();
for (const [command, ...args] of [
  ['npx', 'nest', 'build'],
  ['npx', 'vite', 'build', '--config', 'web/vite.config.ts'],
]) {
  const step = spawnSync(command, args, { stdio: 'inherit' });
  if (step.status !== 0) process.exit(step.status ?? 1);
}
writeFileSync(STAMP, `${started.toISOString()}\n`);
utimesSync(STAMP, started, started);
