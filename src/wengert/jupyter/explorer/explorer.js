// wengert explorer: steps through the forward trace, then the reverse sweep, of a recorded
// computation. Everything it shows was computed in Python (wengert/jupyter/explorer/frames.py and
// layout.py); this module only lays rows out, draws and steps. It imports nothing and loads
// nothing from any URL, so it works live, in a static HTML export and in JupyterLite.
// anywidget API: export default { render({ model, el }) }, with model.get / set / on /
// save_changes; the synced traits are `frames` (the data) and `step` (0-based). Its style
// is explorer.css, which anywidget adds to the page (the widget's _css).

const FORMAT = 1;
const PACKING = 3; // the packed form of large tapes (wengert/jupyter/explorer/columns.py)
const SVG_LIMIT = 300; // more visible items than this: draw on a canvas
const ROW = 22; // table row height (px): .wgx-tr's height in explorer.css
const SIZE = { eq: [112, 58], leaf: [120, 58], const: [64, 30], part: [0, 0], group: [188, 58] };
const GAP_X = 22;
const GAP_Y = 34;
const PAD = 12;
const HEAD = 22; // room for an expanded group's label
const PLAY_MS = 700;
const SLOT = /\ue000(\d+)\ue001/g;
const OUT = /\ue002/g;
const SYMBOL = { "*": "×", "-": "−", "/": "÷", "**": "xʸ" };
// Button icons drawn as SVG (⏮ ◀ ▶ ⏸ ▶| ⏭ are missing from many fonts).
const ICON = {
  first: "M1 2h2v12H1zM9 2v12L3 8zM15 2v12L9 8z",
  prev: "M12 2v12L4 8z",
  play: "M4 2v12l10-6z",
  pause: "M4 2h3v12H4zM9 2h3v12H9z",
  next: "M3 2v12l8-6zM12 2h2v12h-2z",
  last: "M1 2v12l6-6zM7 2v12l6-6zM13 2h2v12h-2z",
};
const icon = (name) => `<svg width="14" height="14" viewBox="0 0 16 16" aria-hidden="true"><path d="${ICON[name]}"/></svg>`;

// -- small helpers -------------------------------------------------------------------------
const esc = (s) => String(s).replace(/[&<>"]/g, (c) =>
  ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
const plain = (t) => t != null && !t.includes(" ") && !t.includes("[") && t !== "—" && t !== "?";
// a number as a factor: negative ones, and complex ones with a real part (1-2j), in ()
const num = (t) => (/^-|[^eE][+-]/.test(t) ? `(${t})` : t);
const clip = (t, n) => (t.length <= n ? t : t.slice(0, n - 1) + "…");
const fillForm = (form, names) => form.includes("{*}")
  ? form.replace("{*}", names.join(", "))
  : form.replace(/\{(\d+)\}/g, (_, i) => names[+i]);
// "+ 4ε₁" / "− 2.6ε₁": one term of a dual number.
const signed = (t, mono) => (plain(t) && t.startsWith("-") ? `− ${t.slice(1)}${mono}` : `+ ${t}${mono}`);
const dualText = (value, tangent) => `${value ?? "—"}${(tangent || []).map(([m, t]) => ` ${signed(t, m)}`).join("")}`;
const fillRule = (t, names, out, g) =>
  t.replace(SLOT, (_, i) => names[+i]).replace(OUT, out).replace(/ḡ/g, g);

// -- the data, prepared once ---------------------------------------------------------------
// Large tapes travel gzip-compressed in `packed`, a binary buffer of the comm message (or
// of the saved widget state), which the widget manager hands over as a DataView: inflate
// it with the browser's own DecompressionStream.
const bytesOf = (b) => (b instanceof ArrayBuffer ? new Uint8Array(b)
  : ArrayBuffer.isView(b) ? new Uint8Array(b.buffer, b.byteOffset, b.byteLength) : null);
async function unpack(raw) {
  const bytes = bytesOf(raw.packed);
  if (!bytes) throw new Error(`packed frames must be binary, got ${typeof raw.packed}`);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return expand(fromBytes(await new Response(stream).arrayBuffer()));
}

// The payload of wengert/jupyter/columns.py: the header's length, the header (JSON),
// then its integer columns (``columns``: [path, length, bytes per entry] in order, each
// padded to 4 bytes). Columns stay typed arrays (only ever indexed); ``eqs.ins`` and
// ``reverse`` come back to the compact form's shapes as plain arrays.
const INTS = { 1: Int8Array, 2: Int16Array, 4: Int32Array };
function fromBytes(buffer) {
  const size = new DataView(buffer).getUint32(0, true);
  const d = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 4, size)));
  let offset = 4 + size;
  for (const [path, length, width] of d.columns) {
    const keys = path.split(".");
    let where = d;
    for (const key of keys.slice(0, -1)) where = where[key] ??= {};
    where[keys[keys.length - 1]] = new INTS[width](buffer, offset, length);
    offset += Math.ceil((width * length) / 4) * 4;
  }
  const { ins_flat: flat, ins_count: counts } = d.eqs;
  const ins = [];
  for (let e = 0, at = 0; e < counts.length; e++) {
    const row = [];
    for (let k = 0; k < counts[e]; k++) row.push(flat[at + k]);
    at += counts[e];
    ins.push(row);
  }
  d.eqs.ins = ins;
  const rows = d.reverse_rows;
  const reverse = [];
  for (let k = 0; k < d.reverse_e.length; k++) {
    const i = d.reverse_i[k];
    reverse.push(i >= 0 ? [d.reverse_e[k], i, d.reverse_j[k]]
      : i === -2 ? [d.reverse_e[k], null, d.reverse_j[k]] : [d.reverse_e[k], rows[String(k)]]);
  }
  d.reverse = reverse;
  for (const key of ["columns", "reverse_e", "reverse_i", "reverse_j", "reverse_rows"]) delete d[key];
  delete d.eqs.ins_flat;
  delete d.eqs.ins_count;
  return d;
}

// A reverse step's sends: ``[e, i, j]`` is the compact form of ``[e, [[i, null, null, j]]]``;
// a hook step, ``[node, null, h]``, sends nothing.
function sendsOf(step) {
  if (step[1] === null) return [];
  return step.length === 3 ? [[step[1], null, null, step[2]]] : step[1];
}

// The frames as Python's explorer_frames gave them, from the compact form that large
// tapes travel in (wengert/jupyter/compact.py says what it leaves out); reverse steps
// stay compact (sendsOf reads both forms).
function expand(d) {
  if (!d.compact) return d;
  const n = d.equations;
  const rest = d.nodes.name;
  // (packed arrays, filled by push: V8 is slower on arrays made with holes)
  const names = [];
  const kind = [];
  const params = [];
  for (let k = 0; k < n; k++) {
    names.push(`t${k}`);
    kind.push(0);
    params.push(null);
  }
  for (const [k, name] of Object.entries(d.nodes.eq_names)) names[Number(k)] = name;
  // the other outputs of equations with several (``outs``) come last
  let parts = 0;
  for (const list of Object.values(d.outs || {})) parts += list.length;
  for (let k = 0; k < rest.length; k++) {
    names.push(rest[k]);
    kind.push(k < d.nodes.leaves ? 1 : k < rest.length - parts ? 2 : 3);
  }
  for (const [k, p] of Object.entries(d.eqs.params)) params[Number(k)] = p;
  return { ...d, nodes: { ...d.nodes, name: names, kind }, eqs: { ...d.eqs, params } };
}

// The adjoints' names: a combining macron on the first character, except where Python
// said otherwise (``bars``: node index -> name, e.g. "ȳ", one precomposed character).
function withBars(names, given) {
  const bars = names.map((s) => s.slice(0, 1) + "\u0304" + s.slice(1));
  for (const [k, name] of Object.entries(given || {})) bars[Number(k)] = name;
  return bars;
}

