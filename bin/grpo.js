#!/usr/bin/env node
// The `grpo` command: a launcher for the compiled CLI (npm run build:ts writes dist/).
import { main } from '../dist/cli/main.js';

// `grpo data validate big.jsonl | head`: when the reader closes the pipe, stop quietly (as a shell tool does on SIGPIPE)
process.stdout.on('error', (error) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(141);
});

process.exitCode = await main(process.argv.slice(2));
