// Rollouts of a training step from inference servers (config.rollouts.backend "remote", lib/rollout/): the step's
// prompts sent as token ids, the servers' candidates laid out as the trainer's Rollout with the engine's log-probs
// beside them, and the policy version that produced them. Every `pushEvery` steps the policy goes to the servers as
// version <model>-step-<N>: with LoRA the adapter, saved to <run>/adapters/step-<N> and loaded under that name (vLLM
// checks it in /v1/models, SGLang in its loaded_adapters); with full fine-tuning (SGLang only) the checkpoint folder,
// saved to <run>/weights/step-<N> (the last 2 kept) and reloaded with that weight_version (checked in /get_model_info).
// The version a step samples is a function of the step alone, so a resumed run samples the same one (it pushes that
// version again, which servers that still serve it skip).
import { existsSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { GrpoError } from '../errors.js';
import type { Policy } from '../policy/policy.js';
import { RemoteRollouts } from '../rollout/remote.js';
import type { GenerationConfig, RolloutsConfig, TrainerConfig } from './config.js';
import { encodePrompt, rowMask, tokenizerOf, type Rollout } from './rollout.js';

/** A step's rollout from the servers: the engine's log-probs of each completion's tokens and the version sampled. */
export interface RemoteStepRollout extends Rollout {
  /** sampling [B]: the engine's log-prob of each sampled token */
  sampling: Float32Array[];
  /** The served model or adapter that produced every row. */
  policyVersion: string;
}

/** The backend of a run, when it samples remotely. */
export interface RemoteSource {
  remote: RemoteRollouts;
  settings: RolloutsConfig;
}

export function remoteSource(config: TrainerConfig): RemoteSource | undefined {
  const s = config.rollouts;
  if (s.backend !== 'remote') return undefined;
  const { endpoints, protocol, model, failover, maxInFlight, timeoutMs, retries, backoffMs } = s;
  return { remote: new RemoteRollouts({ endpoints, protocol, model, failover, maxInFlight, timeoutMs, retries, backoffMs }), settings: s };
}

/** The last step at or before `step` (optimizer steps done) whose policy was pushed; 0 = none. */
const pushedAt = (s: RolloutsConfig, step: number) => (s.pushEvery === 0 ? 0 : step - (step % s.pushEvery));

/** The name the servers serve after `step` optimizer steps: `model` before the first push, then `<model>-step-<N>`. */
export function policyVersion(s: RolloutsConfig, step: number): string {
  const at = pushedAt(s, step);
  return at === 0 ? s.model : `${s.model}-step-${at}`;
}

/** A policy that can be pushed (LoRA: its adapter folder; full weights: SGLang's reload from disk), or a typed error. */
export function checkPushable(config: TrainerConfig, policy: Policy): void {
  const s = config.rollouts;
  if (s.backend === 'remote' && s.pushEvery > 0 && !policy.adapters && s.protocol === 'vllm') {
    throw new GrpoError('GRPO_UNSUPPORTED', 'config "rollouts.pushEvery": vLLM documents no reload of full weights from disk over HTTP (its weight '
      + 'transfer sends tensors over NCCL or CUDA IPC from a trainer process: https://docs.vllm.ai/en/latest/training/weight_transfer/), so full '
      + 'fine-tuning cannot push to it; train with lora, use rollouts.protocol "sglang" (/update_weights_from_disk), or set rollouts.pushEvery to 0');
  }
}

const WEIGHTS_KEPT = 2;

/** Removes all but the last WEIGHTS_KEPT weights/step-<N> folders of the run. */
async function pruneWeights(runDir: string): Promise<void> {
  const steps = (await readdir(join(runDir, 'weights'))).map((name) => /^step-(\d+)$/.exec(name)).filter((m) => m !== null).map((m) => Number(m[1]));
  const old = steps.sort((a, b) => b - a).slice(WEIGHTS_KEPT);
  await Promise.all(old.map((step) => rm(join(runDir, 'weights', `step-${step}`), { recursive: true, force: true })));
}

/** The folder of version `step` as the trainer and as the servers see it. */
function folders(source: RemoteSource, runDir: string, policy: Policy, step: number) {
  const folder = join(policy.adapters ? 'adapters' : 'weights', `step-${step}`);
  return { local: join(runDir, folder), served: join(source.settings.adapterPath || runDir, folder) };
}

/** Pushes the saved version `step` to every server (unloading adapter `unload`); `again`: they may serve it already. */
async function pushSaved(source: RemoteSource, policy: Policy, served: string, step: number, unload?: string, again = false): Promise<void> {
  const version = policyVersion(source.settings, step);
  if (policy.adapters) await source.remote.pushAdapter({ name: version, path: served, unload, again });
  else await source.remote.pushWeights({ path: served, version });
}

/** After optimizer step `step` (1-based count of steps done): the push, when one is due. */
export async function pushIfDue(source: RemoteSource, policy: Policy, runDir: string, step: number): Promise<void> {
  if (pushedAt(source.settings, step) !== step || step === 0) return;
  const before = policyVersion(source.settings, step - 1);
  const { local, served } = folders(source, runDir, policy, step);
  await policy.save(local);
  await pushSaved(source, policy, served, step, before === source.settings.model ? undefined : before);
  if (!policy.adapters) await pruneWeights(runDir);
}

/**
 * On resume after `step` steps (`policy` as of then): the servers get the version the next step samples again
 * (servers may have restarted). A pruned weights folder is saved again when it is this policy's own.
 */
export async function restoreVersion(source: RemoteSource, policy: Policy, runDir: string, step: number): Promise<void> {
  const at = pushedAt(source.settings, step);
  if (at === 0) return;
  const { local, served } = folders(source, runDir, policy, at);
  if (!existsSync(local)) {
    if (at !== step) {
      throw new GrpoError('GRPO_INVALID_ARGUMENT', `resume at step ${step}: the servers must sample version ${policyVersion(source.settings, at)}, `
        + `but ${local} was pruned (the last ${WEIGHTS_KEPT} weight folders are kept) and the checkpoint holds step ${step}'s weights; `
        + 'resume from a checkpoint at a step that pushed (a multiple of rollouts.pushEvery)');
    }
    await policy.save(local);
  }
  await pushSaved(source, policy, served, at, undefined, true);
}

/** Step `step`'s S candidates of each prompt from the servers, with the same seed rule as the policy's own sampling. */
export async function remoteRollout(
  source: RemoteSource, policy: Policy, prompts: readonly string[], candidates: number, generation: GenerationConfig, seed: number, step: number,
): Promise<RemoteStepRollout> {
  const tokenizer = tokenizerOf(policy);
  const encoded = prompts.map((p) => encodePrompt(tokenizer, p));
  const version = policyVersion(source.settings, step);
  // an adapter is sampled by its name; reloaded full weights are the base model's, under a new weight_version
  const out = await source.remote.generate(step, encoded, {
    model: policy.adapters ? version : source.settings.model,
    n: candidates, maxTokens: generation.maxNewTokens, temperature: generation.temperature, topP: generation.topP, topK: generation.topK, seed,
  });
  const completions = out.map((r) => r.tokens);
  const width = Math.max(1, ...completions.map((c) => c.length));
  return {
    groups: prompts.length,
    candidates,
    promptIds: encoded.flatMap((ids) => Array.from({ length: candidates }, () => ids)),
    completions,
    texts: completions.map((c) => tokenizer.decode(c, { skipSpecialTokens: true })),
    truncated: Uint8Array.from(out, (r) => (r.truncated ? 1 : 0)),
    width,
    mask: rowMask(completions.map((c) => c.length), width),
    sampling: out.map((r) => r.logp),
    policyVersion: version,
  };
}
