import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'auth:public';

/** The only way out of the global auth guard: token endpoints, health, metrics and docs. */
export const Public = () => SetMetadata(IS_PUBLIC, true);
