import { fileURLToPath } from 'node:url';
import type { AutocannonJob, LoadRequest } from './autocannon.js';
import { spawnPlaced, type Placement } from './processes.js';

export interface LoadOptions {
  root: string;
  placement: Placement;
  /** The server's origin, http://127.0.0.1:port. */
  origin: string;
  /**
   * One request, or several (one per token or document) that the connections go through from
   * different offsets; each may carry the exact answer it must get.
   */
  requests: LoadRequest[];
  /** A text every answer's body must contain (others count as mismatches). */
  expect?: string;
  connections: number;
  seconds: number;
  method?: 'GET' | 'POST';
}

/** The figures of one autocannon run that the report uses. */
export interface LoadResult {
  /** Mean of the per-second request counts. */
  requestsPerSecond: number;
  totalRequests: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  /** Connection errors, resets and timeouts (autocannon counts timeouts among errors). */
  errors: number;
  /** Answers whose body lacked the expected text or was not the request's expected answer. */
  mismatches: number;
  timeouts: number;
  statusCodes: Record<string, number>;
}

interface AutocannonJson {
  errors: number;
  mismatches: number;
  timeouts: number;
  non2xx: number;
  statusCodeStats?: Record<string, { count: number }>;
  latency: { p50: number; p99: number };
  requests: { average: number; total: number };
}

/**
 * Runs autocannon (autocannon.ts) in its own process, pinned to the load generator's CPU, and reads
 * its JSON result. A separate process rather than the API in this one, so the orchestrator's own
 * work never shares a core or an event loop with the load generator.
 */
export function runLoad(options: LoadOptions): Promise<LoadResult> {
  const job: AutocannonJob = {
    origin: options.origin,
    requests: options.requests,
    connections: options.connections,
    seconds: options.seconds,
    method: options.method ?? 'GET',
    ...(options.expect !== undefined ? { expect: options.expect } : {}),
  };
  const script = fileURLToPath(new URL('./autocannon.ts', import.meta.url));
  const args = ['--import', 'tsx', script];

  return new Promise((resolve, reject) => {
    const child = spawnPlaced(options.placement, process.execPath, args, {
      cwd: options.root,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.stdin?.end(JSON.stringify(job));
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    // autocannon stops itself after --duration; this only catches a hung load generator.
    const watchdog = setTimeout(() => child.kill('SIGKILL'), (options.seconds + 60) * 1000);
    child.once('error', (error) => {
      clearTimeout(watchdog);
      reject(new Error(`autocannon could not be started: ${error.message}`));
    });
    child.once('exit', (code, signal) => {
      clearTimeout(watchdog);
      const line = stdout.trim().split('\n').at(-1);
      if (code !== 0 || !line) {
        reject(new Error(`autocannon exited with ${code ?? signal}: ${stderr.trim() || stdout.trim()}`));
        return;
      }
      try {
        resolve(toResult(JSON.parse(line) as AutocannonJson));
      } catch (error) {
        reject(new Error(`autocannon printed no JSON result (${String(error)}): ${line.slice(0, 300)}`));
      }
    });
  });
}

function toResult(json: AutocannonJson): LoadResult {
  return {
    requestsPerSecond: json.requests.average,
    totalRequests: json.requests.total,
    p50Ms: json.latency.p50,
    p99Ms: json.latency.p99,
    non2xx: json.non2xx,
    errors: json.errors,
    mismatches: json.mismatches,
    timeouts: json.timeouts,
    statusCodes: Object.fromEntries(
      Object.entries(json.statusCodeStats ?? {}).map(([status, stats]) => [status, stats.count]),
    ),
  };
}
