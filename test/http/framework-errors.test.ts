import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { before, describe, it } from 'node:test';
import { logChunks } from '../helpers/logs.js';
import { rawHttp } from '../helpers/raw-http.js';
import { makePdf } from '../helpers/pdf.js';
import { startServer } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';

// Issue 20, items 2, 3, 4 and 10, and the request-level limits (docs/security.md: Limits).
// Contract (DESIGN, Errors): "Every error, including Fastify's own and those made before routing (unknown route, bad
// URL encoding, malformed or oversized request, header limits, missing multipart boundary), has this
// shape, and no message repeats the request URL or any token or key. A route that does not exist is
// 404 with or without a token."

/** A value that must never come back in an answer or reach a log line. */
const SECRET = 'tok_SECRET0000would-be-a-session-token';

function assertContractError(response: { status: number; body: unknown; text: string }, status: number) {
  assert.equal(response.status, status, response.text);
  const body = response.body as Record<string, unknown>;
  assert.deepEqual(Object.keys(body ?? {}).sort(), ['code', 'error', 'message', 'statusCode'], response.text);
  assert.equal(body.statusCode, status);
  assert.equal(typeof body.error, 'string');
  assert.equal(typeof body.message, 'string');
  assert.match(String(body.code), /^[A-Z_]+$/);
}

function http(head: string, body = ''): string {
  const length = body === '' ? '' : `Content-Length: ${Buffer.byteLength(body)}\r\n`;
  return `${head}\r\nHost: localhost\r\n${length}Connection: close\r\n\r\n${body}`;
}

function json(method: string, path: string, body: string, extra = ''): string {
  return http(`${method} ${path} HTTP/1.1\r\nContent-Type: application/json${extra}`, body);
}

/** A JSON value nested `depth` levels deep (objects in objects). */
function nested(depth: number): string {
  return '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1);
}

/** Requests refused before or around routing, each carrying the secret where it could be echoed. */
const BEFORE_ROUTING: { name: string; status: number; request: string }[] = [
  {
    name: 'a malformed URL encoding (FST_ERR_BAD_URL quotes the URL)',
    status: 400,
    request: http(`GET /api/v1/files/loadFile/hash/%E0%A4%A?token=${SECRET} HTTP/1.1`),
  },
  {
    name: 'a path parameter over the router’s limit',
    status: 414,
    request: http(`GET /api/v1/users/${'u'.repeat(600)}?token=${SECRET} HTTP/1.1`),
  },
  {
    name: 'a Content-Length that is not a number',
    status: 400,
    request: http(`POST /api/v1/login?token=${SECRET} HTTP/1.1\r\nContent-Length: ${SECRET}`),
  },
  {
    name: 'both Content-Length and Transfer-Encoding',
    status: 400,
    request: http(
      `POST /api/v1/login?token=${SECRET} HTTP/1.1\r\nContent-Length: 2\r\nTransfer-Encoding: chunked`,
      '0\r\n\r\n',
    ),
  },
  {
    name: 'a 64 KiB query string',
    status: 431,
    request: http(`GET /api/v1/login?token=${SECRET}&q=${'q'.repeat(64 * 1024)} HTTP/1.1`),
  },
  {
    name: 'a header over the 16 KiB limit',
    status: 431,
    request: http(`GET /api/v1/login HTTP/1.1\r\nAuthorization: Bearer ${SECRET}${'h'.repeat(17 * 1024)}`),
  },
  { name: 'an unknown method', status: 400, request: http(`BREW /api/v1/login?token=${SECRET} HTTP/1.1`) },
  { name: 'something that is not HTTP', status: 400, request: `${SECRET}\r\n\r\n` },
  {
    name: 'an unknown route',
    status: 404,
    request: http(`GET /api/v1/no-such-thing?token=${SECRET} HTTP/1.1`),
  },
  {
    name: 'an unknown method on a route',
    status: 404,
    request: http(`PATCH /api/v1/login?token=${SECRET} HTTP/1.1`),
  },
  {
    name: 'an unsupported media type',
    status: 415,
    request: http(`POST /api/v1/login HTTP/1.1\r\nContent-Type: text/xml`, `<password>${SECRET}</password>`),
  },
  { name: 'malformed JSON', status: 400, request: json('POST', '/api/v1/login', `{"password":"${SECRET}"`) },
  {
    name: 'JSON with __proto__',
    status: 400,
    request: json('POST', '/api/v1/login', `{"__proto__":{"x":1},"password":"${SECRET}"}`),
  },
  { name: 'JSON nested 65 levels', status: 400, request: json('POST', '/api/v1/login', nested(65)) },
  {
    name: 'a body over the 10 MiB limit',
    status: 413,
    request: `POST /api/v1/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${11 * 1024 * 1024}\r\nConnection: close\r\n\r\n{"password":"${SECRET}"`,
  },
];

