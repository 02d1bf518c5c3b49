// A small LaTeX (and plain-text) math parser into our own expression tree (docs/contract.md#answer-equivalence).
// Model output is untrusted: nothing here evaluates strings; unknown syntax throws ParseError
// and the caller falls back to comparing the answer as text.
// Long file: one job, a recursive-descent parser, whose grammar is read best in one place.
import { exactEval } from './evaluate';
import { budget, BudgetError, MAX_DEPTH as MAX_TREE_DEPTH, MAX_NODES, treeShape, treeSize } from './budget';
import { parseDecimal } from './rational';
import type { Node, RelOp } from './expression-tree';

export type { Node, RelOp } from './expression-tree';

export class ParseError extends Error {}

type Tok =
  | { t: 'num'; s: string }
  | { t: 'letter'; s: string }
  | { t: 'cmd'; s: string }
  | { t: 'begin'; s: string }
  | { t: 'end'; s: string }
  | { t: 'p'; s: string };

const MAX_TOKENS = 2000;
const MAX_DEPTH = 60;

function tokenize(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < src.length) {
    budget.check();
    if (out.length > MAX_TOKENS) throw new ParseError('answer too long');
    const c = src[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const num = /^(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+(?![.\d]))?/.exec(src.slice(i, i + 400));
    if (num && /[\d.]/.test(c)) {
      // "2e" followed by a non-digit is 2·e, handled because the regex requires exponent digits.
      out.push({ t: 'num', s: num[0] });
      i += num[0].length;
      continue;
    }
    if (/[A-Za-z]/.test(c)) {
      out.push({ t: 'letter', s: c });
      i++;
      continue;
    }
    if (c === '\\') {
      const env = /^\\(begin|end)\s*\{([A-Za-z*]+)\}/.exec(src.slice(i, i + 40));
      if (env) {
        out.push({ t: env[1] as 'begin' | 'end', s: env[2]! });
        i += env[0].length;
        continue;
      }
      const word = /^\\[A-Za-z]+/.exec(src.slice(i, i + 40));
      if (word) {
        out.push({ t: 'cmd', s: word[0].slice(1) });
        i += word[0].length;
        continue;
      }
      const sym = src[i + 1];
      if (sym === undefined) throw new ParseError('dangling backslash');
      i += 2;
      if (',;:! '.includes(sym)) continue; // spacing
      out.push({ t: 'cmd', s: sym });
      continue;
    }
    if ('+-*/^_()[]{},;:=<>!|&\''.includes(c)) {
      const two = src.slice(i, i + 2);
      if (two === '**') {
        out.push({ t: 'p', s: '**' }); // x**2: a power in programming notation
        i += 2;
        continue;
      }
      // Two-character relations written in ASCII.
      if (two === '<=' || two === '>=' || two === '!=') {
        out.push({ t: 'p', s: two });
        i += 2;
        continue;
      }
      out.push({ t: 'p', s: c });
      i++;
      continue;
    }
    throw new ParseError(`unexpected character ${JSON.stringify(c)}`);
  }
  return out;
}

const REL_CMDS: Record<string, RelOp> = {
  le: '<=', leq: '<=', leqslant: '<=', ge: '>=', geq: '>=', geqslant: '>=', lt: '<', gt: '>',
  ne: '!=', neq: '!=', in: 'in',
};
const REL_P: Record<string, RelOp> = { '=': '=', '<': '<', '>': '>', '<=': '<=', '>=': '>=', '!=': '!=' };

/** Named functions taking one argument (possibly without parentheses: `\sin x`, `\ln 2`). */
const FUNCS = new Set([
  'sin', 'cos', 'tan', 'sec', 'csc', 'cot', 'arcsin', 'arccos', 'arctan', 'arcsec', 'arccsc', 'arccot',
  'sinh', 'cosh', 'tanh', 'log', 'ln', 'lg', 'exp',
]);
const GREEK = new Set([
  'alpha', 'beta', 'gamma', 'delta', 'epsilon', 'varepsilon', 'zeta', 'eta', 'theta', 'vartheta', 'iota',
  'kappa', 'lambda', 'mu', 'nu', 'xi', 'rho', 'sigma', 'tau', 'upsilon', 'phi', 'varphi', 'chi', 'psi',
  'omega', 'Gamma', 'Delta', 'Theta', 'Lambda', 'Xi', 'Sigma', 'Phi', 'Psi', 'Omega',
]);
const MATRIX_ENVS = new Set(['pmatrix', 'bmatrix', 'Bmatrix', 'vmatrix', 'Vmatrix', 'matrix', 'smallmatrix', 'array']);

