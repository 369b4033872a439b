// Where a kernel call or a policy runs, as every layer names it without loading an addon: `'cpu'`, `'cuda'`
// (an error when CUDA is unavailable) or `'auto'` (CUDA when available).
export type Device = 'cpu' | 'cuda' | 'auto';
export const DEVICES: readonly Device[] = Object.freeze(['cpu', 'cuda', 'auto']);
