// The real datasets the tests read, bundled gzipped in test/fixtures/data/ so that a clone of the
// repository tests itself (sources, licenses and checksums: test/fixtures/data/README.md).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll } from 'vitest';

const FIXTURE_DIR = new URL('../fixtures/data/', import.meta.url);

/** The text of one bundled dataset, e.g. `realDataText('gsm8k-test.jsonl')`. */
export function realDataText(name: string): string {
  return gunzipSync(readFileSync(new URL(`${name}.gz`, FIXTURE_DIR))).toString('utf8');
}

/**
 * A temporary folder holding the named datasets decompressed, for the loaders that read files;
 * it is removed after the tests of the calling suite (or file, when called at the top level).
 */
export function unpackRealData(names: readonly string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'grpo-real-data-'));
  for (const name of names) writeFileSync(join(dir, name), realDataText(name));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
