/** A cookie-keeping HTTP client for the console, doing what a browser's form posts do. */
import { hashPassword } from '../../gateway/accounts/passwords.ts';
import type { TestGateway } from './gateway.ts';

export class ConsoleClient {
  readonly cookies = new Map<string, string>();

  constructor(readonly baseUrl: string) {}

  cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  private remember(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = (pair ?? '').indexOf('=');
      const name = (pair ?? '').slice(0, at);
      const value = (pair ?? '').slice(at + 1);
      if (/Max-Age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  async get(path: string, headers: Record<string, string> = {}): Promise<Response> {
    const response = await fetch(this.baseUrl + path, {
      redirect: 'manual',
      headers: { cookie: this.cookieHeader(), ...headers },
    });
    this.remember(response);
    return response;
  }

  async post(
    path: string,
    form: Record<string, string | string[]>,
    headers: Record<string, string> = {},
  ): Promise<Response> {
    const body = new URLSearchParams();
    for (const [name, value] of Object.entries(form)) {
      for (const item of Array.isArray(value) ? value : [value]) body.append(name, item);
    }
    const response = await fetch(this.baseUrl + path, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        cookie: this.cookieHeader(),
        'content-type': 'application/x-www-form-urlencoded',
        origin: this.baseUrl,
        ...headers,
      },
      body,
    });
    this.remember(response);
    return response;
  }

  /** The CSRF token of the page's forms (hidden input named csrf). */
  static csrfOf(html: string): string {
    const match = /name="csrf" value="([^"]+)"/.exec(html);
    if (!match?.[1]) throw new Error('no CSRF token on the page');
    return match[1];
  }

  async signIn(email: string, password: string): Promise<Response> {
    const form = await (await this.get('/console/sign-in')).text();
    return this.post('/console/sign-in', { csrf: ConsoleClient.csrfOf(form), email, password });
  }

  async consoleCsrf(): Promise<string> {
    return ConsoleClient.csrfOf(await (await this.get('/console')).text());
  }
}

/** Adds an account with a password to the gateway's own store. */
export async function addAccount(gateway: TestGateway, email: string, password: string, admin = false) {
  const passwordHash = await hashPassword(password);
  return gateway.withStore((store) => store.createAccount({ email, passwordHash, admin }));
}
