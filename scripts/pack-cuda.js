#!/usr/bin/env node
// Builds the GPU package grpo-native-linux-x64-cuda13 (the packaging of ../shared/reference/node-native-addons.md §6):
// the stripped CUDA addon of `npm run build:cuda`, a package.json restricted to Linux x64 glibc whose version equals
// grpo-native's (lib/binding/cuda.ts refuses any other), and a README; then `npm pack` writes its tarball.
// Usage: node scripts/pack-cuda.js [addon path] [output folder]
//   defaults: build-cuda/cuda/grpo_native_cuda.node, prebuilds-cuda/
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const CUDA_PACKAGE = 'grpo-native-linux-x64-cuda13';
const ADDON_FILE = 'grpo_native_cuda.node';

const root = resolve(import.meta.dirname, '..');
const main = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

function packageJson() {
  return {
    name: CUDA_PACKAGE,
    version: main.version,
    description: `The CUDA addon of grpo-native@${main.version} (CUDA 13, static runtime; needs an NVIDIA driver R580+).`,
    license: main.license,
    os: ['linux'],
    cpu: ['x64'],
    libc: ['glibc'],
    engines: main.engines,
    files: [ADDON_FILE, 'README.md', 'NOTICE'],
  };
}

function readme() {
  return `# ${CUDA_PACKAGE}

The CUDA addon of [grpo-native](https://www.npmjs.com/package/grpo-native) ${main.version}: every kernel family and the
built-in policy on NVIDIA GPUs (SASS for sm_75, sm_80, sm_86, sm_89, sm_90 and PTX for compute_90), with the CUDA
runtime linked statically, so only the NVIDIA driver (R580 or newer) is needed.

\`\`\`sh
npm install grpo-native ${CUDA_PACKAGE}@${main.version}
\`\`\`

grpo-native finds it by itself (\`loadCuda()\`), only when both versions are equal; pass \`device: 'cuda'\` or
\`'auto'\` to its functions. Without a usable GPU, \`loadCuda().reason\` says why and the CPU path keeps working.
`;
}

function pack(addon, outRoot) {
  if (!existsSync(addon)) throw new Error(`${addon} not found: run npm run build:cuda first`);
  const dir = join(outRoot, CUDA_PACKAGE);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  copyFileSync(addon, join(dir, ADDON_FILE));
  execFileSync('strip', ['--strip-all', join(dir, ADDON_FILE)]);
  copyFileSync(join(root, 'NOTICE'), join(dir, 'NOTICE'));
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(packageJson(), null, 2)}\n`);
  writeFileSync(join(dir, 'README.md'), readme());
  const tarball = execFileSync('npm', ['pack', '--silent', '--pack-destination', outRoot], { cwd: dir, encoding: 'utf8' });
  return join(outRoot, tarball.trim().split('\n').pop());
}

const [addon = join(root, 'build-cuda/cuda', ADDON_FILE), outRoot = join(root, 'prebuilds-cuda')] = process.argv.slice(2);
console.log(pack(resolve(addon), resolve(outRoot)));
