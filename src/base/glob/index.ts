// Globs as Argo CD compiles them (gobwas/glob): sourceRepos, destinations, kinds and
// source integrity repository patterns (gitops/control), and the store's validation of
// those patterns (platform/resources/rules.ts), which refuses one that does not compile.
const globCache = new Map<string, RegExp | null>();

const reEscape = (c: string): string => c.replace(/[.+?^${}()|[\]\\/*-]/g, '\\$&');

/**
 * A glob as Argo CD compiles it (gobwas/glob): "*" any run of characters but the
 * separator, "**" any run including it, "?" one character but the separator,
 * "[abc]" / "[!abc]" / "[a-z]" a class, "{a,b}" alternatives, "\x" a literal x.
 * Without a separator "*" and "**" are the same. An invalid pattern matches nothing.
 */
export function compileGlob(pattern: string, separator: string): RegExp | null {
  const notSep = separator ? `[^${reEscape(separator)}]` : '[^]';
  let re = '';
  let depth = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === '\\') {
      const next = pattern[++i];
      if (next === undefined) return null;
      re += reEscape(next);
    } else if (c === '*') {
      if (pattern[i + 1] === '*') {
        re += '[^]*';
        i++;
      } else re += `${notSep}*`;
    } else if (c === '?') re += notSep;
    else if (c === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end === -1) return null;
      let body = pattern.slice(i + 1, end);
      const negate = body.startsWith('!');
      if (negate) body = body.slice(1);
      re += `[${negate ? '^' : ''}${body.replace(/[\\\]^]/g, '\\$&')}]`;
      i = end;
    } else if (c === '{') {
      depth++;
      re += '(?:';
    } else if (c === '}' && depth > 0) {
      depth--;
      re += ')';
    } else if (c === ',' && depth > 0) re += '|';
    else re += reEscape(c);
  }
  if (depth !== 0) return null;
  try {
    return new RegExp(`^${re}$`);
  } catch {
    return null;
  }
}

/**
 * Glob match. Without `separator` "*" matches any run of characters (destinations,
 * kinds); with '/' it stays inside one path segment, as Argo CD matches sourceRepos.
 */
export function globMatch(pattern: string, value: string, separator = ''): boolean {
  if (pattern === '*') return true;
  const key = `${separator}\0${pattern}`;
  let re = globCache.get(key);
  if (re === undefined) {
    if (globCache.size > 10_000) globCache.clear();
    re = compileGlob(pattern, separator);
    globCache.set(key, re);
  }
  return re !== null && re.test(value);
}

/** True when `pattern` compiles (an unclosed "[" or "{", or a trailing "\\", does not). */
export function globCompiles(pattern: string): boolean {
  return pattern === '*' || compileGlob(pattern, '') !== null;
}
