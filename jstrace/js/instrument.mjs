// heapx's JavaScript instrumenter: parses a script or module with acorn and
// splices calls of the trace runtime (runtime.mjs) into the original text.
// Nothing of the program is reprinted or removed: code is only inserted,
// never a newline, so every original token keeps its line and positions in
// the trace are the original file's (docs/trace.md). The script's prelude
// also carries where the insertions are (line, column, length), which
// transparent.mjs uses to give the program its original columns in stack
// traces and its original text from Function.prototype.toString.
import { parse } from './acorn.mjs';

const H = '__hx$';   // the script's runtime object
const C = '__hx$c';  // context variables: __hx$c0 is the script's, __hx$cN a function's at depth N

// instrument returns the instrumented source of one file. kind is 'cjs'
// or 'esm'; key names the script for transparent.mjs, unique in the
// process. It throws acorn's SyntaxError when the file does not parse.
export function instrument(source, file, kind, key = '') {
  const ast = parse(source, {
    ecmaVersion: 'latest', sourceType: kind === 'esm' ? 'module' : 'script',
    allowHashBang: true, allowReturnOutsideFunction: kind !== 'esm',
    allowAwaitOutsideFunction: kind === 'esm', locations: true, preserveParens: true,
  });
  const ins = new Instrumenter(source);
  ins.scopes(ast);
  ins.program(ast, file, kind);
  return ins.output(key);
}

// Scope is one function's (or the script's) bindings: MemInsight's
// context, where block-scoped names of all its blocks live too.
class Scope {
  constructor(node, parent) {
    this.node = node; this.parent = parent;
    this.depth = parent ? parent.depth + 1 : 0;
    this.names = new Set();
    this.captured = new Set();
    this.objectish = new Set(); // bindings that may hold an object; the others are never logged
    this.any = false; // contains a direct eval or with: nothing may be sealed
    this.temps = []; // variables of its property assignments (assignment)
  }
  resolve(name) {
    for (let s = this; s; s = s.parent) if (s.names.has(name)) return s;
    return null;
  }
}

const isFunction = (n) => n.type === 'FunctionDeclaration' || n.type === 'FunctionExpression' || n.type === 'ArrowFunctionExpression';

// children calls f on each child node of n, in source order.
function children(n, f) {
  for (const key in n) {
    if (key === 'type' || key === 'start' || key === 'end' || key === 'loc') continue;
    const v = n[key];
    if (Array.isArray(v)) { for (const c of v) if (c && typeof c.type === 'string') f(c, n, key); }
    else if (v && typeof v.type === 'string') f(v, n, key);
  }
}

// boundNames lists the identifiers a binding pattern declares.
function boundNames(p, out = []) {
  if (!p) return out;
  switch (p.type) {
    case 'Identifier': out.push(p.name); break;
    case 'ObjectPattern': for (const q of p.properties) boundNames(q.type === 'RestElement' ? q.argument : q.value, out); break;
    case 'ArrayPattern': for (const q of p.elements) boundNames(q, out); break;
    case 'RestElement': boundNames(p.argument, out); break;
    case 'AssignmentPattern': boundNames(p.left, out); break;
    case 'ParenthesizedExpression': boundNames(p.expression, out); break;
  }
  return out;
}

// isReference says whether Identifier n, child key of parent, names a
// variable (rather than a property, a label or an import's remote name).
function isReference(parent, key) {
  switch (parent.type) {
    case 'MemberExpression': return key !== 'property' || parent.computed;
    case 'Property': case 'PropertyDefinition': case 'MethodDefinition': return key !== 'key' || parent.computed;
    case 'LabeledStatement': case 'BreakStatement': case 'ContinueStatement': return false;
    case 'ImportSpecifier': return key === 'local';
    case 'ExportSpecifier': return key === 'local';
    case 'MetaProperty': return false;
  }
  return true;
}

// primitive says whether expression e always yields a primitive value, so
// a variable only ever given such values never holds an object.
function primitive(e) {
  switch (e.type) {
    case 'Literal': return !e.regex;
    case 'TemplateLiteral': case 'BinaryExpression': case 'UnaryExpression': case 'UpdateExpression': return true;
    case 'LogicalExpression': return primitive(e.left) && primitive(e.right);
    case 'ConditionalExpression': return primitive(e.consequent) && primitive(e.alternate);
    case 'ParenthesizedExpression': return primitive(e.expression);
    case 'SequenceExpression': return primitive(e.expressions[e.expressions.length - 1]);
    case 'AssignmentExpression': return e.operator !== '=' && !e.operator.endsWith('&=') && !e.operator.endsWith('|=') && e.operator !== '??=' ? true : primitive(e.right);
  }
  return false;
}

