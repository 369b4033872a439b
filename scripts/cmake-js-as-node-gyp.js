#!/usr/bin/env node
// prebuildify runs `node-gyp rebuild --target=… --devdir=… --arch=… --release`; CMakeLists.txt is the
// canonical build, so this shim runs cmake-js instead. N-API is pinned (NAPI_VERSION=8), so the
// target version does not matter; cmake-js compiles against the node-api-headers package, offline.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const args = process.argv.slice(2);
const arch = args.find((a) => a.startsWith('--arch='))?.slice('--arch='.length);
const debug = args.includes('--debug');
const cmakeJs = require.resolve('cmake-js/bin/cmake-js');
const command = ['rebuild', '--CDGRPO_BUILD_TESTS=OFF', ...(arch ? ['--arch', arch] : []), ...(debug ? ['--debug'] : [])];
const result = spawnSync(process.execPath, [cmakeJs, ...command], { stdio: 'inherit' });
process.exit(result.status ?? 1);
