// The options of tokenAdvantages (lib/kernels/token-advantages.ts), declared once.
import { boolean, choice, defaultsOf, device, FINITE, integer, nested, number, type OptionsOf } from './schema.js';

export const TRUNCATIONS = ['keep', 'dropTruncated', 'dropSuffix'] as const;

/** Rank-GRPO length shaping, added to token advantages after normalisation (§4.7). */
export const LENGTH_SHAPING_OPTIONS = {
  enabled: boolean(true, 'Rank-GRPO `apply_extra_length_shaping`.'),
  endOfList: number(0.1, 'Added at the EOS of a row that emitted exactly K items.', FINITE),
  extraToken: number(-0.1, 'Added on every token of an item beyond K (overflow).', FINITE),
  earlyStop: number(-0.1, 'Added at the EOS of a row that stopped before K items.', FINITE),
};

export const TOKEN_ADVANTAGE_OPTIONS = {
  ranks: integer(undefined, 'K, the ranks per row (item scatter).', 1, undefined, { defaultDoc: 'advantages.length / B' }),
  lengthShaping: nested(LENGTH_SHAPING_OPTIONS, 'Rank-GRPO length shaping (item scatter).'),
  truncation: choice(TRUNCATIONS, 'keep', 'Truncated completions (sequence broadcast): `"keep"` their loss, `"dropTruncated"` them from '
    + 'the loss (TRL `mask_truncated_completions`), or `"dropSuffix"`: drop only tokens from `prefixEnd` on (the CCR rule). Their '
    + 'rewards stay in the group statistics either way.'),
  device: device('; bitwise the CPU\'s result'),
};

export type LengthShaping = OptionsOf<typeof LENGTH_SHAPING_OPTIONS>;
export type TokenAdvantageOptions = Omit<OptionsOf<typeof TOKEN_ADVANTAGE_OPTIONS>, 'lengthShaping'> & { lengthShaping?: LengthShaping };

export const TOKEN_ADVANTAGE_DEFAULTS = defaultsOf(TOKEN_ADVANTAGE_OPTIONS);
