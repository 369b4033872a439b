// Loads the CPU addon grpo_native.node (the CUDA one: ./cuda.ts). Order: GRPO_NATIVE_ADDON (explicit path) →
// build/Release (a local build) → prebuilds/<platform>-<arch> (shipped in the npm package).
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import nodeGypBuild from 'node-gyp-build';
import { GrpoError } from '../errors.js';
import type { NativeBinding } from './types.js';

const require = createRequire(import.meta.url);
const packageRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function libc(): string {
  if (process.platform !== 'linux') return 'n/a';
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header;
  return header?.glibcVersionRuntime ? `glibc ${header.glibcVersionRuntime}` : 'musl';
}

function loadError(tried: string[], cause: unknown): GrpoError {
  const reason = cause instanceof Error ? cause.message.split('\n')[0] : String(cause);
  return new GrpoError(
    'GRPO_NATIVE_LOAD',
    [
      `grpo-native could not load its native addon for ${process.platform}-${process.arch} (${libc()}, Node ${process.version}).`,
      `Tried: ${tried.join('; ')}.`,
      `Reason: ${reason}`,
      'Possible fixes:',
      '- Reinstall without --omit=optional and check that prebuilds/linux-x64/ is in node_modules/grpo-native (prebuilds cover linux-x64 glibc).',
      '- Build from source: install cmake, a C++17 compiler and python3, then run `npm rebuild grpo-native` (or `npx cmake-js rebuild` in the package).',
      '- Point GRPO_NATIVE_ADDON at a grpo_native.node you built.',
    ].join('\n'),
    { cause },
  );
}

function load(): NativeBinding {
  const explicit = process.env.GRPO_NATIVE_ADDON;
  const tried: string[] = [];
  try {
    if (explicit) {
      tried.push(`GRPO_NATIVE_ADDON=${explicit}`);
      return require(explicit) as NativeBinding;
    }
    tried.push(`node-gyp-build(${packageRoot}) [build/Release, prebuilds/]`);
    if (!existsSync(join(packageRoot, 'package.json'))) throw new Error(`package root not found at ${packageRoot}`);
    return nodeGypBuild(packageRoot) as NativeBinding;
  } catch (cause) {
    throw loadError(tried, cause);
  }
}

let cached: NativeBinding | undefined;

/** The CPU addon, loaded on first use. */
export function native(): NativeBinding {
  cached ??= load();
  return cached;
}
