import type { OpenAPIObject } from '@nestjs/swagger';
import { OperationSchemas, toJsonSchema } from './json-schemas.js';

describe('toJsonSchema', () => {
  const components = {
    Item: { type: 'object', properties: { id: { type: 'integer', readOnly: true, example: 3 } }, required: ['id'] },
    Loop: { type: 'object', properties: { next: { $ref: '#/components/schemas/Loop' } } },
  };

  it('inlines $refs and turns example into examples, keeping readOnly', () => {
    expect(toJsonSchema({ type: 'array', items: { $ref: '#/components/schemas/Item' } }, components)).toEqual({
      type: 'array',
      items: { type: 'object', properties: { id: { type: 'integer', readOnly: true, examples: [3] } }, required: ['id'] },
    });
  });

  it('writes nullable as anyOf with one type per branch, keeping description and examples outside', () => {
    expect(toJsonSchema({ type: 'integer', nullable: true, minimum: 1, description: 'A model.', example: 12 }, {})).toEqual({
      description: 'A model.',
      examples: [12],
      anyOf: [{ type: 'integer', minimum: 1 }, { type: 'null' }],
    });
    // OpenAPI 3.0 lists null among a nullable enum's values; the value branch must not.
    expect(toJsonSchema({ type: 'string', enum: ['a', 'b', null], nullable: true } as never, {})).toEqual({
      anyOf: [{ type: 'string', enum: ['a', 'b'] }, { type: 'null' }],
    });
    expect(toJsonSchema({ allOf: [{ $ref: '#/components/schemas/Item' }], nullable: true }, components)).toEqual({
      anyOf: [{ allOf: [toJsonSchema(components.Item, {})] }, { type: 'null' }],
    });
  });

  it('never writes a type as an array, anywhere in a schema', () => {
    const schema = toJsonSchema(
      {
        type: 'object',
        properties: { a: { type: 'array', items: { type: 'integer', nullable: true } }, b: { type: 'string', nullable: true } },
      },
      {},
    );
    expect(JSON.stringify(schema)).not.toMatch(/"type":\[/);
  });

  it('turns boolean exclusive bounds into numbers and drops OpenAPI-only keywords', () => {
    expect(
      toJsonSchema(
        { type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 1, exclusiveMaximum: false, 'x-enumNames': ['a'] } as never,
        {},
      ),
    ).toEqual({ type: 'number', exclusiveMinimum: 0, maximum: 1 });
  });

  it('refuses what it cannot inline', () => {
    expect(() => toJsonSchema({ $ref: '#/components/schemas/Missing' }, components)).toThrow('Cannot resolve');
    expect(() => toJsonSchema({ $ref: '#/components/schemas/Loop' }, components)).toThrow('recursive');
  });
});

describe('OperationSchemas', () => {
  const document = {
    openapi: '3.0.0',
    info: { title: 't', version: '1' },
    components: { schemas: { CreateThingDto: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } } },
    paths: {
      '/things/': {
        post: {
          parameters: [{ name: 'dry_run', in: 'query', required: false, description: 'Only check.', schema: { type: 'boolean' } }],
          requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/CreateThingDto' } } } },
          responses: { '201': { description: '', content: { 'application/json': { schema: { type: 'object' } } } } },
        },
      },
    },
  } as unknown as OpenAPIObject;

  it("reads an operation's parameters, body and response", () => {
    const operation = new OperationSchemas(document, 'post', '/things/');
    expect(operation.parameters('query')).toEqual({
      properties: { dry_run: { type: 'boolean', description: 'Only check.' } },
      required: [],
    });
    expect(operation.requestBody({ name: 'CreateThingDto' })).toEqual({
      type: 'object',
      properties: { name: { type: 'string' } },
      required: ['name'],
    });
    expect(operation.response(201)).toEqual({ type: 'object' });
  });

  it('fails loudly when the document does not say what a tool expects', () => {
    expect(() => new OperationSchemas(document, 'get', '/things/')).toThrow('no GET /things/');
    expect(() => new OperationSchemas(document, 'post', '/things/').requestBody({ name: 'OtherDto' })).toThrow(
      'does not take a OtherDto body',
    );
    expect(() => new OperationSchemas(document, 'post', '/things/').response(200)).toThrow('no JSON 200 response');
  });
});
