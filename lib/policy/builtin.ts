// The built-in policy: the native Llama/Qwen-family decoder behind the Policy interface.
// Calls on one model run one at a time (a promise chain); each runs off the event loop. A policy keeps the
// addon that created its handle (the CPU's or the CUDA one) and makes every call on that addon. dispose() is safe
// mid-call and sync methods refuse a model busy with an async call (docs/policy.md, "Async calls and memory").
// With LoRA the native model holds adapters over a frozen base; `adapters.base()` is a view of the same model that
// switches them off around each of its calls (docs/policy.md, "LoRA adapters").
import { resolve } from 'node:path';
import { modelBinding, type ModelBindingWithLora, type ModelHandle, type NativeLoraConfig, type ResolvedDevice } from '../binding/index.js';
import { fromNativeError, GrpoError } from '../errors.js';
import { callAsync, rejectOnThrow } from '../kernels/native-call.js';
import {
  LORA_DEFAULTS, LORA_START_OPTIONS, LORA_TARGET_MODULES, loraScale, sameLoraSettings, startFromAdapter, type LoraSettings,
} from '../options/lora.js';
import { checkOptions, defaultsOf, kernelNaming } from '../options/schema.js';
import { baseDtypeOf, NATIVE_BASE16, type BaseDtype } from './base-dtype.js';
import { loadCheckpoint, saveCheckpoint, type OptimizerState } from './checkpoint.js';
import { checkConfig, configToNative, type ModelConfig } from './config.js';
import { IGNORE_INDEX, packBatch, repack, unpack, type PackedBatch } from './batch.js';
import { generateWith } from './generate.js';
import { generationDefaults, withGenerationDefaults, type GenerationDefaults } from './generation-config.js';
import { isAdapterFolder, loadLoraCheckpoint, saveLoraCheckpoint } from './lora-checkpoint.js';
import { loadAdapter, loraTensorShapes } from './lora-format.js';
import { adapterBaseFolder } from './lora-merge.js';
import {
  policyStep, type Forward, type ForwardHandle, type GenerateOptions, type Generation, type LossFunction, type LossGradient,
  type ForwardOptions, type OptimizerStepOptions, type OptimizerStepResult, type Policy, type PolicyAdapters, type ScoreOptions, type ScoreResult, type SequenceBatch,
  type StepOptions, type StepResult, type TrainablePolicy,
} from './policy.js';
import type { NamedTensor } from './safetensors.js';
import type { Tokenizer } from './tokenizer.js';
import {
  BUILTIN_OPTIONS, callNaming, CLONE_OPTIONS, FORWARD_OPTIONS, OPTIMIZER_DEFAULTS, OPTIMIZER_OPTIONS, OPTIMIZER_STEP_OPTIONS, SCORE_OPTIONS,
  type BuiltinOptions, type CloneOptions, type OptimizerOptions,
} from './options.js';

export { OPTIMIZER_DEFAULTS, OPTIMIZER_OPTIONS, type OptimizerOptions } from './options.js';

/** Options of {@link BuiltinPolicy.create} and {@link BuiltinPolicy.load}: BUILTIN_OPTIONS (lib/policy/options.ts). */
export type { BuiltinOptions };
/** Options of {@link BuiltinPolicy.clone}: CLONE_OPTIONS. */
export type { CloneOptions };

/** Where a native model lives: its addon and device, and the setting a copy on another addon repeats. */
interface ModelSite {
  binding: ModelBindingWithLora;
  device: ResolvedDevice;
  bf16: boolean;
}

/** Learning rate of optimizer step `step` (1-based) under the schedule. */
export function scheduledLearningRate(o: Required<OptimizerOptions>, step: number): number {
  if (step <= o.warmupSteps) return (o.learningRate * step) / Math.max(o.warmupSteps, 1);
  if (o.decaySteps <= 0) return o.learningRate;
  const progress = Math.min((step - o.warmupSteps) / o.decaySteps, 1);
  return o.minLearningRate + 0.5 * (o.learningRate - o.minLearningRate) * (1 + Math.cos(Math.PI * progress));
}

