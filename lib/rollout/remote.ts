// Rollouts from inference servers over the OpenAI-compatible /v1/completions API (completions.ts). One request per
// prompt asks for its n candidates; each endpoint runs at most maxInFlight requests at a time, pulling the next
// prompt from one shared queue (a faster server takes more). A timeout, a connection error or a 5xx (or 429) answer
// is retried on the same endpoint after backoffMs, doubled each time; after `retries` retries the call rejects with
// GRPO_REMOTE_UNAVAILABLE naming the endpoint and its last failure, and the requests still in flight are aborted.
// Every rollout is keyed by (step, prompt, candidate): a request's candidates land in their slots only once the
// whole answer has been checked, a slot is never written twice, and the call resolves only when every slot is full,
// so none is lost or duplicated. With a seed, each request's seed depends on (step, prompt) alone, so a retried
// request samples the same candidates on a server that honours per-request seeds (vLLM does).
import { GrpoError } from '../errors.js';
import { checkOptions, defaultsOf, kernelNaming } from '../options/schema.js';
import { completionBody, parseCompletion, type RemoteChoice } from './completions.js';
import { pushAdapter, type AdapterPush } from './adapter-sync.js';
import { exchangeJson, withRetries } from './http.js';
import { REMOTE_OPTIONS, REMOTE_SAMPLING_OPTIONS, type RemoteOptions, type RemoteSampling, type RemoteSamplingOptions, type RemoteSettings } from './options.js';

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
}

/** A 31-bit seed from the call's seed and (step, prompt): the same request always gets the same one. */
export function requestSeed(seed: number, step: number, prompt: number): number {
  let h = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(step + 1, 0xc2b2ae35) ^ Math.imul(prompt + 1, 0x27d4eb2f);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  h ^= h >>> 12;
  return h & 0x7fffffff;
}

export class RemoteRollouts {
  private readonly settings: RemoteSettings;
  private readonly stats = new Map<string, EndpointStats>();
  private readonly inFlight = new Map<string, number>();

  constructor(options: RemoteOptions) {
    this.settings = checkOptions(REMOTE_OPTIONS, kernelNaming('RemoteRollouts'), options, defaultsOf(REMOTE_OPTIONS));
    for (const endpoint of this.settings.endpoints) this.stats.set(endpoint, { endpoint, requests: 0, retries: 0, peakInFlight: 0 });
  }

  /** Requests, retries and peak concurrency per endpoint. */
  endpointStats(): EndpointStats[] {
    return [...this.stats.values()].map((s) => ({ ...s }));
  }

  /**
   * Loads a LoRA adapter on every endpoint (vLLM's /v1/load_lora_adapter), checks that each lists it in /v1/models,
   * then unloads `push.unload`; pass `push.name` as the `model` of the next generate calls (adapter-sync.ts).
   */
  pushAdapter(push: AdapterPush): Promise<void> {
    return pushAdapter(this.settings.endpoints, push, this.settings);
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
    const abort = new AbortController();
    let next = 0;
    const worker = async (endpoint: string) => {
      while (next < prompts.length && !abort.signal.aborted) {
        const prompt = next++;
        const choices = await this.request(endpoint, step, prompt, prompts[prompt], sampling, abort.signal);
        choices.forEach((choice, candidate) => {
          const at = prompt * sampling.n + candidate;
          if (slots[at]) throw new GrpoError('GRPO_INTERNAL', `rollout (${step}, ${prompt}, ${candidate}) arrived twice`);
          slots[at] = { step, prompt, candidate, endpoint, ...choice };
        });
      }
    };
    const workers = this.settings.endpoints.flatMap((e) => Array.from({ length: this.settings.maxInFlight }, () => worker(e)));
    try {
      await Promise.all(workers.map((w) => w.catch((error: unknown) => {
        abort.abort(error);
        throw error;
      })));
    } catch (error) {
      await Promise.allSettled(workers);
      throw error;
    }
    const missing = slots.findIndex((s) => s === undefined);
    if (missing >= 0 || slots.length !== prompts.length * sampling.n) {
      throw new GrpoError('GRPO_INTERNAL', `rollout (${step}, ${Math.floor(missing / sampling.n)}, ${missing % sampling.n}) never arrived`);
    }
    return slots as RemoteRollout[];
  }

  /** One prompt's candidates from `endpoint`, retrying timeouts, connection errors and 5xx / 429 answers. */
  private request(endpoint: string, step: number, prompt: number, ids: ArrayLike<number>, s: RemoteSampling, signal: AbortSignal): Promise<RemoteChoice[]> {
    const { retries, backoffMs, timeoutMs } = this.settings;
    const body = completionBody(ids, s, s.model || this.settings.model, s.seed === null ? null : requestSeed(s.seed, step, prompt));
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
        return parseCompletion(await exchangeJson(`${endpoint}/v1/completions`, { method: 'POST', body, timeoutMs, signal }), s.n, endpoint);
      } finally {
        this.inFlight.set(endpoint, this.inFlight.get(endpoint)! - 1);
      }
    });
  }
}