describe('errors made before and around routing answer the Contract’s JSON error', () => {
  const { stream, chunks: logLines } = logChunks();
  // trace: every line Fastify and Node's parser errors can write.
  const server = useServer({ logger: { level: 'trace', stream } });
  let token: string;
  before(async () => (token = await server.adminToken()));

  it('every error made before routing has the Contract’s shape {statusCode, error, message, code}', async () => {
    for (const { name, status, request } of BEFORE_ROUTING) {
      const response = await rawHttp(server.url, request);
      await it(name, () => assertContractError(response, status));
    }
  });

  it('no error answer repeats the URL or a token (GET /files/loadFile/hash/%E0%A4%A?token=T)', async () => {
    for (const { name, request } of BEFORE_ROUTING) {
      const response = await rawHttp(server.url, request);
      assert.ok(!response.text.includes(SECRET), `${name}: ${response.text}`);
      assert.ok(!response.text.includes('/api/v1/'), `${name}: ${response.text}`);
      assert.ok(!response.text.includes('FST_'), `${name}: ${response.text}`);
    }
  });

  it('no log line holds a token, not even as the raw bytes of a request Node’s parser refused', async () => {
    for (const { request } of BEFORE_ROUTING) await rawHttp(server.url, request);
    await rawHttp(server.url, http(`GET /s/garbage${SECRET} HTTP/1.1`));
    await rawHttp(server.url, http(`GET /s/shr_${SECRET} HTTP/1.1`));
    assert.ok(logLines.length > 0);
    for (const line of logLines) {
      assert.ok(!line.includes(SECRET), line);
      // pino writes a Buffer as {"type":"Buffer","data":[…]}: the raw packet of a refused request.
      const bytes = [...line.matchAll(/"data":\[([\d,]+)\]/g)].map((m) =>
        Buffer.from(m[1]!.split(',').map(Number)).toString('latin1'),
      );
      for (const decoded of bytes) assert.ok(!decoded.includes(SECRET), `raw bytes logged: ${decoded}`);
    }
  });

  it('a route that does not exist is 404 for everyone, with or without a token', async () => {
    const paths = ['/api/v1/no-such-thing', '/api/v1/users/x/y/z', '/no-such-thing', '/api/v2/login'];
    for (const path of paths) {
      for (const query of ['', `?token=${token}`, '?token=not-a-token', '?token=shr_not-a-link']) {
        const response = await rawHttp(server.url, http(`GET ${path}${query} HTTP/1.1`));
        assertContractError(response, 404);
        assert.equal(response.body.code, 'NOT_FOUND');
      }
    }
    const wrongMethod = await rawHttp(server.url, http(`DELETE /api/v1/ping HTTP/1.1`));
    assertContractError(wrongMethod, 404);
  });

  it('the signer page’s unknown addresses (/s/, /s/garbage) answer an HTML page with a human message (404), not JSON', async () => {
    for (const path of ['/s/', '/s', `/s/garbage-${SECRET}`, '/s/shr_x/more']) {
      const response = await rawHttp(server.url, http(`GET ${path} HTTP/1.1`));
      assert.equal(response.status, 404, path);
      assert.match(response.headers['content-type'] ?? '', /^text\/html/, path);
      assert.match(response.text, /This link does not work/);
      assert.ok(!response.text.includes(SECRET), 'the address is not repeated');
      assert.equal(response.headers['referrer-policy'], 'no-referrer');
      assert.match(response.text, /<link rel="icon" href="\/favicon\.svg"/);
    }
  });

  it('the service’s own address answers a page for people, not JSON, and the icon is served (issue 25)', async () => {
    const home = await rawHttp(server.url, http('GET / HTTP/1.1'));
    assert.equal(home.status, 200);
    assert.match(home.headers['content-type'] ?? '', /^text\/html/);
    assert.match(home.text, /This is a service for signing documents/);
    assert.match(home.text, /href="\/verify"/);
    assert.match(home.headers['content-security-policy'] ?? '', /default-src 'self'/);
    for (const path of ['/favicon.svg', '/favicon.ico']) {
      const icon = await rawHttp(server.url, http(`GET ${path} HTTP/1.1`));
      assert.equal(icon.status, 200, path);
      assert.equal(icon.headers['content-type'], 'image/svg+xml');
      assert.match(icon.text, /^<svg /);
    }
  });
});