/** The adapters of a LoRA policy: their settings, the seed of A and the dropout masks, and the base's folder. */
interface LoraState {
  settings: LoraSettings;
  seed: number;
  baseFolder: string | undefined;
  /** The type the base's layer matrices are kept in (a bf16 or f16 checkpoint's, widened exactly where used). */
  baseDtype: BaseDtype;
}

/** grpo_lora_config of the settings: the target modules as bits in LORA_TARGET_MODULES order. */
function nativeLora(settings: LoraSettings, seed: number, baseDtype: BaseDtype): NativeLoraConfig {
  const targets = settings.targetModules.reduce((bits, m) => bits | (1 << LORA_TARGET_MODULES.indexOf(m)), 0);
  return { rank: settings.rank, scale: loraScale(settings), dropout: settings.dropout, targets, seed, base16: NATIVE_BASE16[baseDtype] };
}

/** `lora` checked over LORA_DEFAULTS, errors naming `BuiltinPolicy.<fn> lora`; `from` (load's alone) must be absent or null. */
function loraSettings(lora: object, fn: string): LoraSettings {
  const { from, ...settings } = checkOptions(LORA_START_OPTIONS, callNaming(`BuiltinPolicy.${fn} lora`), lora, { ...LORA_DEFAULTS, from: null });
  if (from !== null) throw new GrpoError('GRPO_INVALID_ARGUMENT', `BuiltinPolicy.${fn} lora.from: only load starts adapters from an adapter folder`);
  return settings;
}

/** The adapters a base loads with: their settings and seed, and their A and B when they start from an adapter. */
interface LoadedLora {
  settings: LoraSettings;
  seed: number;
  tensors?: NamedTensor[];
}

export class BuiltinPolicy implements Policy {
  readonly config: ModelConfig;
  readonly tokenizer: Tokenizer | undefined;
  readonly frozen: boolean;
  private handle: ModelHandle | undefined;
  private readonly site: ModelSite;
  private readonly optimizer: Required<OptimizerOptions>;
  /** The calls on the native model, one at a time: shared with the adapters-off view of a LoRA policy. */
  private readonly lane: { queue: Promise<unknown> };
  private lora: LoraState | undefined;
  /** True for `adapters.base()`: every call runs with the adapters switched off; dispose leaves the model alone. */
  private readonly baseView: boolean;
  private view: BuiltinPolicy | undefined;
  private steps = 0;
  /** generation_config.json of the loaded checkpoint (saved back) and the generate defaults it sets. */
  private generation: { file: Record<string, unknown>; defaults: GenerationDefaults } = { file: {}, defaults: {} };
  /** The latest training forward, until its backward or the next forward or score (the model keeps one set of activations). */
  private training: { handle: ForwardHandle; packed: PackedBatch } | undefined;
  /** The three training calls without the queue, for {@link step}, which holds the queue across all three. */
  private readonly unqueued: TrainablePolicy = {
    forward: (batch, options = {}) => this.forwardNow(batch, options),
    backward: (handle, gradient) => this.backwardNow(handle, gradient),
    optimizerStep: (options = {}) => this.optimizerStepNow(options),
  };

  private constructor(
    config: ModelConfig, model: ModelSite & { handle: ModelHandle }, tokenizer: Tokenizer | undefined, optimizer: OptimizerOptions, frozen: boolean,
    lane = { queue: Promise.resolve() as Promise<unknown> }, baseView = false,
  ) {
    const { handle, ...site } = model;
    this.lane = lane;
    this.baseView = baseView;
    this.config = config;
    this.handle = handle;
    this.site = site;
    this.tokenizer = tokenizer;
    this.optimizer = checkOptions(OPTIMIZER_OPTIONS, kernelNaming('BuiltinPolicy optimizer'), optimizer, OPTIMIZER_DEFAULTS);
    this.frozen = frozen;
  }

