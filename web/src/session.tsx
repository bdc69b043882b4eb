import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { CurrentUser, WebConfig } from './api/types';

export interface SessionState {
  user: CurrentUser;
  config: WebConfig;
  /** Admins and editors change workspace objects; viewers only read (SPEC section 1). */
  canWrite: boolean;
  signOut: () => Promise<void>;
}

export const SessionContext = createContext<SessionState | null>(null);

/** The signed-in user; every page under the shell has one. */
export function useSession(): SessionState {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside a signed-in page');
  return session;
}
