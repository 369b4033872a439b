// A checker for the subset of JSON Schema (draft 2020-12) that schemas/*.schema.json use, so the tests can hold
// those files against the TypeScript parsers without a new dependency. A keyword outside the subset throws: a
// schema cannot rely on something this checker would silently ignore.
type Schema = Record<string, unknown>;

const ANNOTATIONS = new Set(['$schema', '$id', 'title', 'description', '$comment', '$defs']);
const KEYWORDS = new Set(['$ref', 'type', 'properties', 'required', 'items', 'minItems', 'const', 'anyOf', 'minimum', 'pattern']);

/** The JSON Schema type of a parsed JSON value; a number JSON.parse overflowed to ±Infinity is none (JSON has no such number). */
function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isFinite(value) ? (Number.isInteger(value) ? 'integer' : 'number') : 'non-finite';
  return typeof value;
}

const hasType = (value: unknown, type: string) => {
  const actual = typeOf(value);
  return actual === type || (type === 'number' && actual === 'integer');
};

function resolve(root: Schema, ref: string): Schema {
  const match = /^#\/\$defs\/([A-Za-z0-9_-]+)$/.exec(ref);
  const target = match && (root.$defs as Record<string, Schema> | undefined)?.[match[1]];
  if (!target) throw new Error(`json-schema checker: unsupported or unknown $ref ${ref}`);
  return target;
}

function valid(schema: Schema, value: unknown, root: Schema): boolean {
  for (const key of Object.keys(schema)) {
    if (!ANNOTATIONS.has(key) && !KEYWORDS.has(key)) throw new Error(`json-schema checker: keyword "${key}" is not supported`);
  }
  const object = typeOf(value) === 'object' ? (value as Record<string, unknown>) : undefined;
  const checks: Array<() => boolean> = [
    () => schema.$ref === undefined || valid(resolve(root, schema.$ref as string), value, root),
    () => schema.type === undefined || [schema.type].flat().some((t) => hasType(value, t as string)),
    () => !('const' in schema) || JSON.stringify(schema.const) === JSON.stringify(value),
    () => schema.anyOf === undefined || (schema.anyOf as Schema[]).some((s) => valid(s, value, root)),
    () => schema.minimum === undefined || typeof value !== 'number' || value >= (schema.minimum as number),
    () => schema.pattern === undefined || typeof value !== 'string' || new RegExp(schema.pattern as string, 'u').test(value),
    () => schema.required === undefined || !object || (schema.required as string[]).every((k) => Object.hasOwn(object, k)),
    () => schema.properties === undefined || !object ||
      Object.entries(schema.properties as Record<string, Schema>).every(([k, s]) => !Object.hasOwn(object, k) || valid(s, object[k], root)),
    () => !Array.isArray(value) || schema.minItems === undefined || value.length >= (schema.minItems as number),
    () => !Array.isArray(value) || schema.items === undefined || value.every((v) => valid(schema.items as Schema, v, root)),
  ];
  return checks.every((check) => check());
}

/** Whether `value` (a parsed JSON value) is valid against `schema` (checked with the subset above). */
export function matchesSchema(schema: Schema, value: unknown): boolean {
  return valid(schema, value, schema);
}