  /** A new model with weights drawn from N(0, 0.02²) keyed by `seed` (blocks while it draws them: see {@link createAsync}). */
  static create(config: ModelConfig, options: BuiltinOptions = {}): BuiltinPolicy {
    const { policy, seed } = BuiltinPolicy.allocate(config, options, 'create');
    wrapNative(() => policy.addon.modelInit(policy.live(), seed, false));
    return policy;
  }

  /** {@link create} with the weights drawn off the event loop (seconds for a 0.5B model); same weights for the same seed. */
  static createAsync(config: ModelConfig, options: BuiltinOptions = {}): Promise<BuiltinPolicy> {
    return rejectOnThrow(async () => {
      const { policy, seed } = BuiltinPolicy.allocate(config, options, 'createAsync');
      await callAsync((a) => policy.addon.modelInit(policy.live(), seed, a), () => undefined);
      return policy;
    });
  }

  /** A model with zero parameters (filled by create or load) on the device of `options`, and its seed; `fn` names the caller. */
  private static allocate(config: ModelConfig, options: BuiltinOptions, fn: string): { policy: BuiltinPolicy; seed: number } {
    const o = checkOptions(BUILTIN_OPTIONS, callNaming(`BuiltinPolicy.${fn}`), options, defaultsOf(BUILTIN_OPTIONS));
    checkConfig(config);
    if (o.tokenizer && o.tokenizer.vocabSize > config.vocabSize) {
      throw new GrpoError('GRPO_SHAPE_MISMATCH', `The tokenizer has ${o.tokenizer.vocabSize} tokens but config.vocabSize is ${config.vocabSize}`);
    }
    const target = modelBinding(`BuiltinPolicy.${fn}`, o.device);
    const policy = BuiltinPolicy.empty(config, { ...target, bf16: o.bf16Matmuls }, o.tokenizer, o.optimizer ?? {}, false);
    if (o.lora !== undefined) policy.attachLora(loraSettings(o.lora, fn), o.seed, undefined, 'f32');
    return { policy, seed: o.seed };
  }

  /**
   * Adds adapters (A from `seed`, B zero) and freezes the base, its layer matrices kept in `baseDtype` (set the
   * base's tensors afterwards: they are rounded to it); only the CPU model has adapters.
   */
  private attachLora(settings: LoraSettings, seed: number, baseFolder: string | undefined, baseDtype: BaseDtype): void {
    const attach = this.addon.modelLoraAttach;
    if (!attach) {
      throw new GrpoError('GRPO_UNSUPPORTED', `LoRA adapters run on the CPU model only; this policy is on "${this.device}" (create it with device: 'cpu')`);
    }
    wrapNative(() => attach(this.live(), nativeLora(settings, seed, baseDtype)));
    this.lora = { settings, seed, baseFolder, baseDtype };
  }

  /** A model with zero parameters on `model`'s addon. */
  private static empty(
    config: ModelConfig, model: ModelSite, tokenizer: Tokenizer | undefined, optimizer: OptimizerOptions, frozen: boolean,
  ): BuiltinPolicy {
    const handle = wrapNative(() => model.binding.modelCreate(configToNative(config)));
    if (model.bf16) wrapNative(() => model.binding.modelSetBf16Matmuls(handle, true));
    return new BuiltinPolicy(config, { ...model, handle }, tokenizer, optimizer, frozen);
  }

