/** The shape of a console route: each page module lists its own, and the router picks one. */
import type { HttpResponse, RequestContext } from '../http/engine.ts';
import type { ActiveSession } from './session.ts';

export interface PublicRequest {
  context: RequestContext;
  /** The signed-in session, if the browser has one. */
  active: ActiveSession | undefined;
  /** The submitted form (POST) or the query string (GET). */
  fields: URLSearchParams;
}

export interface SessionRequest extends PublicRequest {
  active: ActiveSession;
}

interface RouteBase {
  method: 'GET' | 'POST';
  /** An exact path, or a prefix ending in * (for a flow that owns a subtree). */
  path: string;
}

/**
 * A 'public' route answers anyone; a 'session' route only a signed-in browser (others are sent
 * to sign in), and for a POST only with the session's CSRF token.
 */
export type ConsoleRoute =
  | (RouteBase & { access: 'public'; handle(request: PublicRequest): Promise<HttpResponse> })
  | (RouteBase & { access: 'session'; handle(request: SessionRequest): Promise<HttpResponse> });
