// Case study 2 (MemInsight §1 and §6, "annex"): the computer's move
// builds a minimax tree, and the program keeps the last tree until the
// next move replaces it, so at each move the old tree, stale, lives on
// beside the new one (drag: peak staleness).
//
// Expected (cmd/heapx/casestudies_test.go): the tree nodes (line 14)
// number 3 x 364 (a tree of depth 5, branching 3), with a stale peak of
// 728 (two trees) and 364 alive at the end; the same for their children
// arrays (line 14, the `[]`).
'use strict';
let lastSearch = null; // the drag: kept "for undo", never read again
const board = [0, 0, 0, 0, 0, 0, 0, 0, 0];
function expand(depth, player) {
  const node = { score: 0, children: [] };
  if (depth === 0) {
    node.score = (board.length * player + depth) % 5;
    return node;
  }
  for (let i = 0; i < 3; i++) node.children.push(expand(depth - 1, -player));
  return node;
}

function minimax(node, player) {
  const kids = node.children;
  if (kids.length === 0) return node.score;
  let best = player > 0 ? -Infinity : Infinity;
  for (const kid of kids) {
    const v = minimax(kid, -player);
    best = player > 0 ? Math.max(best, v) : Math.min(best, v);
  }
  return best;
}

function computerMove(move) {
  const tree = expand(5, 1);
  const best = minimax(tree, 1);
  lastSearch = tree;
  board[move] = best;
}

let move = 0;
function turn() {
  computerMove(move);
  move++;
  if (move < 3) setImmediate(turn);
}
setImmediate(turn);
