import type { OpenAPIObject, OperationObject, ParameterObject, ReferenceObject, SchemaObject } from '@nestjs/swagger';

/** A JSON Schema (draft 7 and later), as MCP clients read it. */
export type JsonSchema = Record<string, unknown>;

type Schemas = Record<string, SchemaObject | ReferenceObject>;

/** OpenAPI 3.0 keywords that JSON Schema does not have; `nullable` and `example` are translated. */
const OPENAPI_ONLY = new Set(['nullable', 'example', 'discriminator', 'xml', 'externalDocs']);

/**
 * An OpenAPI 3.0 schema as plain JSON Schema: `$ref`s inlined (a tool schema stands alone),
 * `nullable` as a union with null, `example` as `examples`, boolean exclusive bounds as numbers,
 * OpenAPI-only keywords and `x-` extensions dropped.
 */
export function toJsonSchema(schema: SchemaObject | ReferenceObject, components: Schemas, resolving: string[] = []): JsonSchema {
  if ('$ref' in schema) {
    const name = schema.$ref.replace(/^#\/components\/schemas\//, '');
    const target = components[name];
    if (!target) throw new Error(`Cannot resolve ${schema.$ref} in the OpenAPI document.`);
    if (resolving.includes(name)) throw new Error(`Cannot inline the recursive schema ${[...resolving, name].join(' → ')}.`);
    return toJsonSchema(target, components, [...resolving, name]);
  }
  const convert = (child: SchemaObject | ReferenceObject) => toJsonSchema(child, components, resolving);
  const result: JsonSchema = {};
  for (const [key, value] of Object.entries(schema) as [string, unknown][]) {
    if (OPENAPI_ONLY.has(key) || key.startsWith('x-')) continue;
    if (key === 'properties') result[key] = mapValues(value as Schemas, convert);
    else if (key === 'items' || key === 'not') result[key] = convert(value as SchemaObject);
    else if (key === 'additionalProperties') result[key] = typeof value === 'boolean' ? value : convert(value as SchemaObject);
    else if (key === 'allOf' || key === 'anyOf' || key === 'oneOf') result[key] = (value as SchemaObject[]).map(convert);
    else if (key === 'exclusiveMinimum' || key === 'exclusiveMaximum') continue;
    else result[key] = value;
  }
  if (schema.exclusiveMinimum === true && schema.minimum !== undefined) {
    result.exclusiveMinimum = schema.minimum;
    delete result.minimum;
  }
  if (schema.exclusiveMaximum === true && schema.maximum !== undefined) {
    result.exclusiveMaximum = schema.maximum;
    delete result.maximum;
  }
  if (schema.example !== undefined && result.examples === undefined) result.examples = [schema.example];
  return schema.nullable ? orNull(result) : result;
}

/** Keywords that describe a value rather than constrain it: they stay on the outside of a nullable union. */
const ANNOTATIONS = ['title', 'description', 'examples', 'default', 'readOnly', 'writeOnly', 'deprecated'];

/**
 * `nullable: true` in JSON Schema, as the value's schema or null: `anyOf` with one type per branch.
 * The shorter `type: [x, "null"]` is valid JSON Schema, but several MCP clients read `type` as a
 * single string and drop the tool or the constraint (the MCP Inspector's `type-union` warning).
 */
function orNull(schema: JsonSchema): JsonSchema {
  const outside = Object.fromEntries(Object.entries(schema).filter(([key]) => ANNOTATIONS.includes(key)));
  const value = Object.fromEntries(Object.entries(schema).filter(([key]) => !ANNOTATIONS.includes(key)));
  if (Array.isArray(value.enum)) value.enum = value.enum.filter((choice) => choice !== null);
  return { ...outside, anyOf: [value, { type: 'null' }] };
}

function mapValues<T, U>(record: Record<string, T>, map: (value: T) => U): Record<string, U> {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, map(value)]));
}

/** What one REST operation takes and answers, as JSON Schemas read from the OpenAPI document. */
export class OperationSchemas {
  private readonly operation: OperationObject;
  private readonly components: Schemas;

  constructor(
    document: OpenAPIObject,
    private readonly method: 'get' | 'post' | 'patch',
    private readonly path: string,
  ) {
    const operation = document.paths[path]?.[method];
    if (!operation) throw new Error(`The OpenAPI document has no ${method.toUpperCase()} ${path}.`);
    this.operation = operation;
    this.components = (document.components?.schemas ?? {}) as Schemas;
  }

  /** The operation's parameters in `location` (query string or path), each with its description. */
  parameters(location: 'query' | 'path'): { properties: Record<string, JsonSchema>; required: string[] } {
    const parameters = (this.operation.parameters ?? []).filter(
      (parameter): parameter is ParameterObject => 'in' in parameter && parameter.in === location,
    );
    return {
      properties: Object.fromEntries(
        parameters.map((parameter) => [
          parameter.name,
          {
            ...toJsonSchema(parameter.schema ?? {}, this.components),
            ...(parameter.description !== undefined && { description: parameter.description }),
          },
        ]),
      ),
      required: parameters.filter((parameter) => parameter.required).map((parameter) => parameter.name),
    };
  }

  /** The JSON request body, checked to be the schema of `model`: the class that validates it. */
  requestBody(model: { name: string }): JsonSchema {
    const body = this.operation.requestBody;
    const schema = body && !('$ref' in body) ? body.content['application/json']?.schema : undefined;
    if (!schema || !('$ref' in schema) || schema.$ref !== `#/components/schemas/${model.name}`)
      throw new Error(`${this.method.toUpperCase()} ${this.path} does not take a ${model.name} body in the OpenAPI document.`);
    return toJsonSchema(schema, this.components);
  }

  /** The JSON body of the `status` response. */
  response(status: number): JsonSchema {
    const response = this.operation.responses[String(status)];
    const schema = response && !('$ref' in response) ? response.content?.['application/json']?.schema : undefined;
    if (!schema) throw new Error(`${this.method.toUpperCase()} ${this.path} documents no JSON ${status} response.`);
    return toJsonSchema(schema, this.components);
  }
}
