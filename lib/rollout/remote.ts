// Rollouts from inference servers over one wire protocol (protocols.ts: vLLM's /v1/completions or SGLang's
// /generate). One request per prompt asks for its n candidates; each endpoint runs at most maxInFlight requests at a
// time, pulling the next prompt from one shared queue (a faster server takes more). A timeout, a connection error or a
// 5xx (or 429) answer is retried on the same endpoint after backoffMs, doubled each time; after `retries` retries the
// endpoint stayed down. With `failover` (the default) it is then given up for the rest of the run: its requests in
// flight are aborted, their prompts and the failed one go back to the endpoints still up, and it gets no more
// requests or pushes, so it never serves a stale version later; only with every endpoint down does the call reject
// (GRPO_REMOTE_UNAVAILABLE naming each and its last failure). Without fail-over the first endpoint down ends the call.
// Another failure (a refused request, a malformed answer) ends the call either way: it is not an outage.
// Every rollout is keyed by (step, prompt, candidate): a request's candidates land in their slots only once the whole
// answer has been checked, a slot is never written twice, and the call resolves only when every slot is full, so
// none is lost or duplicated. With a seed, each request's seed depends on (step, prompt) alone, so a retried or
// failed-over request samples the same candidates on servers that honour per-request seeds and serve the same weights.
import { GrpoError } from '../errors.js';
import { checkOptions, defaultsOf, kernelNaming } from '../options/schema.js';
import { EndpointDown, exchangeJson, withRetries } from './http.js';
import { REMOTE_OPTIONS, REMOTE_SAMPLING_OPTIONS, type RemoteOptions, type RemoteSampling, type RemoteSamplingOptions, type RemoteSettings } from './options.js';
import { PROTOCOLS } from './protocols.js';
import type { AdapterPush, Protocol, RemoteChoice, WeightsPush } from './wire.js';

/** Which rollout this is. */
export interface RolloutKey {
  step: number;
  prompt: number;
  candidate: number;
}

export interface RemoteRollout extends RolloutKey, RemoteChoice {
  /** The server that produced it. */
  endpoint: string;
}

/** Per endpoint, since the backend was made. */
export interface EndpointStats {
  endpoint: string;
  requests: number;
  retries: number;
  /** The most requests it had in flight at once. */
  peakInFlight: number;
  /** Why it was given up (fail-over: it stayed down), or null while it is in use. */
  down: string | null;
}

/** A 31-bit seed from the call's seed and (step, prompt): the same request always gets the same one. */
export function requestSeed(seed: number, step: number, prompt: number): number {
  let h = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(step + 1, 0xc2b2ae35) ^ Math.imul(prompt + 1, 0x27d4eb2f);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  h ^= h >>> 12;
  return h & 0x7fffffff;
}

/** Settles every task; the first failure aborts `abort` (the others stop) and is rethrown once all have ended. */
async function allOrAbort(tasks: Promise<unknown>[], abort: AbortController): Promise<void> {
  const watched = tasks.map((t) => t.catch((error: unknown) => {
    abort.abort(error);
    throw error;
  }));
  try {
    await Promise.all(watched);
  } catch (error) {
    await Promise.allSettled(watched);
    throw error;
  }
}

export class RemoteRollouts {
  private readonly settings: RemoteSettings;
  private readonly protocol: Protocol;
  private readonly stats = new Map<string, EndpointStats>();
  private readonly inFlight = new Map<string, number>();

  constructor(options: RemoteOptions) {
    this.settings = checkOptions(REMOTE_OPTIONS, kernelNaming('RemoteRollouts'), options, defaultsOf(REMOTE_OPTIONS));
    this.protocol = PROTOCOLS[this.settings.protocol];
    for (const endpoint of this.settings.endpoints) this.stats.set(endpoint, { endpoint, requests: 0, retries: 0, peakInFlight: 0, down: null });
  }

  /** Requests, retries, peak concurrency and whether it was given up, per endpoint. */
  endpointStats(): EndpointStats[] {
    return [...this.stats.values()].map((s) => ({ ...s }));
  }

