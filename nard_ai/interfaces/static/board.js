// The nard_ai web board (served by `nard serve` at /; API in nard_ai/interfaces/web.py).
//
// A board is the engine's layout (nard_ai.core.board): 26 signed counts seen from the side on roll,
// drawn at the bottom in white: board[1..24] its points (> 0 its checkers, < 0 the opponent's),
// board[25] its bar (>= 0), board[0] the opponent's bar (<= 0). The side on roll moves 24 -> 1.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const START = [0, -2, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2, 0];
// geometry of the SVG (viewBox 780 x 540): 6 points of 50 per quadrant, a bar of 40, trays on the right
const G = { left: 20, top: 20, bottom: 520, pw: 50, bar: 40, ph: 200, r: 22, tray: 680, trayW: 80 };

const state = {
  mode: "analyse",
  board: START.slice(),
  matchId: null, // the gnubg Match ID of the position entered, kept while the board is edited
  info: null, // the last /web/position answer
  preview: null, // a board shown in place of state.board (a play hovered in the table)
  game: null, // the game against the engine
  job: null, // the running rollout's id
  analysis: 0, // the number of the latest match analysis asked for: only its answer is shown
};

// ------------------------------------------------------------------ HTTP

async function api(method, path, body, raw) {
  const opts = { method, headers: {} };
  if (body !== undefined) {
    if (raw) {
      opts.body = body;
      opts.headers["Content-Type"] = "text/plain";
    } else {
      opts.body = JSON.stringify(body);
      opts.headers["Content-Type"] = "application/json";
    }
  }
  const res = await fetch(path, opts);
  const data = await res.json().catch(() => ({ detail: res.statusText }));
  if (!res.ok) {
    let detail = data.detail;
    if (Array.isArray(detail)) detail = detail.map((e) => `${(e.loc || []).join(".")}: ${e.msg}`).join("; ");
    throw new Error(`${res.status}: ${detail}`);
  }
  return data;
}

function say(text, ok) {
  const m = document.getElementById("message");
  m.textContent = text || "";
  m.className = ok ? "ok" : "";
}

function fail(err) {
  say(err.message || String(err));
}

// ------------------------------------------------------------------ board helpers

function swapSides(b) {
  // the opponent's view: its point p is our point 25 - p, signs flip (nard_ai.core.board.swap_sides)
  const out = new Array(26).fill(0);
  for (let p = 1; p <= 24; p++) out[25 - p] = -b[p];
  out[25] = -b[0];
  out[0] = -b[25];
  return out;
}

function offCounts(b) {
  let me = 0, opp = 0;
  for (const c of b) { if (c > 0) me += c; else opp -= c; }
  return [15 - me, 15 - opp];
}

function applyMove(b, m) {
  // one checker of the side on roll from m.from (25 = bar) to m.to (0 = off), hitting a blot
  const out = b.slice();
  out[m.from] -= 1;
  if (m.to !== 0) {
    if (out[m.to] === -1) { out[m.to] = 0; out[0] -= 1; }
    out[m.to] += 1;
  }
  return out;
}

function sameBoard(a, b) {
  for (let i = 0; i < 26; i++) if (a[i] !== b[i]) return false;
  return true;
}

function pointX(p) {
  // left edge of point p (1..24) in the mover's numbering
  if (p <= 6) return G.left + 6 * G.pw + G.bar + (6 - p) * G.pw;
  if (p <= 12) return G.left + (12 - p) * G.pw;
  if (p <= 18) return G.left + (p - 13) * G.pw;
  return G.left + 6 * G.pw + G.bar + (p - 19) * G.pw;
}

function el(name, attrs, parent) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

// ------------------------------------------------------------------ drawing

