/**
 * JSON text exactly as the fuzzer means to send it. `JSON.stringify` cannot write a number such as
 * `1e400` or `-0` or `99999999999999999999` as it is, so such tokens (and pre-built structures
 * too large to generate value by value) are `RawJson` and written verbatim. Strings go through
 * `JSON.stringify`, which writes NUL as `\u0000` and a lone surrogate as the escape `\ud800`:
 * the text the service must refuse, never a replacement character.
 */
export class RawJson {
  constructor(readonly text: string) {}
}

export type JsonLike = null | boolean | number | string | RawJson | readonly JsonLike[] | { readonly [key: string]: JsonLike };

export function jsonText(value: JsonLike): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`;
  if (typeof value === 'number' && !Number.isFinite(value)) throw new Error(`${value} has no JSON form: use RawJson.`);
  if (typeof value === 'object' && value !== null) {
    return `{${Object.entries(value)
      .map(([key, item]) => `${JSON.stringify(key)}:${jsonText(item as JsonLike)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** `depth` levels of `{"a": …}` or `[…]` around `1`. */
export function nested(depth: number, kind: 'object' | 'array'): RawJson {
  const [open, close] = kind === 'object' ? ['{"a":', '}'] : ['[', ']'];
  return new RawJson(`${open.repeat(depth)}1${close.repeat(depth)}`);
}

/** One object with `count` distinct keys. */
export function wide(count: number): RawJson {
  const members = Array.from({ length: count }, (_, index) => `"k${index}":${index}`);
  return new RawJson(`{${members.join(',')}}`);
}
