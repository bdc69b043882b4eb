// `npm start`'s prestart: builds only when a build input is newer than the last build, so a
// start after no change takes milliseconds instead of a full `nest build` (about 20-40 s).
// Inputs: the TypeScript sources (the service's and the web interface's) and every file that changes how they compile or what they load.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const STAMP = 'dist/.build-stamp';
const INPUTS = [
  'src',
  'web/src',
  'web/index.html',
  'web/vite.config.ts',
  'web/tsconfig.json',
  'web/public',
  'bench',
  'ormconfig.ts',
  'orm-entities.ts',
  'tsconfig.json',
  'tsconfig.build.json',
  'nest-cli.json',
  'package-lock.json',
];

function newestMtime(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

const newestInput = Math.max(...INPUTS.map(newestMtime));
if (existsSync(STAMP) && existsSync('dist/src/main.js') && statSync(STAMP).mtimeMs >= newestInput) {
  process.stdout.write('build: dist/ is up to date\n');
  process.exit(0);
}
// `npm run build` (scripts/build.mjs) writes the stamp itself, so a build by hand counts too.
const build = spawnSync('npm', ['run', 'build'], { stdio: 'inherit' });
process.exit(build.status ?? 1);
