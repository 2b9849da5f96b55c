import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { checkLinks, describeBrokenLink, documentationFiles, githubSlug } from './markdown-links.js';

/**
 * Issue 39, item 5: "docs/ organised by reader … every relative link and every anchor in README.md
 * and docs/**\/*.md checked". The checker (markdown-links.ts) is run on the repository, and on a small
 * tree with broken links planted in it, to show that it finds them and names file, line and link.
 */

const ROOT = join(import.meta.dirname, '..', '..');

describe('the documentation’s links', () => {
  it('every relative link and anchor of README.md and docs/**/*.md leads somewhere', async () => {
    const files = await documentationFiles(ROOT);
    assert.ok(files.includes('README.md') && files.includes('docs/integration-guide.md'), files.join(', '));
    const broken = (await checkLinks(ROOT)).map(describeBrokenLink);
    assert.deepEqual(broken, [], `broken links:\n${broken.join('\n')}`);
  });

  it('makes anchors as GitHub does', () => {
    assert.equal(githubSlug('The `signery` command'), 'the-signery-command');
    assert.equal(githubSlug("The signer's page, in pictures"), 'the-signers-page-in-pictures');
    assert.equal(githubSlug('Set up: rates & limits'), 'set-up-rates--limits');
    assert.equal(githubSlug('RATE_LIMIT and [PDF limits](x.md)'), 'rate_limit-and-pdf-limits');
    assert.equal(githubSlug('Signing in: sessions, API keys, MFA'), 'signing-in-sessions-api-keys-mfa');
  });
});

describe('the link checker, on a tree with broken links planted', () => {
  let root: string;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'signery-links-'));
    const tree: Record<string, string> = {
      'README.md': [
        '# Planted',
        '',
        '## Start here',
        '',
        'See [the guide](docs/guide.md), [its set-up](docs/guide.md#set-up-rates--limits) and',
        '[a page that is not there](docs/missing.md). Back to [the start](#start-here), or [nowhere](#no-such-heading).',
        '<img src="docs/pictures/shown.png" alt="shown"> <img src="docs/pictures/absent.png" alt="absent">',
        '`[in a code span](docs/not-a-link.md)` and [a site](https://example.com/not-checked).',
      ].join('\n'),
      'docs/guide.md': [
        '# Guide',
        '',
        '## Set up: rates & limits',
        '',
        '## The `signery` command',
        '',
        '## Repeated',
        '',
        '## Repeated',
        '',
        '```md',
        '[in a code block](not-checked.md)',
        '```',
        '',
        '[the command](#the-signery-command), [the second](#repeated-1), [a third](#repeated-2),',
        '[home](../README.md#planted), [home, wrongly](../README.md#Planted), [the pictures](pictures/),',
        '[a text file](notes.txt#L3), [a text file, wrongly](notes.txt#top), [escape](../../etc/passwd).',
      ].join('\n'),
      'docs/notes.txt': 'notes\n',
      'docs/pictures/shown.png': '',
    };
    for (const [path, text] of Object.entries(tree)) {
      await mkdir(dirname(join(root, path)), { recursive: true });
      await writeFile(join(root, path), text);
    }
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('names the file, the line and the link of each broken one, and nothing else', async () => {
    assert.deepEqual((await checkLinks(root)).map(describeBrokenLink), [
      'README.md:6: docs/missing.md: no such file or folder (docs/missing.md)',
      'README.md:6: #no-such-heading: no heading or anchor "no-such-heading" in README.md',
      'README.md:7: docs/pictures/absent.png: no such file or folder (docs/pictures/absent.png)',
      'docs/guide.md:15: #repeated-2: no heading or anchor "repeated-2" in docs/guide.md',
      'docs/guide.md:16: ../README.md#Planted: no heading or anchor "Planted" in README.md',
      'docs/guide.md:17: notes.txt#top: an anchor into docs/notes.txt, which is not a Markdown file',
      'docs/guide.md:17: ../../etc/passwd: outside the repository',
    ]);
  });
});