// ticks says whether evaluating n may record a program event (advance
// the clock): without one, every use of a variable in n happens at one
// time and one use record is enough.
function ticks(n) {
  switch (n.type) {
    case 'CallExpression': case 'NewExpression': case 'ObjectExpression': case 'ArrayExpression':
    case 'FunctionExpression': case 'ArrowFunctionExpression': case 'ClassExpression': case 'AwaitExpression':
    case 'YieldExpression': case 'TaggedTemplateExpression': case 'AssignmentExpression': case 'ImportExpression':
    case 'UpdateExpression':
      return true;
    case 'UnaryExpression': if (n.operator === 'delete') return true; break;
    case 'Literal': return !!n.regex;
  }
  let t = false;
  children(n, (c) => { t = t || ticks(c); });
  return t;
}

const statementList = (t) => t === 'Program' || t === 'BlockStatement' || t === 'StaticBlock' || t === 'SwitchCase';

class Instrumenter {
  constructor(source) {
    this.src = source;
    this.inserts = []; // [pos, group, seq, text]: at one place, groups in order (see open)
    this.seq = 0;
    this.positions = []; // flat line, column (1-based) per iid
    this.names = []; this.nameIds = new Map();
    this.fnInfo = []; // flat: fn iid, n+1 or 0 (any), name ids...
    this.scopeOf = new Map(); // function or Program node -> Scope
    this.spans = []; // [from, to] of each function and class (output)
    this.statementStarts = new Set(); // where expression statements of statement lists start (output)
    this.redirects = []; // flat: where V8 places a position in the instrumented text, where it would in the original
    this.outer = new Map(); // expression in parentheses -> [parent, key] of the parentheses
  }

  // open inserts text before the node-start position pos; close after an
  // expression's end, stmt after a statement's, flush after a top-level
  // statement's, bodyEnd before a function body's closing brace. At one
  // place they come in that order: closes, statements, flushes, opens,
  // then body ends (an empty body opens and ends at one place). Closes of one group come in reverse of the order they were
  // made (inner first), opens in that order (outer first).
  open(pos, text) { const i = [pos, 4, this.seq++, text]; this.inserts.push(i); return i; }
  close(pos, text) { this.inserts.push([pos, 0, -(this.seq++), text]); }
  stmt(pos, text) { this.inserts.push([pos, 1, -(this.seq++), text]); }
  flush(pos, text) { this.inserts.push([pos, 2, -(this.seq++), text]); }
  bodyEnd(pos, text) { const i = [pos, 5, -(this.seq++), text]; this.inserts.push(i); return i; }
  fid(n) { return n.iid ??= this.iid(n); }
  // wrap puts code around expression n, which becomes an argument of a
  // call: a sequence (a, b) keeps its own parentheses.
  wrap(n, before, after) {
    if (n.type === 'SequenceExpression') { before += '('; after = ')' + after; }
    this.open(n.start, before); this.close(n.end, after);
  }

  iid(n) {
    this.positions.push(n.loc.start.line, n.loc.start.column + 1);
    return this.positions.length / 2;
  }
  name(s) {
    let id = this.nameIds.get(s);
    if (id === undefined) { id = this.names.length; this.names.push(s); this.nameIds.set(s, id); }
    return id;
  }

