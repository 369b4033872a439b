// Seeded test inputs (mulberry32 + Box–Muller), so every random test is reproducible.
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function randomNormal(n: number, scale: number, seed: number): Float32Array {
  const random = seededRandom(seed);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const u = Math.max(random(), 1e-12);
    out[i] = scale * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
  }
  return out;
}

export function randomInts(n: number, bound: number, seed: number): Int32Array {
  const random = seededRandom(seed);
  return Int32Array.from({ length: n }, () => Math.floor(random() * bound));
}
