#!/usr/bin/env node
// The `grpo` command: a launcher for the compiled CLI (npm run build:ts writes dist/).
import { main } from '../dist/cli/main.js';

process.exitCode = await main(process.argv.slice(2));
