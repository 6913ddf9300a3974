// What heapx trace's idle points cost (docs/benchmarks.md, "heapx trace on
// a server"): the runtime arms one unref'd setImmediate per event-loop
// iteration that recorded events. This runs 200,000 loop iterations, each
// a setImmediate of its own, with that arming ("arm") or without ("none"),
// and prints the process's CPU milliseconds.
//
//   node idle-cost.js none; node idle-cost.js arm
const N = 200000, arm = process.argv[2] === 'arm';
let armed = false, idles = 0;
function idle() { armed = false; idles++; }
let n = 0;
function step() {
  if (arm && !armed) { armed = true; setImmediate(idle).unref(); }
  if (++n < N) setImmediate(step); else { const t = process.cpuUsage(); console.log(arm ? 'arm' : 'none', idles, ((t.user + t.system) / 1e3).toFixed(0), 'ms cpu'); }
}
step();
