// Data layer: JSONL reading with located errors, record schemas, seeded samplers, converters, benchmarks.
export { convertProtoqa, convertRedial, protoqaToQa, redialToRequest } from './convert.js';
export { dataError, parseJsonl, readJsonl, readJsonlSync, type JsonlLocation, type RecordParser } from './jsonl.js';
export { mixSeed, mulberry32, randomInt, shuffleInPlace, weightedIndex, type Random } from './rng.js';
export { createSampler, PromptSampler, SAMPLER_DEFAULTS, type SampledPrompt, type SamplerOptions, type SamplerUnit } from './samplers.js';
export {
  parseCatalogRecord,
  parseQaRecord,
  parseRequestRecord,
  type CatalogRecord,
  type QaRecord,
  type RecRequest,
  type Respondent,
} from './schemas.js';
