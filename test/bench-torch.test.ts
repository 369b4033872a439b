// `npm run bench:torch` without PyTorch: it installs nothing, prints how to set PyTorch up and exits non-zero; `--bf16` keeps
// only the workloads with a bf16 form.
// (The bench itself is not part of npm test: it needs PyTorch and minutes.)
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/** bench/torch/run.js with `args` where no interpreter imports torch. */
const withoutTorch = (args: string[]) => spawnSync(process.execPath, ['bench/torch/run.js', ...args], {
  encoding: 'utf8', env: { ...process.env, TORCH_PYTHON: '/nonexistent/python3' }, timeout: 30_000,
});

describe('bench/torch/run.js', () => {
  it('prints the PyTorch setup (Debian package, OpenBLAS, tcmalloc, threads, BLAS settings) and exits 2 when torch is missing', () => {
    const run = withoutTorch([]);
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    for (const step of ['apt-get install python3-torch', 'update-alternatives', 'libopenblas', 'libtcmalloc_minimal.so.4', 'torch.set_num_threads',
      'getThreads()', 'OPENBLAS_CORETYPE', 'torch.__config__.show()']) expect(run.stderr).toContain(step);
  });

  it('under --bf16 keeps the workloads with a bf16 form and skips the others with a line each', () => {
    const run = withoutTorch(['--bf16', 'top-p', 'lm-head-forward', 'grpo-loss']);
    expect(run.status).toBe(2); // lm-head-forward has a bf16 form: the bench goes on to look for PyTorch
    expect(run.stdout).toBe('top-p: no bf16 form (no dense product), skipped under --bf16\n'
      + 'grpo-loss: no bf16 form (no dense product), skipped under --bf16\n');
  });

  it('under --bf16 refuses a selection with no bf16 form before looking for PyTorch', () => {
    const run = withoutTorch(['--bf16', 'top-p']);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('--bf16: none of the named workloads has a bf16 form');
    expect(run.stderr).not.toContain('apt-get install python3-torch');
  });
});
