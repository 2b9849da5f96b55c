/**
 * What is wrong with an answer's security headers (issue 37: "security headers on every HTML page and
 * API answer"; DESIGN, files answered to a browser), read through `header(name)`; undefined when
 * nothing is. Every answer says nosniff and sends no referrer; a page has a policy of its own, anything
 * else one that loads and runs nothing; an answer carrying a file (a Content-Disposition) is sandboxed
 * and never typed as something a browser runs. Scripts and styles run under their page's policy.
 * The access matrix checks it on every route for every caller, the fuzz suite on every malformed call.
 */
export function securityHeaderProblem(
  header: (name: string) => string | null | undefined,
): string | undefined {
  const type = header('content-type') ?? '';
  const policy = header('content-security-policy') ?? '';
  if (header('x-content-type-options') !== 'nosniff') return 'no X-Content-Type-Options: nosniff';
  if (!header('referrer-policy')) return 'no Referrer-Policy';
  if (/^(text\/css|text\/javascript|application\/javascript)\b/.test(type)) return undefined;
  if (!policy) return 'no Content-Security-Policy';
  if (!/^text\/html\b/.test(type) && !/default-src 'none'/.test(policy))
    return `a ${type || 'typeless'} answer whose policy loads something`;
  if (header('content-disposition')) {
    if (!/\bsandbox\b/.test(policy)) return 'a file without the sandbox policy';
    if (/html|svg|xml|javascript/.test(type)) return `a file answered as ${type}`;
  }
  return undefined;
}
