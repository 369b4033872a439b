// `grpo export --gguf`: a checkpoint folder (or a LoRA run's adapter, merged into its base) as one GGUF file
// for llama.cpp (lib/export/gguf-export.ts).
import { GrpoError } from '../../errors.js';
import { exportGguf, GGUF_DTYPES, type GgufDtype } from '../../export/gguf-export.js';
import { required, type Command } from '../command.js';

export const exportCommand: Command = {
  name: 'export',
  summary: 'export a policy for an inference engine: --gguf writes one GGUF file that llama.cpp loads',
  usage: 'grpo export --gguf <out.gguf> --policy <checkpoint folder> [--dtype f32|f16|bf16] [--base <hf-folder>] [--name <text>]',
  description: 'Writes the policy of <checkpoint folder> (config.json, safetensors weights and tokenizer.json, as grpo sft, grpo train\n' +
    'or Policy.save write them) as a GGUF v3 file: general.architecture llama (Llama, Mistral), qwen2 or qwen3 with their\n' +
    'hyperparameters, the tensors under llama.cpp\'s names (q/k rows reordered for llama\'s RoPE layout) and the byte-level\n' +
    'BPE tokenizer in the file\'s metadata. An adapter folder (a LoRA run\'s policy) is merged into its base first.\n' +
    'Norms and biases stay f32; --dtype sets the matrices\' type. PEFT adapter folders stay the format for vLLM and SGLang.',
  flags: [
    { name: 'gguf', help: 'the GGUF file to write (replaced atomically when it exists)' },
    { name: 'policy', help: 'the checkpoint folder, or a LoRA adapter folder' },
    { name: 'dtype', help: `matrix storage type: ${GGUF_DTYPES.join(', ')} (default f32)` },
    { name: 'base', help: 'for an adapter folder: the base model\'s folder (default: the adapter\'s base_model_name_or_path)' },
    { name: 'name', help: 'general.name in the file (default: the policy folder\'s name)' },
  ],
  acceptsConfig: false,
  async run(args, reporter) {
    if (args.positionals.length > 0) throw new GrpoError('GRPO_INVALID_ARGUMENT', `export takes no positional arguments but received ${args.positionals.join(' ')}`);
    const out = required(args, 'gguf', 'out.gguf');
    const policy = required(args, 'policy', 'checkpoint folder');
    const dtype = (args.flags.get('dtype') ?? 'f32') as GgufDtype;
    const base = args.flags.get('base'), name = args.flags.get('name');
    const result = await exportGguf(policy, out, { dtype, ...(base ? { base } : {}), ...(name ? { name } : {}) });
    reporter.line(`Wrote ${out}: ${result.architecture}, ${result.tensors} tensors, ${dtype}${result.merged ? `, LoRA adapter ${policy} merged into its base` : ''}`);
  },
};
