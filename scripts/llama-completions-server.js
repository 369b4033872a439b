// A thin loopback server over llama.cpp (node-llama-cpp) that speaks the subset of vLLM's protocol the remote
// backend uses (lib/rollout/; https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html):
// - POST /v1/completions: a prompt of token ids, n, max_tokens, temperature, top_p, top_k, min_p, stop_token_ids
//   (and the model's EOS, as vLLM stops at it), seed (candidate c sampled with seed + c); per choice token_ids and logprobs.token_logprobs. The log-probs are over
//   the processed logits node-llama-cpp hands back (after temperature and truncation), as vLLM's --logprobs-mode
//   processed_logprobs reports them; at temperature 1 without truncation they are the raw ones. "model" picks the
//   served model (the base name, or a loaded adapter's name).
// - GET /v1/models, POST /v1/load_lora_adapter { lora_name, lora_path }, POST /v1/unload_lora_adapter { lora_name }
//   (vLLM's runtime adapter loading), when started with `reload`. This is reload with merged weights, not llama.cpp
//   adapter hot-loading (llama.cpp cannot load an adapter into a running server): as a deployment would on a push,
//   the PEFT adapter folder is merged into its base and exported to GGUF (scripts/llama-merged-model.js), loaded as a
//   new llama.cpp model and context, and served under lora_name.
// Requests run one at a time. Every request is logged in order ({ kind, model, … }, completions with the engine's
// own decode time). After `stopAfter` completions the server stops answering and closes (a server killed mid-step).
import { createServer } from 'node:http';
import { engineDecode } from './llama-engine.js';
import { loadMerged } from './llama-merged-model.js';

const ms = (start) => Number(process.hrtime.bigint() - start) / 1e6;

/** One served model: its llama.cpp model, one context and its sequence. */
async function served(model, contextOptions, owned) {
  const context = await model.createContext(contextOptions);
  return { model, context, sequence: context.getSequence(), owned };
}

async function complete(entry, body, vocab) {
  const options = { temperature: body.temperature ?? 1, topP: body.top_p ?? 1, topK: body.top_k ?? 0, minP: body.min_p ?? 0 };
  const eos = entry.model.tokens.eos;
  const stops = [...(body.stop_token_ids ?? []), ...(eos === null ? [] : [eos])]; // vLLM stops at the model's EOS too (ignore_eos false)
  const choices = [];
  for (let c = 0; c < (body.n ?? 1); c++) {
    const { tokens, logp } = await engineDecode(entry.sequence, body.prompt, { ...options, seed: (body.seed ?? 0) + c }, vocab, body.max_tokens ?? 16, stops);
    choices.push({ index: c, text: '', token_ids: tokens, logprobs: { token_logprobs: logp }, finish_reason: stops.includes(tokens.at(-1)) ? 'stop' : 'length' });
  }
  return choices;
}

/**
 * Serves `model` (a loaded node-llama-cpp model) as `name` on 127.0.0.1; resolves to { url, log, requests(), close() }.
 * `reload: { llama, base, dir }` turns on adapter loading: merged into the checkpoint folder `base`, GGUF files in `dir`.
 */
export async function serveCompletions(model, contextOptions, { vocab, name = 'llama.cpp', stopAfter = Infinity, reload } = {}) {
  const models = new Map([[name, await served(model, contextOptions, false)]]);
  const log = [];
  const routes = {
    'GET /v1/models': async () => ({ json: { object: 'list', data: [...models.keys()].map((id) => ({ id, object: 'model' })) } }),
    'POST /v1/completions': async (body) => {
      const entry = models.get(body.model ?? name);
      if (!entry) return { status: 404, json: { error: `model ${body.model} not served` } };
      const start = process.hrtime.bigint();
      const choices = await complete(entry, body, vocab);
      const tokens = choices.reduce((a, c) => a + c.token_ids.length, 0);
      log.push({ kind: 'completion', model: body.model ?? name, n: choices.length, seed: body.seed, promptTokens: body.prompt.length, tokens, decodeMs: ms(start) });
      return { json: { id: `cmpl-${log.length}`, object: 'text_completion', model: body.model ?? name, choices } };
    },
    'POST /v1/load_lora_adapter': async ({ lora_name: adapter, lora_path: path }) => {
      if (!reload) return { status: 400, json: { error: 'runtime adapter loading is off (start the harness with reload)' } };
      if (models.has(adapter)) return { status: 400, json: { error: `The lora adapter '${adapter}' has already been loaded.` } };
      const start = process.hrtime.bigint();
      models.set(adapter, await served(await loadMerged(reload, adapter, path), contextOptions, true));
      log.push({ kind: 'load', model: adapter, reloadMs: ms(start) });
      return { text: `Success: LoRA adapter '${adapter}' added successfully.` };
    },
    'POST /v1/unload_lora_adapter': async ({ lora_name: adapter }) => {
      const entry = adapter === name ? undefined : models.get(adapter);
      if (!entry) return { status: 404, json: { error: `The lora adapter '${adapter}' cannot be found.` } };
      models.delete(adapter);
      await entry.context.dispose();
      await entry.model.dispose();
      log.push({ kind: 'unload', model: adapter });
      return { text: `Success: LoRA adapter '${adapter}' removed successfully.` };
    },
  };
  let queue = Promise.resolve(), completions = 0;
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      const route = routes[`${req.method} ${req.url}`];
      if (!route) return void res.writeHead(404).end('{"error":"not found"}');
      if (req.url === '/v1/completions' && ++completions > stopAfter) {
        req.socket.destroy();
        server.close();
        return;
      }
      const job = queue.then(() => route(text ? JSON.parse(text) : {}));
      queue = job.catch(() => undefined);
      job.then(({ status = 200, json, text: plain }) => res.writeHead(status, { 'content-type': plain === undefined ? 'application/json' : 'text/plain' })
        .end(plain ?? JSON.stringify(json)), (error) => res.writeHead(500).end(JSON.stringify({ error: String(error) })));
    });
  });
  await new Promise((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    log,
    requests: () => completions,
    close: async () => {
      server.closeAllConnections();
      await new Promise((done) => server.close(() => done()));
      await queue;
      for (const entry of models.values()) {
        await entry.context.dispose();
        if (entry.owned) await entry.model.dispose();
      }
    },
  };
}