  /**
   * Loads a Hugging Face-style folder (config.json, safetensors weights, tokenizer and optimizer state when present)
   * onto `options.device`; checkpoints hold host copies, so one saved from either device loads on either. With
   * `options.lora` the folder is the frozen base of new adapters (its optimizer state is not read), or with `lora.from`
   * of the adapter in that folder (PEFT's or a LoRA run's; checked against the base, its moments not read). An adapter folder
   * (adapter_config.json, as a LoRA policy saves) loads as its base (base_model_name_or_path) plus the adapter.
   */
  static async load(dir: string, options: BuiltinOptions = {}): Promise<BuiltinPolicy> {
    const { lora, ...rest } = options;
    const naming = callNaming('BuiltinPolicy.load lora');
    const { from = null, ...given } = lora === undefined ? {} : checkOptions(LORA_START_OPTIONS, naming, lora, {});
    if (isAdapterFolder(dir)) {
      if (from !== null) throw new GrpoError('GRPO_INVALID_ARGUMENT', `BuiltinPolicy.load: ${dir} is an adapter folder; lora.from starts adapters on a base model's Hugging Face folder`);
      return BuiltinPolicy.loadAdapterCheckpoint(dir, options);
    }
    const seed = options.seed ?? 0;
    if (from !== null) {
      return BuiltinPolicy.loadBase(dir, rest, async (config) => {
        const adapter = await loadAdapter(from, config);
        return { settings: startFromAdapter(adapter.settings, given, naming, from), seed, tensors: adapter.tensors };
      });
    }
    return BuiltinPolicy.loadBase(dir, rest, lora === undefined ? undefined : async () => ({ settings: loraSettings(lora, 'load'), seed }));
  }

  /**
   * A Hugging Face folder, as full model or as the frozen base (kept in bfloat16 or float16 when it is) of the adapters `lora`
   * gives for the base's config.
   */
  private static async loadBase(dir: string, options: BuiltinOptions, lora?: (config: ModelConfig) => Promise<LoadedLora>): Promise<BuiltinPolicy> {
    const loaded = await loadCheckpoint(dir);
    const adapters = await lora?.(loaded.config);
    const { policy } = BuiltinPolicy.allocate(loaded.config, { ...options, tokenizer: options.tokenizer ?? loaded.tokenizer }, 'load');
    if (adapters) policy.attachLora(adapters.settings, adapters.seed, resolve(dir), baseDtypeOf(loaded.tensors));
    policy.setTensors(loaded.tensors);
    if (adapters?.tensors) policy.setAdapterTensors(adapters.tensors);
    if (!adapters && loaded.optimizer) policy.setOptimizerState(loaded.optimizer);
    if (loaded.generation) policy.generation = { file: loaded.generation, defaults: generationDefaults(loaded.generation) };
    return policy;
  }

  /** An adapter folder: its base with the adapter, its seed and optimizer state; `options.lora`, if given, must match it. */
  private static async loadAdapterCheckpoint(dir: string, options: BuiltinOptions): Promise<BuiltinPolicy> {
    const checkpoint = await loadLoraCheckpoint(dir);
    const baseDir = adapterBaseFolder(checkpoint.adapter, dir);
    if (isAdapterFolder(baseDir)) throw new GrpoError('GRPO_DATA_FORMAT', `${dir}: its base ${baseDir} is an adapter folder too; name the base model's Hugging Face folder`);
    const { lora, ...rest } = options;
    const { settings } = checkpoint.adapter;
    if (lora !== undefined && !sameLoraSettings(loraSettings(lora, 'load'), settings)) {
      throw new GrpoError('GRPO_INVALID_ARGUMENT', `BuiltinPolicy.load lora: ${dir} holds an adapter with other settings (${JSON.stringify(settings)}); leave lora out to load it`);
    }
    const policy = await BuiltinPolicy.loadBase(baseDir, rest, async () => ({ settings, seed: checkpoint.seed, tensors: checkpoint.adapter.tensors }));
    if (checkpoint.optimizer) policy.setOptimizerState(checkpoint.optimizer);
    return policy;
  }

