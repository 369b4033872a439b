// The GrpoError code a call throws ("no error" when it returns), for typed-error tables.
import { expect } from 'vitest';
import { GrpoError } from '../../lib/errors.js';

export function errorCode(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(GrpoError);
    return (error as GrpoError).code;
  }
  return 'no error';
}
