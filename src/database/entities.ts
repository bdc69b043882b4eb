import { ApiKey } from '../api-keys/api-key.entity.js';
import { AuthSession } from '../auth/auth-session.entity.js';
import { Customer } from '../customers/customer.entity.js';
import { User } from '../users/user.entity.js';

/** Every entity, listed explicitly: globs do not work the same under ts-jest and the compiled build. */
export const ENTITIES = [Customer, User, AuthSession, ApiKey];
