// The best checkpoint is one unit: while a run replaces it again and again, a reader that resolves
// `best` once always finds a policy folder and the best.json of that same policy, never a missing best
// or a policy of one validation beside the numbers of another. A run folder of the earlier layout
// (best/ as a plain folder) is taken over on its next best.
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Policy } from '../lib/policy/policy.js';
import { RunDir } from '../lib/trainer/run-dir.js';
import { tempRunRoot } from './helpers/trainer.js';

/** A policy whose saved folder says which step saved it; saved like BuiltinPolicy: temporary folder, then renames. */
function markedPolicy(): { policy: Policy; step: number } {
  const marked = { step: 0, policy: undefined as unknown as Policy };
  marked.policy = {
    async save(dir: string) {
      const temp = `${dir}.tmp`, old = `${dir}.old`;
      await mkdir(temp, { recursive: true });
      await writeFile(join(temp, 'marker.json'), JSON.stringify({ step: marked.step }));
      if (existsSync(dir)) await rename(dir, old);
      await rename(temp, dir);
      await rm(old, { recursive: true, force: true });
    },
  } as Policy;
  return marked;
}

/** What a reader of `best` sees: the step of its policy and of its best.json (one resolution), or missing. */
function readBest(runDir: string): { policy: number; json: number } | 'missing' {
  try {
    const dir = realpathSync(join(runDir, 'best'));
    const policy = JSON.parse(readFileSync(join(dir, 'policy', 'marker.json'), 'utf8')).step;
    return { policy, json: JSON.parse(readFileSync(join(dir, 'best.json'), 'utf8')).step };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw error;
  }
}

describe('the best checkpoint', () => {
  it('is never missing or mismatched while it is replaced', async () => {
    const runDir = join(tempRunRoot(), 'run');
    const dir = new RunDir(runDir);
    const marked = markedPolicy();
    marked.step = 1;
    await dir.saveBest(marked.policy, 1, 0.1, 'accuracy');
    let writing = true;
    const seen: ({ policy: number; json: number } | 'missing')[] = [];
    const reader = (async () => {
      while (writing) {
        seen.push(readBest(runDir));
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    for (let step = 2; step <= 40; step++) {
      marked.step = step;
      await dir.saveBest(marked.policy, step, step / 100, 'accuracy');
    }
    writing = false;
    await reader;
    expect(seen.length).toBeGreaterThan(100);
    const bad = seen.filter((s) => s === 'missing' || s.policy !== s.json);
    expect(bad).toEqual([]);
    expect(await dir.best()).toMatchObject({ step: 40, value: 0.4, metric: 'accuracy' });
    expect(readBest(runDir)).toEqual({ policy: 40, json: 40 });
  });

  it('takes over a best/ folder of the earlier layout', async () => {
    const runDir = join(tempRunRoot(), 'run');
    mkdirSync(join(runDir, 'best', 'policy'), { recursive: true });
    writeFileSync(join(runDir, 'best', 'policy', 'marker.json'), JSON.stringify({ step: 3 }));
    writeFileSync(join(runDir, 'best', 'best.json'), JSON.stringify({ step: 3, metric: 'accuracy', value: 0.2 }));
    const dir = new RunDir(runDir);
    expect(await dir.best()).toMatchObject({ step: 3, policyDir: join(realpathSync(runDir), 'best', 'policy') });
    const marked = markedPolicy();
    marked.step = 5;
    await dir.saveBest(marked.policy, 5, 0.3, 'accuracy');
    expect(readBest(runDir)).toEqual({ policy: 5, json: 5 });
  });
});