class Parser {
  private pos = 0;
  private absDepth = 0;
  constructor(private readonly toks: Tok[]) {}

  private peek(o = 0): Tok | undefined {
    return this.toks[this.pos + o];
  }
  private isP(s: string, o = 0): boolean {
    const t = this.peek(o);
    return t !== undefined && t.t === 'p' && t.s === s;
  }
  private isCmd(s: string): boolean {
    const t = this.peek();
    return t !== undefined && t.t === 'cmd' && t.s === s;
  }
  private next(): Tok {
    const t = this.toks[this.pos++];
    if (!t) throw new ParseError('unexpected end');
    return t;
  }
  private expectP(s: string): void {
    if (!this.isP(s)) throw new ParseError(`expected ${s}`);
    this.pos++;
  }

  parseAll(): Node {
    if (this.toks.length === 0) throw new ParseError('empty');
    const n = this.parseList();
    if (this.pos < this.toks.length) throw new ParseError(`unexpected ${this.peek()!.s}`);
    return n;
  }

  /**
   * Comma or semicolon separated items. When both appear, `;` separates solutions and `,` their
   * components (`p=5,q=2;p=7,q=2` is two solutions); `;` alone separates items like `,`.
   */
  private parseList(): Node {
    const first = this.parseRel();
    if (!this.isP(',') && !this.isP(';')) return first;
    const items = [first];
    let starts: number[] | null = null; // where each `;` starts a new solution
    while (this.isP(',') || this.isP(';')) {
      if (this.next().s === ';') (starts ??= []).push(items.length);
      items.push(this.parseRel());
    }
    if (starts && starts.length + 1 < items.length) {
      const bounds = [0, ...starts, items.length];
      const segments = bounds.slice(1).map((end, i) => items.slice(bounds[i], end));
      return { k: 'list', items: segments.map((g) => (g.length === 1 ? g[0]! : { k: 'list', items: g })) };
    }
    return { k: 'list', items };
  }

  private relOp(): RelOp | null {
    const t = this.peek();
    if (!t) return null;
    if (t.t === 'p' && REL_P[t.s]) return REL_P[t.s]!;
    if (t.t === 'cmd' && REL_CMDS[t.s]) return REL_CMDS[t.s]!;
    return null;
  }

  private parseRel(): Node {
    const parts = [this.parseRatio()];
    const ops: RelOp[] = [];
    for (let op = this.relOp(); op !== null; op = this.relOp()) {
      this.pos++;
      ops.push(op);
      parts.push(this.parseRatio());
    }
    return ops.length === 0 ? parts[0]! : { k: 'rel', ops, parts };
  }

  /** `a:b:c` binds looser than arithmetic and tighter than relations (`V_1:V_2=11:21`). */
  private parseRatio(): Node {
    const items = [this.parseUnion()];
    while (this.isP(':')) {
      this.pos++;
      items.push(this.parseUnion());
    }
    return items.length === 1 ? items[0]! : { k: 'ratio', items };
  }

  private parseUnion(): Node {
    const items = [this.parseAdd()];
    while (this.isCmd('cup')) {
      this.pos++;
      items.push(this.parseAdd());
    }
    return items.length === 1 ? items[0]! : { k: 'union', items };
  }

  private parseAdd(): Node {
    let left: Node;
    if (this.isCmd('pm') || this.isCmd('mp')) {
      const sign = this.next().s === 'pm' ? 1 : -1;
      left = { k: 'pm', a: null, b: this.parseMul(), sign };
    } else {
      left = this.parseMul();
    }
    for (;;) {
      if (this.isP('+')) {
        this.pos++;
        left = { k: 'add', a: left, b: this.parseMul() };
      } else if (this.isP('-')) {
        this.pos++;
        left = { k: 'sub', a: left, b: this.parseMul() };
      } else if (this.isCmd('pm') || this.isCmd('mp')) {
        const sign = this.next().s === 'pm' ? 1 : -1;
        left = { k: 'pm', a: left, b: this.parseMul(), sign };
      } else return left;
    }
  }

