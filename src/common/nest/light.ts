/**
 * The few NestJS symbols that code shared with the admin CLI needs, imported from their own
 * modules. `@nestjs/common`'s index loads the whole package (about 200 modules, 150–450 ms here),
 * which the CLI would pay on every run for nothing; these paths are public (`./*.js` in the
 * package's exports) and are the very same classes, so `instanceof` and DI metadata are unchanged.
 */
export { Inject } from '@nestjs/common/decorators/core/inject.decorator.js';
export { Injectable } from '@nestjs/common/decorators/core/injectable.decorator.js';
export { Optional } from '@nestjs/common/decorators/core/optional.decorator.js';
export { createParamDecorator } from '@nestjs/common/decorators/http/create-route-param-metadata.decorator.js';
export { HttpException } from '@nestjs/common/exceptions/http.exception.js';