  // scopes is the first pass: every function's bindings, then which of
  // them nested functions refer to (FREE_VARS).
  scopes(ast) {
    const declare = (scope, n, parent, key) => {
      switch (n.type) {
        case 'VariableDeclaration': for (const d of n.declarations) for (const x of boundNames(d.id)) scope.names.add(x); break;
        case 'FunctionDeclaration': if (n.id) scope.names.add(n.id.name); break;
        case 'ClassDeclaration': if (n.id) scope.names.add(n.id.name); break;
        case 'CatchClause': for (const x of boundNames(n.param)) scope.names.add(x); break;
        case 'ImportSpecifier': case 'ImportDefaultSpecifier': case 'ImportNamespaceSpecifier': scope.names.add(n.local.name); break;
      }
    };
    const walk = (n, scope, parent, key) => {
      if (isFunction(n) || n.type === 'Program') {
        const inner = new Scope(n, n.type === 'Program' ? null : scope);
        this.scopeOf.set(n, inner);
        if (n.type === 'FunctionDeclaration' && n.id) scope.names.add(n.id.name);
        if (n.type === 'FunctionExpression' && n.id) inner.names.add(n.id.name);
        for (const p of n.params || []) for (const x of boundNames(p)) inner.names.add(x);
        if (n.type !== 'ArrowFunctionExpression' && n.type !== 'Program') inner.names.add('arguments');
        children(n, (c, p, k) => { if (!(n.type === 'FunctionDeclaration' && k === 'id')) walk(c, inner, p, k); });
        return;
      }
      declare(scope, n, parent, key);
      children(n, (c, p, k) => walk(c, scope, p, k));
    };
    walk(ast, null, null, null);
    // References: a name resolved in an enclosing scope is captured there.
    const refs = (n, scope, parent, key) => {
      if (this.scopeOf.has(n)) scope = this.scopeOf.get(n);
      if (n.type === 'Identifier' && parent && isReference(parent, key) && !(key === 'id' && isFunction(parent))) {
        const s = scope.resolve(n.name);
        if (s && s !== scope) s.captured.add(n.name);
      }
      // Which bindings may hold an object (the others are not logged).
      const mark = (name) => { const s = scope.resolve(name); if (s) s.objectish.add(name); };
      if (n.type === 'VariableDeclarator' && n.init) {
        if (n.id.type !== 'Identifier' || !primitive(n.init)) for (const x of boundNames(n.id)) mark(x);
      } else if (n.type === 'AssignmentExpression') {
        if (n.left.type !== 'Identifier' || !primitive(n)) for (const x of boundNames(n.left)) mark(x);
      } else if (n.type === 'ForOfStatement' || n.type === 'ForInStatement') {
        const l = n.left.type === 'VariableDeclaration' ? n.left.declarations[0].id : n.left;
        if (n.type === 'ForOfStatement') for (const x of boundNames(l)) mark(x);
      }
      if (n.type === 'WithStatement' || (n.type === 'CallExpression' && n.callee.type === 'Identifier' && n.callee.name === 'eval')) {
        for (let s = scope; s; s = s.parent) s.any = true;
      }
      children(n, (c, p, k) => refs(c, scope, p, k));
    };
    refs(ast, null, null, null);
  }

  // ctx is the context variable holding name's binding as seen from scope.
  ctx(scope, name) {
    const s = scope.resolve(name);
    return s ? C + s.depth : '1';
  }

  // logged says whether writes of variable name (seen from scope) are
  // recorded: not for one only ever given primitives.
  logged(scope, name) {
    const s = scope.resolve(name);
    return !s || s.objectish.has(name);
  }

  freeVars(iid, scope) {
    if (scope.any) { this.fnInfo.push(iid, 0); return; }
    this.fnInfo.push(iid, scope.captured.size + 1);
    for (const x of scope.captured) this.fnInfo.push(this.name(x));
  }

  program(ast, file, kind) {
    const scope = this.scopeOf.get(ast);
    const top = this.iid(ast);
    this.freeVars(top, scope);
    // The prelude goes after the directives, or before the first statement
    // (not before comments: an HTML-like --> comment must start its line).
    let at = this.prologueEnd(ast.body, ast.start);
    if (at === ast.start) at = ast.body.length ? ast.body[0].start : this.src.length;
    this.registerAt = at;
    this.registerSep = this.separator(ast.body, at);
    const start = this.open(at, '');
    for (const st of ast.body) {
      this.visit(st, scope, ast, 'body');
      if (!st.directive && st.type !== 'ImportDeclaration') this.flush(st.end, `;${H}.t(${this.iid(st)});`);
    }
    start[3] = `${C}0=${H}.S(${top});` + this.declareTemps(scope) + this.hoisted(ast.body, scope);
    this.kind = kind; this.file = file; this.top = top;
  }

  // prologueEnd is where code may go in a body: after its directives
  // ("use strict" must stay first).
  prologueEnd(body, start) {
    let at = start;
    for (const st of body) { if (!st.directive) break; at = st.end; }
    return at;
  }

  // separator is what code inserted at a body's prologue end needs first:
  // a semicolon after a directive that has none ("use strict"\n stays a
  // directive only if a statement cannot continue it).
  separator(body, at) {
    return body.length && body[0].directive && this.src[at - 1] !== ';' ? ';' : '';
  }

  // hoisted creates the function declarations of a statement list where it
  // starts, as JavaScript does.
  hoisted(body, scope) {
    let s = '';
    for (const st of body) {
      const d = st.type === 'ExportNamedDeclaration' || st.type === 'ExportDefaultDeclaration' ? st.declaration : st;
      if (d && d.type === 'FunctionDeclaration' && d.id) {
        s += `${H}.F(${this.fid(d)},${C}${scope.depth},${this.name(d.id.name)},${d.id.name});`;
      }
    }
    return s;
  }

  // declareTemps declares the variables scope's property assignments use.
  declareTemps(scope) { return scope.temps.length ? `let ${scope.temps.join(',')};` : ''; }

