import fc from 'fast-check';
import { jsonText, nested, RawJson, wide, type JsonLike } from './json-text.js';
import type { Operation, Parameter, Schema } from './openapi-document.js';

/**
 * What the fuzzer sends to one operation, derived from the operation in openapi.json: a path id,
 * query pairs, headers and a body, each either valid-ish (drawn from the documented schema) or
 * hostile (SPEC sections 4, 5 and 8: NUL, lone surrogates, depth, width, numbers JSON cannot
 * hold, wrong types, wrong media types).
 */
export interface FuzzInput {
  /** The `{id}` path segment as sent (already percent-encoded), or EXISTING for a fixture's id. */
  pathId: string | undefined;
  /** Name and value pairs, both already percent-encoded, so `%00` and `%ZZ` arrive as written. */
  query: readonly (readonly [string, string])[];
  headers: Readonly<Record<string, string>>;
  body: BodyInput | undefined;
  /** How many identical copies go out at once: races (a double submit, two deletes) must not be a 5xx either. */
  copies: number;
}

export interface BodyInput {
  /** What the body is, for failure messages. */
  label: string;
  content: string | Uint8Array;
  /** undefined: no Content-Type header at all. */
  contentType: string | undefined;
}

/**
 * Stands for the id of a fixture of the operation's collection, resolved when the request is sent:
 * a fresh one for a DELETE, the shared one otherwise.
 */
export const EXISTING = '<existing>';
/** The shared fixture even for a DELETE: the one other objects refer to (a DELETE may be a 409). */
export const SHARED = '<shared>';

/** Known good values by property or parameter name (fixture ids, a real password, a live token). */
export type Hints = Readonly<Record<string, fc.Arbitrary<JsonLike>>>;

interface Labelled<T> {
  label: string;
  value: T;
}

const labelled = <T>(label: string, value: T): Labelled<T> => ({ label, value });

/** Hostile values for any one field of a JSON body. */
export const HOSTILE_VALUES: readonly Labelled<JsonLike>[] = [
  labelled('a string with NUL', 'a\u0000b'),
  labelled('NUL alone', '\u0000'),
  labelled('a lone high surrogate', '\ud800'),
  labelled('a lone low surrogate inside text', 'x\udc00y'),
  labelled('surrogates in the wrong order', '\udc00\ud800'),
  labelled('an empty string', ''),
  labelled('a blank string', '   '),
  labelled('a 300-character string', 'x'.repeat(300)),
  labelled('a 10,000-character string', 'x'.repeat(10_000)),
  labelled('a 700,000-character string (under 1 MiB)', 'y'.repeat(700_000)),
  labelled('99999999999999999999', new RawJson('99999999999999999999')),
  labelled('1e400', new RawJson('1e400')),
  labelled('-1e400', new RawJson('-1e400')),
  labelled('1e-400', new RawJson('1e-400')),
  labelled('-0', new RawJson('-0')),
  labelled('2^31', 2_147_483_648),
  labelled('2^53 + 1', new RawJson('9007199254740993')),
  labelled('-1', -1),
  labelled('0', 0),
  labelled('1.5', 1.5),
  labelled('-2.5', -2.5),
  labelled('1.0', new RawJson('1.0')),
  labelled('"NaN"', 'NaN'),
  labelled('"Infinity"', 'Infinity'),
  labelled('"-1"', '-1'),
  labelled('"1.5"', '1.5'),
  labelled('"99999999999999999999"', '99999999999999999999'),
  labelled('"1e400"', '1e400'),
  labelled('"0x1F"', '0x1F'),
  labelled('" 7 "', ' 7 '),
  labelled('true', true),
  labelled('false', false),
  labelled('null', null),
  labelled('an empty array', []),
  labelled('an array of mixed values', [1, 'a', null, {}]),
  labelled(
    'an array of 1,000 integers',
    Array.from({ length: 1000 }, (_, index) => index + 1),
  ),
  labelled('an empty object', {}),
  labelled('an object', { a: { b: 1 } }),
  labelled('a key with NUL', { 'k\u0000': 1 }),
  labelled('a key with a lone surrogate', { '\ud800': 1 }),
  labelled('objects nested 40 deep', nested(40, 'object')),
  labelled('arrays nested 64 deep', nested(64, 'array')),
  labelled('objects nested 11 deep', nested(11, 'object')),
  labelled('an object with 2,000 keys', wide(2000)),
];