  /**
   * What generate uses for the options a call leaves out, from the checkpoint's generation_config.json: its
   * eos_token_id (one or a list) as stopTokens, and with do_sample its temperature, top_k, top_p, min_p
   * (transformers' defaults 1, 50, 1, none when absent; do_sample false: greedy), and repetition_penalty.
   */
  get generationDefaults(): GenerationDefaults {
    return { ...this.generation.defaults };
  }

  /** The device the model lives on ('auto' resolved). */
  get device(): ResolvedDevice {
    return this.site.device;
  }

  /** The LoRA adapters (absent for full fine-tuning and on the base view itself). */
  get adapters(): PolicyAdapters | undefined {
    const lora = this.lora;
    if (!lora) return undefined;
    return {
      settings: lora.settings, baseFolder: lora.baseFolder, baseDtype: lora.baseDtype, baseBf16: lora.baseDtype === 'bf16',
      base: () => this.baseOf(), saveBase: (dir) => this.saveBase(dir),
    };
  }

  parameterCount(): number {
    return this.tensorList().reduce((sum, t) => sum + t.shape.reduce((a, b) => a * b, 1), 0);
  }

  /** Names and shapes of the parameter tensors (Hugging Face names). */
  tensorList(): { name: string; shape: number[] }[] {
    return this.addon.modelTensors(this.live());
  }

  /** Copies of all parameter tensors. */
  getTensors(): NamedTensor[] {
    return this.tensorList().map(({ name, shape }) => {
      const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
      wrapNative(() => this.addon.modelGetTensor(this.live(), name, data));
      return { name, shape, data };
    });
  }

  /** Replaces parameters by name; every tensor of the model must be given once, with its shape. */
  setTensors(tensors: readonly NamedTensor[]): void {
    const byName = new Map(tensors.map((t) => [t.name, t]));
    for (const { name, shape } of this.tensorList()) {
      const t = byName.get(name);
      if (!t) throw new GrpoError('GRPO_DATA_FORMAT', `The checkpoint has no tensor "${name}" (shape [${shape}])`);
      if (t.shape.join() !== shape.join()) {
        throw new GrpoError('GRPO_SHAPE_MISMATCH', `Tensor "${name}" has shape [${t.shape}] but the config needs [${shape}]`);
      }
      wrapNative(() => this.addon.modelSetTensor(this.live(), name, t.data));
    }
  }

  /** AdamW moments of what trains (every parameter, or under LoRA the adapters in loraTensorShapes order) and the step. */
  getOptimizerState(): OptimizerState {
    const addon = this.addon, model = this.live(); // a LoRA policy's addon has the LoRA methods (attachLora checked)
    const n = this.lora ? addon.modelLoraParameterCount!(model) : this.parameterCount();
    const m = new Float32Array(n), v = new Float32Array(n);
    const step = wrapNative(() => (this.lora ? addon.modelLoraGetOptimizer!(model, m, v) : addon.modelGetOptimizer(model, m, v)));
    return { m, v, step };
  }

  setOptimizerState(state: OptimizerState): void {
    const addon = this.addon, model = this.live();
    wrapNative(() => (this.lora ? addon.modelLoraSetOptimizer!(model, state.m, state.v, state.step) : addon.modelSetOptimizer(model, state.m, state.v, state.step)));
    this.steps = state.step;
  }

  /** Copies of the adapters' A and B (loraTensorShapes order, PEFT's names without its prefix); [] without LoRA. */
  getAdapterTensors(): NamedTensor[] {
    if (!this.lora) return [];
    return loraTensorShapes(this.config, this.lora.settings).map(({ name, shape }) => {
      const data = new Float32Array(shape[0] * shape[1]);
      wrapNative(() => this.addon.modelGetTensor(this.live(), name, data));
      return { name, shape, data };
    });
  }