  private parseMul(): Node {
    let left = this.parseUnary();
    for (;;) {
      if (this.isP('*') || this.isCmd('cdot') || this.isCmd('times') || this.isCmd('ast')) {
        this.pos++;
        left = { k: 'mul', a: left, b: this.parseUnary() };
      } else if (this.isP('/') || this.isCmd('div')) {
        this.pos++;
        left = { k: 'div', a: left, b: this.parseUnary() };
      } else if (this.startsImplicit()) {
        if (left.k === 'num' && this.peek()!.t === 'num') throw new ParseError('two numbers in a row');
        left = { k: 'mul', a: left, b: this.parsePostfix(), implicit: true };
      } else return left;
    }
  }

  /** Whether the next token can start an implicit factor (`2ab`, `2\pi r`, `3(x+1)`). */
  private startsImplicit(): boolean {
    const t = this.peek();
    if (!t) return false;
    if (t.t === 'num' || t.t === 'letter' || t.t === 'begin') return true;
    if (t.t === 'p') return t.s === '(' || t.s === '{' || (t.s === '|' && this.absDepth === 0);
    if (t.t === 'cmd') {
      return (
        FUNCS.has(t.s) || GREEK.has(t.s) ||
        ['frac', 'sqrt', 'binom', 'pi', 'infty', 'lvert', 'lfloor', 'lceil', 'imath', 'operatorname'].includes(t.s)
      );
    }
    return false;
  }

  /**
   * Open parseUnary and parseScriptArg calls: `-` and `^-` chains and `2**2**…` recurse through
   * them. Bounded like a tree's depth (budget.ts, MAX_DEPTH), before the stack can overflow.
   */
  private chain = 0;

  private enterChain(): void {
    if (++this.chain > MAX_TREE_DEPTH) throw new BudgetError(`nested more than ${MAX_TREE_DEPTH} deep`);
  }

  private parseUnary(): Node {
    this.enterChain();
    try {
      return this.unary();
    } finally {
      this.chain--;
    }
  }

  private unary(): Node {
    if (this.isP('-')) {
      this.pos++;
      return { k: 'neg', x: this.parseUnary() };
    }
    if (this.isP('+')) {
      this.pos++;
      return this.parseUnary();
    }
    return this.parsePostfix();
  }

  private parsePostfix(): Node {
    let base = this.parsePrimary();
    for (;;) {
      if (this.isP('^')) {
        this.pos++;
        base = { k: 'pow', a: base, b: this.parseScriptArg() };
      } else if (this.isP('**')) {
        this.pos++; // a whole operand, not one TeX token: 2**10 = 1024
        base = { k: 'pow', a: base, b: this.parseUnary() };
      } else if (this.isP('!')) {
        this.pos++;
        base = { k: 'fn', f: 'fact', args: [base] };
      } else return base;
    }
  }

  /** The argument of `^`, `_` or a brace-less macro argument: TeX takes ONE token (`x^23` = x²·3). */
  private parseScriptArg(): Node {
    this.enterChain();
    try {
      return this.scriptArg();
    } finally {
      this.chain--;
    }
  }

  private scriptArg(): Node {
    const t = this.peek();
    if (!t) throw new ParseError('missing argument');
    if (t.t === 'p' && t.s === '{') return this.parseBraced();
    if (t.t === 'p' && t.s === '-') {
      this.pos++;
      return { k: 'neg', x: this.parseScriptArg() };
    }
    if (t.t === 'num') {
      this.pos++;
      if (t.s.length > 1 && /^\d/.test(t.s)) {
        // Split the number: its first digit is the argument, the rest goes back to the stream.
        this.toks.splice(this.pos, 0, { t: 'num', s: t.s.slice(1) });
        return numNode(t.s[0]!);
      }
      return numNode(t.s);
    }
    if (t.t === 'letter') {
      this.pos++;
      return letterNode(t.s);
    }
    if (t.t === 'cmd') return this.parsePrimary();
    throw new ParseError('bad argument');
  }

  private parseBraced(): Node {
    this.expectP('{');
    const inner = this.parseList();
    this.expectP('}');
    return inner;
  }

  private depth = 0;

  private parsePrimary(): Node {
    budget.check();
    // Bounded nesting: untrusted input must not exhaust the stack.
    if (++this.depth > MAX_DEPTH) throw new ParseError('nested too deeply');
    try {
      return this.primary();
    } finally {
      this.depth--;
    }
  }

  private primary(): Node {
    const t = this.next();
    switch (t.t) {
      case 'num':
        return this.numberPrimary(t.s);
      case 'letter':
        return this.variable(t.s);
      case 'begin':
        return this.matrix(t.s);
      case 'end':
        throw new ParseError('unexpected \\end');
      case 'p':
        return this.punctPrimary(t.s);
      case 'cmd':
        return this.command(t.s);
    }
  }

