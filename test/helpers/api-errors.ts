import assert from 'node:assert/strict';
import type { ApiResponse } from './server.js';

/**
 * The Contract's error answer: the HTTP `status`, the error `code` and, when given, a message that
 * mentions `mentions`.
 */
export function assertError(response: ApiResponse, status: number, code: string, mentions?: string): void {
  assert.equal(response.status, status, response.text);
  assert.equal(response.body.code, code, response.text);
  if (mentions) assert.ok(response.body.message.includes(mentions), response.body.message);
}

/** 400 with the spec's validation text for the request body: `Request validation errors: BODY ERRORS: <text>`. */
export function assertBodyInvalid(response: ApiResponse, text: string): void {
  assert.equal(response.status, 400, response.text);
  assert.equal(response.body.message, `Request validation errors: BODY ERRORS: ${text}`);
}