  /**
   * Loads a LoRA adapter on every endpoint still up (vLLM's /v1/load_lora_adapter checked in /v1/models, SGLang's
   * /load_lora_adapter checked in its loaded_adapters), then unloads `push.unload`; pass `push.name` as the `model` of
   * the next generate calls.
   */
  async pushAdapter(push: AdapterPush): Promise<void> {
    checkNames('pushAdapter', { name: push.name, path: push.path });
    return this.pushAll((e, signal) => this.protocol.pushAdapter(e, push, this.settings, signal));
  }

  /**
   * Reloads every endpoint still up from the checkpoint folder `push.path` and checks it reports `push.version`
   * (SGLang's /update_weights_from_disk and /get_model_info; vLLM documents no reload from disk: GRPO_UNSUPPORTED).
   */
  async pushWeights(push: WeightsPush): Promise<void> {
    checkNames('pushWeights', { path: push.path, version: push.version });
    const pushWeights = this.protocol.pushWeights;
    if (!pushWeights) {
      throw new GrpoError('GRPO_UNSUPPORTED', `RemoteRollouts.pushWeights: protocol "${this.settings.protocol}" has no documented reload of full weights `
        + 'from disk (vLLM syncs weights over NCCL or CUDA IPC from a trainer process, https://docs.vllm.ai/en/latest/training/weight_transfer/); '
        + 'use protocol "sglang" (/update_weights_from_disk) or push LoRA adapters');
    }
    return this.pushAll((e, signal) => pushWeights(e, push, this.settings, signal));
  }

  /** The n candidates of every prompt for optimizer step `step`, prompt-major (prompt p's candidate c at p·n + c). */
  async generate(step: number, prompts: readonly ArrayLike<number>[], options: RemoteSamplingOptions = {}): Promise<RemoteRollout[]> {
    const sampling = checkOptions(REMOTE_SAMPLING_OPTIONS, kernelNaming('RemoteRollouts.generate'), options, defaultsOf(REMOTE_SAMPLING_OPTIONS));
    if (!Number.isSafeInteger(step) || step < 0) throw new GrpoError('GRPO_INVALID_ARGUMENT', `RemoteRollouts.generate step: expected an integer >= 0 but received ${String(step)}`);
    prompts.forEach((p, i) => {
      if (!p || typeof p.length !== 'number' || p.length === 0 || !Array.from(p).every((t) => Number.isInteger(t) && t >= 0)) {
        throw new GrpoError('GRPO_INVALID_ARGUMENT', `RemoteRollouts.generate prompts[${i}]: expected a non-empty list of token ids`);
      }
    });
    const slots: (RemoteRollout | undefined)[] = new Array(prompts.length * sampling.n);
    // each round runs the prompts left on the endpoints still up; an endpoint given up hands its prompts to the next
    for (let left = prompts.map((_, p) => p); left.length > 0;) {
      left = await this.round(step, prompts, left, sampling, slots, this.live());
    }
    const missing = slots.findIndex((s) => s === undefined);
    if (missing >= 0 || slots.length !== prompts.length * sampling.n) {
      throw new GrpoError('GRPO_INTERNAL', `rollout (${step}, ${Math.floor(missing / sampling.n)}, ${missing % sampling.n}) never arrived`);
    }
    return slots as RemoteRollout[];
  }

  /** The endpoints not given up; GRPO_REMOTE_UNAVAILABLE naming each when there is none. */
  private live(): string[] {
    const live = this.settings.endpoints.filter((e) => this.stats.get(e)!.down === null);
    if (live.length === 0) {
      const why = [...this.stats.values()].map((s) => s.down).join('; ');
      throw new GrpoError('GRPO_REMOTE_UNAVAILABLE', `every endpoint is down (${this.settings.endpoints.join(', ')}): ${why}`);
    }
    return live;
  }