describe('multipart/form-data without a boundary or with a malformed body is a 4xx, never a 500', () => {
  const server = useServer();
  let token: string;
  let routes: { method: string; path: string; multipart: boolean }[];
  before(async () => {
    token = await server.adminToken();
    // Every route of the OpenAPI document that takes a body; the multipart ones say so in their description.
    const spec = (await server.api('GET', '/openapi.json')).body as {
      paths: Record<string, Record<string, { description?: string }>>;
    };
    routes = Object.entries(spec.paths).flatMap(([path, operations]) =>
      Object.entries(operations)
        .filter(([method]) => ['post', 'put', 'patch', 'delete'].includes(method))
        .map(([method, operation]) => ({
          method: method.toUpperCase(),
          path: path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000'),
          multipart: /multipart/i.test(operation.description ?? ''),
        })),
    );
  });

  const send = (method: string, path: string, contentType: string, body: string) =>
    rawHttp(
      server.url,
      http(`${method} ${path}?token=${token} HTTP/1.1\r\nContent-Type: ${contentType}`, body),
    );

  it('the multipart routes are found from the route table (uploads, signature, finish/file, share uploads, certificate)', () => {
    const multipart = routes.filter((r) => r.multipart).map((r) => `${r.method} ${r.path}`);
    for (const expected of [
      'POST /api/v1/files/saveFile',
      'POST /api/v1/files/signature',
      'PUT /api/v1/documents/sign/finish/file',
      'POST /api/v1/share/upload/file',
      'POST /api/v1/users/00000000-0000-4000-8000-000000000000/certificate',
    ]) {
      assert.ok(multipart.includes(expected), `${expected} in ${multipart.join(', ')}`);
    }
  });

  it('Content-Type multipart/form-data without a boundary is 400 VALIDATION_ERROR on every multipart route', async () => {
    for (const { method, path } of routes.filter((r) => r.multipart)) {
      for (const contentType of [
        'multipart/form-data',
        'multipart/form-data; boundary=',
        `multipart/form-data; boundary=${'b'.repeat(71)}`,
      ]) {
        const response = await send(method, path, contentType, 'ab');
        await it(`${method} ${path} (${contentType.slice(0, 40)})`, () => {
          assertContractError(response, 400);
          assert.equal(response.body.code, 'VALIDATION_ERROR');
          assert.match(response.body.message, /boundary/);
        });
      }
    }
  });

  it('a truncated or malformed multipart body is 4xx on every multipart route, and is answered', async () => {
    const boundary = 'b0undary';
    const pdf = makePdf().toString('latin1');
    const truncated = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\nContent-Type: application/pdf\r\n\r\n${pdf.slice(0, 100)}`;
    const garbage = 'no boundary line anywhere in this body';
    const badHeader = `--${boundary}\r\nthis is not a part header\r\n\r\nx\r\n--${boundary}--\r\n`;
    for (const { method, path } of routes.filter((r) => r.multipart)) {
      for (const body of [truncated, garbage, badHeader]) {
        const response = await send(method, path, `multipart/form-data; boundary=${boundary}`, body);
        assert.ok(response.status >= 400 && response.status < 500, `${method} ${path}: ${response.text}`);
        assertContractError(response, response.status);
      }
    }
  });
});

describe('no route answers 5xx to multipart/form-data without a boundary', () => {
  it('every route of the OpenAPI document that takes a body answers below 500, errors in the Contract’s shape', async () => {
    const server = await startServer();
    try {
      const token = await server.adminToken();
      const spec = (await server.api('GET', '/openapi.json')).body as { paths: Record<string, object> };
      let sent = 0;
      for (const [path, operations] of Object.entries(spec.paths)) {
        for (const method of Object.keys(operations)) {
          if (!['post', 'put', 'patch', 'delete'].includes(method)) continue;
          const target = path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000');
          const response = await rawHttp(
            server.url,
            http(
              `${method.toUpperCase()} ${target}?token=${token} HTTP/1.1\r\nContent-Type: multipart/form-data`,
              'ab',
            ),
          );
          sent++;
          assert.ok(response.status < 500, `${method} ${path}: ${response.text}`);
          if (response.status >= 400) assertContractError(response, response.status);
        }
      }
      assert.ok(sent > 50, `${sent} routes`);
    } finally {
      await server.close();
    }
  });
});

describe('request-level limits (docs/security.md: Limits) answer the Contract’s 4xx', () => {
  const server = useServer();
  let token: string;
  before(async () => (token = await server.adminToken()));

  const upload = (fields: Record<string, string>, files = 1) => {
    const boundary = 'l1mits';
    let body = '';
    for (const [name, value] of Object.entries(fields)) {
      body += `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
    }
    for (let i = 0; i < files; i++) {
      body += `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a${i}.pdf"\r\nContent-Type: application/pdf\r\n\r\n${makePdf().toString('latin1')}\r\n`;
    }
    body += `--${boundary}--\r\n`;
    return rawHttp(
      server.url,
      http(
        `POST /api/v1/files/saveFile?token=${token} HTTP/1.1\r\nContent-Type: multipart/form-data; boundary=${boundary}`,
        body,
      ),
    );
  };

  it('a JSON body nested deeper than 64 levels is refused with 400 before it is parsed; 64 levels are not', async () => {
    for (const depth of [65, 1000, 1_000_000]) {
      const response = await rawHttp(
        server.url,
        json('PUT', `/api/v1/configuration?token=${token}`, `{"configuration":${nested(depth - 1)}}`),
      );
      assertContractError(response, 400);
      assert.equal(response.body.message, 'Request body nests more than 64 levels');
    }
    const deepest = await rawHttp(server.url, json('POST', '/api/v1/users/search', nested(64)));
    assert.notEqual(deepest.body?.message, 'Request body nests more than 64 levels');
    // Brackets inside strings are text, not nesting, escaped quotes and backslashes included.
    const inString = await server.api('POST', '/login', {
      body: { name: `"${'['.repeat(100)}`, password: `\\${'{'.repeat(100)}` },
    });
    assertContractError(inString, 401);
  });

  it('a JSON body over 10 MiB is 413 LIMIT_EXCEEDED', async () => {
    const response = await server.api('POST', '/login', {
      rawBody: `{"name":"${'n'.repeat(10 * 1024 * 1024)}"}`,
      headers: { 'content-type': 'application/json' },
    });
    assertContractError(response, 413);
    assert.equal(response.body.code, 'LIMIT_EXCEEDED');
  });

  it('multipart: more than 20 fields, 25 parts or one file, or a field over 1 MiB, is a Contract 4xx, never cut silently', async () => {
    const many = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`f${i}`, 'x']));
    const tooManyFields = await upload(many(21));
    assertContractError(tooManyFields, 413);
    assert.equal(tooManyFields.body.message, 'Too many fields in the multipart request');

    const tooManyParts = await upload(many(20), 6);
    assertContractError(tooManyParts, tooManyParts.status);
    assert.ok([400, 413].includes(tooManyParts.status), tooManyParts.text);

    const twoFiles = await upload({}, 2);
    assertContractError(twoFiles, twoFiles.status);
    assert.ok([400, 413].includes(twoFiles.status), twoFiles.text);

    const bigField = await upload({ fileName: 'x'.repeat(1024 * 1024 + 1) });
    assertContractError(bigField, 413);
    assert.equal(bigField.body.code, 'LIMIT_EXCEEDED');

    const fine = await upload({ fileName: 'x'.repeat(1000) });
    assert.equal(fine.status, 200, fine.text);
  });
});