function drawBoard() {
  const svg = document.getElementById("board");
  svg.replaceChildren();
  const b = state.preview || state.board;
  el("rect", { x: G.left, y: G.top, width: 12 * G.pw + G.bar, height: G.bottom - G.top, fill: "#c9a66b" }, svg);
  el("rect", { x: G.left + 6 * G.pw, y: G.top, width: G.bar, height: G.bottom - G.top, fill: "#5a4330" }, svg);
  for (let p = 1; p <= 24; p++) {
    const x = pointX(p), top = p >= 13;
    const y0 = top ? G.top : G.bottom, y1 = top ? G.top + G.ph : G.bottom - G.ph;
    el("polygon", { points: `${x},${y0} ${x + G.pw},${y0} ${x + G.pw / 2},${y1}`,
      fill: p % 2 ? "#8b3a2b" : "#efe2c4" }, svg);
    const t = el("text", { x: x + G.pw / 2, y: top ? 13 : 533, class: "numbers" }, svg);
    t.textContent = p;
  }
  // trays: the side on roll's borne-off checkers at the bottom, the opponent's at the top
  el("rect", { x: G.tray, y: G.top, width: G.trayW, height: 235, fill: "#5a4330", "data-target": "off-opp" }, svg);
  el("rect", { x: G.tray, y: 285, width: G.trayW, height: 235, fill: "#5a4330", "data-target": "off-me" }, svg);
  const [offMe, offOpp] = offCounts(b);
  for (let i = 0; i < offOpp; i++) el("rect", { x: G.tray + 10, y: G.top + 5 + i * 15, width: 60, height: 12,
    class: "checker-opp", "pointer-events": "none" }, svg);
  for (let i = 0; i < offMe; i++) el("rect", { x: G.tray + 10, y: 505 - i * 15, width: 60, height: 12,
    class: "checker-me", "pointer-events": "none" }, svg);
  for (const [n, y, cls] of [[offOpp, 262, "numbers"], [offMe, 278, "numbers"]]) {
    const t = el("text", { x: G.tray + G.trayW / 2, y, class: cls }, svg);
    t.textContent = `off ${n}`;
  }
  // checkers
  for (let p = 1; p <= 24; p++) drawStack(svg, pointX(p) + G.pw / 2, p >= 13, b[p], `p${p}`);
  const barX = G.left + 6 * G.pw + G.bar / 2;
  drawStack(svg, barX, false, b[25], "bar", 290); // the mover's bar checkers, below the middle
  drawStack(svg, barX, true, b[0], "oppbar", 250); // the opponent's, above it
  // hit areas: one per point, the bars and the trays (for clicks and drags)
  for (let p = 1; p <= 24; p++) {
    const top = p >= 13;
    el("rect", { x: pointX(p), y: top ? G.top : G.bottom - 240, width: G.pw, height: 240,
      fill: "transparent", "data-target": String(p), class: "hit" }, svg);
  }
  el("rect", { x: G.left + 6 * G.pw, y: 270, width: G.bar, height: 250, fill: "transparent",
    "data-target": "25", class: "hit" }, svg);
  el("rect", { x: G.left + 6 * G.pw, y: G.top, width: G.bar, height: 250, fill: "transparent",
    "data-target": "0", class: "hit" }, svg);
  el("rect", { x: G.tray, y: G.top, width: G.trayW, height: 235, fill: "transparent",
    "data-target": "off-opp", class: "hit" }, svg);
  el("rect", { x: G.tray, y: 285, width: G.trayW, height: 235, fill: "transparent",
    "data-target": "off-me", class: "hit" }, svg);
  drawDice(svg);
  if (state.mode === "play") drawGameMarks(svg);
}

function drawStack(svg, cx, top, count, name, startY) {
  if (!count) return;
  const n = Math.abs(count), cls = count > 0 ? "checker-me" : "checker-opp";
  const dir = top ? 1 : -1;
  const y0 = startY !== undefined ? startY : (top ? G.top + G.r : G.bottom - G.r);
  const shown = Math.min(n, 5);
  for (let i = 0; i < shown; i++) {
    el("circle", { cx, cy: y0 + dir * i * 2 * G.r * 0.95, r: G.r - 1, class: cls, "data-stack": name }, svg);
  }
  if (n > 5) {
    const t = el("text", { x: cx, y: y0 + dir * 4 * 2 * G.r * 0.95, class: `count ${count > 0 ? "count-me" : "count-opp"}` }, svg);
    t.textContent = n;
  }
}

function drawDice(svg) {
  const dice = state.mode === "play" ? (state.game && state.game.dice) : currentDice();
  if (!dice) return;
  const spots = { 1: [[1, 1]], 2: [[0, 0], [2, 2]], 3: [[0, 0], [1, 1], [2, 2]], 4: [[0, 0], [0, 2], [2, 0], [2, 2]],
    5: [[0, 0], [0, 2], [1, 1], [2, 0], [2, 2]], 6: [[0, 0], [0, 1], [0, 2], [2, 0], [2, 1], [2, 2]] };
  dice.forEach((d, i) => {
    const x = G.left + 6 * G.pw + G.bar + 3.5 * G.pw + i * 50 - 20, y = 250;
    const g = el("g", { class: "die-face", "data-die": d }, svg);
    el("rect", { x, y, width: 40, height: 40, rx: 6, class: "die" }, g);
    for (const [r, c] of spots[d]) el("circle", { cx: x + 8 + c * 12, cy: y + 8 + r * 12, r: 4, class: "pip" }, g);
  });
}