function prepare(d) {
  const N = d.nodes.name.length;
  const n = d.eqs.op.length;
  const G = d.layout.groups.start.length;
  const X = {
    d, N, n, G,
    names: d.nodes.name,
    bars: withBars(d.nodes.name, d.bars),
    nF: d.steps.forward, nR: d.steps.reverse, total: d.steps.total,
    gStart: d.layout.groups.start, gEnd: d.layout.groups.end,
    gParent: d.layout.groups.parent, gLabel: d.layout.groups.label,
    container: d.layout.container, rank: d.layout.rank, order: d.layout.order,
  };
  // Children of each container (index c + 1; the top level is 0), by rank then order.
  const kids = Array.from({ length: G + 1 }, () => []);
  for (let i = 0; i < N + G; i++) if (i >= N || d.nodes.kind[i] !== 3) kids[X.container[i] + 1].push(i);
  for (const list of kids) {
    list.sort((a, b) => X.rank[a] - X.rank[b] || X.order[a] - X.order[b]);
  }
  X.kids = kids;
  // Equations with several outputs (a decomposition): one box; the nodes of its other
  // outputs (kind 3) are drawn in it, and edges from them leave it.
  X.outs = new Map();
  X.owner = new Map();
  for (const [e, list] of Object.entries(d.outs || {})) {
    X.outs.set(Number(e), list);
    for (const o of list) X.owner.set(o, Number(e));
  }
  // Reverse sweep: the step that sweeps each equation (what each node received when is
  // gathered the first time the reverse phase is shown: see received()).
  X.sweptAt = new Int32Array(n).fill(-1);
  d.reverse.forEach(([e, rows], k) => { if (rows !== null) X.sweptAt[e] = k; });
  X.recv = null;
  X.roots = new Set(d.seeds.map(([e]) => e));
  X.leaves = [];
  d.nodes.kind.forEach((k, v) => { if (k === 1) X.leaves.push(v); });
  X.leafCount = X.leaves.length;
  X.changed = new Set(d.changed || []);
  return X;
}

// What the place of a value that is not shown says: why it is not.
function missing(X, node) {
  return X.changed.has(node) ? "changed since" : "not kept";
}

// node -> [[reverse step, running sum text, contribution text], ...] in sweep order.
function received(X) {
  if (X.recv) return X.recv;
  const { d } = X;
  const recv = new Map();
  const push = (node, entry) => {
    const list = recv.get(node);
    if (list) list.push(entry);
    else recv.set(node, [entry]);
  };
  for (const [e, text] of d.seeds) push(e, [-1, text, text]);
  d.reverse.forEach((step, k) => {
    const [e] = step;
    if (step[1] === null) { // hooks: what they returned replaces the node's adjoint
      const after = d.hooks[step[2]][2];
      if (after !== null) push(e, [k, after, after, true]);
      return;
    }
    const rows = sendsOf(step);
    for (const [i, c, s] of rows) {
      const target = d.eqs.ins[e][i];
      const got = c ?? d.nodes.adjoint[target];
      push(target, [k, s ?? got, got]);
    }
  });
  X.recv = recv;
  return recv;
}

// Where step s is: phase, equation, reverse step k (-1: the seed).
function where(X, s) {
  if (s < X.nF) return { phase: "forward", eq: s, k: -2 };
  if (s === X.nF) return { phase: "seed", eq: X.d.seeds.length ? X.d.seeds[0][0] : -1, k: -1 };
  const k = s - X.nF - 1;
  return { phase: X.d.reverse[k][1] === null ? "hook" : "reverse", eq: X.d.reverse[k][0], k };
}

function label(X, s) {
  if (!X.total) return "nothing to step through";
  const w = where(X, s);
  if (w.phase === "forward") return `forward · step ${s + 1}/${X.nF}`;
  if (w.phase === "seed") return "reverse · seed";
  return `reverse · step ${w.k + 1}/${X.nR}`;
}

// The adjoint of a node as known after reverse step k (null: nothing yet).
function adjointAt(X, node, k) {
  if (k < -1) return null;
  if (node < X.n && X.sweptAt[node] >= 0 && X.sweptAt[node] <= k) return X.d.nodes.adjoint[node];
  const got = received(X).get(node);
  if (!got) return null;
  let text = null;
  for (const [kk, running] of got) {
    if (kk > k) break;
    text = running;
  }
  return text;
}

// The names of what equation e computes: ``t2``, or ``t2, t3`` for several outputs.
function outNames(X, e) {
  const more = X.outs.get(e);
  return more ? [e, ...more].map((o) => X.names[o]).join(", ") : X.names[e];
}

// What an output received: ``t̄3 = 2.6``, or that no cotangent reached it.
function incomingText(X, o) {
  const adj = X.d.nodes.adjoint[o];
  return adj == null ? `${X.bars[o]}: not used, no cotangent reached it (its term is 0)`
    : `${X.bars[o]} = ${adj}`;
}

function equationText(X, e, withNumbers) {
  const { d, names } = X;
  const form = d.ops[d.eqs.op[e]][3];
  const ins = d.eqs.ins[e];
  const vals = d.nodes.value;
  const factor = form.endsWith(")") ? String : num; // (a call's arguments need none)
  let text = `${outNames(X, e)} = ${fillForm(form, ins.map((r) => factor(names[r])))}`;
  if (withNumbers && !X.outs.has(e) && plain(vals[e]) && ins.every((r) => plain(vals[r]))) {
    text += ` = ${fillForm(form, ins.map((r) => factor(vals[r])))} = ${vals[e]}`;
  }
  return text;
}

// What the side panel says at step s (mirrors frames.step_view in Python).
function stepView(X, s) {
  const { d, names, bars } = X;
  const w = where(X, s);
  const view = { label: label(X, s), phase: w.phase };
  if (w.phase === "forward") {
    view.node = w.eq;
    view.equation = equationText(X, w.eq, true);
    return view;
  }
  if (w.phase === "seed") {
    view.seeds = d.seeds.map(([e, t]) => `${bars[e]} = ${t}`);
    view.note = d.seed_note;
    view.sweepNote = d.sweep_note ?? null;
    return view;
  }
  if (w.phase === "hook") {
    const [hooks, before, after] = d.hooks[d.reverse[w.k][2]];
    view.node = w.eq;
    view.hooks = hooks;
    view.before = `${bars[w.eq]} = ${before}`;
    view.after = after === null ? null : `${bars[w.eq]} = ${after}`;
    return view;
  }
  const e = d.reverse[w.k][0];
  const rows = sendsOf(d.reverse[w.k]);
  const ins = d.eqs.ins[e];
  const vals = d.nodes.value;
  const adj = d.nodes.adjoint;
  const r = d.eqs.rule[e];
  const template = r >= 0 ? d.rules[r] : null;
  const numeric = !X.outs.has(e) && plain(adj[e]) && plain(vals[e]) && ins.every((x) => plain(vals[x]));
  view.node = e;
  view.equation = equationText(X, e, true);
  view.incoming = [e, ...(X.outs.get(e) || [])].map((o) => incomingText(X, o)).join("; ");
  view.sends = rows.map(([i, c, sum, jac]) => {
    const target = ins[i];
    const gets = c ?? adj[target];
    let before = "0";
    for (const [kk, running] of received(X).get(target) || []) {
      if (kk >= w.k) break;
      before = running;
    }
    for (const [j, cj, sj] of rows) { // fan-out inside this step (x * x)
      if (j === i) break;
      if (ins[j] === target) before = sj ?? cj ?? adj[target];
    }
    let rule;
    let numbers = null;
    if (template && template[i] != null) {
      rule = fillRule(template[i], ins.map((x) => names[x]), names[e], bars[e]);
      if (numeric) numbers = fillRule(template[i], ins.map((x) => num(vals[x])), num(vals[e]),
        num(adj[e]));
    } else {
      rule = `${bars[e]}·∂${names[e]}/∂${names[target]}`;
    }
    return {
      to: names[target], target, rule: `${bars[target]} += ${rule}`, numbers, gets, before,
      total: sum ?? gets, sum: `${bars[target]} = ${before} + ${gets} = ${sum ?? gets}`,
      jacobian: d.jacs[jac],
    };
  });
  view.inner = (d.inner || {})[String(e)] ?? null;
  return view;
}

