// `npm run bench`: runs every bench/*.bench.js (or those named on the command line) one after
// another in child processes, so each starts with a clean heap.
import { readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const suites = readdirSync(here)
  .filter((name) => name.endsWith('.bench.js'))
  .filter((name) => wanted.length === 0 || wanted.some((w) => name.startsWith(w)))
  .sort();
let failed = 0;
for (const suite of suites) {
  console.log(`\n### ${suite}`);
  const { status } = spawnSync(process.execPath, [join(here, suite)], { stdio: 'inherit' });
  if (status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
