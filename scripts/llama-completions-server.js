// A thin loopback server over llama.cpp (node-llama-cpp) that speaks the subset of vLLM's /v1/completions that
// lib/rollout/remote.ts sends (https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html): a prompt of
// token ids, n, max_tokens, temperature, top_p, top_k, min_p, stop_token_ids, seed (candidate c sampled with
// seed + c), and per choice token_ids and logprobs.token_logprobs. The log-probs are over the processed logits that
// node-llama-cpp hands back (after temperature and truncation), as vLLM's --logprobs-mode processed_logprobs
// reports them; at temperature 1 without truncation they are the raw ones. Requests run one at a time on one
// context sequence. `stopAfter` requests, the server stops answering and closes (a server killed mid-step).
import { createServer } from 'node:http';
import { engineDecode } from './llama-engine.js';

/** Serves `model` (a loaded node-llama-cpp model) on 127.0.0.1; resolves to { url, requests(), close() }. */
export async function serveCompletions(model, contextOptions, { vocab, stopAfter = Infinity } = {}) {
  const context = await model.createContext(contextOptions);
  const sequence = context.getSequence();
  let queue = Promise.resolve(), served = 0;
  const complete = async (body) => {
    const options = { temperature: body.temperature ?? 1, topP: body.top_p ?? 1, topK: body.top_k ?? 0, minP: body.min_p ?? 0 };
    const choices = [];
    for (let c = 0; c < (body.n ?? 1); c++) {
      const { tokens, logp } = await engineDecode(sequence, body.prompt, { ...options, seed: (body.seed ?? 0) + c }, vocab, body.max_tokens ?? 16, body.stop_token_ids ?? []);
      const stopped = (body.stop_token_ids ?? []).includes(tokens.at(-1));
      choices.push({ index: c, text: '', token_ids: tokens, logprobs: { token_logprobs: logp }, finish_reason: stopped ? 'stop' : 'length' });
    }
    return { id: `cmpl-${served}`, object: 'text_completion', model: body.model ?? 'llama.cpp', choices };
  };
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/completions') return void res.writeHead(404).end('{"error":"not found"}');
      if (++served > stopAfter) {
        req.socket.destroy();
        server.close();
        return;
      }
      const job = queue.then(() => complete(JSON.parse(text)));
      queue = job.catch(() => undefined);
      job.then((answer) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer)),
        (error) => res.writeHead(500).end(JSON.stringify({ error: String(error) })));
    });
  });
  await new Promise((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    requests: () => served,
    close: async () => {
      server.closeAllConnections();
      await new Promise((done) => server.close(() => done()));
      await queue;
      await context.dispose();
    },
  };
}