  /** Replaces adapter tensors by name (PEFT's names without its prefix, shapes as loraTensorShapes lists them). */
  setAdapterTensors(tensors: readonly NamedTensor[]): void {
    if (!this.lora) throw new GrpoError('GRPO_INVALID_ARGUMENT', 'setAdapterTensors: this policy has no LoRA adapters (create or load it with { lora })');
    const shapes = new Map(loraTensorShapes(this.config, this.lora.settings).map((t) => [t.name, t.shape]));
    for (const t of tensors) {
      const shape = shapes.get(t.name);
      if (!shape) throw new GrpoError('GRPO_DATA_FORMAT', `setAdapterTensors: the adapters have no tensor "${t.name}"`);
      if (t.shape.join() !== shape.join()) throw new GrpoError('GRPO_SHAPE_MISMATCH', `Tensor "${t.name}" has shape [${t.shape}] but the adapter needs [${shape}]`);
      wrapNative(() => this.addon.modelSetTensor(this.live(), t.name, t.data));
    }
  }

  /** Full logits [T, vocab] of each sequence packed end to end (tests and parity checks). */
  logits(sequences: readonly ArrayLike<number>[]): Promise<Float32Array> {
    const taken = snapshot(sequences);
    return this.serial(() => {
      const packed = packBatch({ prompts: taken, completions: taken.map(() => []) }, this.config.vocabSize, this.config.maxPositions);
      const out = new Float32Array(packed.tokens.length * this.config.vocabSize);
      return callAsync((a) => this.addon.modelLogits(this.live(), packed.tokens, packed.offsets, out, a), () => out);
    });
  }

  score(batch: SequenceBatch, options: ScoreOptions = {}): Promise<ScoreResult> {
    const taken = snapshotBatch(batch);
    return this.serial(() => this.scoreNow(taken, options, false).then((r) => r.scores));
  }

  forward(batch: SequenceBatch, options: ForwardOptions = {}): Promise<Forward> {
    const taken = snapshotBatch(batch);
    return this.serial(() => this.forwardNow(taken, options));
  }

  backward(handle: ForwardHandle, gradient: LossGradient): Promise<void> {
    return this.serial(() => this.backwardNow(handle, gradient));
  }

  optimizerStep(options: OptimizerStepOptions = {}): Promise<OptimizerStepResult> {
    return this.serial(() => this.optimizerStepNow(options));
  }

  /** {@link policyStep} with the queue held from the forward to the optimizer step, so no other call on the model lands between them. */
  step(batch: SequenceBatch, loss: LossFunction, options: StepOptions = {}): Promise<StepResult> {
    const taken = snapshotBatch(batch);
    return this.serial(() => policyStep(this.unqueued, taken, loss, options));
  }

  generate(prompts: readonly (ArrayLike<number> | string)[], options: GenerateOptions = {}): Promise<Generation[]> {
    const taken = snapshot(prompts);
    const settings = withGenerationDefaults(options, this.generation.defaults);
    return this.serial(() => generateWith(this.addon, this.live(), this.config, this.tokenizer, taken, settings));
  }

  /**
   * A frozen copy of the parameters (no optimizer state), on this policy's device unless `options.device` says
   * otherwise; a LoRA policy's copy has its adapters, the base view's copy is the base alone.
   */
  clone(options: CloneOptions = {}): Promise<BuiltinPolicy> {
    return this.serial(async () => {
      const { device } = checkOptions(CLONE_OPTIONS, callNaming('clone'), options, {});
      const target = device === undefined ? this.site : { ...modelBinding('BuiltinPolicy.clone', device), bf16: this.site.bf16 };
      let copy: BuiltinPolicy;
      if (target.binding === this.addon && !this.baseView) {
        const handle = wrapNative(() => this.addon.modelClone(this.live()));
        copy = new BuiltinPolicy(this.config, { ...target, handle }, this.tokenizer, this.optimizer, true);
        copy.lora = this.lora && { ...this.lora };
      } else {
        copy = BuiltinPolicy.empty(this.config, target, this.tokenizer, this.optimizer, true);
        copy.setTensors(this.getTensors());
        if (this.lora) {
          copy.attachLora(this.lora.settings, this.lora.seed, this.lora.baseFolder, this.lora.baseDtype);
          copy.setAdapterTensors(this.getAdapterTensors());
        }
      }
      copy.generation = this.generation;
      return copy;
    });
  }

