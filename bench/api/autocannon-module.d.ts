/** The part of autocannon's API that bench/api/autocannon.ts uses (the package ships no types). */
declare module 'autocannon' {
  interface Request {
    method?: string;
    path?: string;
    body?: string;
    headers?: Record<string, string>;
    /** Called with each answer to this request. */
    onResponse?: (status: number, body: string) => void;
  }
  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    requests?: Request[];
    setupClient?: (client: { setRequests(requests: Request[]): void }) => void;
    verifyBody?: (body: string) => boolean;
  }
  /** Resolves with the result object that the CLI prints with --json. */
  // eslint-disable-next-line no-restricted-syntax -- the package's own export is a default one
  export default function autocannon(
    options: Options,
  ): Promise<Record<string, unknown> & { mismatches: number }>;
}
