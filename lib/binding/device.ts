// Which addon a call reaches: the `device` option of the kernel functions and the built-in model.
import { DEVICES, type Device } from '../devices.js';
import { GrpoError } from '../errors.js';
import * as check from '../validate.js';
import { native } from './cpu.js';
import { loadCuda } from './cuda.js';
import { MODEL_METHODS, type CudaKernel, type KernelBinding, type ModelBindingWithLora, type ModelMethod, type NativeBinding } from './types.js';

export { DEVICES, type Device };
/** Where a model's handle lives once 'auto' is resolved. */
export type ResolvedDevice = 'cpu' | 'cuda';

/**
 * The addon that runs `kernel` for `device` (validated; `fn` names the caller in errors). 'auto' picks CUDA when
 * loadCuda() found a device, else the CPU; 'cuda' without one is GRPO_CUDA_UNAVAILABLE with the reason.
 */
export function kernelBinding(fn: string, device: unknown, kernel: CudaKernel): KernelBinding {
  return bindingWith(fn, device, [kernel], 'kernel');
}

/**
 * The addon that runs the built-in model for `device`, as {@link kernelBinding} chooses, with every model method
 * required: a CUDA addon without them is GRPO_UNSUPPORTED for 'cuda' and the CPU for 'auto'.
 */
export function modelBinding(fn: string, device: unknown): { binding: ModelBindingWithLora; device: ResolvedDevice } {
  const binding = bindingWith(fn, device, MODEL_METHODS, 'model');
  return { binding, device: binding === native() ? 'cpu' : 'cuda' };
}

/** The CPU addon, or the CUDA one when `device` asks for it and it has all of `methods`. */
function bindingWith<K extends CudaKernel | ModelMethod>(fn: string, device: unknown, methods: readonly K[], what: string): Pick<NativeBinding, K> {
  const chosen = check.oneOf(`${fn} device`, device ?? 'cpu', DEVICES);
  if (chosen === 'cpu') return native();
  const { binding, reason } = loadCuda();
  const usable = binding && methods.every((method) => typeof binding[method] === 'function');
  if (usable) return binding as unknown as Pick<NativeBinding, K>; // it has every one of `methods`
  if (chosen === 'auto') return native();
  if (binding) throw new GrpoError('GRPO_UNSUPPORTED', `${fn} has no CUDA ${what} in this build (${reason})`);
  throw new GrpoError('GRPO_CUDA_UNAVAILABLE', `${fn} was asked to run on device 'cuda', but CUDA is unavailable: ${reason}`);
}