// -- layout of the visible items -------------------------------------------------------------
function itemKind(X, item) {
  if (item >= X.N) return "group";
  return ["eq", "leaf", "const", "part"][X.d.nodes.kind[item]];
}

function layout(X, open) {
  const { N, G, gParent, kids } = X;
  // The item each node is drawn as: itself, or its outermost collapsed group.
  const rep = new Int32Array(N);
  for (let v = 0; v < N; v++) {
    let r = v;
    for (let c = X.container[v]; c >= 0; c = gParent[c]) if (!open[c]) r = N + c;
    rep[v] = r;
  }
  for (const [o, e] of X.owner) rep[o] = rep[e]; // drawn in its equation's box
  const shown = new Uint8Array(G); // every enclosing group is open
  for (let g = 0; g < G; g++) shown[g] = gParent[g] < 0 ? 1 : shown[gParent[g]] & open[gParent[g]];
  const w = new Float64Array(N + G);
  const h = new Float64Array(N + G);
  for (let i = 0; i < N; i++) [w[i], h[i]] = SIZE[itemKind(X, i)];
  for (let g = 0; g < G; g++) [w[N + g], h[N + g]] = SIZE.group;
  const rows = (c) => { // rows of container c (-1: top level): [[items], width, height]
    const out = [];
    let cur = null;
    let lastRank = -1;
    for (const i of kids[c + 1]) {
      if (!cur || X.rank[i] !== lastRank) {
        cur = [[], -GAP_X, 0];
        out.push(cur);
        lastRank = X.rank[i];
      }
      cur[0].push(i);
      cur[1] += w[i] + GAP_X;
      cur[2] = Math.max(cur[2], h[i]);
    }
    return out;
  };
  const rowCache = new Map();
  for (let g = G - 1; g >= 0; g--) { // children before parents: sizes bottom-up
    if (!shown[g] || !open[g]) continue;
    const rs = rows(g);
    rowCache.set(g, rs);
    let width = SIZE.group[0] - 2 * PAD;
    let height = -GAP_Y;
    for (const r of rs) { width = Math.max(width, r[1]); height += r[2] + GAP_Y; }
    w[N + g] = width + 2 * PAD;
    h[N + g] = Math.max(height, 0) + 2 * PAD + HEAD;
  }
  const top = rows(-1);
  let width = 0;
  let height = -GAP_Y;
  for (const r of top) { width = Math.max(width, r[1]); height += r[2] + GAP_Y; }
  const x = new Float64Array(N + G);
  const y = new Float64Array(N + G);
  const items = []; // visible items, containers (open groups) before what they contain
  const stack = [[top, PAD, PAD, width]];
  while (stack.length) {
    const [rs, x0, y0, cw] = stack.pop();
    let yy = y0;
    for (const [list, rw, rh] of rs) {
      let xx = x0 + (cw - rw) / 2;
      for (const i of list) {
        x[i] = xx;
        y[i] = yy;
        items.push(i);
        if (i >= N && open[i - N]) {
          stack.push([rowCache.get(i - N), xx + PAD, yy + PAD + HEAD, w[i] - 2 * PAD]);
        }
        xx += w[i] + GAP_X;
      }
      yy += rh + GAP_Y;
    }
  }
  // Edges between the items drawn, once per pair; `eq` is one equation the edge feeds.
  const seen = new Map();
  const edges = [];
  const ins = X.d.eqs.ins;
  for (let e = 0; e < X.n; e++) {
    const b = rep[e];
    for (const src of ins[e]) {
      const a = rep[src];
      if (a === b) continue;
      const key = a * (N + G) + b;
      const k = seen.get(key);
      if (k === undefined) {
        seen.set(key, edges.length);
        edges.push([a, b, 1]);
      } else {
        edges[k][2] += 1; // x * x: the same value used twice
      }
    }
  }
  return { rep, x, y, w, h, items, edges, width: width + 2 * PAD, height: Math.max(height, 0) + 2 * PAD };
}

// -- what each item looks like at a step ---------------------------------------------------
function nodeState(X, s) {
  const w = where(X, s);
  const state = (item) => {
    if (item >= X.N) {
      const g = item - X.N;
      const a = X.gStart[g];
      const b = X.gEnd[g];
      let done = 0;
      if (w.phase === "forward") done = Math.max(0, Math.min(s, b) - a);
      else if (w.k >= 0) for (let e = a; e < b; e++) done += X.sweptAt[e] >= 0 && X.sweptAt[e] < w.k;
      const current = w.eq >= a && w.eq < b;
      return { current, done, count: b - a };
    }
    if (X.d.nodes.kind[item] !== 0) return { current: w.phase === "hook" && item === w.eq, future: false };
    if (w.phase === "forward") return { current: item === w.eq, future: item > w.eq, done: item < w.eq };
    if (w.phase === "seed") return { current: X.roots.has(item), future: false, done: false };
    const k = X.sweptAt[item];
    // (a hook on another output of a decomposition: its box is the equation's)
    return { current: item === w.eq || X.owner.get(w.eq) === item, future: false, done: k >= 0 && k < w.k };
  };
  return { w, state };
}

function sceneAt(X, L, s) {
  const { d, names } = X;
  const { w, state } = nodeState(X, s);
  const reverse = w.phase !== "forward";
  const scene = [];
  for (const item of L.items) {
    const kind = itemKind(X, item);
    const st = state(item);
    const it = { item, kind, x: L.x[item], y: L.y[item], w: L.w[item], h: L.h[item], st, lines: [] };
    if (kind === "group") {
      const g = item - X.N;
      it.open = !!X.open[g];
      const [name, ...rest] = X.gLabel[g].split(" · ");
      if (it.open) {
        it.lines.push([clip(X.gLabel[g], 60), "b"]);
      } else { // "passes 1–20" / "lines 5–6 · 40 equations" / "done 3/40"
        it.lines.push([clip(name, 26), "b"]);
        it.lines.push([clip([...rest, `${st.count} equations`].join(" · "), 30), "m"]);
        it.lines.push([`${reverse ? "swept" : "computed"} ${st.done}/${st.count}`, "m"]);
      }
    } else {
      const value = d.nodes.value[item];
      const head = kind === "eq" ? `${SYMBOL[d.ops[d.eqs.op[item]][1]] ?? d.ops[d.eqs.op[item]][1]}  ${outNames(X, item)}`
        : names[item];
      it.lines.push([clip(head, 16), "b"]);
      const room = kind === "leaf" ? 14 : 17; // an ellipse is narrower below its middle
      if (kind !== "const") {
        if (st.future) it.lines.push(["·", "m"]);
        else if (value == null) it.lines.push([missing(X, item), "i"]);
        else it.lines.push([brief(X, item, value, room), "v"]);
        if (!reverse && d.dual && !st.future) {
          const tan = d.nodes.tangent[item];
          if (tan && tan.length) it.lines.push([clip(signed(tan[0][1], tan[0][0]), room), "t"]);
        }
        if (reverse) {
          const adj = adjointAt(X, item, w.k);
          if (adj != null) it.lines.push([clip(`${X.bars[item]} ${brief(X, item, adj)}`, room + 1), "a"]);
        }
      }
    }
    scene.push(it);
  }
  // Edges into the current equation are drawn thick: forward, from every input; reverse,
  // to the inputs that receive a contribution (not to constants).
  const cur = w.eq >= 0 ? L.rep[w.eq] : -1;
  let hotIns = [];
  if (w.phase === "forward") hotIns = d.eqs.ins[w.eq];
  else if (w.phase === "reverse") hotIns = sendsOf(d.reverse[w.k]).map(([i]) => d.eqs.ins[w.eq][i]);
  const curIns = new Set(hotIns.map((r) => L.rep[r]));
  const edges = L.edges.map(([a, b, count]) => ({
    a, b, hot: b === cur && curIns.has(a), count: a < X.N && b < X.N ? count : 1,
  }));
  return { scene, edges, reverse, cur };
}