function bodyOf(label: string, content: string | Uint8Array, contentType: string | undefined = 'application/json'): BodyInput {
  return { label, content, contentType };
}

/** Hostile whole bodies, whatever the operation's schema. */
export const HOSTILE_BODIES: readonly BodyInput[] = [
  bodyOf('an array where an object is expected', '[{"name":"x"}]'),
  bodyOf('an empty array', '[]'),
  bodyOf('a JSON string', '"text"'),
  bodyOf('a JSON number', '42'),
  bodyOf('JSON null', 'null'),
  bodyOf('JSON true', 'true'),
  bodyOf('an empty body', ''),
  bodyOf('a blank body', ' \n '),
  bodyOf('truncated JSON', '{"name":'),
  bodyOf('a trailing comma', '{"name":"x",}'),
  bodyOf('a bare NaN', '{"name":NaN}'),
  bodyOf('a single-quoted string', "{'name':'x'}"),
  bodyOf('a raw NUL byte inside a string', '{"name":"a\u0000b"}'),
  bodyOf('a lone surrogate escape as the whole body', '"\\ud800"'),
  bodyOf('a __proto__ key', '{"__proto__":{"isAdmin":true}}'),
  bodyOf('a constructor key', '{"constructor":{"prototype":{"x":1}}}'),
  bodyOf('duplicate keys', '{"name":"a","name":"b"}'),
  bodyOf('arrays nested 40 deep', nested(40, 'array').text),
  bodyOf('objects nested 100 deep', nested(100, 'object').text),
  bodyOf('an object with 2,000 keys', wide(2000).text),
  bodyOf('a body over 1 MiB', `{"name":"${'x'.repeat(1024 * 1024 + 10)}"}`),
  bodyOf('bytes that are not UTF-8', new Uint8Array([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc0, 0x22, 0x7d])),
  bodyOf('a UTF-8 byte order mark', '\ufeff{}'),
  bodyOf('JSON as text/plain', '{}', 'text/plain'),
  bodyOf('JSON as a form', 'name=x', 'application/x-www-form-urlencoded'),
  bodyOf('JSON without a content type', '{}', undefined),
  bodyOf('JSON as application/merge-patch+json', '{}', 'application/merge-patch+json'),
  bodyOf('JSON with a charset', '{}', 'application/json; charset=utf-8'),
  bodyOf('a malformed content-type parameter', '{}', 'application/json; x="\\"'),
];

/** Path ids: the fixture's, then every way an id can be wrong. */
export const PATH_IDS: readonly string[] = [
  EXISTING,
  '0',
  '-1',
  'abc',
  '1.5',
  '99999999999999999999',
  '2147483648',
  '1e3',
  '007',
  'x'.repeat(300),
  '9'.repeat(300),
  '%00',
  '1%00',
  '%ZZ',
  '%ED%A0%80',
  '%20',
];

/** Query values, percent-encoded, that no documented parameter accepts. */
export const HOSTILE_QUERY_VALUES: readonly string[] = [
  '%00',
  'a%00b',
  '',
  '0',
  '-1',
  '1.5',
  'abc',
  '99999999999999999999',
  '2147483648',
  '1e400',
  'NaN',
  'Infinity',
  '%ZZ',
  '%ED%A0%80',
  '%FF',
  'x'.repeat(300),
  'unknown',
  '-unknown',
  '--id',
  'id%2Cname',
  'password_hash',
  '%20',
  // LIKE wildcards and SQL punctuation, for `search`.
  '%25',
  '_',
  '%5C',
  '%27%3B--',
];