function markPoint(svg, p, cls) {
  if (p === 0) {
    el("rect", { x: G.tray + 4, y: 289, width: G.trayW - 8, height: 227, class: cls }, svg);
  } else if (p === 25) {
    el("rect", { x: G.left + 6 * G.pw + 4, y: 274, width: G.bar - 8, height: 80, class: cls }, svg);
  } else {
    const top = p >= 13;
    el("rect", { x: pointX(p) + 4, y: top ? G.top + 2 : G.bottom - G.ph, width: G.pw - 8, height: G.ph - 2, class: cls }, svg);
  }
}

// ------------------------------------------------------------------ the position

function currentDice() {
  const d1 = Number(document.getElementById("die1").value), d2 = Number(document.getElementById("die2").value);
  return d1 && d2 ? [d1, d2] : null;
}

function requestPosition() {
  // the position for /move, /cube and /web/*: the Match ID too when one was entered (its score counts)
  if (state.matchId && state.info) return { id: `${state.info.position_id}:${state.matchId}` };
  return { board: state.board };
}

async function refreshPosition(body) {
  const info = await api("POST", "/web/position", body || { board: state.board });
  state.info = info;
  state.board = info.board;
  document.getElementById("pid").textContent = info.position_id;
  document.getElementById("xgid").textContent = info.xgid;
  let pips = `${info.pips[0]} (on roll) : ${info.pips[1]}`;
  if (info.match_length) pips += ` · ${info.match_length}-point match, score ${info.score[0]}-${info.score[1]}${info.crawford ? ", Crawford" : ""}`;
  document.getElementById("pips").textContent = pips;
  drawBoard();
  return info;
}

async function setPositionText(text) {
  const info = await refreshPosition({ id: text });
  state.matchId = info.match_id;
  if (info.match_id) await refreshPosition({ id: `${info.position_id}:${info.match_id}` });
  if (info.dice[0]) {
    document.getElementById("die1").value = info.dice[0];
    document.getElementById("die2").value = info.dice[1];
  }
  clearResults();
  drawBoard();
  say(`position ${info.position_id} set`, true);
}

function clearResults() {
  document.querySelector("#plays tbody").replaceChildren();
  document.getElementById("cube-result").replaceChildren();
  state.preview = null;
}

function fmt(x, digits = 3) {
  return x === null || x === undefined ? "—" : (x >= 0 ? "+" : "") + x.toFixed(digits);
}

function pct(x) {
  return (100 * x).toFixed(1) + "%";
}

async function showPlays() {
  const dice = currentDice();
  if (!dice) return say("choose the dice first");
  const ply = Number(document.getElementById("ply").value);
  const res = await api("POST", "/move", { ...requestPosition(), dice, ply });
  const tbody = document.querySelector("#plays tbody");
  tbody.replaceChildren();
  const best = res.moves[0];
  const key = res.ranked_by.includes("MWC") ? "mwc" : "equity";
  res.moves.forEach((m, i) => {
    const tr = document.createElement("tr");
    if (i === 0) tr.className = "best";
    const p = m.probabilities;
    const value = key === "mwc" ? pct(m.mwc) : fmt(m.equity);
    const diff = key === "mwc" ? (100 * (m.mwc - best.mwc)).toFixed(1) : fmt(m.equity - best.equity);
    for (const v of [i + 1, m.notation, value, i ? diff : "", pct(p.win), pct(p.winG), pct(p.winBg), pct(p.loseG), pct(p.loseBg)]) {
      const td = document.createElement("td");
      td.textContent = v;
      tr.appendChild(td);
    }
    tr.dataset.notation = m.notation;
    tr.addEventListener("mouseenter", () => previewPlay(m));
    tr.addEventListener("mouseleave", () => { state.preview = null; drawBoard(); });
    tbody.appendChild(tr);
  });
  say(`${res.moves.length} plays of ${dice[0]}-${dice[1]} at ${res.ply}-ply, ranked by ${res.ranked_by}`, true);
}

