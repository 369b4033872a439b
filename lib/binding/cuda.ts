// Lazy loading of the CUDA addon grpo_native_cuda.node (the backend of each call is chosen in ./device.ts).
// Loading never throws: without the addon, a driver or a device, loadCuda() says why and the CPU path keeps working. Order: GRPO_NATIVE_CUDA_ADDON (explicit path) → build-cuda/cuda,
// build-cuda/Release, build/cuda (local builds) → the optional package grpo-native-linux-x64-cuda13.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CudaBinding, CudaLoad } from './types.js';

const OPTIONAL_PACKAGE = 'grpo-native-linux-x64-cuda13';
const ADDON_FILE = 'grpo_native_cuda.node';

const require = createRequire(import.meta.url);
const packageRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function ownVersion(): string | undefined {
  try {
    return (JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version?: string }).version;
  } catch {
    return undefined;
  }
}

/** The optional GPU package's addon, when installed with the same version as this package. */
function packagedAddon(tried: string[]): string | undefined {
  if (process.platform !== 'linux' || process.arch !== 'x64') return undefined;
  let manifest: string;
  try {
    manifest = require.resolve(`${OPTIONAL_PACKAGE}/package.json`);
  } catch {
    tried.push(`${OPTIONAL_PACKAGE}: not installed`);
    return undefined;
  }
  const version = (JSON.parse(readFileSync(manifest, 'utf8')) as { version?: string }).version;
  if (version !== ownVersion()) {
    tried.push(`${OPTIONAL_PACKAGE}@${version}: version differs from grpo-native@${ownVersion()}`);
    return undefined;
  }
  return join(dirname(manifest), ADDON_FILE);
}

function candidatePaths(tried: string[]): string[] {
  const explicit = process.env.GRPO_NATIVE_CUDA_ADDON;
  if (explicit) return [explicit];
  const local = ['build-cuda/cuda', 'build-cuda/Release', 'build/cuda'].map((dir) => join(packageRoot, dir, ADDON_FILE));
  const packaged = packagedAddon(tried);
  return packaged ? [...local, packaged] : local;
}

function firstLine(cause: unknown): string {
  return cause instanceof Error ? cause.message.split('\n')[0] : String(cause);
}

/**
 * Loads and probes the addon in a child process first: a GPU binary that does not fit this machine's driver can
 * crash the process that loads it, and this process must survive to report why. Undefined when the child was fine.
 */
function testLoadFailure(path: string): string | undefined {
  const probe = `require(${JSON.stringify(path)}).cudaProbe?.()`;
  const child = spawnSync(process.execPath, ['-e', probe], { encoding: 'utf8', timeout: 60_000 });
  if (child.error) return `test load failed (${child.error.message})`;
  if (child.signal) return `crashed in a test load in a child process (${child.signal})`;
  return undefined; // a load error exits with a status, and require() below reports it with its message
}

function load(): CudaLoad {
  const tried: string[] = [];
  for (const path of candidatePaths(tried)) {
    if (!existsSync(path)) {
      tried.push(`${path}: not found`);
      continue;
    }
    const crash = testLoadFailure(path);
    if (crash) {
      tried.push(`${path}: ${crash}`);
      continue;
    }
    let binding: CudaBinding;
    try {
      binding = require(path) as CudaBinding;
    } catch (cause) {
      tried.push(`${path}: ${firstLine(cause)}`);
      continue;
    }
    if (typeof binding?.cudaProbe !== 'function') {
      tried.push(`${path}: not a grpo-native CUDA addon (no cudaProbe)`);
      continue;
    }
    const probe = binding.cudaProbe();
    if (!probe.ok) return { binding: null, reason: `${path}: loaded, but no usable device (${probe.message})` };
    return { binding, reason: `${path}: ${probe.message}` };
  }
  return { binding: null, reason: `no CUDA addon (${tried.join('; ')})` };
}

let cached: CudaLoad | undefined;

/** Loads the CUDA addon once and probes for a device; never throws. `binding` is null when CUDA cannot run here. */
export function loadCuda(): CudaLoad {
  cached ??= load();
  return cached;
}

/** Tests only (not exported by the package): replaces what {@link loadCuda} answers; undefined loads again. */
export function setCudaLoadForTests(load: CudaLoad | undefined): void {
  cached = load;
}
