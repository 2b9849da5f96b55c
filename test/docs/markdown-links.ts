import { readdir, readFile, stat } from 'node:fs/promises';
import { dirname, extname, isAbsolute, join, relative, sep } from 'node:path';

/**
 * The link checker of the documentation (issue 39, item 5): every relative link and every anchor of
 * README.md and docs/**\/*.md must lead somewhere. Links are Markdown destinations (`[text](dest)`,
 * `![alt](dest)`, `[id]: dest`) and HTML `src`/`href` attributes, outside code blocks and code spans;
 * addresses with a scheme (`https:`, `mailto:`) or `//` are not followed. A `#fragment` into a Markdown
 * file must be one of its headings' anchors as GitHub makes them (see `githubAnchors`) or an HTML
 * `id`/`name`; into another file, only GitHub's line anchors (`#L10`, `#L10-L20`) are accepted.
 */

export interface BrokenLink {
  /** The file holding the link, relative to the root, with `/`. */
  file: string;
  /** 1-based. */
  line: number;
  /** The destination as written. */
  link: string;
  problem: string;
}

export function describeBrokenLink(broken: BrokenLink): string {
  return `${broken.file}:${broken.line}: ${broken.link}: ${broken.problem}`;
}

/** README.md and every Markdown file under docs/, relative to root, with `/`. */
export async function documentationFiles(root: string): Promise<string[]> {
  const found: string[] = [];
  if (await exists(join(root, 'README.md'))) found.push('README.md');
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(join(root, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) await walk(path);
      else if (entry.name.endsWith('.md')) found.push(path);
    }
  };
  if (await exists(join(root, 'docs'))) await walk('docs');
  return found.sort();
}

/** Checks every link of README.md and docs/**\/*.md under root; an empty list when all lead somewhere. */
export async function checkLinks(root: string): Promise<BrokenLink[]> {
  const anchorsOf = new Map<string, Promise<Set<string>>>();
  const anchors = (path: string) => {
    let known = anchorsOf.get(path);
    if (!known) anchorsOf.set(path, (known = readFile(path, 'utf8').then(githubAnchors)));
    return known;
  };
  const broken: BrokenLink[] = [];
  for (const file of await documentationFiles(root)) {
    const source = join(root, file);
    for (const { line, link } of linksOf(await readFile(source, 'utf8'))) {
      const problem = await problemOf(root, source, link, anchors);
      if (problem) broken.push({ file, line, link, problem });
    }
  }
  return broken;
}

async function problemOf(
  root: string,
  source: string,
  link: string,
  anchors: (path: string) => Promise<Set<string>>,
): Promise<string | undefined> {
  if (/^[a-z][a-z0-9+.-]*:/i.test(link) || link.startsWith('//')) return undefined;
  if (link === '') return 'an empty link';
  const hash = link.indexOf('#');
  const rawPath = hash < 0 ? link : link.slice(0, hash);
  const rawFragment = hash < 0 ? undefined : link.slice(hash + 1);
  let path: string;
  let fragment: string | undefined;
  try {
    path = decodeURIComponent(rawPath.split('?')[0]!);
    fragment = rawFragment === undefined ? undefined : decodeURIComponent(rawFragment);
  } catch {
    return 'a malformed percent-encoding';
  }
  // GitHub resolves `/x` from the repository's root, anything else from the linking file's folder.
  const target = path === '' ? source : path.startsWith('/') ? join(root, path) : join(dirname(source), path);
  const inside = relative(root, target);
  if (inside.startsWith(`..${sep}`) || inside === '..' || isAbsolute(inside)) return 'outside the repository';
  const found = await stat(target).catch(() => undefined);
  if (!found) return `no such file or folder (${inside.split(sep).join('/')})`;
  if (fragment === undefined) return undefined;
  if (fragment === '') return 'an empty anchor';
  if (found.isFile() && extname(target).toLowerCase() === '.md') {
    if ((await anchors(target)).has(fragment)) return undefined;
    return `no heading or anchor "${fragment}" in ${inside.split(sep).join('/')}`;
  }
  if (found.isFile() && /^L\d+(-L\d+)?$/.test(fragment)) return undefined;
  return `an anchor into ${inside.split(sep).join('/') || '.'}, which is not a Markdown file`;
}