function previewPlay(m) {
  let b = state.board;
  for (const mv of m.play) b = applyMove(b, mv);
  state.preview = b;
  drawBoard();
}

async function showCube() {
  const ply = Number(document.getElementById("ply").value);
  const d = await api("POST", "/cube", { ...requestPosition(), ply });
  const names = { no_double: "No double", double_take: "Double, take", double_pass: "Double, pass",
    too_good_take: "Too good to double, take", too_good_pass: "Too good to double, pass" };
  const box = document.getElementById("cube-result");
  box.replaceChildren();
  const h = document.createElement("h3");
  h.textContent = `Cube decision: ${names[d.action] || d.action}`;
  box.appendChild(h);
  const t = document.createElement("table");
  t.className = "data";
  const rows = [["No double", d.no_double], ["Double, take", d.double_take], ["Double, pass", d.double_pass],
    ["Cubeless equity", d.cubeless_equity]];
  for (const [name, v] of rows) {
    const tr = document.createElement("tr");
    tr.innerHTML = "<td></td><td></td>";
    tr.children[0].textContent = name;
    tr.children[1].textContent = fmt(v);
    t.appendChild(tr);
  }
  box.appendChild(t);
  const p = document.createElement("p");
  p.textContent = `win ${pct(d.probabilities.win)}, gammons ${pct(d.probabilities.winG)} / ${pct(d.probabilities.loseG)}` +
    (d.take_point !== null ? `; take point ${pct(d.take_point)}` : "") + ` (${d.ply}-ply)`;
  box.appendChild(p);
}

// ------------------------------------------------------------------ rollout with progress

async function startRollout() {
  const games = Number(document.getElementById("rollout-games").value);
  const seed = Number(document.getElementById("rollout-seed").value);
  const cubeful = document.getElementById("rollout-cubeful").checked;
  const ply = Number(document.getElementById("ply").value);
  const res = await api("POST", "/web/rollout", { ...requestPosition(), games, seed, cubeful, ply: Math.min(ply, 1) });
  state.job = res.job;
  document.getElementById("rollout-cancel").disabled = false;
  document.getElementById("rollout-result").replaceChildren();
  pollRollout(res.job);
}

async function pollRollout(job, failures = 0) {
  let s;
  try {
    s = await api("GET", `/web/rollout/${job}`);
  } catch (e) {
    // a transient error (a 503 of a busy server, a dropped connection): ask again, 10 times at most
    if (failures < 10 && state.job === job) {
      setTimeout(() => pollRollout(job, failures + 1).catch(fail), 1000);
      return;
    }
    state.job = null;
    document.getElementById("rollout-cancel").disabled = true;
    throw e;
  }
  const bar = document.getElementById("rollout-progress");
  bar.max = s.games;
  bar.value = s.games_done;
  document.getElementById("rollout-count").textContent = `${s.games_done} / ${s.games} games, ${s.seconds.toFixed(1)} s`;
  if (s.state === "running") {
    setTimeout(() => pollRollout(job).catch(fail), 250);
    return;
  }
  state.job = null;
  document.getElementById("rollout-cancel").disabled = true;
  const box = document.getElementById("rollout-result");
  if (s.state !== "done") {
    box.textContent = `rollout ${s.state}${s.error ? ": " + s.error : ""}`;
    return;
  }
  const r = s.result;
  const names = ["win", "win g", "win bg", "lose g", "lose bg"];
  let text = names.map((n, i) => `${n} ${pct(r.probs[i])} ± ${(100 * r.probs_ci[i]).toFixed(2)}`).join(", ");
  text += `; cubeless equity ${fmt(r.equity)} ± ${r.equity_ci.toFixed(3)}`;
  if (r.cubeful !== null) text += `; cubeful ${fmt(r.cubeful)} ± ${r.cubeful_ci.toFixed(3)}`;
  text += ` (${r.games} games, ${r.seconds.toFixed(1)} s${r.variance_reduction ? ", luck-adjusted" : ""})`;
  box.textContent = text;
}

async function cancelRollout() {
  if (state.job) await api("DELETE", `/web/rollout/${state.job}`);
}

// ------------------------------------------------------------------ dragging checkers (set-up)

let drag = null;

function targetAt(evt) {
  const hit = document.elementsFromPoint(evt.clientX, evt.clientY).find((e) => e.dataset && e.dataset.target);
  return hit ? hit.dataset.target : null;
}