  /**
   * Writes config, weights, tokenizer, generation settings and optimizer state (atomically). Under LoRA: the adapter
   * alone in PEFT's format, naming its base folder, with the adapters' optimizer state (lib/policy/lora-checkpoint.ts).
   */
  save(dir: string): Promise<void> {
    return this.serial(() => {
      const optimizer = this.frozen ? undefined : this.getOptimizerState();
      if (this.lora) {
        const adapter = { settings: this.lora.settings, baseModel: this.lora.baseFolder ?? null, tensors: this.getAdapterTensors() };
        return saveLoraCheckpoint(dir, { adapter, optimizer, seed: this.lora.seed });
      }
      return saveCheckpoint(dir, { config: this.config, tensors: this.getTensors(), tokenizer: this.tokenizer, optimizer, generation: this.generation.file });
    });
  }

  /** The frozen base as a full Hugging Face folder (no optimizer state); later saves name it as the adapter's base. */
  private saveBase(dir: string): Promise<void> {
    return this.serial(async () => {
      await saveCheckpoint(dir, { config: this.config, tensors: this.getTensors(), tokenizer: this.tokenizer, generation: this.generation.file });
      this.lora!.baseFolder = resolve(dir);
    });
  }

  /** The adapters-off view (made once): same model and call queue, frozen. */
  private baseOf(): BuiltinPolicy {
    if (!this.view) {
      this.view = new BuiltinPolicy(this.config, { ...this.site, handle: this.live() }, this.tokenizer, this.optimizer, true, this.lane, true);
      this.view.generation = this.generation;
    }
    return this.view;
  }

  /**
   * Frees the model; safe at any moment. A native call already running keeps the model until it finishes (a
   * generate, score, forward or logits resolves; a backward or optimizer step after it is refused, a step's later
   * stages among them), then the memory is freed. Calls queued
   * behind it and calls made afterwards reject (or throw) GRPO_INVALID_ARGUMENT "This policy has been disposed".
   */
  dispose(): void {
    if (this.handle && !this.baseView) this.addon.modelDispose(this.handle);
    this.handle = undefined;
    this.training = undefined;
  }

  private async forwardNow(batch: SequenceBatch, options: ForwardOptions): Promise<Forward> {
    this.trainable();
    const { recompute = false, ...scoring } = checkOptions(FORWARD_OPTIONS, callNaming('forward'), options, {});
    this.setRecompute(recompute);
    const { scores, packed } = await this.scoreNow(batch, scoring, true);
    const handle = Object.freeze({}) as unknown as ForwardHandle;
    this.training = { handle, packed };
    return { scores, handle };
  }

  private async backwardNow(handle: ForwardHandle, gradient: LossGradient): Promise<void> {
    this.trainable();
    const model = this.live();
    if (!this.training || this.training.handle !== handle) {
      throw new GrpoError('GRPO_INVALID_ARGUMENT', 'backward: this forward handle is stale (a later forward or score replaced it, or its backward already ran)');
    }
    const { packed } = this.training;
    const gradLogp = repack('loss gradLogp', gradient.gradLogp, packed);
    const gradEntropy = gradient.gradEntropy ? repack('loss gradEntropy', gradient.gradEntropy, packed) : null;
    this.training = undefined;
    await callAsync((a) => this.addon.modelBackward(model, gradLogp, gradEntropy, a), () => undefined);
  }

