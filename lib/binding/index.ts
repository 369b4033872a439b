// The one binding module: the CPU addon (./cpu.ts), the CUDA addon loaded lazily (./cuda.ts), which of them a call
// reaches (./device.ts) and their typed surfaces (./types.ts). Nothing outside lib/binding knows addon file names.
export { native } from './cpu.js';
export { loadCuda, setCudaLoadForTests } from './cuda.js';
export { DEVICES, kernelBinding, modelBinding, type Device, type ResolvedDevice } from './device.js';
export * from './types.js';