function onPointerDown(evt) {
  const t = targetAt(evt);
  if (t === null) return;
  if (state.mode === "play") return gameClick(t);
  if (state.mode !== "analyse") return;
  const b = state.board, [offMe, offOpp] = offCounts(b);
  let side = 0;
  if (t === "off-me") side = offMe > 0 ? 1 : 0;
  else if (t === "off-opp") side = offOpp > 0 ? -1 : 0;
  else if (t === "25") side = b[25] > 0 ? 1 : 0;
  else if (t === "0") side = b[0] < 0 ? -1 : 0;
  else side = Math.sign(b[Number(t)]);
  if (!side) return;
  const svg = document.getElementById("board");
  const pt = svgPoint(svg, evt);
  drag = { from: t, side, ghost: el("circle", { cx: pt.x, cy: pt.y, r: G.r, class: side > 0 ? "checker-me" : "checker-opp",
    "pointer-events": "none", opacity: 0.8 }, svg) };
  evt.preventDefault();
}

function svgPoint(svg, evt) {
  const p = svg.createSVGPoint();
  p.x = evt.clientX;
  p.y = evt.clientY;
  return p.matrixTransform(svg.getScreenCTM().inverse());
}

function onPointerMove(evt) {
  if (!drag) return;
  const pt = svgPoint(document.getElementById("board"), evt);
  drag.ghost.setAttribute("cx", pt.x);
  drag.ghost.setAttribute("cy", pt.y);
}

function onPointerUp(evt) {
  if (!drag) return;
  const d = drag;
  drag = null;
  d.ghost.remove();
  const to = targetAt(evt);
  if (to === null || to === d.from) return;
  const b = state.board.slice();
  // take the checker away
  if (d.from === "25") b[25] -= 1;
  else if (d.from === "0") b[0] += 1;
  else if (!d.from.startsWith("off")) b[Number(d.from)] -= d.side;
  // put it down: a point held by the other side refuses it
  if (to === "off-me" || to === "off-opp") {
    if ((to === "off-me") !== (d.side > 0)) return say("a checker goes off to its own tray");
  } else if (to === "25" || to === "0") {
    if ((to === "25") !== (d.side > 0)) return say("the lower half of the bar is white's, the upper black's");
    b[Number(to)] += d.side;
  } else {
    const p = Number(to);
    if (b[p] * d.side < 0) return say(`point ${p} is held by the other side`);
    b[p] += d.side;
  }
  state.board = b;
  clearResults();
  refreshPosition({ board: b }).then(() => say(`position ${state.info.position_id}`, true)).catch((e) => {
    fail(e);
  });
}

// ------------------------------------------------------------------ a game against the engine

async function newGame() {
  const seed = Number(document.getElementById("game-seed").value);
  state.game = { seed, turn: 0, dice: null, plays: [], made: [], start: START.slice(), selected: null, over: false,
    moved: [] };
  document.getElementById("game-log").replaceChildren();
  state.board = START.slice();
  state.matchId = null;
  await refreshPosition({ board: state.board });
  await humanTurn();
}

function logLine(text) {
  const li = document.createElement("li");
  li.textContent = text;
  document.getElementById("game-log").appendChild(li);
  li.scrollIntoView({ block: "nearest" });
}

async function humanTurn() {
  const g = state.game;
  const roll = await api("POST", "/web/roll", { seed: g.seed, turn: g.turn });
  g.dice = roll.dice;
  g.start = state.board.slice();
  g.made = [];
  g.selected = null;
  const res = await api("POST", "/web/plays", { board: state.board, dice: g.dice });
  g.plays = res.plays;
  document.getElementById("game-dice").textContent = `Your roll: ${g.dice[0]}-${g.dice[1]}`;
  const none = g.plays.length === 1 && g.plays[0].play.length === 0;
  document.getElementById("game-pass").hidden = !none;
  say(none ? "no legal move: pass" : `your roll ${g.dice[0]}-${g.dice[1]}: ${g.plays.length} legal plays`, true);
  drawBoard();
}

function remainingMoves(sequence, made) {
  // the single moves of one way of playing a play left after the moves `made`, or null when `made`
  // is not part of it
  const left = sequence.slice();
  for (const m of made) {
    const i = left.findIndex((x) => x.from === m.from && x.to === m.to);
    if (i < 0) return null;
    left.splice(i, 1);
  }
  return left;
}