describe('a request that arrives while the server is closing is answered, not dropped', () => {
  it('is refused with the Contract’s 503 UNAVAILABLE (Fastify’s own 503 has no code)', async () => {
    const server = await startServer();
    const { port } = new URL(server.url);
    const socket = connect(Number(port), '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    const ended = new Promise((resolve) => socket.on('close', resolve));
    const body = '{"name":"someone","password":"wrong-password"}';
    // A first request in flight keeps the connection open while the server closes…
    const received = new Promise((resolve) => server.app.server.server.once('request', resolve));
    socket.write(
      `POST /api/v1/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
    );
    await received;
    const closing = server.close();
    while (server.app.server.server.listening) await new Promise((resolve) => setImmediate(resolve));
    // …and a second one follows it on that connection.
    socket.write(`${body.slice(5)}GET /api/v1/ping HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    await closing;
    await ended;
    const answers = Buffer.concat(chunks)
      .toString()
      .split(/(?=HTTP\/1\.1 )/);
    assert.equal(answers.length, 2, answers.join('\n---\n'));
    const second = answers[1]!;
    assert.match(second, /^HTTP\/1\.1 503/);
    const error = JSON.parse(second.slice(second.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
    assertContractError({ status: 503, body: error, text: second }, 503);
    assert.equal(error.code, 'UNAVAILABLE');
  });
});
