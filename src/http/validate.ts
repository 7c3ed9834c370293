import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats';
import { hostnameProblem } from '../message/hostname.js';
import { addressProblem, localPartProblem } from '../message/address.js';
import { unprocessable } from '../errors.js';
import { isIsoDateTime } from './iso-datetime.js';

/** A JSON Schema as plain data (ajv validates it; OpenAPI publishes it). */
export type JsonSchema = Record<string, unknown>;

// ajv-formats ships CommonJS; its default export lands on `.default` under NodeNext.
const addFormats = ((addFormatsModule as unknown as { default?: FormatsPlugin }).default ?? addFormatsModule) as FormatsPlugin;

/** Custom formats of Mailstead, with the human phrase of what is wrong. */
const FORMATS: Record<string, (v: string) => string | null> = {
  'mailstead-hostname': hostnameProblem,
  'mailstead-email': addressProblem,
  'mailstead-local-part': localPartProblem,
  'iso-datetime': (v) => (isIsoDateTime(v) ? null : 'must be an ISO 8601 date-time such as 2024-01-31T12:00:00Z'),
};

function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({ allErrors: false, strict: false, coerceTypes: coerce, verbose: true, useDefaults: false });
  addFormats(ajv, ['uri', 'date-time', 'email']);
  for (const [name, problem] of Object.entries(FORMATS)) ajv.addFormat(name, { type: 'string', validate: (v: string) => problem(v) === null });
  return ajv;
}

const bodyAjv = makeAjv(false);
// Query and path values arrive as text; integers are coerced, everything else stays a string.
const textAjv = makeAjv(true);

/** The field an ajv error is about, in the request's own notation: Params.sub_domains[2]. */
function fieldName(err: ErrorObject, root: string): string {
  const parts = err.instancePath.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (err.keyword === 'required') parts.push((err.params as { missingProperty: string }).missingProperty);
  let name = '';
  for (const p of parts) name += /^\d+$/.test(p) ? `[${p}]` : name ? `.${p}` : p;
  return name || root;
}

/** One human sentence for the first validation error, naming the field. */
export function describeError(err: ErrorObject, root: string): string {
  const field = fieldName(err, root);
  const p = err.params as Record<string, unknown>;
  switch (err.keyword) {
    case 'required': return `${field} is required`;
    case 'type': return `${field} must be ${String(p.type).replace(/,/g, ' or ')}`;
    case 'format': {
      const why = FORMATS[p.format as string]?.(String(err.data));
      return why ? `${field} ${why}` : `${field} must be a valid ${String(p.format)}`;
    }
    case 'enum': return `${field} must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const': return `${field} must be ${JSON.stringify(p.allowedValue)}`;
    case 'minItems': return Number(p.limit) === 1 ? `${field} must not be empty` : `${field} must have at least ${p.limit} items`;
    case 'maxItems': return `${field} must have at most ${p.limit} items`;
    case 'uniqueItems': return `${field} must not contain duplicates`;
    case 'minLength': return Number(p.limit) === 1 ? `${field} must not be empty` : `${field} must be at least ${p.limit} characters`;
    case 'maxLength': return `${field} must be at most ${p.limit} characters`;
    case 'minimum': return `${field} must be at least ${p.limit}`;
    case 'maximum': return `${field} must be at most ${p.limit}`;
    case 'minProperties': return `${field} needs at least ${p.limit} of its fields`;
    case 'pattern': return `${field} has an invalid format`;
    case 'false schema': return `${field} is not accepted here`;
    default: return `${field} ${err.message ?? 'is invalid'}`;
  }
}

/** A compiled validator that throws 422 with the first error as `reason`. */
export type Validator = (value: unknown) => void;

function compileWith(ajv: Ajv, schema: JsonSchema, root: string): Validator {
  const fn: ValidateFunction = ajv.compile(schema);
  return (value) => {
    if (!fn(value)) throw unprocessable(describeError(fn.errors![0], root));
  };
}

/** Compiles a request-body schema (no coercion: JSON types are what the client sent). */
export const compileBody = (schema: JsonSchema) => compileWith(bodyAjv, schema, 'Request body');
/**
 * Compiles a query or path schema (text values; integers coerced in place). ajv coerces any text
 * that JavaScript reads as a whole number (`0x10`, `1e1`, ` 1`, `+1`, `1.0`), so integer fields must
 * first be plain decimal digits: an id is spelled one way.
 */
export function compileText(schema: JsonSchema, root: string): Validator {
  const validate = compileWith(textAjv, schema, root);
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const integers = Object.keys(properties).filter((name) => properties[name].type === 'integer');
  return (value) => {
    const fields = value as Record<string, unknown>;
    for (const name of integers) {
      const text = fields[name];
      if (typeof text === 'string' && !/^-?\d+$/.test(text)) throw unprocessable(`${name} must be integer`);
    }
    validate(value);
  };
}

/** A query boolean as SPEC.md sends it: true/false/1/0. */
export const queryBoolean = { type: 'string', enum: ['true', 'false', '1', '0'] } as const;
/** Reads a validated query boolean. */
export const isTrue = (v: unknown) => v === 'true' || v === '1';
/** A positive integer id in a path or query. */
export const idSchema = { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER } as const;