/** Query pairs no operation documents: they must be ignored or refused, never a 500. */
const UNKNOWN_QUERY_PAIRS: readonly (readonly [string, string])[] = [
  ['unknown', '1'],
  ['%00', '1'],
  ['__proto__', 'x'],
  ['constructor', 'x'],
  ['ordering%5B%5D', 'id'],
  ['page%5Bsize%5D', '2'],
  ['x'.repeat(300), 'y'],
];

const HOSTILE_HEADER_VALUES: readonly string[] = ['', ' ', 'x'.repeat(256), 'x'.repeat(4000), '\u00e9t\u00e9', 'a,b'];

const REQUEST_IDS: readonly string[] = ['fuzz.request-1', 'r'.repeat(128), 'r'.repeat(129), 'has space', 'a,b', '\u00e9'];

/** The API answers JSON whatever the client asks for; an Accept header must not change the contract. */
const ACCEPTS: readonly string[] = ['application/xml', 'text/html', '*/*', 'application/problem+json', 'application/json;q=0'];

const ASCII_ID_CHARACTERS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:'.split('');

const bound = (value: unknown, fallback: number) => (typeof value === 'number' ? value : fallback);

/** A value that conforms to `schema`, or is close to it: what a careful client would send. */
export function validish(schema: Schema, hints: Hints): fc.Arbitrary<JsonLike> {
  const value = conforming(schema, hints);
  return schema.nullable === true ? fc.oneof(fc.constant(null), value) : value;
}

function conforming(schema: Schema, hints: Hints): fc.Arbitrary<JsonLike> {
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as JsonLike[]));
  switch (schema.type) {
    case 'string':
      return stringFor(schema);
    case 'integer':
      return fc.integer({ min: bound(schema.minimum, -1000), max: bound(schema.maximum, 1_000_000) });
    case 'number':
      return fc.double({ min: bound(schema.minimum, -1e6), max: bound(schema.maximum, 1e6), noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'array': {
      const items = validish((schema.items as Schema | undefined) ?? {}, hints);
      const maxLength = Math.min(bound(schema.maxItems, 5), 5);
      return schema.uniqueItems === true ? fc.uniqueArray(items, { maxLength }) : fc.array(items, { maxLength });
    }
    case 'object':
      return objectFor(schema, hints);
    default:
      return fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<JsonLike>;
  }
}

function stringFor(schema: Schema): fc.Arbitrary<JsonLike> {
  if (schema.format === 'date-time') {
    return fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((date) => date.toISOString());
  }
  const minLength = bound(schema.minLength, 0);
  const maxLength = bound(schema.maxLength, 200);
  return fc.oneof(
    fc.string({ unit: 'grapheme', minLength, maxLength: Math.min(maxLength, 40) }),
    fc.string({ unit: 'grapheme-ascii', minLength, maxLength: Math.min(maxLength, 12) }),
    // The longest string the schema allows, and the shortest.
    fc.constant('m'.repeat(maxLength)),
    fc.constant('n'.repeat(Math.max(minLength, 1))),
  );
}

/** Free-form JSON objects (`additionalProperties: true`): rules, config, parameters, metrics. */
const freeObject = fc.dictionary(fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 12 }), fc.jsonValue({ maxDepth: 3 }), {
  maxKeys: 6,
}) as fc.Arbitrary<JsonLike>;

function writableProperties(schema: Schema): [string, Schema][] {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  return Object.entries(properties).filter(([, property]) => property.readOnly !== true);
}

