import { discardBody } from '../../src/common/http/discard-body.js';

/**
 * A browser's part in an authorization flow, over plain HTTP: follows redirects with a cookie jar,
 * fills in the identity provider's sign-in and consent forms, and stops where the provider sends
 * the browser back to the client (the redirect URI), returning that URL with its `code` and `state`.
 */
export async function authorizeInBrowser(
  authorizationUrl: string,
  redirectUri: string,
  answer: { login: string } | { deny: true },
): Promise<URL> {
  const cookies = new Map<string, string>();
  let url = new URL(authorizationUrl);
  let init: RequestInit = {};
  for (let step = 0; step < 20; step++) {
    const response = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: {
        ...(init.headers as Record<string, string> | undefined),
        cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; '),
      },
    });
    for (const header of response.headers.getSetCookie()) {
      const [pair] = header.split(';');
      const index = pair!.indexOf('=');
      cookies.set(pair!.slice(0, index).trim(), pair!.slice(index + 1).trim());
    }
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      await discardBody(response);
      url = new URL(location, url);
      if (url.href.startsWith(redirectUri)) return url;
      init = {};
      continue;
    }
    const page = await response.text();
    if (response.status !== 200) throw new Error(`the provider answered ${response.status} at ${url.pathname}: ${page.slice(0, 300)}`);
    if ('deny' in answer) {
      const cancel = /<a href="([^"]+)">\[ Cancel \]<\/a>/.exec(page);
      if (!cancel) throw new Error('no cancel link on the provider page');
      url = new URL(cancel[1]!.replaceAll('&amp;', '&'), url);
      init = {};
      continue;
    }
    const action = /<form[^>]*action="([^"]+)"/.exec(page)?.[1];
    const prompt = /name="prompt" value="(\w+)"/.exec(page)?.[1];
    if (!action || !prompt) throw new Error(`no form on the provider page ${url.pathname}`);
    const fields: Record<string, string> = prompt === 'login' ? { prompt, login: answer.login, password: 'any password' } : { prompt };
    url = new URL(action.replaceAll('&amp;', '&'), url);
    init = {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    };
  }
  throw new Error('the authorization flow did not come back to the redirect URI');
}
