// What the completions harness (scripts/llama-completions-server.js) does with a pushed adapter, as a llama.cpp
// deployment would: llama.cpp cannot load a new adapter into a running server, so the PEFT adapter folder is merged
// into its base checkpoint and exported to one GGUF file (lib's exportGguf, f32), which is loaded as a new model.
import { join } from 'node:path';
import { exportGguf } from '../dist/index.js';

/** The llama.cpp model of adapter folder `path` merged into `reload.base`, its GGUF written as `<reload.dir>/<name>.gguf`. */
export async function loadMerged(reload, name, path) {
  const file = join(reload.dir, `${name.replace(/[^\w.-]/g, '_')}.gguf`);
  await exportGguf(path, file, { base: reload.base, name });
  return reload.llama.loadModel({ modelPath: file });
}
