// Data layer: JSONL reading with located errors, record schemas, seeded samplers, converters, benchmarks.
export { convertProtoqa, convertRedial, protoqaToQa, redialToRequest } from './convert.js';
export { CONVERTERS, convertFile, type ConvertSummary, type SourceFormat } from './convert-file.js';
export {
  dataError,
  DataFormatError,
  parseJsonl,
  parseJsonlLine,
  readJsonl,
  readJsonlSync,
  readLines,
  type DataFault,
  type JsonlLine,
  type JsonlLocation,
  type RecordParser,
} from './jsonl.js';
export { deepmathToMath, gsm8kToMath, mathToMath, parseMathRecord, readMathProblems, type MathRecord } from './math-record.js';
export { clusterOfRespondent, PROTOQA_DEV, readQaFile, respondentsOf } from './qa-files.js';
export { readCatalogFile, readRecommendFiles, type RecommendFiles } from './recommend-files.js';
export { holdOut, type HoldOutOptions, type Splits } from './splits.js';
export {
  generateMoviesMulti,
  MOVIES_MULTI_DEFAULTS,
  popularFilms,
  relevantFilms,
  type BenchmarkFilm,
  type MoviesMulti,
  type MoviesMultiOptions,
  type MoviesMultiSource,
} from './movies-multi.js';
export {
  loadMoviesMulti,
  loadMoviesMultiCatalogs,
  loadMoviesMultiFilms,
  loadMoviesMultiSource,
  MOVIES_MULTI_DIR,
  MOVIES_MULTI_SPLITS,
  parseFilmRecord,
  writeMoviesMulti,
  type MoviesMultiSplit,
} from './movies-multi-files.js';
export { moviesMultiStats, type Distribution, type MoviesMultiStats } from './movies-multi-stats.js';
export { CONSTRAINT_SHAPES, constraintShape, renderRequest, type MoviesMultiConstraints } from './movies-multi-text.js';
export { mixSeed, mulberry32, pickOne, randomInt, shuffleInPlace, weightedIndex, type Random } from './rng.js';
export { createSampler, PromptSampler, SAMPLER_DEFAULTS, type SampledPrompt, type SamplerOptions, type SamplerUnit } from './samplers.js';
export {
  parseCatalogEntry,
  parseCatalogRecord,
  parseQaRecord,
  parseRecommendRecord,
  parseRequestRecord,
  RECORD_KINDS,
  SCHEMA_VERSIONS,
  type CatalogEntry,
  type CatalogRecord,
  type QaRecord,
  type RecommendRecord,
  type RecordKind,
  type RecRequest,
  type Respondent,
} from './schemas.js';
export { validateFile, type ValidateOptions, type ValidationSummary } from './validate-file.js';
export type { StatValue } from './validate-stats.js';