interface Found {
  line: number;
  link: string;
}

/** The link destinations of a Markdown text with their lines, code blocks and code spans left out. */
export function linksOf(markdown: string): Found[] {
  const found: Found[] = [];
  for (const { line, text } of proseLines(markdown)) {
    const prose = text.replace(/(`+)[\s\S]*?\1/g, (span) => ' '.repeat(span.length));
    const definition = /^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/.exec(prose);
    if (definition) found.push({ line, link: unbracket(definition[1]!) });
    for (const match of prose.matchAll(/\]\(\s*(<[^>]*>|[^\s)]*)/g))
      found.push({ line, link: unbracket(match[1]!) });
    for (const match of prose.matchAll(/<[a-z][^>]*>/gi))
      for (const attribute of match[0].matchAll(/\s(?:src|href)\s*=\s*(?:"([^"]*)"|'([^']*)')/gi))
        found.push({ line, link: attribute[1] ?? attribute[2]! });
  }
  return found;
}

function unbracket(link: string): string {
  return link.startsWith('<') && link.endsWith('>') ? link.slice(1, -1) : link;
}

/** Each line of a Markdown text outside fenced code blocks, numbered from 1. */
function proseLines(markdown: string): { line: number; text: string }[] {
  const lines: { line: number; text: string }[] = [];
  let fence: string | undefined;
  markdown.split(/\r?\n/).forEach((text, index) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(text)?.[1];
    if (fence) {
      if (
        marker &&
        marker[0] === fence[0] &&
        marker.length >= fence.length &&
        !/\S/.test(text.trim().slice(marker.length))
      )
        fence = undefined;
      return;
    }
    if (marker) {
      fence = marker;
      return;
    }
    lines.push({ line: index + 1, text });
  });
  return lines;
}

/**
 * The anchors GitHub gives a Markdown file: one per ATX heading (`#` to `######`), its text as shown
 * (links and images by their text, code spans by their content, HTML tags dropped), lower-cased, with
 * punctuation and symbols removed but for `-` and `_`, and each space made a `-`; a slug already given
 * gets `-1`, then `-2`, … Also every HTML `id` and `<a name>`. (Setext headings, underlined with `=` or
 * `-`, are not read: the repository's Prettier writes ATX headings.)
 */
export function githubAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const counts = new Map<string, number>();
  for (const { text } of proseLines(markdown)) {
    const heading = /^ {0,3}#{1,6}(?:\s+(.*?))?(?:\s+#+)?\s*$/.exec(text);
    if (heading) {
      const base = githubSlug(heading[1] ?? '');
      let slug = base;
      if (counts.has(base)) {
        let n = counts.get(base)!;
        do slug = `${base}-${++n}`;
        while (anchors.has(slug));
        counts.set(base, n);
      } else counts.set(base, 0);
      anchors.add(slug);
    }
    for (const match of text.matchAll(/<[a-z][^>]*>/gi))
      for (const attribute of match[0].matchAll(/\s(?:id|name)\s*=\s*(?:"([^"]*)"|'([^']*)')/gi))
        anchors.add(attribute[1] ?? attribute[2]!);
  }
  return anchors;
}

/** The slug GitHub makes of a heading's Markdown text. */
export function githubSlug(heading: string): string {
  const shown = heading
    .replace(/(`+)([\s\S]*?)\1/g, (_, __, code: string) => code.trim())
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]*>/g, '')
    .replace(/(^|\s)_([^_]+)_(?=\s|$)/g, '$1$2');
  return shown
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}
