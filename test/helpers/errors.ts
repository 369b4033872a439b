// The GrpoError code a call throws (undefined if it returns); fails the test on any other error type.
import { expect } from 'vitest';
import { GrpoError } from '../../lib/errors.js';

export function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(GrpoError);
    return (error as GrpoError).code;
  }
  return undefined;
}
