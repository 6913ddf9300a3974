// The JSON API (README, "heapx serve"): every call returns the decoded
// answer or throws an ApiError with the server's message.
import { inspectedSnapshot } from './dom.js';

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function decode(res) {
  let body;
  try {
    body = await res.json();
  } catch {
    throw new ApiError(res.status, `the server answered ${res.status} without JSON`);
  }
  if (!res.ok) throw new ApiError(res.status, body && body.error ? body.error : `HTTP ${res.status}`);
  return body;
}

// ask fetches url. The server answers 503 with Retry-After when it is
// busy with too many heavy requests of one kind (paths, the dominator
// tree, queries, SQL): the request is asked again when the server says,
// a few times, before the error is shown.
async function ask(url, init) {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(url, init);
    const wait = Number(res.headers.get('Retry-After'));
    if (res.status !== 503 || attempt === 3 || !(wait > 0 && wait <= 30)) return decode(res);
    await new Promise((resolve) => setTimeout(resolve, wait * 1000));
  }
}

// get fetches /api/v1/path with the query parameters params (undefined
// and empty values left out). A question about an object is about the
// snapshot the inspector shows (a baseline's deleted object), unless
// params say which.
export async function get(path, params = {}) {
  const q = new URLSearchParams();
  if (path.startsWith('objects/') && !('snapshot' in params) && inspectedSnapshot() > 0) q.set('snapshot', String(inspectedSnapshot()));
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  }
  const qs = q.toString();
  return ask('/api/v1/' + path + (qs ? '?' + qs : ''), { credentials: 'same-origin' });
}

// post sends body as JSON to /api/v1/path.
export async function post(path, body) {
  return ask('/api/v1/' + path, {
    method: 'POST', credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  });
}
