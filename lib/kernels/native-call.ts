// Runs a native kernel call synchronously or as a Promise, turning native failures into GrpoErrors.
// `result` builds the answer from what the addon returned (its stats object, or undefined) once the kernel ran.
import { fromNativeError } from '../errors.js';

/** The addon call: its answer with async = false, a Promise of it with async = true. */
type NativeCall<R> = (async: boolean) => R | Promise<R>;

export function callSync<R, T>(call: NativeCall<R>, result: (raw: R) => T): T {
  let raw: R;
  try {
    raw = call(false) as R;
  } catch (error) {
    throw fromNativeError(error);
  }
  return result(raw);
}

export function callAsync<R, T>(call: NativeCall<R>, result: (raw: R) => T): Promise<T> {
  let pending: Promise<R>;
  try {
    pending = call(true) as Promise<R>;
  } catch (error) {
    return Promise.reject(fromNativeError(error));
  }
  return pending.then(result, (error: unknown) => Promise.reject(fromNativeError(error)));
}

export function runNative<R, T>(async: boolean, call: NativeCall<R>, result: (raw: R) => T): T | Promise<T> {
  return async ? callAsync(call, result) : callSync(call, result);
}

/** Validation errors of an async API become rejections, never synchronous throws. */
export function rejectOnThrow<T>(body: () => Promise<T>): Promise<T> {
  try {
    return body();
  } catch (error) {
    return Promise.reject(error);
  }
}