  // output splices the insertions into the source. Each line that gets
  // one starts its first with a comment Node looks for before it prints
  // the source line of an uncaught exception (transparent.mjs prints the
  // original line instead), and the first insertion inside each function
  // and class names the script and itself (/*hx:KEY:N*/), so that
  // transparent.mjs can give Function.prototype.toString the original
  // text. The insertions' places go to transparent.mjs in __hx$map, a
  // function declared at the end (hoisted: the prelude can pass it before
  // its text, which depends on the prelude's own length, is known).
  output(key) {
    const head = `${this.registerSep}const ${H}=__heapx.s(${JSON.stringify(this.file)},${this.kind === 'esm' ? 1 : 0},[${this.positions}],${JSON.stringify(this.names)},[${this.fnInfo}]),` +
      `${H}m=__heapx.m(${JSON.stringify(key)},${JSON.stringify(this.file)},${this.src.length},__hx$map,${this.kind === 'esm'}),`;
    this.inserts.push([this.registerAt, 4, -Infinity, head]);
    this.inserts.sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]);
    const ins = this.inserts, src = this.src;
    // The first insertion strictly inside each function or class.
    const marked = new Uint8Array(ins.length);
    for (const [from, to] of this.spans) {
      let lo = 0, hi = ins.length;
      while (lo < hi) { const m = (lo + hi) >>> 1; if (ins[m][0] <= from) lo = m + 1; else hi = m; }
      if (lo < ins.length && ins[lo][0] < to) marked[lo] = 1;
    }
    const lineEnd = /\r\n?|[\n\u2028\u2029]/g;
    let line = 1, lineStart = 0, shift = 0, lastLine = 0, prevLine = 1;
    const parts = [], map = [];
    let pos = 0, lastChar = '';
    for (let j = 0; j < ins.length; j++) {
      const at = ins[j][0];
      // Advance the line count to the insertion's place.
      lineEnd.lastIndex = lineStart;
      for (let m; (m = lineEnd.exec(src)) !== null && m.index < at;) { line++; lineStart = m.index + m[0].length; lineEnd.lastIndex = lineStart; }
      if (line !== lastLine) { shift = 0; }
      let text = ins[j][3];
      if (text === '') continue;
      // A statement that now starts with a parenthesis would continue the
      // one before it if that has no semicolon (a(b)\n(c) is a call).
      if (text[0] === '(' && this.statementStarts.has(at)) text = ';' + text;
      // Code after a keyword with no space (return(x), yield[a]) must not
      // join it into one name.
      else if (/^[\w$]/.test(text) && at > 0 && /[\w$]/.test(at > pos ? src[at - 1] : lastChar)) text = ' ' + text;
      if (line !== lastLine) text = ' /*node-do-not-add-exception-line*/' + text;
      if (marked[j]) text = ` /*hx:${key}:${map.length / 3}*/` + text;
      map.push(line - prevLine, at - lineStart + shift, text.length);
      prevLine = line; lastLine = line; shift += text.length;
      parts.push(src.slice(pos, at), text); pos = at; lastChar = text[text.length - 1];
    }
    parts.push(src.slice(pos));
    return parts.join('') + `\n;${H}.x(${C}0);function __hx$map(){return[[${map}],[${this.redirected(ins, map)}]]}`;
  }

  // redirected lists, for each redirect, the line and instrumented column
  // (0-based) of its place and the original column (1-based) V8 would
  // give: flat line, column, column.
  redirected(ins, map) {
    const r = this.redirects, out = [];
    if (r.length === 0) return out;
    const order = [];
    for (let k = 0; k < r.length; k += 2) if (r[k] >= 0) order.push(k);
    order.sort((a, b) => r[a] - r[b]);
    const lineEnd = /\r\n?|[\n\u2028\u2029]/g, src = this.src;
    let line = 1, lineStart = 0, j = 0, shift = 0, shiftLine = 0, insLine = 1;
    for (const k of order) {
      const at = r[k], to = r[k + 1];
      lineEnd.lastIndex = lineStart;
      for (let m; (m = lineEnd.exec(src)) !== null && m.index < at;) { line++; lineStart = m.index + m[0].length; lineEnd.lastIndex = lineStart; }
      // Insertions before the place (at it too: they come before its character).
      for (; j < map.length / 3; j++) {
        const l = insLine + map[3 * j];
        if (l > line) break;
        if (l === line && map[3 * j + 1] - (shiftLine === line ? shift : 0) > at - lineStart) break;
        if (l !== shiftLine) { shift = 0; shiftLine = l; }
        shift += map[3 * j + 2]; insLine = l;
      }
      if (shiftLine !== line) { shift = 0; shiftLine = line; }
      const toCol = to - lineStart;
      if (toCol < 0) continue; // on another line
      out.push(line, at - lineStart + shift, toCol + 1);
    }
    return out;
  }

  // visit instruments n and its subtree; scope is the function (or
  // script) n is in.
  visit(n, scope, parent, key) {
    if (n.type === 'ExpressionStatement' && statementList(parent.type)) this.statementStarts.add(n.start);
    if (n.type === 'ExpressionStatement' || n.type === 'ReturnStatement' || (n.type === 'VariableDeclaration' && statementList(parent.type))) {
      // In a statement that records no event, one use of each variable's
      // object is enough: they all happen at one time.
      const saved = this.useSeen;
      this.useSeen = ticks(n) ? null : new Set();
      this.visitNode(n, scope, parent, key);
      this.useSeen = saved;
      return;
    }
    this.visitNode(n, scope, parent, key);
  }

  visitNode(n, scope, parent, key) {
    switch (n.type) {
      case 'FunctionDeclaration': case 'FunctionExpression': case 'ArrowFunctionExpression':
        return this.fn(n, scope, parent, key);
      case 'ClassDeclaration':
        this.spans.push([n.start, n.end]);
        this.classBody(n, scope);
        if (n.id) this.after(n, parent, `${H}.CL(${this.iid(n)},${C}${scope.depth},${this.name(n.id.name)},${n.id.name});`);
        return;
      case 'ClassExpression':
        this.spans.push([n.start, n.end]);
        this.wrap(n, `${H}.cl(${this.iid(n)},${C}${scope.depth},${this.inferred(n, parent, key)},`, ')');
        return this.classBody(n, scope);
      case 'ObjectExpression': {
        const mode = n.properties.length === 0 ? 0 : n.properties.every((p) => p.type === 'Property' && p.kind === 'init' && !p.computed && !(p.key.type === 'Identifier' && p.key.name === '__proto__' || p.key.value === '__proto__')) ? 1 : 2;
        this.wrap(n, `${H}.o(${this.iid(n)},${mode},`, ')');
        break;
      }
      case 'ArrayExpression':
        this.wrap(n, `${H}.a(${this.iid(n)},`, ')');
        break;
      case 'NewExpression':
        if (n.callee.type === 'Identifier' && n.callee.name === 'Function') this.open(n.start, `(${H}.ev(${this.iid(n)}),`), this.close(n.end, ')');
        else this.wrap(n, `${H}.n(${this.iid(n)},`, ')');
        children(n, (c, p, k) => this.visit(c, scope, p, k));
        return;
      case 'Literal':
        if (n.regex) this.wrap(n, `${H}.re(${this.iid(n)},`, ')');
        return;
      case 'VariableDeclaration': return this.declaration(n, scope, parent, key);
      case 'AssignmentExpression': return this.assignment(n, scope, parent, key);
      case 'UnaryExpression':
        if (n.operator === 'delete' && n.argument.type === 'MemberExpression' && this.simple(n.argument.object) && !n.argument.optional) {
          const m = n.argument, o = m.object.type === 'ThisExpression' ? 'this' : m.object.name;
          if (!m.computed) { this.wrap(n, `${H}.del(${this.iid(n)},${o},${this.keyOf(m)},`, ')'); return; }
          if (this.simple(m.property) || m.property.type === 'Literal') {
            this.wrap(n, `${H}.delk(${this.iid(n)},${o},${this.src.slice(m.property.start, m.property.end)},`, ')');
            return;
          }
        }
        break;
      case 'MemberExpression': this.member(n, scope, parent, key); break;
      case 'CallExpression':
        if (n.callee.type === 'Identifier' && n.callee.name === 'eval') {
          this.open(n.start, `(${H}.ev(${this.iid(n)}),`); this.close(n.end, ')');
        } else if (n.callee.type === 'Identifier') {
          this.wrap(n.callee, `${H}.c(${this.iid(n)},`, ')');
          // V8 places a call of a call at its parenthesis, of a name at the name.
          this.redirects.push(this.src.indexOf('(', n.callee.end), n.callee.start);
        }
        break;
      case 'ReturnStatement': {
        const flag = this.flag(scope);
        if (n.argument) this.wrap(n.argument, `${H}.rt(${this.iid(n)},${C}${scope.depth},`, flag ? `,${flag}=0)` : ')');
        else if (flag) this.open(n.start + 6, ` void(${flag}=0)`);
        break;
      }
      case 'ThrowStatement':
        // Where the program throws, for the source line an uncaught
        // exception prints (transparent.mjs).
        this.wrap(n.argument, `${H}m.th(${n.loc.start.line},${n.loc.start.column + 1},`, ')');
        break;
      case 'WithStatement':
        // Names in a with body are looked up in its object first (a Proxy
        // sees each lookup, and a call's this is the object): heapx's own
        // names must not be among them, so its body is not instrumented.
        this.visit(n.object, scope, n, 'object');
        return;
      case 'ParenthesizedExpression':
        // A function or class in parentheses gets its name from where the
        // parentheses are (const f = (() => {})).
        this.outer.set(n.expression, this.outer.get(n) ?? [parent, key]);
        break;
      case 'ClassBody':
        break;
      case 'AwaitExpression': case 'YieldExpression': {
        const i = this.iid(n), c = C + scope.depth;
        this.wrap(n, `${H}.U(${i},${c},`, ')');
        if (n.argument) this.wrap(n.argument, `${H}.W(${i},${c},`, ')');
        else if (n.type === 'YieldExpression') this.close(n.end, ` ${H}.W(${i},${c},undefined)`);
        break;
      }
      case 'ForOfStatement': case 'ForInStatement':
        return this.forEach(n, scope);
      case 'SpreadElement':
        this.wrap(n.argument, `${H}.u(${this.iid(n)},`, ')');
        break;
      case 'CatchClause':
        if (scope.node.async || scope.node.generator) this.open(n.body.start + 1, `${H}.K(${C}${scope.depth});`);
        break;
      case 'BlockStatement': case 'StaticBlock':
        if (!isFunction(parent)) {
          const h = this.hoisted(n.body, scope);
          if (h) this.open(n.start + 1, h);
        }
        break;
    }
    children(n, (c, p, k) => this.visit(c, scope, p, k));
  }

  // simple says whether evaluating expression e twice is the same as once:
  // a variable or this.
  simple(e) { return e.type === 'Identifier' || e.type === 'ThisExpression'; }

  // keyOf is a runtime expression of a member's key: a name id, or the
  // computed key itself (only for simple keys, which may be read twice).
  keyOf(m) {
    if (!m.computed) return this.name(m.property.type === 'PrivateIdentifier' ? '#' + m.property.name : m.property.name);
    return null;
  }

  // inferred is the name JavaScript gives an anonymous function or class
  // by where it is written (const f = () => {}), which wrapping it in a
  // call would lose, or -1.
  inferred(n, parent, key) {
    if (n.id) return -1;
    if (this.outer.has(n)) [parent, key] = this.outer.get(n);
    if (parent.type === 'ExportDefaultDeclaration') return this.name('default');
    if (parent.type === 'VariableDeclarator' && key === 'init' && parent.id.type === 'Identifier') return this.name(parent.id.name);
    if (parent.type === 'AssignmentExpression' && key === 'right' && parent.left.type === 'Identifier' && parent.operator !== '+=') return this.name(parent.left.name);
    if (parent.type === 'AssignmentPattern' && key === 'right' && parent.left.type === 'Identifier') return this.name(parent.left.name);
    if ((parent.type === 'Property' || parent.type === 'PropertyDefinition') && key === 'value' && !parent.computed) {
      const k = parent.key;
      return this.name(k.type === 'Identifier' ? k.name : k.type === 'PrivateIdentifier' ? '#' + k.name : String(k.value));
    }
    return -1;
  }

  fn(n, scope, parent, key) {
    const inner = this.scopeOf.get(n);
    const i = this.fid(n);
    this.freeVars(i, inner);
    const method = parent.type === 'MethodDefinition' || (parent.type === 'Property' && (parent.method || parent.kind !== 'init'));
    if (n.type !== 'FunctionDeclaration' && !method) {
      // Creation: a function value is wrapped, except where the
      // declaration after it reports it (const f = () => {}).
      // A computed key names the function at run time: left unwrapped, it
      // is first seen where it is used.
      const computed = parent.type === 'Property' && parent.computed && key === 'value';
      const declared = computed || parent.type === 'VariableDeclarator' && key === 'init' && parent.id.type === 'Identifier' && statementList(this.declParent?.type) && !this.inFor;
      if (!declared) {
        this.open(n.start, `${H}.f(${i},${C}${scope.depth},${this.inferred(n, parent, key)},`);
        this.close(n.end, ')');
      }
    }
    this.spans.push([method ? parent.start : n.start, n.end]);
    const c = C + inner.depth;
    let decls = '';
    for (const p of n.params) for (const x of boundNames(p)) decls += `${H}.dp(${i},${c},${this.name(x)},${x});`;
    // How a call ends: a flag cleared where it returns (completed), so
    // that no catch clause rethrows the program's exception (a rethrow
    // would move where V8 says it was thrown). A generator's finally also
    // runs when it is closed early (return()): it keeps a catch.
    const flag = this.flag(inner);
    const head = `const ${c}=${H}.E(${i},${C}${scope.depth});`;
    const tryOpen = (flag ? `let ${flag}=1;` : '') + `try{${decls}`;
    const exit = flag ? `}finally{if(${flag})${H}.T(${c});${H}.X(${i},${c})}` : `}catch(e){${H}.T(${c});throw e}finally{${H}.X(${i},${c})}`;
    // Parameters' defaults run in the enclosing context (the body's is not made yet).
    for (const p of n.params) this.visit(p, scope, n, 'params');
    if (n.body.type === 'BlockStatement') {
      const enter = this.open(this.prologueEnd(n.body.body, n.body.start + 1), '');
      this.bodyEnd(n.body.end - 1, (flag ? `;${flag}=0` : '') + exit);
      children(n.body, (ch, p, k) => this.visit(ch, inner, p, k));
      enter[3] = this.separator(n.body.body, enter[0]) + head + this.declareTemps(inner) + tryOpen + this.hoisted(n.body.body, inner);
    } else {
      const enter = this.open(n.body.start, '');
      this.close(n.body.end, `${flag ? `,${flag}=0` : ''})${exit}}`);
      this.visit(n.body, inner, n, 'body');
      enter[3] = `{${head}${this.declareTemps(inner)}${tryOpen}return ${H}.rt(${i},${c},`;
    }
  }

  // flag is the variable that says a call of scope's function completed
  // (fn), or '' for the top level and generators.
  flag(scope) { return scope.node.type === 'Program' || scope.node.generator ? '' : '__hx$t' + scope.depth; }

  classBody(n, scope) {
    if (n.superClass) this.visit(n.superClass, scope, n, 'superClass');
    for (const m of n.body.body) {
      if (m.computed) this.visit(m.key, scope, m, 'key');
      if (m.value) this.visit(m.value, scope, m, 'value');
      if (m.type === 'StaticBlock') this.visit(m, scope, n.body, 'body');
    }
  }

  // after puts code after statement n: in braces where n is the only
  // statement of an if or a loop.
  after(n, parent, code) {
    if (parent.type === 'ExportNamedDeclaration' || parent.type === 'ExportDefaultDeclaration') { this.stmt(parent.end, ';' + code); return; }
    if (!statementList(parent.type)) { this.open(n.start, '{'); this.stmt(n.end, ';' + code + '}'); return; }
    this.stmt(n.end, ';' + code);
  }

  declaration(n, scope, parent, key) {
    const inFor = (parent.type === 'ForStatement' && key === 'init') || ((parent.type === 'ForOfStatement' || parent.type === 'ForInStatement') && key === 'left');
    let code = '';
    const saved = [this.declParent, this.inFor];
    this.declParent = parent.type === 'ExportNamedDeclaration' ? { type: 'Program' } : parent; this.inFor = inFor;
    for (const d of n.declarations) {
      if (d.init) {
        if (d.id.type !== 'Identifier') this.wrap(d.init, `${H}.u(${this.iid(d)},`, ')');
        this.visit(d.init, scope, d, 'init');
        const fn = d.id.type === 'Identifier' && (d.init.type === 'ArrowFunctionExpression' || d.init.type === 'FunctionExpression') && !inFor;
        for (const x of boundNames(d.id)) {
          if (!this.logged(scope, x)) continue;
          code += fn ? `${H}.F(${this.fid(d.init)},${C}${scope.depth},${this.name(x)},${x});`
            : `${H}.d(${this.iid(d)},${this.ctx(scope, x)},${this.name(x)},${x});`;
        }
      }
      this.visit(d.id, scope, d, 'id');
    }
    [this.declParent, this.inFor] = saved;
    if (code && !inFor) this.after(n, parent, code);
  }

  // forEach logs the loop variable's value at the start of each pass and
  // the iterated object as used.
  forEach(n, scope) {
    const names = n.left.type === 'VariableDeclaration' ? n.left.declarations.flatMap((d) => boundNames(d.id)) : boundNames(n.left);
    this.visit(n.left, scope, n, 'left');
    this.wrap(n.right, `${H}.u(${this.iid(n.right)},`, ')');
    this.visit(n.right, scope, n, 'right');
    const i = this.iid(n);
    const code = names.map((x) => `${H}.${n.left.type === 'VariableDeclaration' ? 'd' : 'w'}(${i},${this.ctx(scope, x)},${this.name(x)},${x});`).join('');
    if (n.body.type === 'BlockStatement') this.open(n.body.start + 1, code);
    else { this.open(n.body.start, '{' + code); this.close(n.body.end, '}'); }
    this.visit(n.body, scope, n, 'body');
  }

  assignment(n, scope, parent, key) {
    const logical = n.operator === '=' || n.operator === '||=' || n.operator === '&&=' || n.operator === '??=';
    const left = n.left;
    if (left.type === 'Identifier') {
      if (logical && this.logged(scope, left.name)) this.wrap(n, `${H}.w(${this.iid(n)},${this.ctx(scope, left.name)},${this.name(left.name)},`, ')');
      this.visit(n.right, scope, n, 'right');
      return;
    }
    if (left.type === 'MemberExpression' && left.object.type !== 'Super' && logical) {
      const i = this.iid(n);
      const priv = left.property.type === 'PrivateIdentifier';
      if (this.simple(left.object) && (!left.computed || this.simple(left.property) || left.property.type === 'Literal')) {
        // o.f = v, o[k] = v: logged after the store, which stays inline.
        const o = left.object.type === 'ThisExpression' ? 'this' : left.object.name;
        const k = left.computed ? (left.property.type === 'Literal' ? this.src.slice(left.property.start, left.property.end) : left.property.name) : null;
        this.wrap(n, k === null ? `${H}.p(${i},${o},${this.keyOf(left)},` : `${H}.pk(${i},${o},${k},`, ')');
        this.visit(n.right, scope, n, 'right');
        return;
      }
      if (!priv && n.operator === '=') {
        // base[key] = v with a base or key that must be evaluated once:
        // they are kept in variables of the function (one per assignment,
        // so nested ones do not share them) and logged after the store,
        // which stays the program's own (its strictness, its stack):
        // (V=((B=base)[K=(key)] = v), __hx$.pk(iid, B, K, V)).
        const b = `__hx$b${i}`, v = `__hx$v${i}`, k = `__hx$k${i}`;
        scope.temps.push(b, v);
        this.open(n.start, `(${v}=((${b}=`);
        this.close(left.object.end, ')');
        this.close(n.end, left.computed ? `),${H}.pk(${i},${b},${k},${v}))` : `),${H}.p(${i},${b},${this.keyOf(left)},${v}))`);
        this.visit(left.object, scope, left, 'object');
        if (left.computed) {
          scope.temps.push(k);
          this.wrap(left.property, `${k}=(`, ')');
          this.visit(left.property, scope, left, 'property');
        }
        this.visit(n.right, scope, n, 'right');
        return;
      }
    }
    if (left.type === 'ObjectPattern' || left.type === 'ArrayPattern') {
      // Destructuring assignment: each assigned variable after it.
      const names = boundNames(left);
      const i = this.iid(n);
      this.wrap(n, `${H}.wa(`, names.map((x) => `,${i},${this.ctx(scope, x)},${this.name(x)},${x}`).join('') + ')');
      this.wrap(n.right, `${H}.u(${i},`, ')');
    }
    children(n, (c, p, k) => this.visit(c, scope, p, k));
  }

  // member logs a property read's object as used: o.f is __hx$.u(iid, o).f.
  member(n, scope, parent, key) {
    const o = n.object;
    if (o.type === 'Super') return;
    if (parent.type === 'NewExpression' && key === 'callee') return;
    if ((parent.type === 'AssignmentExpression' && key === 'left') || (parent.type === 'UnaryExpression' && parent.operator === 'delete')) {
      if (parent.type === 'UnaryExpression' || parent.operator === '=') return;
    }
    // Inside an optional chain only the chain's head is wrapped: a link
    // (a?.b).c must stay in the chain to short-circuit.
    if ((o.type === 'MemberExpression' || o.type === 'CallExpression') && this.inChain(o)) return;
    if (this.useSeen && (o.type === 'Identifier' || o.type === 'ThisExpression')) {
      const k = o.type === 'Identifier' ? o.name : 'this';
      if (this.useSeen.has(k)) return;
      this.useSeen.add(k);
    }
    this.wrap(o, `${H}.u(${this.iid(n)},`, ')');
    // V8 places o.f at f, but at the dot when o is a call (as the wrapped o is).
    if (!n.computed && !n.optional && o.type !== 'CallExpression') this.redirects.push(this.src.indexOf('.', o.end), n.property.start);
  }

  inChain(e) {
    for (;;) {
      if (e.optional) return true;
      if (e.type === 'MemberExpression') e = e.object;
      else if (e.type === 'CallExpression') e = e.callee;
      else return false;
    }
  }
}
