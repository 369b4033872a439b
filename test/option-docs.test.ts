// The option tables of docs/*.md are generated from the option schemas (lib/option-tables.ts): this fails
// when a table differs from what `node scripts/option-docs.js` writes, or when a schema has no table.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OPTION_TABLES, optionTable, renderOptionBlocks } from '../lib/option-tables.js';

const root = join(import.meta.dirname, '..');
const files = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join('docs', f))];
const texts = Object.fromEntries(files.map((f) => [f, readFileSync(join(root, f), 'utf8')]));
const FIX = 'run `npx tsc -p tsconfig.json && node scripts/option-docs.js` and commit the docs';

describe('option tables in docs/', () => {
  it.each(files)('%s: every option table is what the schema generates', (file) => {
    const text = texts[file];
    expect(renderOptionBlocks(text) === text, `${file}: option tables out of date; ${FIX}`).toBe(true);
  });

  it('every schema has its table in the docs', () => {
    const all = Object.values(texts).join('\n');
    for (const name of Object.keys(OPTION_TABLES)) {
      expect(all.includes(`<!-- options:${name} -->`), `no <!-- options:${name} --> block in README.md or docs/*.md`).toBe(true);
    }
  });

  it('a hand edit of a generated row is detected and rewritten', () => {
    const block = `<!-- options:loss -->\n${optionTable('loss')}\n<!-- /options:loss -->`;
    const edited = block.replace('| `0.2` |', '| `0.3` |');
    expect(edited).not.toBe(block);
    expect(renderOptionBlocks(`intro\n\n${edited}\n\nmore`)).toBe(`intro\n\n${block}\n\nmore`);
  });

  it('rows carry the schema: nested paths, ranges, recipe defaults', () => {
    expect(optionTable('loss')).toContain('| `vespo.kPos` | number (finite and >= 0) | `2` |');
    expect(optionTable('trainer')).toContain('| `generation.maxNewTokens` | integer >= 1 | `160` (ccr: `192`; grpo: `96`) |');
    expect(optionTable('groupAdvantages')).toContain('| `scale` | "group" \\| "batch" \\| "none" | `"group"` |');
  });

  it('an unknown table name fails', () => {
    expect(() => renderOptionBlocks('<!-- options:nope -->\n<!-- /options:nope -->')).toThrow(/unknown option table "nope"/);
  });
});