// -- drawing: SVG for small graphs, a canvas for large ones ---------------------------------
// An edge leaves the bottom of a and enters the top of b (a cubic curve), each end shifted
// towards the other node so that edges into one node do not pile up on one point; an edge
// that skips a row bends sideways around the nodes between. Returns the four points.
function edgePath(L, a, b) {
  const ca = L.x[a] + L.w[a] / 2;
  const cb = L.x[b] + L.w[b] / 2;
  const shift = (d, w) => Math.max(-w / 3, Math.min(w / 3, d * 0.3));
  const x1 = ca + shift(cb - ca, L.w[a]);
  const y1 = L.y[a] + L.h[a];
  const x2 = cb + shift(ca - cb, L.w[b]);
  const y2 = L.y[b];
  const span = y2 - y1;
  if (span > GAP_Y + SIZE.eq[1] && Math.abs(x2 - x1) < 90) { // room for a node between
    const bend = (ca >= cb ? 1 : -1) * 95; // on the side the edge comes from
    return [x1, y1, x1 + bend, y1 + span / 4, x2 + bend, y2 - span / 4, x2, y2];
  }
  const dy = Math.max(18, Math.min(80, span / 2));
  return [x1, y1, x1, y1 + dy, x2, y2 - dy, x2, y2];
}

// What a node shows of a value: the summary when short; a long array's shape and norm.
const brief = (X, node, text, limit = 16) => {
  if (text.length <= 15) return text;
  const norm = text.match(/‖·‖=\S+$/);
  if (!norm) return clip(text, limit);
  const dims = X.d.shapes[X.d.nodes.shape[node]][0].split("×");
  return clip(`(${dims.join(", ")}${dims.length === 1 ? "," : ""}) ${norm[0]}`, limit);
};

// A long edge (more than a row apart: a weight used all along) is drawn faint.
const isLong = (L, a, b) => L.y[b] - (L.y[a] + L.h[a]) > 2 * GAP_Y + 60;

function svgOf(X, L, S) {
  const out = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${L.width}" height="${L.height}" role="img" aria-label="computation graph">`);
  out.push(`<defs><marker id="wgx-a" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" fill="var(--wgx-edge)"/></marker>`
    + `<marker id="wgx-h" viewBox="0 0 10 10" refX="8" refY="5" markerUnits="userSpaceOnUse" markerWidth="11" markerHeight="11" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" fill="var(--wgx-current)"/></marker></defs>`);
  // Open groups first (frames behind everything), then edges, then nodes.
  for (const it of S.scene) {
    if (it.kind !== "group" || !it.open) continue;
    out.push(`<g data-item="${it.item}"><rect x="${it.x}" y="${it.y}" width="${it.w}" height="${it.h}" rx="8" fill="none" stroke="var(--wgx-line)" stroke-dasharray="5 4"/>`
      + `<text x="${it.x + 8}" y="${it.y + 15}" font-size="11.5" fill="var(--wgx-muted)">▾ ${esc(it.lines[0][0])}</text></g>`);
  }
  for (const e of S.edges) {
    const p = edgePath(L, e.a, e.b);
    const path = `M${p[0]},${p[1]} C${p[2]},${p[3]} ${p[4]},${p[5]} ${p[6]},${p[7]}`;
    if (e.hot) {
      out.push(`<path d="${path}" fill="none" stroke="var(--wgx-current)" stroke-width="4" ${S.reverse ? 'marker-start="url(#wgx-h)"' : 'marker-end="url(#wgx-h)"'}/>`);
    } else if (isLong(L, e.a, e.b)) {
      out.push(`<path d="${path}" fill="none" stroke="var(--wgx-edge)" stroke-width="1" opacity="0.35"/>`);
    } else {
      out.push(`<path d="${path}" fill="none" stroke="var(--wgx-edge)" stroke-width="1.3" marker-end="url(#wgx-a)"/>`);
    }
    if (e.count > 1) { // used more than once by one equation: say how often
      out.push(`<text x="${p[6] + 7}" y="${p[7] - 5}" font-size="12" font-weight="600" paint-order="stroke" stroke="var(--wgx-bg)" stroke-width="4" fill="${e.hot ? "var(--wgx-current)" : "var(--wgx-muted)"}">×${e.count}</text>`);
    }
  }
  for (const it of S.scene) {
    if (it.kind === "group" && it.open) continue;
    out.push(svgNode(it, S.reverse));
  }
  out.push("</svg>");
  return out.join("");
}

function colours(it, reverse) {
  const st = it.st;
  let fill = "var(--wgx-bg)";
  let stroke = "var(--wgx-line)";
  let width = 1.5;
  let dash = "";
  let text = "var(--wgx-fg)";
  if (it.kind === "leaf") { stroke = "var(--wgx-leaf)"; width = 3; fill = "var(--wgx-bg)"; }
  if (it.kind === "const") { stroke = "var(--wgx-faint)"; dash = "4 3"; fill = "var(--wgx-sunk)"; }
  if (it.kind === "group") { fill = "var(--wgx-panel)"; stroke = "var(--wgx-muted)"; width = 1.5; }
  if (st.future) { stroke = "var(--wgx-line)"; dash = "3 3"; text = "var(--wgx-faint)"; }
  if (st.done && reverse) { stroke = "var(--wgx-done)"; width = 2.5; }
  if (st.current) {
    fill = "var(--wgx-current-soft)"; stroke = "var(--wgx-current)"; width = 4; dash = "";
    text = "var(--wgx-on-current)";
  }
  return { fill, stroke, width, dash, text };
}

function svgNode(it, reverse) {
  const c = colours(it, reverse);
  const { x, y, w, h } = it;
  const dash = c.dash ? ` stroke-dasharray="${c.dash}"` : "";
  let shape;
  if (it.kind === "leaf" || it.kind === "const") {
    shape = `<ellipse cx="${x + w / 2}" cy="${y + h / 2}" rx="${w / 2}" ry="${h / 2}" fill="${c.fill}" stroke="${c.stroke}" stroke-width="${c.width}"${dash}/>`;
    if (it.kind === "leaf") { // a second ring: "requires grad" in shape as well as hue
      shape += `<ellipse cx="${x + w / 2}" cy="${y + h / 2}" rx="${w / 2 - 4}" ry="${h / 2 - 4}" fill="none" stroke="${it.st.current ? c.stroke : "var(--wgx-leaf)"}" stroke-width="1"/>`;
    }
  } else if (it.kind === "group") {
    shape = `<rect x="${x + 5}" y="${y + 5}" width="${w}" height="${h}" rx="6" fill="${c.fill}" stroke="${c.stroke}" stroke-width="1"/>`
      + `<rect x="${x}" y="${y}" width="${w}" height="${h}" rx="6" fill="${c.fill}" stroke="${c.stroke}" stroke-width="${c.width}"${dash}/>`;
    const frac = it.st.count ? it.st.done / it.st.count : 0;
    shape += `<rect x="${x + 8}" y="${y + h - 7}" width="${(w - 16) * frac}" height="3" fill="${reverse ? "var(--wgx-done)" : "var(--wgx-muted)"}"/>`;
  } else {
    shape = `<rect x="${x}" y="${y}" width="${w}" height="${h}" rx="6" fill="${c.fill}" stroke="${c.stroke}" stroke-width="${c.width}"${dash}/>`;
    if (it.st.done && reverse && !it.st.current) { // done: a double border
      shape += `<rect x="${x + 3}" y="${y + 3}" width="${w - 6}" height="${h - 6}" rx="4" fill="none" stroke="var(--wgx-done)" stroke-width="1"/>`;
    }
  }
  const lines = it.lines;
  const lh = 14;
  const y0 = y + h / 2 - ((lines.length - 1) * lh) / 2 + 4;
  const texts = lines.map(([t, cls], k) => {
    const weight = cls === "b" ? ' font-weight="600"' : "";
    const style = cls === "i" ? ' font-style="italic"' : "";
    const fill = cls === "a" ? (it.st.current ? c.text : "var(--wgx-done)") : cls === "m" || cls === "i" || cls === "t" ? (it.st.current ? c.text : "var(--wgx-muted)") : c.text;
    const family = cls === "b" ? "" : ' font-family="var(--wgx-mono)"';
    return `<text x="${x + w / 2}" y="${y0 + k * lh}" text-anchor="middle" font-size="${cls === "b" ? 12.5 : 11.5}" fill="${fill}"${weight}${style}${family}>${esc(t)}</text>`;
  }).join("");
  const title = it.kind === "group" ? "click to expand" : "click to go to its step";
  return `<g data-item="${it.item}"><title>${title}</title>${shape}${texts}</g>`;
}

