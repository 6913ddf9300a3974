// A tiny store, as in many apps: subscribers are called on every change.
export function createStore(state) {
  const subscribers = new Set();
  return {
    get: () => state,
    set(patch) { state = {...state, ...patch}; subscribers.forEach(fn => fn(state)); },
    subscribe(fn) { subscribers.add(fn); return () => subscribers.delete(fn); },
  };
}