function nextMoves() {
  // every way on from here: source -> destination -> the single moves that get there (chains of one checker)
  const g = state.game, out = new Map();
  for (const sequence of g.plays.flatMap((p) => p.sequences)) {
    const left = remainingMoves(sequence, g.made);
    if (!left) continue;
    const walk = (from, point, seq, rest) => {
      for (let i = 0; i < rest.length; i++) {
        if (rest[i].from !== point) continue;
        const s = seq.concat([rest[i]]);
        if (!out.has(from)) out.set(from, new Map());
        if (!out.get(from).has(rest[i].to)) out.get(from).set(rest[i].to, s);
        if (rest[i].to !== 0) walk(from, rest[i].to, s, rest.slice(0, i).concat(rest.slice(i + 1)));
      }
    };
    for (const m of left) walk(m.from, m.from, [], left);
  }
  return out;
}

function drawGameMarks(svg) {
  const g = state.game;
  if (!g || g.over || !g.dice) return;
  for (const p of g.moved) markPoint(svg, p, "moved");
  const next = nextMoves();
  for (const from of next.keys()) {
    for (const c of svg.querySelectorAll(`[data-stack="${from === 25 ? "bar" : "p" + from}"]`)) {
      c.classList.add(g.selected === from ? "selected" : "source");
    }
  }
  if (g.selected !== null && next.has(g.selected)) {
    for (const to of next.get(g.selected).keys()) {
      markPoint(svg, to, "dest");
      const hit = svg.querySelector(`[data-target="${to === 0 ? "off-me" : to}"]`);
      if (hit) hit.classList.add("dest-target");
    }
  }
}

function gameClick(t) {
  const g = state.game;
  if (!g || g.over || !g.dice || g.busy) return;
  const point = t === "off-me" ? 0 : t === "off-opp" ? -1 : Number(t);
  const next = nextMoves();
  if (g.selected !== null && next.has(g.selected) && next.get(g.selected).has(point)) {
    for (const m of next.get(g.selected).get(point)) {
      state.board = applyMove(state.board, m);
      g.made.push(m);
    }
    g.selected = null;
    document.getElementById("game-undo").disabled = false;
    // a board equal to a legal play's afterstate completes it, whichever order the dice were played in
    const done = g.plays.find((p) => sameBoard(p.board_after, state.board));
    if (done) {
      commitPlay(done).catch(fail);
      return;
    }
  } else if (next.has(point)) {
    g.selected = g.selected === point ? null : point;
  } else {
    g.selected = null;
  }
  drawBoard();
}

function undoMoves() {
  const g = state.game;
  if (!g || g.busy) return;
  state.board = g.start.slice();
  g.made = [];
  g.selected = null;
  document.getElementById("game-undo").disabled = true;
  drawBoard();
}

async function commitPlay(play) {
  const g = state.game;
  g.busy = true;
  try {
    logLine(`You ${g.dice[0]}-${g.dice[1]}: ${play.notation}`);
    document.getElementById("game-undo").disabled = true;
    document.getElementById("game-pass").hidden = true;
    state.board = play.board_after.slice();
    g.moved = [];
    if (offCounts(state.board)[0] === 15) {
      g.over = true;
      // docs/RULES.md §6: a gammon when the loser has borne off none, a backgammon when it also has a
      // checker on the bar or in the winner's home board (our points 1..6)
      const b = state.board, opp = offCounts(b)[1];
      const back = b[0] < 0 || b.slice(1, 7).some((c) => c < 0);
      say(`you won ${opp ? "a single game" : back ? "a backgammon" : "a gammon"}`, true);
      return drawBoard();
    }
    g.dice = null;
    drawBoard();
    const ply = Number(document.getElementById("game-ply").value);
    const reply = await api("POST", "/web/reply", { board: swapSides(state.board), seed: g.seed, turn: g.turn + 1, ply });
    logLine(`Engine ${reply.dice[0]}-${reply.dice[1]}: ${reply.notation}`);
    state.board = reply.board_after;
    g.moved = reply.play.map((m) => (m.to === 0 ? -1 : 25 - m.to)).filter((p) => p > 0 && p < 25);
    await refreshPosition({ board: state.board }).catch(() => null);
    document.getElementById("game-dice").textContent = `Engine rolled ${reply.dice[0]}-${reply.dice[1]} and played ${reply.notation}`;
    if (reply.result) {
      g.over = true;
      const kind = ["", "a single game", "a gammon", "a backgammon"][reply.result];
      say(`the engine won ${kind}`, true);
      return drawBoard();
    }
    g.turn += 2;
    await humanTurn();
  } finally {
    g.busy = false;
  }
}

