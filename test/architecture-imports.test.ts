// The one-way dependencies of docs/architecture.md, read from the import lines of lib/: the text layer sits below
// both the data layer and the rewards, neither of those two imports the other (nor anything above them), and no
// file of lib/ reaches itself through its imports.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const LIB = join(import.meta.dirname, '..', 'lib');
const IMPORT = /^(?:import|export)\b[^'"]*?\bfrom\s+'(\.[^']+)'/gm;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory() ? sources(path) : e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** lib-relative file → the lib-relative files it imports (type-only imports included: they tie the layers too). */
const graph = new Map(sources(LIB).map((file) => {
  const text = readFileSync(file, 'utf8');
  const targets = [...text.matchAll(IMPORT)].map((m) => relative(LIB, normalize(join(dirname(file), m[1].replace(/\.js$/, '.ts')))));
  return [relative(LIB, file), targets] as const;
}));

/** The first folder of a lib-relative path ('' for files at lib/'s top). */
const layer = (file: string) => (file.includes('/') ? file.slice(0, file.indexOf('/')) : '');
const importsOf = (folder: string) =>
  [...graph].filter(([file]) => layer(file) === folder).flatMap(([file, targets]) => targets.map((t) => `${file} -> ${t}`));
const leaving = (folder: string, allowed: readonly string[]) =>
  importsOf(folder).filter((edge) => {
    const target = edge.slice(edge.indexOf(' -> ') + 4);
    return layer(target) !== folder && !allowed.includes(layer(target) === '' ? target : layer(target));
  });

describe('lib/ imports run one way', () => {
  it('lib/text imports nothing but errors and validation', () => {
    expect(leaving('text', ['errors.ts', 'validate.ts'])).toEqual([]);
  });

  it('lib/data and lib/rewards stand on lib/text and the foundation only, never on each other', () => {
    const foundation = ['errors.ts', 'validate.ts', 'user-files.ts', 'devices.ts', 'options', 'text'];
    expect(leaving('data', foundation)).toEqual([]);
    expect(leaving('rewards', foundation)).toEqual([]);
  });

  it('no file of lib/ imports itself through a circle', () => {
    const state = new Map<string, 'open' | 'done'>();
    const circles: string[] = [];
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') return void circles.push([...path.slice(path.indexOf(file)), file].join(' -> '));
      state.set(file, 'open');
      for (const target of graph.get(file) ?? []) visit(target, [...path, file]);
      state.set(file, 'done');
    };
    [...graph.keys()].forEach((file) => visit(file, []));
    expect(circles).toEqual([]);
  });
});
