// Pushing a LoRA adapter to a vLLM server after an optimizer step, and checking that it serves it. vLLM's runtime
// adapter loading (https://docs.vllm.ai/en/latest/features/lora/, "Dynamically serving LoRA adapters"; the server
// started with --enable-lora and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True): POST /v1/load_lora_adapter
// { lora_name, lora_path } with lora_path a PEFT adapter folder the server can read (a shared checkpoint folder),
// POST /v1/unload_lora_adapter { lora_name }, and GET /v1/models listing every served model and adapter by id.
// A server whose /v1/models already lists the name is not asked to load it again (vLLM refuses a second load of a
// name). After loading, the server's /v1/models must list the new name (and no longer the unloaded one): a server that
// answered but serves something else would keep sampling an older policy, so that is an error, not a warning.
// llama.cpp's server cannot load adapters at run time (it only rescales those given at start): export the merged
// model (grpo export --gguf) and restart it instead. Full weights: vLLM documents no reload from disk over HTTP (its
// weight transfer, https://docs.vllm.ai/en/latest/training/weight_transfer/, sends tensors over NCCL or CUDA IPC from
// a trainer process), so the vLLM protocol has no pushWeights.
import { GrpoError } from '../errors.js';
import { exchangeJson, withRetries } from './http.js';
import type { AdapterPush, SyncSettings } from './wire.js';

const modelIds = (json: unknown, url: string): string[] => {
  const data = (json as { data?: unknown } | null)?.data;
  if (!Array.isArray(data) || !data.every((m) => typeof (m as { id?: unknown })?.id === 'string')) {
    throw new GrpoError('GRPO_DATA_FORMAT', `${url}: expected { data: [{ id }, …] } listing the served models`);
  }
  return data.map((m) => (m as { id: string }).id);
};

/** Loads `push` on `endpoint`, checks /v1/models, then unloads the old adapter and checks again. */
export async function pushAdapterVllm(endpoint: string, push: AdapterPush, s: SyncSettings, signal: AbortSignal): Promise<void> {
  // vLLM answers load and unload with a plain-text "Success: …", /v1/models with JSON
  const call = (path: string, body: unknown | undefined, what: string) =>
    withRetries(endpoint, what, { ...s, signal, onRetry: () => undefined }, () =>
      exchangeJson(`${endpoint}${path}`, { method: body === undefined ? 'GET' : 'POST', body, timeoutMs: s.timeoutMs, signal, json: body === undefined }));
  const served = async () => modelIds(await call('/v1/models', undefined, 'listing its models'), `${endpoint}/v1/models`);
  // a server that already serves the name (a resumed run pushing its version again) is left as it is: names carry the step
  if (!(await served()).includes(push.name)) {
    await call('/v1/load_lora_adapter', { lora_name: push.name, lora_path: push.path }, `loading adapter "${push.name}"`);
  }
  const afterLoad = await served();
  if (!afterLoad.includes(push.name)) {
    throw new GrpoError('GRPO_REMOTE_UNAVAILABLE',
      `${endpoint} accepted adapter "${push.name}" but /v1/models does not list it (it lists ${JSON.stringify(afterLoad)}): it would keep sampling another policy`);
  }
  if (push.unload === undefined || push.unload === push.name) return;
  await call('/v1/unload_lora_adapter', { lora_name: push.unload }, `unloading adapter "${push.unload}"`);
  const afterUnload = await served();
  if (afterUnload.includes(push.unload)) {
    throw new GrpoError('GRPO_REMOTE_UNAVAILABLE', `${endpoint} still lists adapter "${push.unload}" after unloading it`);
  }
}
