// A leak with plateaus and dips (issue 26): a job runs every millisecond
// for 400 rounds; every 8th round it keeps its result in a history that
// is trimmed by a third every 80 rounds (line 18: a leak that grows in
// steps and drops now and then), and it keeps the last 16 rounds' inputs
// in a bounded cache (line 21: fills up, then stays).
//
// Expected (cmd/heapx/traceservers_linux_test.go): line 18 is a leak,
// line 21 is not.
'use strict';
const history = [];
const recent = [];
let round = 0;
const timer = setInterval(() => {
  round++;
  const input = { round, values: [round, round * 2] };
  const result = { round, sum: input.values[0] + input.values[1] };
  if (round % 8 === 0) {
    history.push({ round, result });
    if (round % 80 === 0) history.splice(0, Math.floor(history.length / 3));
  }
  recent.push({ round, input });
  if (recent.length > 16) recent.shift();
  if (round === 400) { clearInterval(timer); console.log(JSON.stringify({ history: history.length, recent: recent.length })); }
}, 1);
