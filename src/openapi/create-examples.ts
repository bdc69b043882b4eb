import { applyDecorators, type Type } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse } from '@nestjs/swagger';

/** One named example of a create call: what is sent, and what the 201 then holds. */
export interface CreateExample {
  summary: string;
  description?: string;
  request: Record<string, unknown>;
  response: Record<string, unknown>;
}

/**
 * The request body and 201 of a create operation with named examples, the same names on both
 * sides so each answer example belongs to its request (issue 25, item 15). Swagger UI's
 * Try-it-out sends the first one as it is, so the first must need nothing the workspace may lack
 * (no ids of other objects); the others say which ids to replace. test/openapi-examples.e2e-spec.ts
 * sends every one of them to the demo workspace and compares the answer with its example.
 */
export function ApiCreateExamples(body: Type, created: Type, description: string, examples: Record<string, CreateExample>) {
  const side = (pick: (example: CreateExample) => Record<string, unknown>) =>
    Object.fromEntries(
      Object.entries(examples).map(([name, example]) => [
        name,
        { summary: example.summary, ...(example.description !== undefined && { description: example.description }), value: pick(example) },
      ]),
    );
  return applyDecorators(
    ApiBody({ type: body, examples: side((example) => example.request) }),
    ApiCreatedResponse({ type: created, description, examples: side((example) => example.response) }),
  );
}
