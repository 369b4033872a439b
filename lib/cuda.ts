// The CUDA backend: lazy loading of the separate addon grpo_native_cuda.node and the `device` option of
// the kernel functions. Loading never throws: without the addon, a driver or a device, loadCuda() says
// why and the CPU path keeps working. Order: GRPO_NATIVE_CUDA_ADDON (explicit path) → build-cuda/cuda,
// build-cuda/Release, build/cuda (local builds) → the optional package grpo-native-linux-x64-cuda13.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { native } from './binding.js';
import { GrpoError } from './errors.js';
import type { NativeBinding } from './native-types.js';
import { MODEL_METHODS, type ModelBinding, type ModelMethod } from './policy/native-model.js';
import * as check from './validate.js';
import { DEVICES, type Device } from './devices.js';

export { DEVICES, type Device };
/** Where a model's handle lives once 'auto' is resolved. */
export type ResolvedDevice = 'cpu' | 'cuda';

/** The kernel methods the CUDA addon implements, with the CPU addon's signatures. */
export type CudaKernel =
  | 'logprobForward' | 'logprobBackward' | 'linearLogprobForward' | 'linearLogprobBackward'
  | 'linearLogprobForwardBf16' | 'linearLogprobBackwardBf16'
  | 'groupAdvantages' | 'rankAdvantages' | 'scatterItemAdvantages' | 'broadcastAdvantages'
  | 'sample' | 'samplingProbs' | 'policyLoss';

/** cudaProbe(): error is the cudaError (35 = no or too old driver, 100 = no device), 0 when ok. */
export interface CudaProbe {
  ok: boolean;
  deviceCount: number;
  error: number;
  message: string;
}

/** The model methods are optional: an addon built before the model's CUDA port lacks them. */
export type CudaBinding = Pick<NativeBinding, CudaKernel> & Partial<ModelBinding> & {
  cudaProbe(): CudaProbe;
  /** GPU milliseconds of the last kernel call's kernels (input and output copies excluded). */
  cudaLastKernelMs(): number;
};

export interface CudaLoad {
  /** The CUDA addon with a usable device, or null. */
  binding: CudaBinding | null;
  /** Which file was used and the device found, or why CUDA is unavailable. */
  reason: string;
}

const OPTIONAL_PACKAGE = 'grpo-native-linux-x64-cuda13';
const ADDON_FILE = 'grpo_native_cuda.node';

const require = createRequire(import.meta.url);
const packageRoot = join(dirname(fileURLToPath(import.meta.url)), '..');

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

/**
 * The addon that runs `kernel` for `device` (validated; `fn` names the caller in errors). 'auto' picks CUDA when
 * loadCuda() found a device, else the CPU; 'cuda' without one is GRPO_CUDA_UNAVAILABLE with the reason.
 */
export function kernelBinding(fn: string, device: unknown, kernel: CudaKernel): Pick<NativeBinding, CudaKernel> {
  return bindingWith(fn, device, [kernel], 'kernel');
}

/**
 * The addon that runs the built-in model for `device`, as {@link kernelBinding} chooses, with every model method
 * required: a CUDA addon without them is GRPO_UNSUPPORTED for 'cuda' and the CPU for 'auto'.
 */
export function modelBinding(fn: string, device: unknown): { binding: ModelBinding; device: ResolvedDevice } {
  const binding = bindingWith(fn, device, MODEL_METHODS, 'model');
  return { binding, device: binding === native() ? 'cpu' : 'cuda' };
}

/** The CPU addon, or the CUDA one when `device` asks for it and it has all of `methods`. */
function bindingWith<K extends CudaKernel | ModelMethod>(fn: string, device: unknown, methods: readonly K[], what: string): Pick<NativeBinding, K> {
  const chosen = check.oneOf(`${fn} device`, device ?? 'cpu', DEVICES);
  if (chosen === 'cpu') return native();
  const { binding, reason } = loadCuda();
  const usable = binding && methods.every((method) => typeof binding[method] === 'function');
  if (usable) return binding as Pick<NativeBinding, K>;
  if (chosen === 'auto') return native();
  if (binding) throw new GrpoError('GRPO_UNSUPPORTED', `${fn} has no CUDA ${what} in this build (${reason})`);
  throw new GrpoError('GRPO_CUDA_UNAVAILABLE', `${fn} was asked to run on device 'cuda', but CUDA is unavailable: ${reason}`);
}

/** Tests only (not exported by the package): replaces what {@link loadCuda} answers; undefined loads again. */
export function setCudaLoadForTests(load: CudaLoad | undefined): void {
  cached = load;
}
