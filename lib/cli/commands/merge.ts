// `grpo merge`: a LoRA adapter in PEFT's format merged into its base, written as a full Hugging Face folder.
import { GrpoError } from '../../errors.js';
import { loadAdapter } from '../../policy/lora-format.js';
import { adapterBaseFolder, mergeAdapter } from '../../policy/lora-merge.js';
import { required, type Command } from '../command.js';
import type { Phase } from '../progress.js';

export const mergeCommand: Command = {
  name: 'merge',
  summary: 'merge a LoRA adapter (PEFT format) into its base model: a full Hugging Face folder',
  usage: 'grpo merge <adapter folder> --out <folder> [--base <hf-folder>]',
  description: 'Reads <adapter folder>/adapter_config.json and adapter_model.safetensors (as PEFT writes them, or <run>/policy of a\n' +
    'LoRA run) and writes <out>: the base\'s weights with W + (lora_alpha / r)·B·A in every target module, in the base\'s dtype\n' +
    'and shards, with its config.json, generation_config.json and tokenizer files. Without --base, the adapter\'s\n' +
    'base_model_name_or_path must be a local folder.',
  flags: [
    { name: 'out', help: 'output folder (replaced atomically when it exists)' },
    { name: 'base', help: 'the base model\'s Hugging Face folder (default: the adapter\'s base_model_name_or_path)' },
  ],
  acceptsConfig: false,
  async run(args, reporter) {
    if (args.positionals.length !== 1) throw new GrpoError('GRPO_INVALID_ARGUMENT', `merge needs one adapter folder but received ${args.positionals.length}`);
    const [adapterDir] = args.positionals;
    const out = required(args, 'out', 'folder');
    const base = args.flags.get('base') ?? adapterBaseFolder(await loadAdapter(adapterDir), adapterDir);
    let phase: Phase | undefined;
    const result = await mergeAdapter(base, adapterDir, out, {
      onProgress: (done, total, name) => {
        phase ??= reporter.phase('merge', total, 'tensors');
        phase.update(done, name);
      },
    });
    phase?.done();
    reporter.line(`Merged ${result.merged} weights of ${base} with ${adapterDir} into ${out} (${result.files.join(', ')})`);
  },
};