function objectFor(schema: Schema, hints: Hints): fc.Arbitrary<JsonLike> {
  const properties = writableProperties(schema);
  if (properties.length === 0) return schema.additionalProperties === false ? fc.constant({}) : freeObject;
  const model: Record<string, fc.Arbitrary<JsonLike>> = {};
  for (const [name, property] of properties) {
    const hint = hints[name];
    model[name] = hint
      ? fc.oneof({ weight: 3, arbitrary: hint }, { weight: 1, arbitrary: validish(property, hints) })
      : validish(property, hints);
  }
  const required = ((schema.required ?? []) as string[]).filter((name) => name in model);
  return fc.record(model, { requiredKeys: required }) as fc.Arbitrary<JsonLike>;
}

/**
 * A valid body to make hostile one field at a time: the required properties (from the hints, else
 * the document's example or first enum value) and every optional property a hint knows a good
 * value for (a model audience needs its model instance).
 */
export function minimalBody(schema: Schema, hints: Readonly<Record<string, JsonLike>>): Record<string, JsonLike> {
  const body: Record<string, JsonLike> = {};
  const required = (schema.required ?? []) as string[];
  for (const [name, property] of writableProperties(schema)) {
    if (name in hints) body[name] = hints[name];
    else if (required.includes(name))
      body[name] = (property.example ?? (Array.isArray(property.enum) ? property.enum[0] : 'x')) as JsonLike;
  }
  return body;
}

const hostileValue: fc.Arbitrary<Labelled<JsonLike>> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_VALUES) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.string({ unit: 'binary', maxLength: 20 }), fc.constantFrom('\u0000', '\ud800', '\udfff', '\u0001', '\u2028'), fc.nat())
      .map(([text, poison, at]) => {
        const index = at % (text.length + 1);
        return labelled('generated text with a control or surrogate', `${text.slice(0, index)}${poison}${text.slice(index)}`);
      }),
  },
  {
    weight: 1,
    arbitrary: fc
      .double()
      .map((number) =>
        Number.isFinite(number) ? labelled(`${number}`, number) : labelled(`the bare token ${number}`, new RawJson(String(number))),
      ),
  },
  { weight: 1, arbitrary: fc.bigInt().map((number) => labelled(`the integer ${number}`, new RawJson(String(number)))) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value) => labelled('arbitrary JSON', value as JsonLike)) },
);

export function jsonBody(label: string, value: JsonLike, contentType = 'application/json'): BodyInput {
  return { label, content: jsonText(value), contentType };
}

/**
 * Bodies for an operation whose request body has `schema`: valid-ish ones, valid-ish ones with
 * one field made hostile or extra fields added, and hostile whole bodies.
 */
export function bodyArbitrary(schema: Schema, hints: Hints): fc.Arbitrary<BodyInput> {
  const valid = validish(schema, hints).map((value) => (typeof value === 'object' && value !== null ? value : {}));
  const fields = [...writableProperties(schema).map(([name]) => name), 'unknown_field'];
  return fc.oneof(
    { weight: 3, arbitrary: valid.map((value) => jsonBody('a valid-ish body', value)) },
    {
      weight: 4,
      arbitrary: fc
        .tuple(valid, fc.constantFrom(...fields), hostileValue)
        .map(([value, field, hostile]) => jsonBody(`${field} = ${hostile.label}`, { ...value, [field]: hostile.value })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(valid, fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { minKeys: 1, maxKeys: 4 }))
        .map(([value, extra]) => jsonBody('unknown fields', { ...(extra as Record<string, JsonLike>), ...value })),
    },
    { weight: 1, arbitrary: valid.map((value) => jsonBody('as a one-element array', [value])) },
    { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_BODIES) },
  );
}

function queryValue(parameter: Parameter, hints: Hints): fc.Arbitrary<string> {
  const schema = parameter.schema ?? {};
  const hint = hints[parameter.name];
  let valid: fc.Arbitrary<string>;
  if (Array.isArray(schema.enum)) valid = fc.constantFrom(...schema.enum.map(String));
  else if (schema.type === 'integer') {
    const min = bound(schema.minimum, 1);
    valid = fc.integer({ min, max: Math.max(min, Math.min(bound(schema.maximum, 5), 200)) }).map(String);
  } else valid = fc.string({ unit: 'grapheme', maxLength: Math.min(bound(schema.maxLength, 20), 20) }).map(encodeURIComponent);
  const documented = hint
    ? fc.oneof(
        hint.map((value) => encodeURIComponent(String(value))),
        valid,
      )
    : valid;
  return fc.oneof({ weight: 2, arbitrary: documented }, { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_QUERY_VALUES) });
}