// ------------------------------------------------------------------ match analysis

function clearAnalysis() {
  document.getElementById("mat-warnings").replaceChildren();
  document.getElementById("mat-stats").replaceChildren();
  document.querySelector("#mat-errors tbody").replaceChildren();
  document.getElementById("swing").replaceChildren();
}

async function analyseMatch() {
  const file = document.getElementById("mat-file").files[0];
  if (!file) return say("choose a .mat file first");
  const ply = Number(document.getElementById("mat-ply").value);
  say(`analysing ${file.name}...`, true);
  clearAnalysis(); // a failed upload must not leave the previous match's figures beside its error
  const request = ++state.analysis; // only the latest request's answer is shown
  let res;
  try {
    res = await api("POST", `/web/analysis?ply=${ply}`, await file.arrayBuffer(), true);
  } catch (e) {
    if (request !== state.analysis) return; // a newer request owns the panel (and its own messages)
    throw e;
  }
  if (request !== state.analysis) return;
  const a = res.analysis;
  const warnings = res.warnings || [];
  // the record's warnings (a later game naming other players), as nard analyze prints them: as text
  document.getElementById("mat-warnings").replaceChildren(...warnings.map((w) => {
    const li = document.createElement("li");
    li.textContent = `warning: ${w}`;
    return li;
  }));
  const stats = document.getElementById("mat-stats");
  stats.replaceChildren();
  const h = document.createElement("h3");
  h.textContent = `${a.players[0]} vs ${a.players[1]}: ${a.match_length ? a.match_length + "-point match" : "money"}, ${a.games} games, ${a.ply}-ply`;
  stats.appendChild(h);
  const t = document.createElement("table");
  t.className = "data";
  t.innerHTML = "<thead><tr><th>Player</th><th>Checker</th><th>Cube</th><th>Overall</th><th>Doubtful</th><th>Bad</th><th>Very bad</th></tr></thead>";
  for (const s of a.stats) {
    const tr = document.createElement("tr");
    const rate = (v) => (v === null ? "—" : v.toFixed(1));
    for (const v of [s.name, rate(s.checker_rate), rate(s.cube_rate), rate(s.error_rate), s.marks.doubtful || 0,
      s.marks.bad || 0, s.marks["very bad"] || 0]) {
      const td = document.createElement("td");
      td.textContent = v;
      tr.appendChild(td);
    }
    t.appendChild(tr);
  }
  stats.appendChild(t);
  const tbody = document.querySelector("#mat-errors tbody");
  tbody.replaceChildren();
  a.decisions.forEach((d) => {
    if (!d.skill) return;
    const tr = document.createElement("tr");
    tr.className = d.skill.replace(" ", "-");
    // the record's own numbering, as nard analyze: the .mat's move N) and the file's line ("-": unknown)
    const move = d.mat_move ? `${d.mat_move})` : "-";
    for (const v of [d.game, move, d.line || "-", a.players[d.player], d.dice ? d.dice.join("-") : "cube", d.played,
      d.best, (-d.loss).toFixed(3), d.skill]) {
      const td = document.createElement("td");
      td.textContent = v;
      tr.appendChild(td);
    }
    tr.addEventListener("click", () => setPositionText(d.position).catch(fail));
    tbody.appendChild(tr);
  });
  drawSwing(res.swing, a.players);
  const warned = warnings.length ? `; ${warnings.length} warning${warnings.length > 1 ? "s" : ""} (listed in the panel)` : "";
  say(`${a.decisions.length} decisions analysed; ${tbody.children.length} errors (in mEMG rates per decision)${warned}`,
    true);
}

