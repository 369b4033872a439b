// The wire protocols RemoteRollouts speaks (option `protocol`), each behind the Protocol shape of wire.ts.
import { pushAdapterVllm } from './adapter-sync.js';
import { completionBody, parseCompletion } from './completions.js';
import { generateBody, parseGenerate } from './sglang.js';
import { pushAdapterSglang, pushWeightsSglang } from './sglang-sync.js';
import type { Protocol } from './wire.js';

export const PROTOCOLS = {
  /** vLLM's OpenAI-compatible server (and llama.cpp's or any server speaking its /v1/completions subset). */
  vllm: {
    path: '/v1/completions',
    body: (prompt, s, target, seed) => completionBody(prompt, s, target.model, seed),
    parse: parseCompletion,
    pushAdapter: pushAdapterVllm,
  },
  /** SGLang's native API. */
  sglang: { path: '/generate', body: generateBody, parse: parseGenerate, pushAdapter: pushAdapterSglang, pushWeights: pushWeightsSglang },
} satisfies Record<string, Protocol>;

export type ProtocolName = keyof typeof PROTOCOLS;
