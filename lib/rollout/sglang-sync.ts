// Pushing a new policy to an SGLang server after an optimizer step, and checking that it serves it.
// LoRA: runtime adapter loading (https://docs.sglang.io/advanced_features/lora.html, "Dynamic LoRA loading"; start the
// server with --enable-lora, --max-lora-rank and --lora-target-modules): POST /load_lora_adapter
// { lora_name, lora_path } and POST /unload_lora_adapter { lora_name }, both answering { success, error_message,
// loaded_adapters } (LoRAUpdateOutput in SGLang's managers/io_struct.py: the adapters loaded after the call, by name).
// That list is the check: the new name in it after loading, the old one gone after unloading. A push that may find the
// name loaded already (a resumed run) unloads it first, a refusal there meaning it was not loaded.
// Full weights: POST /update_weights_from_disk { model_path, weight_version }
// (https://docs.sglang.io/advanced_features/sglang_for_rl.html, "Update Weights from Disk": a Hugging Face checkpoint
// folder the server can read; answers { success, message }), then GET /get_model_info must report that
// weight_version (https://docs.sglang.io/basic_usage/native_api.html, "Get Model Info"). A server that said success
// but reports another version would keep sampling an older policy: an error, not a warning. A server that already
// reports the version is not asked to reload.
import { GrpoError } from '../errors.js';
import { exchangeJson, withRetries } from './http.js';
import type { AdapterPush, SyncSettings, WeightsPush } from './wire.js';

type Call = (path: string, body: unknown | undefined, what: string) => Promise<Record<string, unknown>>;

function caller(endpoint: string, s: SyncSettings, signal: AbortSignal): Call {
  return async (path, body, what) => {
    const json = await withRetries(endpoint, what, { ...s, signal, onRetry: () => undefined }, () =>
      exchangeJson(`${endpoint}${path}`, { method: body === undefined ? 'GET' : 'POST', body, timeoutMs: s.timeoutMs, signal }));
    if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new GrpoError('GRPO_DATA_FORMAT', `${endpoint}${path}: expected a JSON object`);
    return json as Record<string, unknown>;
  };
}

/** The answer's loaded_adapters by name, after a successful call; a refusal is GRPO_INVALID_ARGUMENT with SGLang's words. */
function loadedAfter(answer: Record<string, unknown>, url: string, what: string): string[] {
  if (answer.success !== true) throw new GrpoError('GRPO_INVALID_ARGUMENT', `${url} refused ${what}: ${JSON.stringify(answer.error_message ?? answer)}`);
  const loaded = answer.loaded_adapters;
  if (loaded === null || typeof loaded !== 'object' || Array.isArray(loaded)) {
    throw new GrpoError('GRPO_DATA_FORMAT', `${url}: expected { success, loaded_adapters: { <name>: … } } listing the loaded adapters`);
  }
  return Object.keys(loaded);
}

/** Loads `push` on `endpoint` and checks its loaded_adapters, then unloads the old adapter and checks again. */
export async function pushAdapterSglang(endpoint: string, push: AdapterPush, s: SyncSettings, signal: AbortSignal): Promise<void> {
  const call = caller(endpoint, s, signal);
  if (push.again) {
    await call('/unload_lora_adapter', { lora_name: push.name }, `unloading adapter "${push.name}"`).catch((error: unknown) => {
      if (!(error instanceof GrpoError && error.code === 'GRPO_INVALID_ARGUMENT')) throw error;
    });
  }
  const what = `adapter "${push.name}"`;
  const afterLoad = loadedAfter(await call('/load_lora_adapter', { lora_name: push.name, lora_path: push.path }, `loading ${what}`), `${endpoint}/load_lora_adapter`, what);
  if (!afterLoad.includes(push.name)) {
    throw new GrpoError('GRPO_REMOTE_UNAVAILABLE',
      `${endpoint} accepted ${what} but its loaded_adapters do not list it (they list ${JSON.stringify(afterLoad)}): it would keep sampling another policy`);
  }
  if (push.unload === undefined || push.unload === push.name) return;
  const old = `adapter "${push.unload}"`;
  const afterUnload = loadedAfter(await call('/unload_lora_adapter', { lora_name: push.unload }, `unloading ${old}`), `${endpoint}/unload_lora_adapter`, `unloading ${old}`);
  if (afterUnload.includes(push.unload)) throw new GrpoError('GRPO_REMOTE_UNAVAILABLE', `${endpoint} still lists ${old} after unloading it`);
}

/** Reloads `endpoint`'s weights from `push.path` under `push.version`, unless it reports that version already. */
export async function pushWeightsSglang(endpoint: string, push: WeightsPush, s: SyncSettings, signal: AbortSignal): Promise<void> {
  const call = caller(endpoint, s, signal);
  const served = async () => (await call('/get_model_info', undefined, 'reporting its weight version')).weight_version;
  if ((await served()) === push.version) return;
  const url = `${endpoint}/update_weights_from_disk`;
  const answer = await call('/update_weights_from_disk', { model_path: push.path, weight_version: push.version }, `reloading weights "${push.version}"`);
  if (answer.success !== true) throw new GrpoError('GRPO_INVALID_ARGUMENT', `${url} refused weights ${push.path}: ${JSON.stringify(answer.message ?? answer)}`);
  const after = await served();
  if (after !== push.version) {
    throw new GrpoError('GRPO_REMOTE_UNAVAILABLE',
      `${endpoint} answered success to ${url} but /get_model_info reports weight_version ${JSON.stringify(after)}, not "${push.version}": it would keep sampling another policy`);
  }
}
