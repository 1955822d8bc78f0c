/** Single sign-on seam: the console hands /console/sso/* requests to the configured flow. */
import type { HttpResponse, RequestContext } from '../http/engine.ts';

export type BeginSession = (
  context: RequestContext,
  accountId: string,
  email: string,
) => Promise<HttpResponse>;

export interface SsoFlow {
  /** Shown on the sign-in page: "Sign in with …". */
  displayName: string;
  handle(context: RequestContext, beginSession: BeginSession): Promise<HttpResponse>;
}