  private async optimizerStepNow(options: OptimizerStepOptions): Promise<OptimizerStepResult> {
    this.trainable();
    const given = checkOptions(OPTIMIZER_STEP_OPTIONS, callNaming('optimizerStep'), options, {});
    const learningRate = given.learningRate ?? scheduledLearningRate(this.optimizer, this.steps + 1);
    const o = this.optimizer, norm = new Float32Array(1);
    const adamw = { lr: learningRate, beta1: o.beta1, beta2: o.beta2, eps: o.eps, weightDecay: o.weightDecay, maxGradNorm: o.maxGradNorm };
    await callAsync((a) => this.addon.modelAdamw(this.live(), adamw, norm, a), () => undefined);
    return { gradNorm: norm[0], learningRate, step: ++this.steps };
  }

  /** Whether the next training forward keeps only each layer's input (the backward recomputes the rest); the CPU model only. */
  private setRecompute(enabled: boolean): void {
    const set = this.addon.modelSetRecompute;
    if (set) return wrapNative(() => set(this.live(), enabled));
    if (enabled) throw new GrpoError('GRPO_UNSUPPORTED', `forward recompute runs on the CPU model only; this policy is on "${this.device}" (create it with device: 'cpu')`);
  }

  /** Throws for a frozen copy (the training calls refuse it). */
  private trainable(): void {
    if (this.frozen) throw new GrpoError('GRPO_UNSUPPORTED', 'This policy is a frozen reference copy; it cannot train');
  }

  private async scoreNow(batch: SequenceBatch, options: ScoreOptions, train: boolean) {
    this.training = undefined;
    const { temperature, onProgress } = checkOptions(SCORE_OPTIONS, callNaming('score'), options, defaultsOf(SCORE_OPTIONS));
    const packed = packBatch(batch, this.config.vocabSize, this.config.maxPositions);
    const T = packed.tokens.length, logp = new Float32Array(T), entropy = new Float32Array(T);
    await callAsync((a) => this.addon.modelScore(this.live(), packed.tokens, packed.offsets, packed.targets, { temperature, ignoreIndex: IGNORE_INDEX }, train, logp, entropy, a), () => undefined);
    onProgress?.(1);
    return { scores: { logp: unpack(logp, packed), entropy: unpack(entropy, packed) }, packed };
  }

  /** The addon that created this policy's handle: every model call goes to it. */
  private get addon(): ModelBindingWithLora {
    return this.site.binding;
  }

  private live(): ModelHandle {
    if (!this.handle) throw new GrpoError('GRPO_INVALID_ARGUMENT', 'This policy has been disposed');
    return this.handle;
  }

  /** Runs `body` after every earlier call on this model has settled (the base view: with the adapters off). */
  private serial<T>(body: () => Promise<T>): Promise<T> {
    const next = this.lane.queue.then(() => (this.baseView ? this.adaptersOff(body) : body()));
    this.lane.queue = next.catch(() => undefined);
    return next;
  }

  private async adaptersOff<T>(body: () => Promise<T>): Promise<T> {
    const enable = (on: boolean) => wrapNative(() => this.addon.modelLoraSetEnabled!(this.live(), on));
    enable(false);
    try {
      return await body();
    } finally {
      enable(true);
    }
  }
}

/**
 * The typed arrays of `lists` copied as they are when a call is made, so that a queued call reads the inputs of its
 * call, not what a later transfer or write left in them. Anything else passes through to the call's validation.
 */
function snapshot<T>(lists: T): T {
  if (!Array.isArray(lists)) return lists;
  return lists.map((list: unknown) => (ArrayBuffer.isView(list) && (list as Int32Array).length > 0 ? (list as Int32Array).slice() : list)) as T;
}

function snapshotBatch(batch: SequenceBatch): SequenceBatch {
  if (batch === null || typeof batch !== 'object') return batch;
  return { ...batch, prompts: snapshot(batch.prompts), completions: snapshot(batch.completions) };
}

function wrapNative<T>(call: () => T): T {
  try {
    return call();
  } catch (error) {
    throw fromNativeError(error);
  }
}
