// The Benchmarks Game's binary-trees: allocation-heavy, short-lived trees.
'use strict';
function TreeNode(left, right) { this.left = left; this.right = right; }
function itemCheck(node) { return node.left === null ? 1 : 1 + itemCheck(node.left) + itemCheck(node.right); }
function bottomUpTree(depth) { return depth > 0 ? new TreeNode(bottomUpTree(depth - 1), bottomUpTree(depth - 1)) : new TreeNode(null, null); }
const maxDepth = Math.max(6, Number(process.argv[2] || 14));
const stretch = bottomUpTree(maxDepth + 1);
console.log(`stretch tree of depth ${maxDepth + 1}\t check: ${itemCheck(stretch)}`);
const longLived = bottomUpTree(maxDepth);
for (let depth = 4; depth <= maxDepth; depth += 2) {
  const iterations = 1 << (maxDepth - depth + 4);
  let check = 0;
  for (let i = 0; i < iterations; i++) check += itemCheck(bottomUpTree(depth));
  console.log(`${iterations}\t trees of depth ${depth}\t check: ${check}`);
}
console.log(`long lived tree of depth ${maxDepth}\t check: ${itemCheck(longLived)}`);
