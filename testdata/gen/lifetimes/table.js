// Case study 3 (MemInsight §6, annex's `mtable`): a function allocates a
// scratch table on every call, though only one is ever alive: one
// reused table would do (churn, one alive at a time, non-escaping).
//
// Expected (cmd/heapx/casestudies_test.go): the tables (line 10) number
// 200, at most one alive at a time, every one dead before its call
// returned.
'use strict';
function score(row) {
  const table = { sum: 0, max: 0 };
  for (const v of row) {
    table.sum += v;
    if (v > table.max) table.max = v;
  }
  return table.sum * 2 + table.max;
}

const rows = [];
for (let i = 0; i < 200; i++) rows.push([i, i + 1, i + 2]);
let total = 0;
for (const row of rows) total += score(row);
module.exports = total;
