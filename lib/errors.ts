/**
 * Every error grpo-native raises on purpose is a `GrpoError` with a stable `code`.
 * Messages name the argument, what was expected and what was received.
 *
 * | code                    | meaning                                                    |
 * |-------------------------|------------------------------------------------------------|
 * | GRPO_INVALID_ARGUMENT   | wrong type (e.g. Float64Array where Float32Array is needed) |
 * | GRPO_SHAPE_MISMATCH     | lengths disagree with the declared shapes                  |
 * | GRPO_NON_FINITE         | NaN or +Infinity where finite values are required          |
 * | GRPO_INDEX_RANGE        | an index (token id, segment id, group id) is out of range  |
 * | GRPO_VALUE_RANGE        | a scalar option is outside its allowed range               |
 * | GRPO_DETACHED_BUFFER    | a typed array whose ArrayBuffer was transferred/detached   |
 * | GRPO_UNKNOWN_OPTION     | an option key that does not exist (with a suggestion)      |
 * | GRPO_DATA_FORMAT        | a malformed record in a data file (with its line number)   |
 * | GRPO_UNSUPPORTED        | a configuration the library does not implement             |
 * | GRPO_NATIVE_LOAD        | the native addon could not be loaded                       |
 * | GRPO_CUDA_UNAVAILABLE   | the CUDA backend was requested but cannot run here         |
 * | GRPO_OUT_OF_MEMORY      | a native allocation failed                                 |
 * | GRPO_REMOTE_UNAVAILABLE | an inference server stayed down (timeouts, 5xx) past retries |
 * | GRPO_INTERNAL           | a bug in grpo-native: please report it                     |
 */
export type GrpoErrorCode =
  | 'GRPO_INVALID_ARGUMENT'
  | 'GRPO_SHAPE_MISMATCH'
  | 'GRPO_NON_FINITE'
  | 'GRPO_INDEX_RANGE'
  | 'GRPO_VALUE_RANGE'
  | 'GRPO_DETACHED_BUFFER'
  | 'GRPO_UNKNOWN_OPTION'
  | 'GRPO_DATA_FORMAT'
  | 'GRPO_UNSUPPORTED'
  | 'GRPO_NATIVE_LOAD'
  | 'GRPO_CUDA_UNAVAILABLE'
  | 'GRPO_OUT_OF_MEMORY'
  | 'GRPO_REMOTE_UNAVAILABLE'
  | 'GRPO_INTERNAL';

export class GrpoError extends Error {
  readonly code: GrpoErrorCode;

  constructor(code: GrpoErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'GrpoError';
    this.code = code;
  }
}

/**
 * The addon throws plain Errors whose `code` is already a GrpoErrorCode (native/addon/napi_util.cc, error_code:
 * the one status → code table). This makes them GrpoErrors; other errors pass through.
 */
export function fromNativeError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const code = (error as Error & { code?: unknown }).code;
  if (typeof code !== 'string' || !code.startsWith('GRPO_')) return error;
  return new GrpoError(code as GrpoErrorCode, error.message, { cause: error });
}
