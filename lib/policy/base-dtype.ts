// The type a LoRA policy keeps its frozen base's decoder-layer matrices in: the narrowest of bfloat16, float16
// and float32 that holds every value exactly, so a bf16 or f16 checkpoint's base takes half the memory of float32
// and computes the same bits (native/kernels/runtime/dtype16.h widens it exactly where each product reads it).

/** float32, bfloat16 or IEEE float16. */
export type BaseDtype = 'f32' | 'bf16' | 'f16';

/** grpo_base16 (native/include/grpo/model.h) of each dtype. */
export const NATIVE_BASE16: Record<BaseDtype, number> = { f32: 0, bf16: 1, f16: 2 };

const DENSE_LAYER = /^model\.layers\.\d+\.(self_attn|mlp)\.\w+_proj\.weight$/;

/** A float32 (as bits) that bfloat16 holds: its low 16 bits are zero. */
const isBf16 = (bits: number): boolean => (bits & 0xffff) === 0;

/** A finite float32 (as bits) that float16 holds: ±0, or within its exponent range with the mantissa bits it drops zero. */
function isF16(bits: number): boolean {
  const magnitude = bits & 0x7fffffff;
  if (magnitude === 0) return true;
  const exponent = (magnitude >>> 23) - 127;
  if (exponent > 15 || exponent < -24) return false;
  const dropped = exponent >= -14 ? 13 : 13 + (-14 - exponent); // subnormal halves keep fewer mantissa bits
  return (magnitude & ((1 << dropped) - 1)) === 0;
}

/** The dtype of the base kept by a LoRA policy over these tensors (bf16 first: a checkpoint in bf16 stays bf16). */
export function baseDtypeOf(tensors: readonly { name: string; data: Float32Array }[]): BaseDtype {
  const dense = tensors.filter((t) => DENSE_LAYER.test(t.name)).map((t) => new Uint32Array(t.data.buffer, t.data.byteOffset, t.data.length));
  if (dense.length === 0) return 'f32';
  if (dense.every((bits) => bits.every(isBf16))) return 'bf16';
  if (dense.every((bits) => bits.every(isF16))) return 'f16';
  return 'f32';
}