function drawCanvas(X, L, S, canvas, view) {
  // Colours resolved by the browser (CSS variables, color-mix) through a probe element.
  const probe = X.els.probe;
  const resolved = new Map();
  const col = (value) => {
    if (!resolved.has(value)) {
      probe.style.color = value;
      resolved.set(value, getComputedStyle(probe).color);
    }
    return resolved.get(value);
  };
  const v = (name) => col(`var(${name})`);
  const css = getComputedStyle(view);
  const dpr = window.devicePixelRatio || 1;
  const vw = Math.min(view.clientWidth, L.width);
  const vh = Math.min(view.clientHeight || 520, 520, L.height);
  const sx = view.scrollLeft;
  const sy = view.scrollTop;
  canvas.width = Math.max(1, vw * dpr);
  canvas.height = Math.max(1, vh * dpr);
  canvas.style.width = `${vw}px`;
  canvas.style.height = `${vh}px`;
  canvas.style.transform = `translate(${sx}px, ${sy}px)`;
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, -sx * dpr, -sy * dpr);
  ctx.clearRect(sx, sy, vw, vh);
  const inView = (x, y, w, h) => x + w >= sx && x <= sx + vw && y + h >= sy && y <= sy + vh;
  const mono = css.getPropertyValue("--wgx-mono").trim() || "monospace";
  const font = css.getPropertyValue("--wgx-font").trim() || "sans-serif";
  for (const it of S.scene) {
    if (it.kind !== "group" || !it.open || !inView(it.x, it.y, it.w, it.h)) continue;
    ctx.setLineDash([5, 4]);
    ctx.strokeStyle = v("--wgx-line");
    ctx.lineWidth = 1;
    ctx.strokeRect(it.x, it.y, it.w, it.h);
    ctx.setLineDash([]);
    ctx.fillStyle = v("--wgx-muted");
    ctx.font = `11.5px ${font}`;
    ctx.textAlign = "left";
    ctx.fillText(`▾ ${it.lines[0][0]}`, it.x + 8, it.y + 15);
  }
  for (const e of S.edges) {
    const p = edgePath(L, e.a, e.b);
    const [x1, y1, x2, y2] = [p[0], p[1], p[6], p[7]];
    const left = Math.min(x1, x2, p[2]);
    if (!inView(left, Math.min(y1, y2), Math.max(x1, x2, p[2]) - left + 1, Math.abs(y2 - y1) + 1)) continue;
    ctx.beginPath();
    ctx.moveTo(x1, y1);
    ctx.bezierCurveTo(p[2], p[3], p[4], p[5], x2, y2);
    ctx.strokeStyle = e.hot ? v("--wgx-current") : v("--wgx-edge");
    ctx.lineWidth = e.hot ? 4 : 1.2;
    ctx.globalAlpha = !e.hot && isLong(L, e.a, e.b) ? 0.35 : 1;
    ctx.stroke();
    if (!isLong(L, e.a, e.b) || e.hot) { // an arrowhead: down into b, or up into a when hot in reverse
      const [tx, ty, dir] = e.hot && S.reverse ? [x1, y1, -1] : [x2, y2, 1];
      const size = e.hot ? 9 : 6;
      ctx.beginPath();
      ctx.moveTo(tx, ty);
      ctx.lineTo(tx - size / 2, ty - dir * size);
      ctx.lineTo(tx + size / 2, ty - dir * size);
      ctx.closePath();
      ctx.fillStyle = ctx.strokeStyle;
      ctx.fill();
    }
    if (e.count > 1) {
      ctx.font = `600 12px ${font}`;
      ctx.textAlign = "left";
      ctx.fillStyle = e.hot ? v("--wgx-current") : v("--wgx-muted");
      ctx.fillText(`×${e.count}`, x2 + 7, y2 - 5);
    }
    ctx.globalAlpha = 1;
  }
  for (const it of S.scene) {
    if ((it.kind === "group" && it.open) || !inView(it.x, it.y, it.w, it.h)) continue;
    const c = colours(it, S.reverse);
    ctx.setLineDash(c.dash ? c.dash.split(" ").map(Number) : []);
    ctx.lineWidth = c.width;
    ctx.fillStyle = col(c.fill);
    ctx.strokeStyle = col(c.stroke);
    ctx.beginPath();
    if (it.kind === "leaf" || it.kind === "const") {
      ctx.ellipse(it.x + it.w / 2, it.y + it.h / 2, it.w / 2, it.h / 2, 0, 0, 2 * Math.PI);
    } else {
      ctx.roundRect(it.x, it.y, it.w, it.h, 6);
    }
    ctx.fill();
    ctx.stroke();
    ctx.setLineDash([]);
    if (it.kind === "leaf") {
      ctx.beginPath();
      ctx.lineWidth = 1;
      ctx.ellipse(it.x + it.w / 2, it.y + it.h / 2, it.w / 2 - 4, it.h / 2 - 4, 0, 0, 2 * Math.PI);
      ctx.stroke();
    }
    if (it.kind === "group") {
      const frac = it.st.count ? it.st.done / it.st.count : 0;
      ctx.fillStyle = S.reverse ? v("--wgx-done") : v("--wgx-muted");
      ctx.fillRect(it.x + 8, it.y + it.h - 7, (it.w - 16) * frac, 3);
    }
    ctx.textAlign = "center";
    const lh = 14;
    const y0 = it.y + it.h / 2 - ((it.lines.length - 1) * lh) / 2 + 4;
    it.lines.forEach(([t, cls], k) => {
      ctx.font = cls === "b" ? `600 12.5px ${font}` : `11.5px ${mono}`;
      ctx.fillStyle = it.st.current ? col(c.text) : cls === "a" ? v("--wgx-done")
        : cls === "b" || cls === "v" ? col(c.text) : v("--wgx-muted");
      ctx.fillText(t, it.x + it.w / 2, y0 + k * lh);
    });
  }
}

