import { Injectable, Module } from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';

/**
 * The running application's OpenAPI document, built once at start-up by buildOpenApiDocument(app).
 * The MCP tools read their input and output schemas from it, so a field's rules are stated once
 * (on the DTO) for REST, the API document and MCP alike.
 */
@Injectable()
export class ApiDocument {
  private document?: OpenAPIObject;

  publish(document: OpenAPIObject): void {
    this.document = document;
  }

  get(): OpenAPIObject {
    if (!this.document) throw new Error('No OpenAPI document yet: buildOpenApiDocument(app) publishes it at start-up, before app.init().');
    return this.document;
  }
}

@Module({ providers: [ApiDocument], exports: [ApiDocument] })
export class ApiDocumentModule {}