  private numberPrimary(s: string): Node {
    const n = numNode(s);
    // Base subscript: 1112112_3 (compared as digits, docs/contract.md#answer-equivalence / docs).
    if (this.isP('_') && /^\d+$/.test(s)) {
      this.pos++;
      const b = this.parseScriptArg();
      if (b.k !== 'num') throw new ParseError('bad base');
      return { k: 'base', digits: s, base: b.src };
    }
    // Mixed number: 3\frac12 = 3 + 1/2 when the fraction is proper with integer parts.
    if (/^\d+$/.test(s) && this.isCmd('frac')) {
      const save = this.pos;
      this.pos++;
      const a = this.parseScriptArg();
      const b = this.parseScriptArg();
      if (a.k === 'num' && b.k === 'num' && !a.dec && !b.dec && a.v.n >= 0n && a.v.n < b.v.n) {
        return { k: 'add', a: n, b: { k: 'div', a, b } };
      }
      this.pos = save;
    }
    return n;
  }

  private variable(s: string): Node {
    let name = s;
    if (this.isP('_')) {
      this.pos++;
      const sub = this.parseScriptArg();
      treeShape(sub); // nodeKey's JSON.stringify recurses: depth checked (and its nodes charged) first
      name += '_' + nodeKey(sub);
    }
    while (this.isP("'")) {
      this.pos++;
      name += "'";
    }
    return name === s ? letterNode(s) : { k: 'var', name };
  }

  private punctPrimary(s: string): Node {
    if (s === '(' || s === '[') return this.bracketed(s);
    if (s === '{') {
      this.pos--;
      return this.parseBraced();
    }
    if (s === '|') {
      this.absDepth++;
      const x = this.parseAdd();
      this.absDepth--;
      this.expectP('|');
      return { k: 'fn', f: 'abs', args: [x] };
    }
    throw new ParseError(`unexpected ${s}`);
  }

  /** `( ... )` / `[ ... ]` with any closing bracket: grouping, tuple or interval. */
  private bracketed(open: '(' | '['): Node {
    // `(0;-2;0)`: a semicolon separates coordinates like a comma.
    const items = [this.parseRel()];
    while (this.isP(',') || this.isP(';')) {
      this.pos++;
      items.push(this.parseRel());
    }
    const close = this.next();
    if (close.t !== 'p' || (close.s !== ')' && close.s !== ']')) throw new ParseError('unclosed bracket');
    return { k: 'group', open, close: close.s as ')' | ']', items };
  }

  private command(s: string): Node {
    if (s === 'frac') {
      const a = this.parseScriptArg();
      return { k: 'div', a, b: this.parseScriptArg() };
    }
    if (s === 'sqrt') {
      let index: Node | null = null;
      if (this.isP('[')) {
        this.pos++;
        index = this.parseAdd();
        this.expectP(']');
      }
      const x = this.isP('(') ? this.funcArg() : this.parseScriptArg(); // sqrt(2) written plainly
      return { k: 'fn', f: 'sqrt', args: index ? [x, index] : [x] };
    }
    if (s === 'binom') {
      const n = this.parseScriptArg();
      return { k: 'fn', f: 'binom', args: [n, this.parseScriptArg()] };
    }
    if (FUNCS.has(s)) return this.func(s);
    if (s === 'sum' || s === 'prod') return this.bigOperator(s);
    // Decorated names: `\overline{AB}` is the segment AB, `\angle ABC` the angle ABC (labels).
    if (['overline', 'overrightarrow', 'vec', 'bar', 'hat', 'widehat', 'tilde', 'mathbf', 'mathit', 'boldsymbol'].includes(s)) return this.parseScriptArg();
    if (s === 'angle' || s === 'measuredangle' || s === 'triangle') return this.funcArg();
    if (s === 'pi') return { k: 'const', c: 'pi' };
    if (s === 'infty' || s === 'infin') return { k: 'const', c: 'inf' };
    if (s === 'imath') return { k: 'const', c: 'i' };
    if (GREEK.has(s)) return this.variable(s);
    if (s === '{' || s === 'lbrace') return this.set();
    if (s === 'emptyset' || s === 'varnothing') return { k: 'set', items: [] };
    if (s === 'lvert' || s === 'vert' || s === '|') return this.delimited('abs', ['rvert', 'vert', '|']);
    if (s === 'lfloor') return this.delimited('floor', ['rfloor']);
    if (s === 'lceil') return this.delimited('ceil', ['rceil']);
    throw new ParseError(`unsupported \\${s}`);
  }

