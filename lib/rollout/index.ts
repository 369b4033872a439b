// Rollouts from inference servers (vLLM, SGLang, llama.cpp's server) over vLLM's /v1/completions or SGLang's /generate.
export { RemoteRollouts, requestSeed, type EndpointStats, type RemoteRollout, type RolloutKey } from './remote.js';
export { completionBody, parseCompletion } from './completions.js';
export { generateBody, parseGenerate } from './sglang.js';
export type { AdapterPush, RemoteChoice, WeightsPush } from './wire.js';
export { REMOTE_OPTIONS, REMOTE_SAMPLING_OPTIONS, type RemoteOptions, type RemoteSamplingOptions, type RetryInfo } from './options.js';
