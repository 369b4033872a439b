// `npm run bench:torch` without PyTorch: it installs nothing, prints how to set PyTorch up and exits non-zero.
// (The bench itself is not part of npm test: it needs PyTorch and minutes.)
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

describe('bench/torch/run.js', () => {
  it('prints the PyTorch setup (Debian package, OpenBLAS, tcmalloc, threads, BLAS settings) and exits 2 when torch is missing', () => {
    const run = spawnSync(process.execPath, ['bench/torch/run.js'], {
      encoding: 'utf8', env: { ...process.env, TORCH_PYTHON: '/nonexistent/python3' }, timeout: 30_000,
    });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    for (const step of ['apt-get install python3-torch', 'update-alternatives', 'libopenblas', 'libtcmalloc_minimal.so.4', 'torch.set_num_threads',
      'getThreads()', 'OPENBLAS_CORETYPE', 'torch.__config__.show()']) expect(run.stderr).toContain(step);
  });
});
