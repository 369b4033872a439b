// bfloat16 bit patterns (the high 16 bits of an IEEE float32) in Uint16Arrays: the storage of `dtype: 'bf16'`
// inputs. Rounding is to nearest even, as native/kernels/runtime/bf16.h and CUDA's __float2bfloat16_rn.
import * as check from '../validate.js';

/**
 * Rounds each float32 to the nearest bfloat16 (ties to even) and returns the bit patterns.
 * NaN stays NaN (quiet); values beyond the largest bfloat16 become ±Infinity; -0 stays -0.
 */
export function toBf16(values: Float32Array): Uint16Array {
  const input = check.float32Array('toBf16 values', values);
  const bits = new Uint32Array(input.buffer, input.byteOffset, input.length); // the float32 bits
  const out = new Uint16Array(input.length);
  for (let i = 0; i < bits.length; i++) {
    const b = bits[i];
    // b + 0x7fff + 1 < 2^32 for every non-NaN b, so >>> 16 sees the exact sum.
    out[i] = (b & 0x7fffffff) > 0x7f800000 ? (b >>> 16) | 0x40 : (b + 0x7fff + ((b >>> 16) & 1)) >>> 16;
  }
  return out;
}

/** The float32 values of bfloat16 bit patterns (exact). */
export function fromBf16(bits: Uint16Array): Float32Array {
  const input = check.uint16Array('fromBf16 bits', bits);
  const out = new Float32Array(input.length);
  const outBits = new Uint32Array(out.buffer);
  for (let i = 0; i < input.length; i++) outBits[i] = input[i] << 16;
  return out;
}
