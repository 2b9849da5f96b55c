import { serveWorkerRequests } from '../base/worker-pool.js';
import type { SearchRequest } from './anchor-search.js';
import { findAnchors } from './anchors.js';

// A worker of AnchorSearch: one search at a time, its answer or its error (by class name) sent back.
serveWorkerRequests((request: SearchRequest) => findAnchors(request));
