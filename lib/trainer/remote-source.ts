// Rollouts of a training step from inference servers (config.rollouts.backend "remote", lib/rollout/): the step's
// prompts sent as token ids, the servers' candidates laid out as the trainer's Rollout with the engine's log-probs
// beside them, and the policy version that produced them. With LoRA the adapter is saved to
// <run>/adapters/step-<N> and pushed every `pushEvery` steps under the name <model>-step-<N> (verified in each
// server's /v1/models); the version a step samples is a function of the step alone, so a resumed run samples the
// same one (it pushes that adapter again, which servers that still serve it skip).
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
  const { endpoints, model, maxInFlight, timeoutMs, retries, backoffMs } = s;
  return { remote: new RemoteRollouts({ endpoints, model, maxInFlight, timeoutMs, retries, backoffMs }), settings: s };
}

/** The last step at or before `step` (optimizer steps done) whose adapter was pushed; 0 = none. */
const pushedAt = (s: RolloutsConfig, step: number) => (s.pushEvery === 0 ? 0 : step - (step % s.pushEvery));

/** The name the servers serve after `step` optimizer steps: `model` before the first push, then `<model>-step-<N>`. */
export function policyVersion(s: RolloutsConfig, step: number): string {
  const at = pushedAt(s, step);
  return at === 0 ? s.model : `${s.model}-step-${at}`;
}

/** A policy that can be pushed (LoRA: its adapter folder is what the servers load), or a typed error. */
export function checkPushable(config: TrainerConfig, policy: Policy): void {
  if (config.rollouts.backend === 'remote' && config.rollouts.pushEvery > 0 && !policy.adapters) {
    throw new GrpoError('GRPO_UNSUPPORTED', 'config "rollouts.pushEvery": pushing full weights to the servers is not wired yet (only LoRA '
      + 'adapters, through /v1/load_lora_adapter); train with lora, or set rollouts.pushEvery to 0');
  }
}

/** Saves the adapter of the policy after `step` steps and pushes it to every server, unloading the version before. */
async function push(source: RemoteSource, policy: Policy, runDir: string, step: number, unload: string | undefined): Promise<void> {
  const folder = join('adapters', `step-${step}`);
  await policy.save(join(runDir, folder));
  const path = join(source.settings.adapterPath || runDir, folder);
  await source.remote.pushAdapter({ name: policyVersion(source.settings, step), path, unload });
}

/** After optimizer step `step` (1-based count of steps done): the push, when one is due. */
export async function pushIfDue(source: RemoteSource, policy: Policy, runDir: string, step: number): Promise<void> {
  if (pushedAt(source.settings, step) !== step || step === 0) return;
  const before = policyVersion(source.settings, step - 1);
  await push(source, policy, runDir, step, before === source.settings.model ? undefined : before);
}

/** On resume after `step` steps: the servers get the version the next step samples again (servers may have restarted). */
export async function restoreVersion(source: RemoteSource, runDir: string, step: number): Promise<void> {
  const at = pushedAt(source.settings, step);
  if (at === 0) return;
  const folder = join(source.settings.adapterPath || runDir, 'adapters', `step-${at}`);
  await source.remote.pushAdapter({ name: policyVersion(source.settings, at), path: folder });
}

/** Step `step`'s S candidates of each prompt from the servers, with the same seed rule as the policy's own sampling. */
export async function remoteRollout(
  source: RemoteSource, policy: Policy, prompts: readonly string[], candidates: number, generation: GenerationConfig, seed: number, step: number,
): Promise<RemoteStepRollout> {
  const tokenizer = tokenizerOf(policy);
  const encoded = prompts.map((p) => encodePrompt(tokenizer, p));
  const model = policyVersion(source.settings, step);
  const out = await source.remote.generate(step, encoded, {
    model, n: candidates, maxTokens: generation.maxNewTokens, temperature: generation.temperature, topP: generation.topP, topK: generation.topK, seed,
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
    policyVersion: model,
  };
}
