// The raw addon calls of the built-in model (native/addon/model_addon.cc), merged into NativeBinding.
import type { NativeBinding } from '../native-types.js';

type F32 = Float32Array;
type I32 = Int32Array;
type F64 = Float64Array;
type Done = Promise<void> | undefined;

/**
 * Opaque handle of a native model, shared with the async calls in flight on it: the model is freed once the handle
 * is collected or passed to modelDispose and the last such call has finished. While one runs, every other call on
 * the handle but modelTensors throws (the model is busy).
 */
export type ModelHandle = { readonly __model: unique symbol };

declare module '../native-types.js' {
  interface NativeBinding {
    modelCreate(config: F64): ModelHandle;
    modelInit(model: ModelHandle, seed: number, async: boolean): Done;
    modelClone(model: ModelHandle): ModelHandle;
    modelDispose(model: ModelHandle): void;
    modelTensors(model: ModelHandle): { name: string; shape: number[] }[];
    modelGetTensor(model: ModelHandle, name: string, out: F32): void;
    modelSetTensor(model: ModelHandle, name: string, values: F32): void;
    modelScore(
      model: ModelHandle, tokens: I32, offsets: F64, targets: I32, temperature: number, ignoreIndex: number,
      train: boolean, logp: F32, entropy: F32 | null, async: boolean,
    ): Done;
    modelLogits(model: ModelHandle, tokens: I32, offsets: F64, logits: F32, async: boolean): Done;
    modelBackward(model: ModelHandle, gradLogp: F32, gradEntropy: F32 | null, async: boolean): Done;
    modelSetBf16Matmuls(model: ModelHandle, enabled: boolean): void;
    modelZeroGrad(model: ModelHandle): void;
    modelAdamw(
      model: ModelHandle, lr: number, beta1: number, beta2: number, eps: number, weightDecay: number,
      maxGradNorm: number, gradNorm: F32, async: boolean,
    ): Done;
    modelGetOptimizer(model: ModelHandle, m: F32, v: F32): number;
    modelSetOptimizer(model: ModelHandle, m: F32, v: F32, step: number): void;
    modelGenerate(
      model: ModelHandle, prompts: I32, offsets: F64, maxNewTokens: number, stopTokens: I32, outTokens: I32, outLogp: F32,
      outLengths: F64, truncated: Uint8Array, temperature: F32 | null, topK: I32 | null, topP: F32 | null, minP: F32 | null,
      repetitionPenalty: F32 | null, presencePenalty: F32 | null, frequencyPenalty: F32 | null, allow: Uint32Array | null,
      seedLo: number, seedHi: number, async: boolean,
    ): Done;
  }
}

/**
 * Every method of the built-in model's ABI (native/include/grpo/model.h). An addon runs the model only when it has
 * all of them; a policy calls them only on the addon that created its handle.
 */
export const MODEL_METHODS = Object.freeze([
  'modelCreate', 'modelInit', 'modelClone', 'modelDispose', 'modelTensors', 'modelGetTensor', 'modelSetTensor', 'modelScore',
  'modelLogits', 'modelBackward', 'modelSetBf16Matmuls', 'modelZeroGrad', 'modelAdamw', 'modelGetOptimizer', 'modelSetOptimizer',
  'modelGenerate',
] as const satisfies readonly (keyof NativeBinding)[]);

export type ModelMethod = (typeof MODEL_METHODS)[number];

/** The model methods of one addon (the CPU's or the CUDA one). */
export type ModelBinding = Pick<NativeBinding, ModelMethod>;

export type { NativeBinding };
