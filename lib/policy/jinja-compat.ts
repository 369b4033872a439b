// Where @huggingface/jinja (0.5.11, the newest release) evaluates a construct of real chat templates differently
// from jinja2, a rewrite of the parsed template into an equivalent that it evaluates as jinja2 does.
//
// selectattr / rejectattr: jinja2 applies the test to every item, an item lacking the attribute giving Undefined;
// the library counts such an item as failing whatever the test. So `selectattr("tool_calls", "undefined")` (Mistral's
// templates: the messages without tool calls) selects nothing, and the role-alternation check never runs. For items
// with or without the attribute, selectattr(a, "undefined") keeps exactly what rejectattr(a, "defined") keeps (and
// rejectattr(a, "undefined") what selectattr(a, "defined") keeps), which the library evaluates right.
// Other tests that Undefined passes in jinja2 (iterable, sequence, callable, ne) do not occur in chat templates we know.

interface Node {
  type?: string;
  [field: string]: unknown;
}

const SWAP: Record<string, string> = { selectattr: 'rejectattr', rejectattr: 'selectattr' };

/** Rewrites `selectattr(a, "undefined")` / `rejectattr(a, "undefined")` calls of filters in the AST of a parsed template, in place. */
export function rewriteUndefinedAttributeTests(node: unknown): void {
  const pending: unknown[] = [node];
  while (pending.length > 0) {
    const current = pending.pop();
    if (current && typeof current === 'object') {
      if ((current as Node).type === 'FilterExpression') rewriteFilter((current as Node).filter as Node);
      for (const child of Object.values(current)) pending.push(child); // arrays too: their values are their items
    }
  }
}

function rewriteFilter(filter: Node): void {
  if (filter.type !== 'CallExpression') return;
  const callee = filter.callee as Node;
  const test = (filter.args as Node[])[1];
  const swapped = SWAP[callee.value as string];
  if (!swapped || test?.type !== 'StringLiteral' || test.value !== 'undefined') return;
  callee.value = swapped;
  test.value = 'defined';
}
