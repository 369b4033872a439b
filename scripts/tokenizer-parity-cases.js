// The conversations scripts/tokenizer-parity.js renders through each real chat template: plain turns for every
// family, and the tool and thinking branches of the Qwen templates and Mistral's tool-call format.
const USER = { role: 'user', content: 'Recommend three films like Alien (1979).' };
const SYSTEM = { role: 'system', content: 'You are a film critic. Answer with a numbered list.' };
const ANSWER = { role: 'assistant', content: '1. Aliens (1986)\n2. The Thing (1982)\n3. Event Horizon (1997)' };
const FOLLOW_UP = { role: 'user', content: '  And three comedies?  ' };

const WEATHER_TOOL = {
  type: 'function',
  function: {
    name: 'get_weather', description: 'Weather of a city — "now" or a date',
    parameters: { type: 'object', properties: { city: { type: 'string', description: 'e.g. 東京' }, day: { type: 'string', enum: ['now', 'tomorrow'] } }, required: ['city'] },
  },
};

function common() {
  return [
    { name: 'user, generation prompt', messages: [USER], addGenerationPrompt: true },
    { name: 'user, no generation prompt', messages: [USER], addGenerationPrompt: false },
    { name: 'system + user', messages: [SYSTEM, USER], addGenerationPrompt: true },
    { name: 'multi-turn', messages: [SYSTEM, USER, ANSWER, FOLLOW_UP], addGenerationPrompt: true },
    { name: 'ends with the assistant', messages: [USER, ANSWER], addGenerationPrompt: false },
  ];
}

function qwen(thinking) {
  const call = { role: 'assistant', content: '', tool_calls: [{ type: 'function', function: { name: 'get_weather', arguments: { city: '東京', day: 'now' } } }] };
  const stringCall = { role: 'assistant', content: 'Let me check.', tool_calls: [{ function: { name: 'get_weather', arguments: '{"city": "Paris"}' } }, { name: 'get_weather', arguments: { city: 'Rome' } }] };
  const results = [{ role: 'tool', content: '{"temp": 21}' }, { role: 'tool', content: '{"temp": 25}' }];
  const cases = [
    { name: 'tools, no system', messages: [USER], tools: [WEATHER_TOOL], addGenerationPrompt: true },
    { name: 'tools + system', messages: [SYSTEM, USER], tools: [WEATHER_TOOL], addGenerationPrompt: true },
    { name: 'tool calls and responses', messages: [USER, call, results[0], USER, stringCall, ...results], tools: [WEATHER_TOOL], addGenerationPrompt: true },
  ];
  if (!thinking) return cases;
  const thought = { role: 'assistant', content: '<think>\nThe user likes horror.\n</think>\n\n1. Aliens (1986)' };
  const reasoned = { role: 'assistant', content: '1. Aliens (1986)', reasoning_content: 'Sci-fi horror.' };
  return [
    ...cases,
    { name: 'enable_thinking false', messages: [USER], addGenerationPrompt: true, variables: { enable_thinking: false } },
    { name: 'enable_thinking true', messages: [USER], addGenerationPrompt: true, variables: { enable_thinking: true } },
    { name: 'thinking in the last turn', messages: [USER, thought], addGenerationPrompt: false },
    { name: 'thinking in an earlier turn (dropped)', messages: [USER, thought, FOLLOW_UP], addGenerationPrompt: true },
    { name: 'reasoning_content after the last query', messages: [USER, call, results[0], reasoned], addGenerationPrompt: false },
    { name: 'system after the first message', messages: [USER, SYSTEM, FOLLOW_UP], addGenerationPrompt: true },
  ];
}

function mistral() {
  const call = { role: 'assistant', content: '', tool_calls: [{ id: 'abc123XYZ', function: { name: 'get_weather', arguments: { city: 'Paris' } } }] };
  return [
    { name: 'roles that do not alternate (raise_exception)', messages: [USER, FOLLOW_UP], addGenerationPrompt: true },
    { name: 'tools and a tool call', messages: [USER, call, { role: 'tool', content: '{"temp": 21}', tool_call_id: 'abc123XYZ' }, ANSWER, FOLLOW_UP], tools: [WEATHER_TOOL], addGenerationPrompt: true },
    { name: 'tool call id of the wrong length (raise_exception)', messages: [USER, { ...call, tool_calls: [{ id: 'short', function: call.tool_calls[0].function }] }], addGenerationPrompt: true },
  ];
}

/** The conversations for a family's template: `{ name, messages, tools?, addGenerationPrompt, variables? }`. */
export function templateCases(family) {
  const extra = { qwen3: qwen(true), qwen2_5: qwen(false), mistral_nemo: mistral() }[family] ?? [];
  return [...common(), ...extra];
}