/** Query pairs for an operation: any subset of its documented parameters, valid or not, and unknown ones. */
export function queryArbitrary(parameters: readonly Parameter[], hints: Hints): fc.Arbitrary<readonly (readonly [string, string])[]> {
  const query = parameters.filter((parameter) => parameter.in === 'query');
  if (query.length === 0) return fc.constant([]);
  return fc
    .tuple(
      fc.tuple(...query.map((parameter) => fc.option(queryValue(parameter, hints), { nil: undefined }))),
      fc.option(fc.constantFrom(...UNKNOWN_QUERY_PAIRS), { nil: undefined, freq: 4 }),
      // A repeated parameter takes its last value (docs/api-conventions.md): send some twice.
      fc.option(fc.nat(), { nil: undefined, freq: 4 }),
    )
    .map(([values, unknown, repeat]) => {
      const pairs: (readonly [string, string])[] = [];
      values.forEach((value, index) => {
        if (value !== undefined) pairs.push([query[index].name, value]);
      });
      if (repeat !== undefined && pairs.length > 0) pairs.push(pairs[repeat % pairs.length]);
      if (unknown) pairs.push(unknown);
      return pairs;
    });
}

/** Header parameters the operation documents (Idempotency-Key), valid or not, and an X-Request-Id. */
export function headersArbitrary(parameters: readonly Parameter[]): fc.Arbitrary<Record<string, string>> {
  const headers = parameters.filter((parameter) => parameter.in === 'header');
  const valueOf = (parameter: Parameter) => {
    const schema = parameter.schema ?? {};
    const valid = fc.string({
      unit: fc.constantFrom(...ASCII_ID_CHARACTERS),
      minLength: bound(schema.minLength, 1),
      maxLength: Math.min(bound(schema.maxLength, 40), 40),
    });
    return fc.option(fc.oneof(valid, fc.constantFrom(...HOSTILE_HEADER_VALUES)), { nil: undefined });
  };
  return fc
    .tuple(
      fc.tuple(...headers.map(valueOf)),
      fc.option(fc.constantFrom(...REQUEST_IDS), { nil: undefined, freq: 4 }),
      fc.option(fc.constantFrom(...ACCEPTS), { nil: undefined, freq: 4 }),
    )
    .map(([values, requestId, accept]) => {
      const result: Record<string, string> = {};
      values.forEach((value, index) => {
        if (value !== undefined) result[headers[index].name] = value;
      });
      if (requestId !== undefined) result['X-Request-Id'] = requestId;
      if (accept !== undefined) result.Accept = accept;
      return result;
    });
}

/**
 * The documented values of a path parameter that is a choice rather than an id (the social-login
 * `{provider}`), or undefined when the path names an object by id.
 */
export function pathChoices(operation: Operation): string[] | undefined {
  const parameter = operation.parameters.find((candidate) => candidate.in === 'path');
  const choices = (parameter?.schema as { enum?: unknown[] } | undefined)?.enum;
  return choices?.map(String);
}

/** Path values for a choice parameter: each documented one, then every way a segment can be wrong. */
const wrongChoices = (): string[] => ['github', ...PATH_IDS.slice(1)];