// -- the side panel ------------------------------------------------------------------------
function panelHTML(X, s) {
  const { d, names, bars } = X;
  if (!X.total) return `<div class="wgx-empty">No equations were recorded: nothing depends on a tensor that requires grad.</div>`;
  const v = stepView(X, s);
  const w = where(X, s);
  const h = [];
  const line = (e) => {
    const j = d.eqs.line[e];
    if (j < 0) return "";
    const [place, fn, no, text] = d.lines[j];
    return `<div class="wgx-note">${esc(place)}${fn !== "<module>" ? ` · ${esc(fn)}()` : ""}, line ${no}: <span class="wgx-m">${esc(text)}</span></div>`;
  };
  if (v.phase === "forward") {
    const e = v.node;
    const op = d.ops[d.eqs.op[e]];
    h.push(`<h4>forward · equation ${e}</h4><div class="wgx-m wgx-cur">${esc(v.equation)}</div>`);
    const origin = (r) => (d.nodes.kind[r] === 1 ? "an input that requires grad"
      : d.nodes.kind[r] === 2 ? "a constant" : `computed at step ${(X.owner.get(r) ?? r) + 1}`);
    const from = d.eqs.ins[e].map((r) => `<div><span class="wgx-m">${esc(names[r])} = ${esc(d.nodes.value[r] ?? missing(X, r))}</span> <span class="wgx-note">${origin(r)}</span></div>`);
    h.push(`<div class="wgx-kv wgx-next"><b>from</b><span>${from.join("")}</span><b>op</b><span>${esc(op[0])}${d.eqs.params[e] ? ` <span class="wgx-m">(${esc(d.eqs.params[e])})</span>` : ""}</span>`
      + (X.outs.has(e) // several outputs: each with its shape and value
        ? `<b>outputs</b><span class="wgx-m">${[e, ...X.outs.get(e)].map((o) => `<div>${esc(names[o])}: ${esc(d.shapes[d.nodes.shape[o]][0])} = ${esc(d.nodes.value[o] ?? missing(X, o))}</div>`).join("")}</span></div>`
        : `<b>shape</b><span class="wgx-m">${esc(d.shapes[d.nodes.shape[e]][0])}</span>`
      + `<b>value</b><span class="wgx-m">${d.nodes.value[e] != null ? esc(d.nodes.value[e])
        : X.changed.has(e) ? "<i>changed since</i> (an in-place operation wrote another value into its memory after this step)"
          : `<i>not kept</i> (record inside <code>wg.keep_values()</code> to see it)`}</span></div>`));
    if (d.dual) {
      h.push(`<h4>tangents (forward mode)</h4>`);
      const tan = d.nodes.tangent[e] || [];
      const rows = d.eqs.ins[e].map((r) => `<b>${esc(names[r])}</b><span class="wgx-m">${esc(dualText(d.nodes.value[r], d.nodes.tangent[r]))}</span>`);
      rows.push(`<b class="wgx-cur">${esc(names[e])}</b><span class="wgx-m wgx-cur">${esc(dualText(d.nodes.value[e], tan))}</span>`);
      h.push(`<div class="wgx-kv">${rows.join("")}</div><div class="wgx-note">primal + tangent·ε: each ε is one perturbation (${esc(d.eps.join(", "))}), ε² = 0.</div>`);
    }
    h.push(`<h4>rule (used on the way back)</h4><div class="wgx-m">${esc(op[2] || op[0])}</div>`);
    h.push(line(e));
    if (e === X.nF - 1 && X.nR) h.push(`<div class="wgx-note">Next: the reverse sweep, from the output back to the inputs.</div>`);
    return h.join("");
  }
  if (v.phase === "seed") {
    h.push(`<h4>reverse · the seed</h4>`);
    for (const t of v.seeds) h.push(`<div class="wgx-m wgx-cur">${esc(t)}</div>`);
    h.push(`<div class="wgx-note">The sweep starts at the output: the derivative of the output with respect to itself is 1. From here each step takes one equation, newest first, and sends its adjoint (x̄ = ∂output/∂x) back to the inputs.</div>`);
    if (v.note) h.push(`<div class="wgx-note"><b>Note:</b> ${esc(v.note)}</div>`);
    if (v.sweepNote) h.push(`<div class="wgx-note wgx-sweep-note"><b>This sweep:</b> ${esc(v.sweepNote)}</div>`);
    return h.join("");
  }
  if (v.phase === "hook") {
    const leaf = d.nodes.kind[v.node] === 1;
    h.push(`<h4>reverse · hook on ${esc(names[v.node])}</h4>`);
    h.push(`<div class="wgx-kv wgx-next"><b>hook</b><span class="wgx-m">${esc(v.hooks)}</span>`
      + `<b>in</b><span class="wgx-m">${esc(v.before)}</span>`
      + `<b>out</b><span class="wgx-m wgx-cur">${v.after === null ? "<i>not run</i>" : esc(v.after)}</span></div>`);
    h.push(v.after === null
      ? `<div class="wgx-note">This view replays the sweep without running hooks. In backward() the hook's return value replaces ${esc(bars[v.node])}${leaf ? ` before it is added to ${esc(names[v.node])}.grad` : " before its rule runs"}, so what follows may differ from what .grad gets.</div>`
      : `<div class="wgx-note">registered with register_hook: what it returned replaced ${esc(bars[v.node])}${leaf ? `; ${esc(names[v.node])}.grad received it` : ", and the rule of this equation runs on it"}.</div>`);
    return h.join("");
  }
  const e = v.node;
  h.push(`<h4>reverse · equation ${e}</h4><div class="wgx-m">${esc(v.equation)}</div>`);
  h.push(`<div class="wgx-kv wgx-next"><b>in</b><span class="wgx-m wgx-cur">${esc(v.incoming)}</span>`);
  const rules = v.sends.map((x) => `<div class="wgx-m">${esc(x.rule)}${x.numbers ? ` <span class="wgx-note">= ${esc(x.numbers)}</span>` : ""}</div>`);
  const got = new Set(v.sends.map((x) => x.target));
  d.eqs.ins[e].forEach((r) => {
    if (!got.has(r)) rules.push(`<div class="wgx-note">${esc(names[r])}: ${d.nodes.kind[r] === 2 ? "a constant" : "no gradient"}, no adjoint</div>`);
  });
  h.push(`<b>rule</b><span>${rules.join("")}</span>`);
  h.push(`<b>out</b><span>${v.sends.map((x) => `<div class="wgx-m">${esc(bars[x.target])} ← ${esc(x.gets)}</div>`).join("")}</span></div>`);
  h.push(`<div class="wgx-note">rule of ${esc(d.ops[d.eqs.op[e]][0])}: <span class="wgx-m">${esc(d.ops[d.eqs.op[e]][2])}</span></div>`);
  if (v.inner) h.push(`<div class="wgx-note wgx-inner">${esc(v.inner)}</div>`);
  // Each running sum, term by term (arrays by shape and norm: their entries are above).
  const sumText = (x) => {
    if (plain(x.gets)) return x.sum;
    const short = (t) => (t === "0" ? t : brief(X, x.target, t, 40));
    return `${bars[x.target]} = ${short(x.before)} + ${short(x.gets)} = ${short(x.total)}`;
  };
  h.push(`<h4>adjoints so far</h4><div class="wgx-m">${v.sends.map((x) => `<div class="wgx-adj">${esc(sumText(x))}</div>`).join("")}</div>`);
  const chips = [];
  const fresh = new Set(v.sends.map((x) => x.target));
  const known = [];
  for (const [node, got] of received(X)) if (got[0][0] <= w.k) known.push([node, got]);
  if (known.length > 14) chips.push(`<span class="wgx-note">… ${known.length - 14} more</span>`);
  for (const [node, got] of known.slice(-14)) { // the newest last
    const terms = got.filter((g) => g[0] <= w.k);
    const text = terms[terms.length - 1][3] // the hook's return value
      ? `${bars[node]} = ${terms[terms.length - 1][1]} (hook)`
      : terms.length > 1 && terms.length <= 4
      ? `${bars[node]} = ${terms.map((g) => g[2]).join(" + ")} = ${terms[terms.length - 1][1]}`
      : `${bars[node]} = ${terms[terms.length - 1][1]}`;
    chips.push(`<span class="wgx-chip${fresh.has(node) ? " new" : ""}">${esc(clip(text, 40))}</span>`);
  }
  h.push(`<div class="wgx-sums wgx-next-sums">${chips.join("")}</div>`);
  const jac = [];
  const outSize = d.shapes[d.nodes.shape[e]][1];
  const count = (k) => (k == null ? "?" : k.toLocaleString("en-US"));
  for (const x of v.sends) {
    const inSize = d.shapes[d.nodes.shape[x.target]][1];
    const entries = `${esc(x.jacobian[1])} entr${x.jacobian[1] === "1" ? "y" : "ies"}`;
    jac.push(`<div>∂${esc(names[e])}/∂${esc(x.to)} is <b>${esc(x.jacobian[0])}</b>: ${entries}, <b>${esc(x.jacobian[2])}</b>, never built. `
      + `The VJP used ${esc(bars[e])} (${count(outSize)} number${outSize === 1 ? "" : "s"}) and sent ${count(inSize)} number${inSize === 1 ? "" : "s"} to ${esc(bars[x.target])}.</div>`);
  }
  if (jac.length) h.push(`<div class="wgx-jac"><h4>Jacobian-free</h4>${jac.join("")}</div>`);
  h.push(line(e));
  return h.join("");
}

