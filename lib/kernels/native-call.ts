// Runs a native kernel call synchronously or as a Promise, turning native failures into GrpoErrors.
import { fromNativeError } from '../errors.js';

type NativeCall = (async: boolean) => Promise<void> | undefined;

export function callSync<T>(call: NativeCall, result: () => T): T {
  try {
    call(false);
  } catch (error) {
    throw fromNativeError(error);
  }
  return result();
}

export function callAsync<T>(call: NativeCall, result: () => T): Promise<T> {
  let pending: Promise<void> | undefined;
  try {
    pending = call(true);
  } catch (error) {
    return Promise.reject(fromNativeError(error));
  }
  return (pending as Promise<void>).then(result, (error: unknown) => Promise.reject(fromNativeError(error)));
}

export function runNative<T>(async: boolean, call: NativeCall, result: () => T): T | Promise<T> {
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