/** Random inputs for one operation. */
export function inputArbitrary(operation: Operation, hints: Hints): fc.Arbitrary<FuzzInput> {
  const hasPathId = operation.parameters.some((parameter) => parameter.in === 'path');
  const choices = pathChoices(operation);
  const bodySchema = operation.requestBody?.content['application/json'];
  return fc.record({
    pathId: choices
      ? fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...choices) }, { weight: 2, arbitrary: fc.constantFrom(...wrongChoices()) })
      : hasPathId
        ? fc.oneof(
            { weight: 6, arbitrary: fc.constant(EXISTING) },
            { weight: 1, arbitrary: fc.constant(SHARED) },
            { weight: 4, arbitrary: fc.constantFrom(...PATH_IDS) },
          )
        : fc.constant(undefined),
    query: queryArbitrary(operation.parameters, hints),
    headers: headersArbitrary(operation.parameters),
    body: bodySchema ? bodyArbitrary(bodySchema, hints) : fc.constant(undefined),
    copies: fc.oneof({ weight: 8, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fc.integer({ min: 2, max: 4 }) }),
  });
}

/**
 * Inputs every run sends, whatever the seed: each path id, each hostile field value in an
 * otherwise minimal valid body, each hostile body, and each hostile query value and unknown query
 * pair. `exhaustive` puts every hostile value in every field and every parameter; otherwise the
 * values take the fields in turn, starting at `offset`, so that cases which mostly stop at the
 * credential check stay cheap while still sending every value.
 */
export function catalogueInputs(
  operation: Operation,
  minimal: () => Record<string, JsonLike>,
  { exhaustive, offset }: { exhaustive: boolean; offset: number },
): FuzzInput[] {
  const hasPathId = operation.parameters.some((parameter) => parameter.in === 'path');
  const choices = pathChoices(operation);
  const bodySchema = operation.requestBody?.content['application/json'];
  const base: FuzzInput = {
    pathId: choices ? choices[0] : hasPathId ? EXISTING : undefined,
    query: [],
    headers: {},
    body: bodySchema ? jsonBody('a minimal valid body', minimal()) : undefined,
    copies: 1,
  };
  // The valid request three times at once, once with an Idempotency-Key where one is documented.
  const inputs: FuzzInput[] = [base, { ...base, copies: 3 }];
  if (operation.parameters.some((parameter) => parameter.name === 'Idempotency-Key')) {
    inputs.push({ ...base, copies: 3, headers: { 'Idempotency-Key': `race-${operation.operationId}` } });
  }
  const targets = <T>(items: readonly T[], index: number): readonly T[] => (exhaustive ? items : [items[(index + offset) % items.length]]);
  if (choices) for (const pathId of [...choices.slice(1), ...wrongChoices()]) inputs.push({ ...base, pathId });
  else if (hasPathId) for (const pathId of [...PATH_IDS.slice(1), SHARED]) inputs.push({ ...base, pathId });
  if (bodySchema) {
    const fields = [...writableProperties(bodySchema).map(([name]) => name), 'unknown_field'];
    HOSTILE_VALUES.forEach(({ label, value }, index) => {
      for (const field of targets(fields, index)) {
        inputs.push({ ...base, body: jsonBody(`${field} = ${label}`, { ...minimal(), [field]: value }) });
      }
    });
    for (const body of HOSTILE_BODIES) inputs.push({ ...base, body });
  }
  const query = operation.parameters.filter((parameter) => parameter.in === 'query');
  if (query.length > 0) {
    HOSTILE_QUERY_VALUES.forEach((value, index) => {
      for (const parameter of targets(query, index)) inputs.push({ ...base, query: [[parameter.name, value]] });
    });
    for (const pair of UNKNOWN_QUERY_PAIRS) inputs.push({ ...base, query: [pair] });
    // Every parameter at once, each with a huge value.
    inputs.push({ ...base, query: query.map((parameter) => [parameter.name, '99999999999999999999'] as const) });
  }
  const headers = operation.parameters.filter((parameter) => parameter.in === 'header');
  for (const parameter of headers) {
    for (const value of HOSTILE_HEADER_VALUES) inputs.push({ ...base, headers: { [parameter.name]: value } });
  }
  return inputs;
}