  /**
   * `\sum_{k=a}^{b} body` / `\prod_{k=a}^{b} body` with integer bounds (at most MAX_BIG_TERMS
   * terms) is expanded into its terms, so it is an ordinary expression (`\sum_{k=1}^{10} k` = 55;
   * other variables stay free: `\sum_{k=1}^{3} kx` = 6x). The body is what a function argument is:
   * a parenthesised group or the implicit product that follows. Symbolic bounds are not read.
   */
  private bigOperator(op: 'sum' | 'prod'): Node {
    let v: string | null = null;
    let lo: Node | null = null;
    let hi: Node | null = null;
    if (this.isCmd('limits') || this.isCmd('nolimits')) this.pos++;
    for (let k = 0; k < 2; k++) {
      if (this.isP('_')) {
        this.pos++;
        const sub = this.parseScriptArg();
        // The index may be `i` or `e`, read as constants elsewhere.
        const index = sub.k === 'rel' && sub.ops.length === 1 && sub.ops[0] === '=' ? sub.parts[0]! : null;
        if (index?.k === 'var') v = index.name;
        else if (index?.k === 'const' && (index.c === 'i' || index.c === 'e')) v = index.c;
        else throw new ParseError(`\\${op} without an index`);
        lo = (sub as Node & { k: 'rel' }).parts[1]!;
      } else if (this.isP('^')) {
        this.pos++;
        hi = this.parseScriptArg();
      }
    }
    if (v === null || lo === null || hi === null) throw new ParseError(`\\${op} without bounds`);
    const body = this.funcArg();
    // Bounds and body are walked below: their depth is checked first (treeShape does not recurse).
    for (const part of [lo, hi, body]) treeShape(part);
    const a = exactEval(lo);
    const b = exactEval(hi);
    if (!a || !b || a.d !== 1n || b.d !== 1n) throw new ParseError(`\\${op} with symbolic bounds`);
    if (b.n - a.n + 1n > BigInt(MAX_BIG_TERMS)) throw new ParseError(`\\${op} with too many terms`);
    if (b.n < a.n) return numNode(op === 'sum' ? '0' : '1'); // the empty sum and the empty product
    // Every term is a copy of the body: nested sums multiply (budget.ts, MAX_NODES).
    const copies = Number(b.n - a.n + 1n) * (treeSize(body) + 2);
    if (copies > MAX_NODES) throw new BudgetError(`\\${op} expands to more than ${MAX_NODES} nodes`);
    let out: Node | null = null;
    for (let i = a.n; i <= b.n; i++) {
      const term = substitute(body, v, i < 0n ? { k: 'neg', x: numNode(`${-i}`) } : numNode(`${i}`));
      out = out === null ? term : op === 'sum' ? { k: 'add', a: out, b: term } : { k: 'mul', a: out, b: term };
    }
    return { k: 'group', open: '(', close: ')', items: [out!] };
  }

  private delimited(f: string, closers: string[]): Node {
    this.absDepth++;
    const x = this.parseAdd();
    this.absDepth--;
    const c = this.next();
    if (c.t !== 'cmd' || !closers.includes(c.s)) throw new ParseError(`unclosed ${f}`);
    return { k: 'fn', f, args: [x] };
  }

  private set(): Node {
    const items: Node[] = [];
    if (this.isCmd('}') || this.isCmd('rbrace')) {
      this.pos++;
      return { k: 'set', items };
    }
    items.push(this.parseRel());
    while (this.isP(',') || this.isP(';')) {
      this.pos++;
      items.push(this.parseRel());
    }
    const c = this.next();
    if (c.t !== 'cmd' || (c.s !== '}' && c.s !== 'rbrace')) throw new ParseError('unclosed set');
    return { k: 'set', items };
  }

