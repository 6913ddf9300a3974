#!/usr/bin/env node
'use strict';
const path = require('path');
const { EventEmitter } = require('events');
function Point(x, y) { this.x = x; this.y = y; }
Point.prototype.len = function () { return Math.hypot(this.x, this.y); };
const pts = [];
for (var i = 0; i < 5; i++) pts.push(new Point(i, i + 1));
console.log(pts.map(p => p.len().toFixed(2)).join(' '), path.basename(__filename));
const em = new EventEmitter();
const seen = [];
em.on('ev', function handler(v) { seen.push(v); });
em.emit('ev', 1); em.emit('ev', { two: 2 });
console.log(JSON.stringify(seen), this === module.exports, typeof arguments);
let cache = Object.create(null); cache['a b'] = { v: 1 }; cache[`k${1}`] = 2;
console.log(Object.keys(cache));
var self = { get me() { return this; }, set val(v) { this._v = v; } };
self.val = 3; console.log(self.me === self, self._v);
with1();
function with1() { return; }
module.exports = { pts };
if (require.main === module) console.log('main');
try { null.x; } catch ({ message }) { console.log(message.includes('null')); }
process.stdout.write('no newline at end')