function drawSwing(points, players) {
  // gnubg's / XG's swing chart: seat 0's winning chance before each decision (line), each decision's
  // loss as a bar (up for seat 0, down for seat 1), game boundaries as vertical rules
  const svg = document.getElementById("swing");
  svg.replaceChildren();
  const W = 760, H = 260, L = 40, R = 10, mid = 185, n = Math.max(points.length, 1);
  // the line in y 10..110 (100% .. 0%), the loss bars about the axis at y = mid, at most 55 high
  const x = (i) => L + ((W - L - R) * (i + 0.5)) / n;
  el("line", { x1: L, y1: mid, x2: W - R, y2: mid, stroke: "#999" }, svg);
  el("line", { x1: L, y1: 110, x2: W - R, y2: 110, stroke: "#ddd" }, svg);
  el("line", { x1: L, y1: 60, x2: W - R, y2: 60, stroke: "#eee" }, svg);
  for (const [v, label] of [[1, "100%"], [0.5, "50%"], [0, "0%"]]) {
    const t = el("text", { x: 2, y: 14 + (1 - v) * 100, "font-size": 10 }, svg);
    t.textContent = label;
  }
  const maxLoss = Math.max(0.12, ...points.map((p) => p.loss));
  let path = "";
  points.forEach((p, i) => {
    if (i && p.game !== points[i - 1].game) {
      el("line", { x1: x(i) - (W - L - R) / n / 2, y1: 5, x2: x(i) - (W - L - R) / n / 2, y2: H - 5, stroke: "#ccc" }, svg);
      path += " M";
    } else path += i ? " L" : "M";
    path += `${x(i).toFixed(1)},${(10 + (1 - p.win) * 100).toFixed(1)}`;
    if (p.loss > 0.0005) {
      const h = (p.loss / maxLoss) * 55;
      const y = p.player === 0 ? mid - h : mid;
      el("rect", { x: x(i) - Math.max(1, (W - L - R) / n / 3), y, width: Math.max(2, ((W - L - R) / n) * 0.66), height: h,
        fill: p.player === 0 ? "#3465a4" : "#c4302b", class: "swing-bar" }, svg);
    }
  });
  el("path", { d: path, fill: "none", stroke: "#222", "stroke-width": 1.5 }, svg);
  const t = el("text", { x: L + 5, y: H - 4, "font-size": 11 }, svg);
  t.textContent = `line: ${players[0]}'s winning chance; bars: loss per decision (blue ${players[0]}, red ${players[1]}), ` +
    `tallest ${maxLoss.toFixed(3)}`;
}

// ------------------------------------------------------------------ wiring

function setMode(mode) {
  state.mode = mode;
  for (const m of ["analyse", "play", "match"]) {
    document.getElementById(`panel-${m}`).hidden = m !== mode;
    document.getElementById(`mode-${m}`).classList.toggle("active", m === mode);
  }
  state.preview = null;
  drawBoard();
}

function init() {
  for (const id of ["die1", "die2"]) {
    const s = document.getElementById(id);
    s.appendChild(new Option("–", ""));
    for (let d = 1; d <= 6; d++) s.appendChild(new Option(String(d), String(d)));
    s.addEventListener("change", () => { clearResults(); drawBoard(); });
  }
  const on = (id, f) => document.getElementById(id).addEventListener("click", () => f().catch(fail));
  document.getElementById("position-form").addEventListener("submit", (e) => {
    e.preventDefault();
    setPositionText(document.getElementById("position-input").value).catch(fail);
  });
  on("start-position", async () => { state.matchId = null; clearResults(); await refreshPosition({ board: START }); });
  on("clear-board", async () => {
    state.board = new Array(26).fill(0);
    state.board[1] = 1; state.board[24] = -1; // the smallest live position: one checker each
    state.matchId = null;
    clearResults();
    await refreshPosition({ board: state.board });
  });
  on("swap-sides", async () => { state.matchId = null; clearResults(); await refreshPosition({ board: swapSides(state.board) }); });
  on("hint", showPlays);
  on("cube", showCube);
  on("rollout-start", startRollout);
  on("rollout-cancel", cancelRollout);
  on("game-new", newGame);
  on("game-undo", async () => undoMoves());
  on("game-pass", async () => commitPlay(state.game.plays[0]));
  on("mat-analyse", analyseMatch);
  document.getElementById("mode-analyse").addEventListener("click", () => setMode("analyse"));
  document.getElementById("mode-play").addEventListener("click", () => setMode("play"));
  document.getElementById("mode-match").addEventListener("click", () => setMode("match"));
  const svg = document.getElementById("board");
  svg.addEventListener("pointerdown", onPointerDown);
  window.addEventListener("pointermove", onPointerMove);
  window.addEventListener("pointerup", onPointerUp);
  refreshPosition({ board: START }).catch(fail);
}

document.addEventListener("DOMContentLoaded", init);
