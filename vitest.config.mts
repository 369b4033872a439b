import { defineConfig } from 'vitest/config';

// Forks, not threads: a crashing native addon must take down only its own worker.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
