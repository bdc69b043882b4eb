import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { ProblemDetailsDto } from './problem-details.schema.js';

export const API_VERSION = '1.0.0';

/** `AudiencesController.partialUpdate` → `audiences_partial_update`: stable, readable operation ids. */
export function operationId(controllerKey: string, methodKey: string): string {
  const snake = (text: string) => text.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
  return `${snake(controllerKey.replace(/Controller$/, ''))}_${snake(methodKey)}`;
}

/** Generates the OpenAPI 3 document from the controllers and DTOs; the committed openapi.json is this, serialised. */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Audience and Signal Platform API')
    .setDescription(
      'Multi-tenant API for audiences, signals, AI model instances and ad-platform connections. ' +
        'Every request is scoped to the workspace (customer) of its credential. Errors are ' +
        '`application/problem+json` bodies with a stable `code` and the `request_id` of the ' +
        '`X-Request-Id` response header.',
    )
    .setVersion(API_VERSION)
    .build();
  const document = SwaggerModule.createDocument(app, config, {
    operationIdFactory: operationId,
    extraModels: [ProblemDetailsDto],
  });
  return document;
}

/** Serves the document at /api/schema/ and Swagger UI at /api/docs/. */
export function mountApiDocs(app: INestApplication, document: OpenAPIObject): void {
  SwaggerModule.setup('api/docs', app, document, {
    jsonDocumentUrl: 'api/schema',
    raw: ['json'],
    customSiteTitle: 'Audience and Signal Platform API',
    swaggerOptions: { persistAuthorization: true, displayOperationId: true },
  });
}
