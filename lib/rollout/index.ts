// Rollouts from inference servers (vLLM, SGLang, llama.cpp's server) over the OpenAI-compatible completions API.
export { RemoteRollouts, requestSeed, type EndpointStats, type RemoteRollout, type RolloutKey } from './remote.js';
export { completionBody, parseCompletion, type RemoteChoice } from './completions.js';
export { REMOTE_OPTIONS, REMOTE_SAMPLING_OPTIONS, type RemoteOptions, type RemoteSamplingOptions, type RetryInfo } from './options.js';
export type { AdapterPush } from './adapter-sync.js';
