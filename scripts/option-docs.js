// Rewrites the option tables of docs/*.md and README.md from the option schemas (lib/option-tables.ts):
// every block between `<!-- options:NAME -->` and `<!-- /options:NAME -->`. Needs `npx tsc -p tsconfig.json`.
//   node scripts/option-docs.js           rewrite the tables
//   node scripts/option-docs.js --check   list the files whose tables differ, exit 1 if any
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderOptionBlocks } from '../dist/option-tables.js';

const root = new URL('..', import.meta.url).pathname;
const files = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join('docs', f))];
const check = process.argv.includes('--check');
const drifted = [];
for (const file of files) {
  const path = join(root, file);
  const text = readFileSync(path, 'utf8');
  const rendered = renderOptionBlocks(text);
  if (rendered === text) continue;
  drifted.push(file);
  if (!check) writeFileSync(path, rendered);
}
if (check && drifted.length) {
  console.error(`option tables out of date in ${drifted.join(', ')}: run npx tsc -p tsconfig.json && node scripts/option-docs.js`);
  process.exit(1);
}
if (!check) console.log(drifted.length ? `rewrote ${drifted.join(', ')}` : 'option tables up to date');
