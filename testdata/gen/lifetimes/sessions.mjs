// A leak MemInsight's rule must find in an ES module that ends on its
// own: each round of requests keeps its Session objects (line 11) in a
// Map nothing reads again, then awaits a timer (an idle point). The stale
// Sessions grow 100 a round at the five idle points between rounds; the
// program's exit is one more idle point, with the same count as the last
// round's, and is not between two handlers. The per-request results
// (line 13) die at once.
class Session { constructor(id) { this.id = id; this.buf = new Array(16).fill(id); } }
const sessions = new Map();
function handle(i) {
  const s = new Session(i);
  sessions.set(i, s);
  const tmp = { i, sq: i * i };
  return tmp.sq;
}
let total = 0;
for (let round = 0; round < 5; round++) {
  for (let i = 0; i < 100; i++) total += handle(round * 100 + i);
  await new Promise((r) => setTimeout(r, 1));
}
console.log(JSON.stringify({ total, sessions: sessions.size }));