// -- the widget ----------------------------------------------------------------------------
function render({ model, el }) {
  const started = performance.now();
  const root = document.createElement("div");
  root.className = "wgx";
  root.tabIndex = 0;
  root.setAttribute("data-lm-suppress-shortcuts", "true"); // arrows step, not move cells
  el.replaceChildren(root);
  let X = null;
  let L = null;
  let timer = null;
  let mode = "svg";
  let lastScrolledTo = -1;

  const legend = () => {
    const icon = (shape) => `<svg width="26" height="16">${shape}</svg>`;
    return [
      [icon('<ellipse cx="13" cy="8" rx="11" ry="6.5" fill="none" stroke="var(--wgx-leaf)" stroke-width="2.5"/><ellipse cx="13" cy="8" rx="8" ry="4" fill="none" stroke="var(--wgx-leaf)" stroke-width="1"/>'), "input that requires grad (double ring)"],
      [icon('<ellipse cx="13" cy="8" rx="11" ry="6" fill="var(--wgx-sunk)" stroke="var(--wgx-faint)" stroke-dasharray="3 2"/>'), "constant (dashed)"],
      [icon('<rect x="2" y="2" width="22" height="12" rx="3" fill="var(--wgx-bg)" stroke="var(--wgx-line)" stroke-width="1.5"/>'), "computed"],
      [icon('<rect x="2" y="2" width="22" height="12" rx="3" fill="var(--wgx-current-soft)" stroke="var(--wgx-current)" stroke-width="3"/>'), "current step (thick, filled)"],
      [icon('<rect x="2" y="2" width="22" height="12" rx="3" fill="var(--wgx-bg)" stroke="var(--wgx-done)" stroke-width="2"/><rect x="4.5" y="4.5" width="17" height="7" rx="2" fill="none" stroke="var(--wgx-done)"/>'), "swept: adjoint known (double border)"],
      [icon('<rect x="4" y="4" width="20" height="11" rx="3" fill="var(--wgx-panel)" stroke="var(--wgx-muted)"/><rect x="1" y="1" width="20" height="11" rx="3" fill="var(--wgx-panel)" stroke="var(--wgx-muted)"/>'), "group: click to expand"],
    ].map(([i, t]) => `<span>${i}${t}</span>`).join("");
  };

  let generation = 0;
  const build = () => {
    const raw = model.get("frames");
    clearInterval(timer);
    timer = null;
    const mine = ++generation;
    if (raw && raw.format === FORMAT && raw.packed && raw.packing !== PACKING) {
      root.innerHTML = `<div class="wgx-empty">This explorer was packed by another version of wengert (packing ${esc(raw.packing ?? 1)}); run the cell again.</div>`;
      return;
    }
    if (raw && raw.format === FORMAT && raw.packed) {
      root.innerHTML = `<div class="wgx-empty">Unpacking ${esc(raw.equations)} equations…</div>`;
      unpack(raw).then((d) => { if (mine === generation) setup(d); }, (err) => {
        root.innerHTML = `<div class="wgx-empty">Could not unpack the frames: ${esc(err)}</div>`;
      });
      return;
    }
    setup(raw);
  };

  const setup = (d) => {
    if (!d || d.format !== FORMAT) {
      root.innerHTML = `<div class="wgx-empty">This explorer was made by another version of wengert (data format ${esc(d && d.format)}); run the cell again.</div>`;
      return;
    }
    X = prepare(d);
    X.open = new Uint8Array(X.G).fill(d.layout.collapsed ? 0 : 1);
    root.innerHTML = `<div class="wgx-head"><span class="wgx-title">wengert explorer — <code>${esc(d.title)}</code></span><span class="wgx-label"></span></div>`
      + `<div class="wgx-controls"><button data-do="first" title="first step (Home)" aria-label="first step">${icon("first")}</button>`
      + `<button data-do="prev" title="previous step (←)" aria-label="previous step">${icon("prev")}</button>`
      + `<button data-do="play" title="play / pause (space)" aria-label="play">${icon("play")}</button>`
      + `<button data-do="next" title="next step (→)" aria-label="next step">${icon("next")}</button>`
      + `<button data-do="last" title="last step (End)" aria-label="last step">${icon("last")}</button>`
      + `<input type="range" min="0" max="${Math.max(X.total - 1, 0)}" value="0" aria-label="step">`
      + `<span class="wgx-phases"><span data-phase="forward">forward</span><span data-phase="reverse">reverse</span></span></div>`
      + `<div class="wgx-main"><div class="wgx-graph"></div><div class="wgx-side"></div></div>`
      + `<div class="wgx-legend">${legend()}</div><div class="wgx-table"></div>`;
    X.els = {
      label: root.querySelector(".wgx-label"),
      slider: root.querySelector("input[type=range]"),
      play: root.querySelector('[data-do="play"]'),
      graph: root.querySelector(".wgx-graph"),
      side: root.querySelector(".wgx-side"),
      table: root.querySelector(".wgx-table"),
      phases: root.querySelectorAll(".wgx-phases span"),
    };
    const tbody = document.createElement("div");
    tbody.className = "wgx-tbody";
    X.els.table.appendChild(tbody);
    X.els.tbody = tbody;
    const probe = document.createElement("span");
    probe.className = "wgx-probe";
    root.appendChild(probe);
    X.els.probe = probe;
    relayout();
    draw();
    root.dataset.drawnMs = String(Math.round(performance.now() - started));
    root.dispatchEvent(new CustomEvent("wgx-drawn", { bubbles: true }));
  };

  const relayout = () => {
    L = layout(X, X.open);
    mode = L.items.length > SVG_LIMIT ? "canvas" : "svg";
    const g = X.els.graph;
    g.innerHTML = "";
    if (mode === "canvas") {
      const spacer = document.createElement("div");
      spacer.className = "wgx-spacer";
      spacer.style.width = `${L.width}px`;
      spacer.style.height = `${L.height}px`;
      const canvas = document.createElement("canvas");
      spacer.appendChild(canvas);
      g.appendChild(spacer);
      X.els.canvas = canvas;
      g.style.height = `${Math.min(520, L.height + 4)}px`;
    } else {
      X.els.canvas = null;
      g.style.height = "";
    }
    g.dataset.mode = mode;
    lastScrolledTo = -1;
  };

  const step = () => Math.max(0, Math.min(model.get("step") | 0, Math.max(X.total - 1, 0)));

  const draw = () => {
    if (!X) return;
    const s = step();
    const els = X.els;
    els.label.textContent = label(X, s);
    els.slider.value = String(s);
    const w = X.total ? where(X, s) : { phase: "forward", eq: -1 };
    els.phases.forEach((p) => {
      const forward = p.dataset.phase === "forward";
      p.classList.toggle("on", forward === (w.phase === "forward"));
      p.classList.toggle("off", forward ? !X.nF : !X.nR);
    });
    els.play.innerHTML = icon(timer ? "pause" : "play");
    els.play.setAttribute("aria-label", timer ? "pause" : "play");
    if (X.total) {
      const S = sceneAt(X, L, s);
      if (mode === "svg") els.graph.innerHTML = svgOf(X, L, S);
      else drawCanvas(X, L, S, els.canvas, els.graph);
      els.graph.dataset.current = String(S.cur);
      if (S.cur >= 0 && S.cur !== lastScrolledTo) { // keep the current item in view
        lastScrolledTo = S.cur;
        const g = els.graph;
        const x = L.x[S.cur];
        const y = L.y[S.cur];
        if (x < g.scrollLeft || x + L.w[S.cur] > g.scrollLeft + g.clientWidth) g.scrollLeft = x - g.clientWidth / 2;
        if (y < g.scrollTop || y + L.h[S.cur] > g.scrollTop + g.clientHeight) g.scrollTop = y - g.clientHeight / 2;
        if (mode === "canvas") drawCanvas(X, L, S, els.canvas, els.graph);
      }
      X.scene = S;
    } else {
      els.graph.innerHTML = "";
    }
    els.side.innerHTML = panelHTML(X, s);
    drawTable(s, true);
  };

  const drawTable = (s, follow) => {
    const { d, names } = X;
    const t = X.els.table;
    const nRows = X.leafCount + X.n;
    const w = X.total ? where(X, s) : { phase: "forward", eq: -1, k: -2 };
    const curRow = w.eq >= 0 ? X.leafCount + w.eq : -1;
    if (follow && curRow >= 0) {
      const top = (curRow + 1) * ROW;
      if (top < t.scrollTop + ROW || top + ROW > t.scrollTop + t.clientHeight) t.scrollTop = top - t.clientHeight / 2;
    }
    const first = Math.max(0, Math.floor(t.scrollTop / ROW) - 4);
    const last = Math.min(nRows, first + Math.ceil((t.clientHeight || 178) / ROW) + 8);
    const tangents = d.dual && w.phase === "forward";
    const rows = [`<div class="wgx-tr wgx-th"><span>#</span><span>name</span><span>op</span><span>inputs</span><span>shape</span><span>value</span><span>${tangents ? "tangent" : "adjoint"}</span><span>line</span></div>`];
    const leaves = X.leaves;
    for (let r = first; r < last; r++) {
      const node = r < X.leafCount ? leaves[r] : r - X.leafCount;
      const isEq = r >= X.leafCount;
      const future = isEq && w.phase === "forward" && node > w.eq;
      const cls = `wgx-tr${r === curRow ? " cur" : ""}${future ? " future" : ""}`;
      // an equation with several outputs: each one's shape, value and adjoint
      const outs = isEq && X.outs.has(node) ? [node, ...X.outs.get(node)] : [node];
      const shape = outs.map((o) => d.shapes[d.nodes.shape[o]][0]).join(", ");
      const value = future ? "·" : outs.map((o) => d.nodes.value[o] ?? missing(X, o)).join("; ");
      let adj = "";
      if (tangents) {
        if (!future) adj = (d.nodes.tangent[node] || []).map(([m, t]) => signed(t, m)).join(" ");
      } else if (w.phase !== "forward") {
        const got = outs.map((o) => adjointAt(X, o, w.k));
        const swept = X.sweptAt[node] >= 0 && X.sweptAt[node] <= w.k;
        if (got.some((g) => g != null)) adj = got.map((g) => g ?? (swept ? "not reached" : "·")).join("; ");
      }
      const op = isEq ? d.ops[d.eqs.op[node]][0] : "input";
      const ins = isEq ? d.eqs.ins[node].map((x) => names[x]).join(", ") : "";
      const j = isEq ? d.eqs.line[node] : -1;
      const source = j >= 0 ? `${d.lines[j][2]}: ${d.lines[j][3]}` : "";
      rows.push(`<div class="${cls}" data-node="${node}" style="top:${(r + 1) * ROW}px"><span>${isEq ? node : "—"}</span><span>${esc(isEq ? outNames(X, node) : names[node])}</span><span>${esc(op)}</span><span>${esc(ins)}</span>`
        + `<span>${esc(shape)}</span><span class="wgx-m">${esc(value)}</span><span class="wgx-m wgx-adj">${esc(adj)}</span><span>${esc(source)}</span></div>`);
    }
    X.els.tbody.style.height = `${(nRows + 1) * ROW}px`;
    X.els.tbody.innerHTML = rows.join("");
  };

  const go = (s) => {
    if (!X || !X.total) return;
    const clamped = Math.max(0, Math.min(s, X.total - 1));
    if (clamped === step()) return;
    model.set("step", clamped);
    model.save_changes();
  };

  const stepOf = (node) => { // the step of an equation in the phase on screen
    const w = where(X, step());
    if (w.phase === "forward" || !X.nR) return node < X.nF ? node : null;
    const k = X.sweptAt[node];
    return k >= 0 ? X.nF + 1 + k : null;
  };

  const play = () => {
    if (timer) { clearInterval(timer); timer = null; draw(); return; }
    if (step() >= X.total - 1) go(0);
    timer = setInterval(() => {
      if (step() >= X.total - 1) { clearInterval(timer); timer = null; draw(); return; }
      go(step() + 1);
    }, PLAY_MS);
    draw();
  };

  const onClick = (ev) => {
    if (!X) return;
    const btn = ev.target.closest("button[data-do]");
    if (btn) {
      const s = step();
      ({ first: () => go(0), prev: () => go(s - 1), next: () => go(s + 1), last: () => go(X.total - 1), play })[btn.dataset.do]();
      return;
    }
    const row = ev.target.closest("[data-node]");
    if (row) {
      const node = +row.dataset.node;
      if (node < X.n) { const s = stepOf(node); if (s != null) go(s); }
      return;
    }
    let item = null;
    const hit = ev.target.closest("[data-item]");
    if (hit) item = +hit.dataset.item;
    else if (mode === "canvas" && ev.target === X.els.canvas) {
      const r = X.els.graph.getBoundingClientRect();
      const px = ev.clientX - r.left + X.els.graph.scrollLeft;
      const py = ev.clientY - r.top + X.els.graph.scrollTop;
      for (const it of X.scene.scene) { // the innermost item under the pointer
        if (px >= it.x && px <= it.x + it.w && py >= it.y && py <= it.y + it.h) {
          if (it.kind === "group" && it.open && py > it.y + HEAD) continue;
          item = it.item;
        }
      }
    }
    if (item == null) return;
    if (item >= X.N) { // a group: expand or collapse
      X.open[item - X.N] ^= 1;
      relayout();
      draw();
    } else if (item < X.n) {
      const s = stepOf(item);
      if (s != null) go(s);
    }
  };

  const onKey = (ev) => {
    if (!X || !X.total) return;
    if (ev.target.type === "range" && ev.key !== " ") return; // the slider steps by itself
    const s = step();
    const act = { ArrowRight: s + 1, ArrowDown: s + 1, ArrowLeft: s - 1, ArrowUp: s - 1, Home: 0, End: X.total - 1 }[ev.key];
    if (act !== undefined) go(act);
    else if (ev.key === " ") play();
    else return;
    ev.preventDefault();
    ev.stopPropagation();
  };

  const onSlide = (ev) => go(+ev.target.value);
  const onScroll = (ev) => {
    if (!X) return;
    if (ev.target === X.els.table) drawTable(step(), false);
    else if (ev.target === X.els.graph && mode === "canvas" && X.scene) drawCanvas(X, L, X.scene, X.els.canvas, X.els.graph);
  };

  root.addEventListener("click", onClick);
  root.addEventListener("keydown", onKey);
  root.addEventListener("input", onSlide);
  root.addEventListener("scroll", onScroll, true);
  const onStep = () => draw();
  model.on("change:step", onStep);
  model.on("change:frames", build);
  // A canvas covers only the visible part of the graph: draw again when that changes.
  const resized = typeof ResizeObserver === "undefined" ? null : new ResizeObserver(() => {
    if (X && mode === "canvas" && X.scene) drawCanvas(X, L, X.scene, X.els.canvas, X.els.graph);
  });
  build();
  if (resized) resized.observe(root);
  return () => {
    clearInterval(timer);
    if (resized) resized.disconnect();
    if (model.off) {
      model.off("change:step", onStep);
      model.off("change:frames", build);
    }
  };
}

export default { render };
