// JSON over HTTP to an inference server, with the failure split the rollout backend and the adapter sync share: a
// timeout, a refused or reset connection and a 5xx or 429 answer may pass (Retryable, retried by withRetries with
// doubling backoff, then GRPO_REMOTE_UNAVAILABLE naming the endpoint); another 4xx is GRPO_INVALID_ARGUMENT with the
// server's words, an answer that is not JSON GRPO_DATA_FORMAT.
import { GrpoError } from '../errors.js';

/** A failure a retry may cure; its message says what happened. */
export class Retryable extends Error {}

/** GRPO_REMOTE_UNAVAILABLE from {@link withRetries}: `endpoint` stayed down (fail-over gives it up; other failures do not). */
export class EndpointDown extends GrpoError {
  constructor(readonly endpoint: string, message: string) {
    super('GRPO_REMOTE_UNAVAILABLE', message);
  }
}

export interface Exchange {
  method: 'GET' | 'POST';
  /** Sent as JSON. */
  body?: unknown;
  timeoutMs: number;
  /** Aborts the exchange (the caller gave up: another request failed for good). */
  signal: AbortSignal;
  /** Parse the answer as JSON (else return its text). @defaultValue true */
  json?: boolean;
}

/** One request to `url`; its parsed JSON answer (or its text with `json: false`). */
export async function exchangeJson(url: string, e: Exchange): Promise<unknown> {
  const timeout = AbortSignal.timeout(e.timeoutMs);
  let response: Response, text: string;
  try {
    response = await fetch(url, {
      method: e.method, signal: AbortSignal.any([e.signal, timeout]),
      ...(e.body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(e.body) }),
    });
    text = await response.text();
  } catch (error) {
    if (e.signal.aborted) throw e.signal.reason;
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    throw new Retryable(timeout.aborted ? `no answer within ${e.timeoutMs} ms` : `connection failed (${cause ?? (error as Error).message})`);
  }
  if (response.status >= 500 || response.status === 429) throw new Retryable(`HTTP ${response.status} ${text.slice(0, 200)}`);
  if (!response.ok) throw new GrpoError('GRPO_INVALID_ARGUMENT', `${url} refused the request: HTTP ${response.status} ${text.slice(0, 300)}`);
  if (e.json === false) return text;
  try {
    return JSON.parse(text);
  } catch {
    throw new GrpoError('GRPO_DATA_FORMAT', `${url}: the answer is not JSON (${text.slice(0, 80)})`);
  }
}

const sleep = (ms: number, signal: AbortSignal) => new Promise<void>((done, fail) => {
  const stop = () => {
    clearTimeout(timer);
    fail(signal.reason);
  };
  const timer = setTimeout(() => {
    signal.removeEventListener('abort', stop);
    done();
  }, ms);
  signal.addEventListener('abort', stop, { once: true });
});

export interface RetryPolicy {
  retries: number;
  backoffMs: number;
  signal: AbortSignal;
  /** Before each retry: the attempt that failed (1-based) and why. */
  onRetry(attempt: number, reason: string): void;
}

/**
 * `attempt()` until it succeeds, throws something other than Retryable, or has failed `retries` + 1 times: then
 * EndpointDown (GRPO_REMOTE_UNAVAILABLE) "`endpoint` stayed down for `what`: <last failure> on <n> attempts".
 */
export async function withRetries<T>(endpoint: string, what: string, p: RetryPolicy, attempt: () => Promise<T>): Promise<T> {
  for (let n = 0; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof Retryable) || p.signal.aborted) throw p.signal.aborted && !(error instanceof GrpoError) ? p.signal.reason : error;
      if (n >= p.retries) {
        throw new EndpointDown(endpoint, `${endpoint} stayed down for ${what}: ${error.message} on ${n + 1} attempt${n ? 's' : ''} (retries: ${p.retries})`);
      }
      p.onRetry(n + 1, error.message);
      await sleep(p.backoffMs * 2 ** n, p.signal);
    }
  }
}