  /** Under fail-over, marks `endpoint` given up when `error` says it stayed down (true); false when the error ends the call. */
  private giveUp(endpoint: string, error: unknown): boolean {
    if (!this.settings.failover || !(error instanceof EndpointDown)) return false;
    const stats = this.stats.get(endpoint)!;
    stats.down ??= error.message;
    return true;
  }

  /** `one` on every endpoint still up at once; an endpoint down is given up (fail-over), another failure aborts the rest. */
  private async pushAll(one: (endpoint: string, signal: AbortSignal) => Promise<void>): Promise<void> {
    const abort = new AbortController();
    await allOrAbort(this.live().map((e) => one(e, abort.signal).catch((error: unknown) => {
      if (!this.giveUp(e, error)) throw error;
    })), abort);
    this.live();
  }

  /** Runs prompts `todo` on `endpoints`; the prompts of endpoints given up meanwhile, for the next round. */
  private async round(
    step: number, prompts: readonly ArrayLike<number>[], todo: number[], s: RemoteSampling, slots: (RemoteRollout | undefined)[], endpoints: string[],
  ): Promise<number[]> {
    const queue = [...todo], handedBack: number[] = [];
    const abort = new AbortController();
    const worker = async (endpoint: string, own: AbortController) => {
      const signal = AbortSignal.any([abort.signal, own.signal]);
      while (queue.length > 0 && !signal.aborted) {
        const prompt = queue.shift()!;
        let choices: RemoteChoice[];
        try {
          choices = await this.request(endpoint, step, prompt, prompts[prompt], s, signal);
        } catch (error) {
          if (abort.signal.aborted || !this.giveUp(endpoint, own.signal.aborted ? own.signal.reason : error)) throw error;
          handedBack.push(prompt);
          own.abort(error); // its other requests in flight hand their prompts back too
          return;
        }
        choices.forEach((choice, candidate) => {
          const at = prompt * s.n + candidate;
          if (slots[at]) throw new GrpoError('GRPO_INTERNAL', `rollout (${step}, ${prompt}, ${candidate}) arrived twice`);
          slots[at] = { step, prompt, candidate, endpoint, ...choice };
        });
      }
    };
    await allOrAbort(endpoints.flatMap((e) => {
      const own = new AbortController();
      return Array.from({ length: this.settings.maxInFlight }, () => worker(e, own));
    }), abort);
    return handedBack;
  }

  /** One prompt's candidates from `endpoint`, retrying timeouts, connection errors and 5xx / 429 answers. */
  private request(endpoint: string, step: number, prompt: number, ids: ArrayLike<number>, s: RemoteSampling, signal: AbortSignal): Promise<RemoteChoice[]> {
    const { retries, backoffMs, timeoutMs } = this.settings;
    const target = { model: s.model || this.settings.model, base: this.settings.model };
    const body = this.protocol.body(ids, s, target, s.seed === null ? null : requestSeed(s.seed, step, prompt));
    const stats = this.stats.get(endpoint)!;
    const onRetry = (attempt: number, reason: string) => {
      stats.retries++;
      this.settings.onRetry({ endpoint, step, prompt, attempt, reason });
    };
    return withRetries(endpoint, `rollout (step ${step}, prompt ${prompt})`, { retries, backoffMs, signal, onRetry }, async () => {
      const count = (this.inFlight.get(endpoint) ?? 0) + 1;
      this.inFlight.set(endpoint, count);
      stats.peakInFlight = Math.max(stats.peakInFlight, count);
      stats.requests++;
      try {
        return this.protocol.parse(await exchangeJson(`${endpoint}${this.protocol.path}`, { method: 'POST', body, timeoutMs, signal }), s.n, endpoint);
      } finally {
        this.inFlight.set(endpoint, this.inFlight.get(endpoint)! - 1);
      }
    });
  }
}

/** Every value a non-empty string, or GRPO_INVALID_ARGUMENT naming the key. */
function checkNames(fn: string, values: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(values)) {
    if (typeof value !== 'string' || value === '') throw new GrpoError('GRPO_INVALID_ARGUMENT', `${fn} ${key}: expected a non-empty string but received ${JSON.stringify(value)}`);
  }
}