  /** `\sin x`, `\sin^2(x)`, `\sin^{-1} x`, `\log_2 8`, `\ln(1+x)`. */
  private func(name: string): Node {
    let f = name === 'lg' ? 'log10' : name;
    let power: Node | null = null;
    let base: Node | null = null;
    for (let k = 0; k < 2; k++) {
      if (this.isP('^')) {
        this.pos++;
        power = this.parseScriptArg();
      } else if (this.isP('_') && f === 'log') {
        this.pos++;
        base = this.parseScriptArg();
      }
    }
    if (power && power.k === 'neg' && power.x.k === 'num' && power.x.src === '1' && /^(sin|cos|tan)$/.test(f)) {
      f = 'arc' + f; // \sin^{-1} is the inverse function
      power = null;
    }
    const arg = this.funcArg();
    let node: Node = { k: 'fn', f: f === 'log' && !base ? 'log10' : f, args: base ? [arg, base] : [arg] };
    if (power) node = { k: 'pow', a: node, b: power };
    return node;
  }

  /** A function argument: a parenthesised group, or the implicit product that follows. */
  private funcArg(): Node {
    if (this.isP('(')) {
      const save = this.pos;
      this.pos++;
      const g = this.bracketed('(');
      if (g.k === 'group' && g.items.length === 1) return this.postfixOn(g);
      this.pos = save;
    }
    let x = this.parsePostfix();
    while (this.startsImplicit() && !(this.peek()!.t === 'cmd' && FUNCS.has(this.peek()!.s)) && !this.isP('(')) {
      x = { k: 'mul', a: x, b: this.parsePostfix(), implicit: true };
    }
    return x;
  }

  private postfixOn(base: Node): Node {
    for (;;) {
      if (this.isP('^')) {
        this.pos++;
        base = { k: 'pow', a: base, b: this.parseScriptArg() };
      } else if (this.isP('!')) {
        this.pos++;
        base = { k: 'fn', f: 'fact', args: [base] };
      } else return base;
    }
  }

  private matrix(env: string): Node {
    if (!MATRIX_ENVS.has(env)) throw new ParseError(`unsupported environment ${env}`);
    if (env === 'array' && this.isP('{')) {
      // The column specification {cc|c} is layout, not content.
      while (this.pos < this.toks.length && !this.isP('}')) this.pos++;
      this.expectP('}');
    }
    const rows: Node[][] = [];
    let row: Node[] = [];
    for (;;) {
      const t = this.peek();
      if (!t) throw new ParseError('unclosed matrix');
      if (t.t === 'end') {
        this.pos++;
        if (row.length) rows.push(row);
        break;
      }
      row.push(this.parseAdd());
      if (this.isP('&')) this.pos++;
      else if (this.isCmd('\\')) {
        this.pos++;
        rows.push(row);
        row = [];
      }
    }
    return { k: 'matrix', rows };
  }
}

/** Terms a `\sum` / `\prod` with integer bounds is expanded into, at most. */
const MAX_BIG_TERMS = 1000;

/** `n` with every variable `name` replaced by `by` (a bound index of a sum or product). */
function substitute(n: Node, name: string, by: Node): Node {
  budget.check();
  if (n.k === 'var') return n.name === name ? by : n;
  if (n.k === 'const') return n.c === name ? by : n;
  const out: Record<string, unknown> = { ...n };
  for (const [key, val] of Object.entries(n)) {
    if (Array.isArray(val)) {
      out[key] = val.map((x) => (Array.isArray(x) ? x.map((y: Node) => substitute(y, name, by)) : x && typeof x === 'object' && 'k' in x ? substitute(x as Node, name, by) : x));
    } else if (val && typeof val === 'object' && 'k' in (val as object)) out[key] = substitute(val as Node, name, by);
  }
  return out as Node;
}

export function numNode(s: string): Node & { k: 'num' } {
  const v = parseDecimal(s);
  if (!v) throw new ParseError(`bad number ${s}`);
  return { k: 'num', v, dec: /[.eE]/.test(s), src: s };
}

function letterNode(s: string): Node {
  if (s === 'e') return { k: 'const', c: 'e' };
  if (s === 'i') return { k: 'const', c: 'i' };
  return { k: 'var', name: s };
}

/** A short printable key of a node (variable subscripts, debugging). */
export function nodeKey(n: Node): string {
  switch (n.k) {
    case 'num':
      return n.src;
    case 'var':
      return n.name;
    case 'const':
      return n.c;
    default:
      return JSON.stringify(n, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
  }
}

export function parseLatex(src: string): Node {
  const n = new Parser(tokenize(src)).parseAll();
  // Every walk after the parse recurses once per level: refuse a tree deeper than MAX_DEPTH (or
  // larger than MAX_NODES) here, before any walk (treeShape itself does not recurse).
  treeShape(n);
  return n;
}

